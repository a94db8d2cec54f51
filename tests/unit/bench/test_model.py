"""`evolve bench model`'s bookkeeping over a stand-in model that caches by prefix (the real server:
tests/e2e/test_embedded_serving.py)."""

from __future__ import annotations

from evolve.bench.model import busy_competitors, interleaved
from evolve.llm.prefix_cache import common_prefix
from evolve.llm.types import ChatRequest, ChatResponse, Message, Usage


class PrefixCachingModel:
    """Counts a token per character; `keeps` conversations' texts cached (1: only the last one)."""

    name = "stand-in"

    def __init__(self, keeps: int) -> None:
        self.keeps, self.seen = keeps, []

    def complete(self, request: ChatRequest) -> ChatResponse:
        text = "".join(m.content or "" for m in request.messages)
        cached = max((common_prefix(old, text) for old in self.seen[-self.keeps :]), default=0)
        self.seen.append(text + "reply")
        return ChatResponse(
            message=Message(role="assistant", content="reply"),
            model=self.name,
            usage=Usage(prompt_tokens=len(text), completion_tokens=5, cached_prompt_tokens=cached),
        )


def test_second_turns_read_little_again_when_both_prefixes_are_kept():
    cache = interleaved(PrefixCachingModel(keeps=2), nonce="n")
    assert [(t.role, t.turn) for t in cache.turns] == [
        ("modify", 1),
        ("solve", 1),
        ("modify", 2),
        ("solve", 2),
    ]
    assert all(cache.reread(role) < 0.05 for role in cache.roles)
    assert 0.4 < cache.hit_rate("modify") < 0.6


def test_second_turns_read_everything_again_when_each_request_evicts_the_other():
    cache = interleaved(PrefixCachingModel(keeps=1), nonce="n")
    assert all(cache.reread(role) > 0.9 for role in cache.roles)  # only "[n-" is shared


def test_competitors_spin_until_the_block_ends():
    import os

    with busy_competitors(2) as pids:
        assert len(pids) == 2 and all(os.path.exists(f"/proc/{pid}") for pid in pids)
    assert not any(os.path.exists(f"/proc/{pid}") for pid in pids)  # killed and reaped
