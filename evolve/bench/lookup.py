"""`evolve bench lookup`: would prompt-lookup drafting speed up the recorded replies?

Prompt-lookup decoding (llama-cpp-python's `LlamaPromptLookupDecoding`) drafts the next tokens by
finding the last n-gram of the text so far earlier in the prompt and copying what followed; the model
checks the draft in one batch and keeps the tokens it agrees with. Replies that copy the prompt
(SEARCH/REPLACE blocks, whole-file writes) accept long drafts. This replays the drafter over recorded
exchanges with the real tokenizer, no model run: per reply, the tokens the model would emit per
verification step if it agreed with itself as recorded (greedy decoding does).
"""

from __future__ import annotations

import json
import statistics
import tarfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evolve.llm.prefix_cache import common_prefix

Tokenize = Callable[[str], list[int]]


def draft(context: np.ndarray, max_ngram: int, tokens: int) -> np.ndarray:
    """What llama-cpp-python's `LlamaPromptLookupDecoding` proposes after `context` (its own search)."""
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    return LlamaPromptLookupDecoding.find_candidate_pred_tokens(context, max_ngram, tokens)


@dataclass(frozen=True)
class ReplyLookup:
    """One reply: its tokens and the verification steps prompt-lookup drafting needs for them."""

    tokens: int
    steps: int
    drafted: int
    """Draft tokens proposed (each checked in a batch, accepted or not)."""

    @property
    def tokens_per_step(self) -> float:
        return self.tokens / max(self.steps, 1)


def replay_reply(
    prompt: Sequence[int], reply: Sequence[int], max_ngram: int = 2, draft_tokens: int = 10
) -> ReplyLookup:
    """Walk `reply` as greedy decoding with a prompt-lookup drafter would: each step keeps the draft's
    leading tokens that match the reply, plus the one token the model samples itself."""
    context = np.array([*prompt, *reply], dtype=np.intc)
    position, steps, drafted = 0, 0, 0
    while position < len(reply):
        proposal = draft(context[: len(prompt) + position], max_ngram, draft_tokens)
        drafted += len(proposal)
        position += common_prefix(proposal.tolist(), reply[position:]) + 1
        steps += 1
    return ReplyLookup(len(reply), steps, drafted)


def recorded_exchanges(bundles: Sequence[Path], role: str | None = None) -> Iterator[dict]:
    """Exchange records (one dict per model request) from exported bundles or run directories."""
    for bundle in bundles:
        if bundle.is_dir():
            for path in sorted((bundle / "exchanges").glob("job-*.jsonl")):
                yield from _of_role(path.read_text(encoding="utf-8").splitlines(), role)
            continue
        with tarfile.open(bundle) as archive:
            for member in archive.getmembers():
                if member.name.startswith("exchanges/") and member.name.endswith(".jsonl"):
                    handle = archive.extractfile(member)
                    if handle is not None:
                        yield from _of_role(handle.read().decode("utf-8").splitlines(), role)


def _of_role(lines: list[str], role: str | None) -> Iterator[dict]:
    for line in lines:
        if line.strip():
            record = json.loads(line)
            if role is None or record.get("role") == role:
                yield record


@dataclass(frozen=True)
class LookupBench:
    replies: tuple[ReplyLookup, ...]

    def as_json(self) -> dict[str, object]:
        per_step = [r.tokens_per_step for r in self.replies]
        tokens = sum(r.tokens for r in self.replies)
        steps = sum(r.steps for r in self.replies)
        return {
            "replies": len(self.replies),
            "tokens": tokens,
            "steps": steps,
            "tokens_per_step": round(tokens / max(steps, 1), 3),
            "median_reply_tokens_per_step": round(statistics.median(per_step), 3) if per_step else None,
            "drafted_per_step": round(sum(r.drafted for r in self.replies) / max(steps, 1), 2),
        }


def bench_lookup(
    records: Sequence[dict], tokenize: Tokenize, max_ngram: int = 2, draft_tokens: int = 10
) -> LookupBench:
    """Replay the drafter over each record's reply, its prompt being the request's message texts."""
    replies = []
    for record in records:
        reply = (record["response"].get("message") or {}).get("content") or ""
        if not reply:
            continue
        prompt = "\n".join(m.get("content") or "" for m in record["request"].get("messages", []))
        replies.append(replay_reply(tokenize(prompt), tokenize(reply), max_ngram, draft_tokens))
    return LookupBench(tuple(replies))
