"""A job's budgets on the host: tokens (reserved before each model call, settled after it) and bytes.

A request reserves an upper bound of its prompt plus the completion the model will be asked for
(`ChatModel.completion_cap`), clamped so that bound fits in what is left; the clamp is sent as the
request's `ceiling`, which every client honours, so concurrent requests of one job together never
pass the budget. The prompt bound counts UTF-8 bytes: byte-level tokenizers never make a token of less
than one byte, and each message gets a margin for the chat template's own tokens. Every other field the
model is sent (names, tool-call ids, `tool_choice`, stop sequences) counts by its bytes too.

The byte budget bounds what a job makes the host take in, whatever its tokens: every byte of every
request (request line, headers, body; refused requests too) and every byte of its exchange log. It is
`bytes_per_token` times the job's token budget, so it follows what the job may spend. A request's log
line is reserved before the model is called (its request part at its canonical size, its answer at
`RESPONSE_BYTES_PER_TOKEN` per completion token granted) and settled at its real size; the bytes of
requests being read or answered at once are capped too (`in_flight_bytes`), which bounds the gateway's
memory per job.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evolve.llm.agent_request import DEFAULT_LIMITS, RequestLimits
from evolve.llm.types import ChatRequest

if TYPE_CHECKING:
    from evolve.config import GatewayConfig

PER_MESSAGE_TOKENS = 8
"""Margin for a chat template's role markers around each message."""
FIXED_TOKENS = 16
"""Margin for the template's start and the assistant turn's header."""


def prompt_token_bound(request: ChatRequest) -> int:
    """At most how many prompt tokens `request` can cost."""
    total = FIXED_TOKENS
    for message in request.messages:
        total += PER_MESSAGE_TOKENS + _size(message.content or "") + _size(message.name or "")
        total += _size(message.tool_call_id or "")
        for call in message.tool_calls:
            total += PER_MESSAGE_TOKENS + _size(call.id) + _size(call.name) + _size(call.arguments)
    if request.tools:
        total += len(json.dumps(request.tools).encode())
    if request.tool_choice is not None:
        total += len(json.dumps(request.tool_choice).encode())
    total += sum(_size(stop) for stop in request.stop)
    return total


def _size(text: str) -> int:
    """UTF-8 bytes of `text`, without a copy for ASCII (most of it)."""
    return len(text) if text.isascii() else len(text.encode())


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


RESPONSE_BYTES_PER_TOKEN = 32
"""What a log line's answer is reserved at per completion token granted (settled at its real size)."""
RECORD_OVERHEAD_BYTES = 1024
"""A log line's own fields (ids, usage, the record's keys) beside the request and the answer."""


@dataclass(frozen=True)
class GatewayLimits:
    """What one job may make the gateway's host take in (docs/security.md: "Security: containment limits")."""

    max_request_bytes: int = 4 * 1024 * 1024
    """Body cap of one request, refused (413) before a byte of it is read."""
    bytes_per_token: int = 64
    """The job's byte budget is this times its token budget (requests received plus its exchange log)."""
    in_flight_bytes: int = 8 * 1024 * 1024
    """Bytes of one job's requests being read or answered at once; more is refused (429) before reading."""
    header_bytes: int = 32 * 1024
    """Request line and headers of one request (431 above)."""
    request: RequestLimits = DEFAULT_LIMITS
    """Counts and nesting inside one request (evolve/llm/agent_request.py)."""

    @classmethod
    def of(cls, config: GatewayConfig) -> GatewayLimits:
        """The limits `[gateway]` sets (the rest at their defaults)."""
        return cls(
            max_request_bytes=config.max_request_bytes,
            bytes_per_token=config.bytes_per_token,
            in_flight_bytes=config.in_flight_bytes,
        )


DEFAULT_GATEWAY_LIMITS = GatewayLimits()


@dataclass
class ByteLedger:
    """Bytes one job made the host take in, and those held right now; every method under the job's lock."""

    budget: int
    in_flight_cap: int
    used: int = 0
    in_flight: int = 0

    def take(self, job_id: str, size: int) -> tuple[int, str] | None:
        """Charge one request's `size` bytes before they are read: None, or (status, why not)."""
        if self.used + size > self.budget:
            return 403, (
                f"byte budget exhausted for job {job_id}: it sent or logged {self.used} of "
                f"{self.budget} bytes; this request is {size}"
            )
        if self.in_flight + size > self.in_flight_cap:
            return 429, (
                f"job {job_id} has {self.in_flight} request bytes in flight; with this request's {size} "
                f"that is over {self.in_flight_cap}: send fewer or smaller requests at once"
            )
        self.used += size
        self.in_flight += size
        return None

    def done(self, size: int) -> None:
        """A request taken with `take` was answered: its bytes are no longer held."""
        self.in_flight -= size

    def reserve(self, job_id: str, size: int) -> str | None:
        """Hold `size` bytes of exchange log: None, or why not."""
        if self.used + size > self.budget:
            return (
                f"byte budget exhausted for job {job_id}: it sent or logged {self.used} of {self.budget} "
                f"bytes; recording this exchange needs up to {size} more"
            )
        self.used += size
        return None

    def settle(self, reserved: int, actual: int) -> None:
        """Replace a reservation with what was really written (0: nothing was)."""
        self.used += actual - reserved
