"""A job's token budget, reserved before each model call and settled after it.

A request reserves an upper bound of its prompt plus the completion the model will be asked for
(`ChatModel.completion_cap`), clamped so that bound fits in what is left; the clamp is sent as the
request's `ceiling`, which every client honours, so concurrent requests of one job together never
pass the budget. The prompt bound counts UTF-8 bytes: byte-level tokenizers never make a token of less
than one byte, and each message gets a margin for the chat template's own tokens.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from evolve.llm.types import ChatRequest

PER_MESSAGE_TOKENS = 8
"""Margin for a chat template's role markers around each message."""
FIXED_TOKENS = 16
"""Margin for the template's start and the assistant turn's header."""


def prompt_token_bound(request: ChatRequest) -> int:
    """At most how many prompt tokens `request` can cost."""
    total = FIXED_TOKENS
    for message in request.messages:
        total += PER_MESSAGE_TOKENS + len((message.content or "").encode()) + len((message.name or "").encode())
        for call in message.tool_calls:
            total += PER_MESSAGE_TOKENS + len(call.name.encode()) + len(call.arguments.encode())
    if request.tools:
        total += len(json.dumps(request.tools).encode())
    return total


@dataclass(frozen=True)
class Grant:
    """One reservation: the completion cap the model gets and the tokens held until settled."""

    max_tokens: int
    reserved: int


@dataclass(frozen=True)
class Refusal:
    """Why a request was refused, in words the agent can act on."""

    message: str


@dataclass
class TokenLedger:
    """Used and reserved tokens of one job; every method is called under the job's lock."""

    budget: int
    used: int = 0
    reserved: int = 0

    @property
    def left(self) -> int:
        return self.budget - self.used - self.reserved

    def reserve(self, job_id: str, request: ChatRequest, wanted: int | None) -> Grant | Refusal:
        """Hold the prompt bound plus `wanted` completion tokens (None: all that is left), clamped."""
        prompt = prompt_token_bound(request)
        room = self.left - prompt
        if room < 1:
            held = f" ({self.reserved} held by requests in flight)" if self.reserved else ""
            return Refusal(
                f"token budget exhausted for job {job_id}: used {self.used} of {self.budget} tokens{held}, "
                f"{max(self.left, 0)} left; this request needs up to {prompt} for its prompt plus 1 to answer"
            )
        cap = min(wanted or room, room)
        self.reserved += prompt + cap
        return Grant(max_tokens=cap, reserved=prompt + cap)

    def settle(self, grant: Grant, actual_tokens: int) -> None:
        """Replace the reservation with the call's actual usage."""
        self.reserved -= grant.reserved
        self.used += actual_tokens

    def release(self, grant: Grant) -> None:
        """The call failed: nothing was used."""
        self.reserved -= grant.reserved
