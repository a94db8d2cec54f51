"""Dollar prices of hosted models, per million tokens; local models cost nothing (GPU-seconds instead).

The table is dated (`PRICES_AS_OF`): list prices change, so check the providers' pricing pages and
give `price_*_per_mtok` in `[models.<role>]` when they differ. A name is looked up exactly, then
with its date or `-latest` suffix removed; never by prefix (o3-pro is not o3, gpt-4o-2024-05-13 is not
gpt-4o). An unknown hosted model has no price: the client warns, and a run with a dollar budget
refuses it unless the config gives its prices.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PRICES_AS_OF = "2026-06-01"
"""The list prices below as published up to this date (openai.com/api/pricing, anthropic.com/pricing).
Families the installed SDKs name but this table lacks (gpt-5.6, gpt-6, claude-opus-4-7 and later,
claude-*-5) have no price here: give theirs in the config."""


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens: input, output, input read from the prompt cache, and input
    written to it (Anthropic charges cache writes above the input price; OpenAI does not)."""

    input_per_mtok: float
    output_per_mtok: float
    cached_input_per_mtok: float | None = None
    cache_write_per_mtok: float | None = None

    def cost(
        self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0, cache_write_tokens: int = 0
    ) -> float:
        """`prompt_tokens` counts every input token, cached and cache-written ones included."""
        cached_price = (
            self.input_per_mtok if self.cached_input_per_mtok is None else self.cached_input_per_mtok
        )
        write_price = self.input_per_mtok if self.cache_write_per_mtok is None else self.cache_write_per_mtok
        fresh = max(prompt_tokens - cached_tokens - cache_write_tokens, 0)
        return (
            fresh * self.input_per_mtok
            + cached_tokens * cached_price
            + cache_write_tokens * write_price
            + completion_tokens * self.output_per_mtok
        ) / 1e6


FREE = Price(0.0, 0.0)


def _openai(inp: float, out: float, cached: float | None = None) -> Price:
    return Price(inp, out, cached)


def _claude(inp: float, out: float) -> Price:
    # Anthropic: cache reads at 0.1x the input price, 5-minute cache writes at 1.25x.
    return Price(inp, out, round(inp * 0.1, 6), round(inp * 1.25, 6))


PRICES: dict[str, Price] = {
    # OpenAI reasoning models (DGM's diagnoser was o1; its agents o3-mini; HGM used gpt-5-mini)
    "o1": _openai(15.00, 60.00, 7.50),
    "o1-preview": _openai(15.00, 60.00, 7.50),
    "o1-mini": _openai(1.10, 4.40, 0.55),
    "o1-pro": _openai(150.00, 600.00),
    "o3": _openai(2.00, 8.00, 0.50),
    "o3-pro": _openai(20.00, 80.00),
    "o3-mini": _openai(1.10, 4.40, 0.55),
    "o3-deep-research": _openai(10.00, 40.00, 2.50),
    "o4-mini": _openai(1.10, 4.40, 0.275),
    "gpt-5": _openai(1.25, 10.00, 0.125),
    "gpt-5-chat": _openai(1.25, 10.00, 0.125),
    "gpt-5-codex": _openai(1.25, 10.00, 0.125),
    "gpt-5-mini": _openai(0.25, 2.00, 0.025),
    "gpt-5-nano": _openai(0.05, 0.40, 0.005),
    "gpt-5-pro": _openai(15.00, 120.00),
    "gpt-5.1": _openai(1.25, 10.00, 0.125),
    "gpt-5.1-codex": _openai(1.25, 10.00, 0.125),
    "gpt-5.1-codex-mini": _openai(0.25, 2.00, 0.025),
    "gpt-5.2": _openai(1.75, 14.00, 0.175),
    "gpt-5.2-pro": _openai(21.00, 168.00),
    "gpt-5.4": _openai(2.50, 15.00, 0.25),
    "gpt-5.4-mini": _openai(0.75, 4.50, 0.075),
    "gpt-5.4-nano": _openai(0.20, 1.25, 0.02),
    "gpt-5.4-pro": _openai(30.00, 180.00),
    "gpt-5.5": _openai(5.00, 30.00, 0.50),
    "gpt-5.5-pro": _openai(30.00, 180.00),
    # OpenAI chat models
    "gpt-4.1": _openai(2.00, 8.00, 0.50),
    "gpt-4.1-mini": _openai(0.40, 1.60, 0.10),
    "gpt-4.1-nano": _openai(0.10, 0.40, 0.025),
    "gpt-4o": _openai(2.50, 10.00, 1.25),
    "gpt-4o-2024-05-13": _openai(5.00, 15.00),
    "gpt-4o-mini": _openai(0.15, 0.60, 0.075),
    "gpt-4-turbo": _openai(10.00, 30.00),
    "gpt-4": _openai(30.00, 60.00),
    "gpt-3.5-turbo": _openai(0.50, 1.50),
    "codex-mini": _openai(1.50, 6.00, 0.375),
    # Anthropic (DGM's coding agent was claude-3-5-sonnet)
    "claude-opus-4-6": _claude(5.00, 25.00),
    "claude-sonnet-4-6": _claude(3.00, 15.00),
    "claude-opus-4-5": _claude(5.00, 25.00),
    "claude-opus-4-1": _claude(15.00, 75.00),
    "claude-opus-4": _claude(15.00, 75.00),
    "claude-sonnet-4-5": _claude(3.00, 15.00),
    "claude-sonnet-4": _claude(3.00, 15.00),
    "claude-haiku-4-5": _claude(1.00, 5.00),
    "claude-3-7-sonnet": _claude(3.00, 15.00),
    "claude-3-5-sonnet": _claude(3.00, 15.00),
    "claude-3-5-haiku": _claude(0.80, 4.00),
    "claude-3-opus": _claude(15.00, 75.00),
    "claude-3-sonnet": _claude(3.00, 15.00),
    "claude-3-haiku": _claude(0.25, 1.25),
}

# A dated snapshot or alias of a family: gpt-4o-2024-08-06, claude-3-5-sonnet-20241022, o3-mini-latest.
_SUFFIX = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$")


def known_price(model: str) -> Price | None:
    """The table's price of `model` (exact name, then without its date/`-latest` suffix), or None."""
    name = model.lower()
    if name in PRICES:
        return PRICES[name]
    stripped = _SUFFIX.sub("", name)
    return PRICES.get(stripped)


def price_of(model: str) -> Price:
    """The table's price, or free for names it does not know (local models)."""
    return known_price(model) or FREE
