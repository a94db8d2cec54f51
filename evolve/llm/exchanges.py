"""Recorded model exchanges (JSONL, one file per job) and replay from them.

A record holds the normalized request, the response and its wire id/timestamp, never headers or
keys. Replay answers a request with the first unused record of the same job whose request is
identical; a request that was never recorded is an error, not a guess.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from evolve import untrusted
from evolve.errors import EvolveError
from evolve.llm.types import ChatRequest, ChatResponse

log = logging.getLogger(__name__)


class ReplayMiss(EvolveError):
    """A request in replay mode that the recording does not contain."""


class Exchange(BaseModel):
    """One recorded request/response of one job."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seq: int
    job_id: str
    node_id: str
    role: str
    request_sha256: str
    request: ChatRequest
    response: ChatResponse
    response_id: str
    created: int


def canonical_request(request: ChatRequest) -> bytes:
    """The request's canonical JSON (ASCII, sorted keys): never shorter than its part of a log line."""
    return json.dumps(request.model_dump(mode="json"), sort_keys=True, separators=(",", ":")).encode()


def digest_of(canonical: bytes) -> str:
    return hashlib.sha256(canonical).hexdigest()


def request_digest(request: ChatRequest) -> str:
    """SHA-256 of the request's canonical JSON (what replay matches on)."""
    return digest_of(canonical_request(request))


def exchanges_file(directory: Path, job_id: str | int) -> Path:
    """Where the exchanges of one job live: `<dir>/job-<job id>.jsonl`, as `Run.exchanges_file` says
    (unsafe characters replaced)."""
    return directory / ("job-" + re.sub(r"[^A-Za-z0-9._-]", "_", str(job_id)) + ".jsonl")


class ExchangeLog:
    """Appends exchanges of one job to its JSONL file, one line per exchange, flushed at once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)

    def append(self, exchange: Exchange) -> int:
        """Write one exchange; returns the bytes written."""
        line = exchange.model_dump_json().encode() + b"\n"
        with self._lock, self.path.open("ab") as handle:
            handle.write(line)
        return len(line)


EXCHANGE_BOUNDS = untrusted.Bounds(line_bytes=64 << 20)
"""One exchange line holds a request (the gateway's body cap, 4 MiB by default) and its reply."""


def read_exchanges(path: Path) -> list[Exchange]:
    """All exchanges in one job's file, in recorded order. A line that is no bounded exchange (cut by a crash
    mid-append, or damaged) is left out with a warning: its request is then a replay miss, never a crash."""
    if not path.exists():
        raise ReplayMiss(f"no recorded exchanges at {path}")
    exchanges = []
    for number, line in enumerate(path.read_bytes().split(b"\n"), 1):
        if not line.strip():
            continue
        problem = untrusted.line_problem(line, EXCHANGE_BOUNDS)  # then pydantic's own strict parser
        if problem is None:
            try:
                exchanges.append(Exchange.model_validate_json(line))
            except ValidationError as exc:
                problem = f"not an exchange: {str(exc).splitlines()[0]}"
        if problem is not None:
            log.warning("%s line %d left out of the replay: %s", path, number, problem)
    return exchanges


class ReplayBook:
    """The recorded exchanges of one job, handed out once each to identical requests."""

    def __init__(self, exchanges: list[Exchange], job_id: str) -> None:
        self._job_id = job_id
        self._unused = list(exchanges)
        self._lock = threading.Lock()

    def answer(self, request: ChatRequest) -> Exchange:
        digest = request_digest(request)
        with self._lock:
            for index, exchange in enumerate(self._unused):
                if exchange.request_sha256 == digest:
                    return self._unused.pop(index)
        raise ReplayMiss(
            f"replay of job {self._job_id}: request {digest[:12]} was never recorded "
            f"({len(self._unused)} recorded exchanges left unused)"
        )
