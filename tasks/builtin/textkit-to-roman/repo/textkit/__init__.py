"""textkit: small text utilities."""

from textkit.case import camel_to_snake, snake_to_camel
from textkit.roman import from_roman, to_roman
from textkit.slug import slugify
from textkit.stats import word_frequencies
from textkit.wrap import wrap

__all__ = ["camel_to_snake", "snake_to_camel", "from_roman", "to_roman", "slugify", "word_frequencies", "wrap"]
