"""How fast a model answers: a one-line round trip, and prompt vs generation tokens per second."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from evolve.llm.client import ChatModel
from evolve.llm.types import ChatRequest, Message

_FILLER = "def add(a, b):\n    return a + b\n\n"


@dataclass(frozen=True)
class RoundTrip:
    """One short exchange: what came back and how long it took."""

    model: str
    reply: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float

    @property
    def tokens_per_s(self) -> float:
        return self.completion_tokens / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class SpeedReport:
    """Prompt processing and generation speed of one model on this machine."""

    model: str
    prompt_tokens_per_s: float
    generation_tokens_per_s: float

    def as_json(self) -> dict[str, object]:
        return {
            "model": self.model,
            "prompt_tokens_per_s": round(self.prompt_tokens_per_s, 2),
            "generation_tokens_per_s": round(self.generation_tokens_per_s, 2),
        }


def _ask(model: ChatModel, text: str, max_tokens: int, clock: Callable[[], float]) -> RoundTrip:
    request = ChatRequest(
        messages=(Message(role="user", content=text),), temperature=0.0, max_tokens=max_tokens
    )
    started = clock()
    response = model.complete(request)
    return RoundTrip(
        model=model.name,
        reply=(response.message.content or "").strip(),
        prompt_tokens=response.usage.prompt_tokens,
        completion_tokens=response.usage.completion_tokens,
        seconds=clock() - started,
    )


def round_trip(model: ChatModel, clock: Callable[[], float] = time.perf_counter) -> RoundTrip:
    """Ask for one word; proves the endpoint answers."""
    return _ask(model, "Reply with the single word: ready", 8, clock)


def measure_speed(
    model: ChatModel,
    *,
    nonce: str | None = None,
    generate_tokens: int = 48,
    clock: Callable[[], float] = time.perf_counter,
) -> SpeedReport:
    """Prompt tokens/s from a ~300-token prompt answered with one token; generation tokens/s from a
    short prompt answered at length, less its prompt time. A nonce leads each prompt so a server's
    prompt cache cannot make the prompt look free."""
    nonce = nonce or str(time.time_ns())
    prefill = _ask(model, f"[{nonce}] Read this code.\n\n{_FILLER * 24}Reply with: ok", 1, clock)
    prompt_rate = prefill.prompt_tokens / prefill.seconds if prefill.seconds > 0 else 0.0
    story = _ask(
        model, f"[{nonce}b] Write a long Python function that parses CSV text.", generate_tokens, clock
    )
    prompt_time = story.prompt_tokens / prompt_rate if prompt_rate > 0 else 0.0
    generating = max(story.seconds - prompt_time, 1e-6)
    return SpeedReport(model.name, prompt_rate, story.completion_tokens / generating)
