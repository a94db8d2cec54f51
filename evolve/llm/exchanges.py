"""Recorded model exchanges (JSONL, one file per job) and replay from them.

A record holds the normalized request, the response and its wire id/timestamp, never headers or
keys. Replay answers a request with the first unused record of the same job whose request is
identical; a request that was never recorded is an error, not a guess.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from evolve.errors import EvolveError
from evolve.llm.types import ChatRequest, ChatResponse


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


def read_exchanges(path: Path) -> list[Exchange]:
    """All exchanges in one job's file, in recorded order."""
    if not path.exists():
        raise ReplayMiss(f"no recorded exchanges at {path}")
    lines = path.read_text(encoding="utf-8").splitlines()
    return [Exchange.model_validate_json(line) for line in lines if line.strip()]


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
