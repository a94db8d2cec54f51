"""URL slugs."""

import re
import unicodedata


def slugify(text: str, sep: str = "-", max_length: int | None = None) -> str:
    """Lower-case ASCII slug of `text`: runs of other characters become one `sep`, none at the ends.

    >>> slugify("Hello, World!")
    'hello-world'
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    slug = sep.join(words)
    if max_length is not None and len(slug) > max_length:
        slug = slug[:max_length].rstrip(sep)
    return slug
