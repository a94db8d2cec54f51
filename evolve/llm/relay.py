"""The model channel on a worker node: a per-job Unix socket relayed to the head's gateway over TCP.

A remote job's sandbox has no network; it gets a Unix socket (as on the head) whose requests this
relay forwards to the head gateway's TCP listener with the job's bearer token. The token is only
valid while the head keeps the job open; API keys never leave the head. Budgets, usage and the
recording stay with the head gateway; the relay counts the tokens it saw so the job can report them.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import tempfile
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Self

from evolve.llm.gateway import SANDBOX_SOCKET_PATH, GatewayError, JobReport
from evolve.llm.gateway_http import MAX_BODY_BYTES, UNIX_LIMITS, Listener, error_body, listen_unix
from evolve.llm.types import Usage

_FORWARDED_PATH = re.compile(r"/v1/[A-Za-z0-9_/-]*")
"""The only paths relayed: the API under /v1, no query, no dots, no `@` or `//` that could name a host."""

UPSTREAM_FAILURES = frozenset({"model_error", "overloaded"})
"""Error types of the head gateway's answers that report a failed model (not the job's own doing)."""


def _error_type(data: bytes) -> str | None:
    try:
        error = json.loads(data).get("error") or {}
    except (ValueError, AttributeError):
        return None  # not the gateway's error body (e.g. a proxy's page): not counted as the model's failure
    return error.get("type") if isinstance(error, dict) else None


@dataclass(frozen=True)
class GatewayGrant:
    """Access to the head gateway for one job and role: where it listens and the job's bearer token."""

    origin: str
    """http://HOST:PORT of the head gateway's TCP listener."""
    token: str
    role: str
    max_request_bytes: int = MAX_BODY_BYTES
    """The head gateway's body cap, which the relay applies too (a larger body is refused on the node)."""


@dataclass(frozen=True)
class RelayChannel:
    """What a sandbox mounts (the `Channel` protocol of evolve.engine.evaluate)."""

    socket_path: Path

    def sandbox_env(self, mounted_at: str = SANDBOX_SOCKET_PATH) -> dict[str, str]:
        return {"EVOLVE_LLM_SOCKET": mounted_at}


class _Relay:
    def __init__(self, socket_path: Path, grant: GatewayGrant, timeout_s: float) -> None:
        self.grant = grant
        self.socket_path = socket_path
        self.timeout_s = timeout_s
        self.usage = Usage()
        self.requests = 0
        self.upstream_failures = 0
        self._lock = threading.Lock()
        socket_path.unlink(missing_ok=True)
        limits = replace(UNIX_LIMITS, body_bytes=grant.max_request_bytes)
        self.listener: Listener = listen_unix(str(socket_path), grant.role, self.forward, limits)
        os.chmod(socket_path, 0o666)  # sandboxes run as uid 1000

    def forward(self, job_id: str, method: str, path: str, body: bytes) -> tuple[int, bytes]:
        if not _FORWARDED_PATH.fullmatch(path) or "//" in path:
            return 404, error_body(
                f"the relay forwards only /v1/... paths, not {path[:80]!r}", "invalid_request_error"
            )
        request = urllib.request.Request(
            self.grant.origin + path,
            data=body if method == "POST" else None,
            method=method,
            headers={"Authorization": f"Bearer {self.grant.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as reply:
                status, data = reply.status, reply.read()
        except urllib.error.HTTPError as exc:
            status, data = exc.code, exc.read()
        except (urllib.error.URLError, OSError) as exc:
            message = f"model unavailable: the head gateway at {self.grant.origin} is unreachable: {exc}"
            self._failed()
            return 502, error_body(message, "model_error", "model_error")
        if status == 200 and method == "POST":  # a chat reply (GETs only list models)
            self._count(data)
        elif status >= 500 and _error_type(data) in UPSTREAM_FAILURES:  # the head's own count, mirrored
            self._failed()
        return status, data

    def _failed(self) -> None:
        with self._lock:
            self.upstream_failures += 1

    def _count(self, data: bytes) -> None:
        try:
            usage = json.loads(data).get("usage") or {}
        except (ValueError, AttributeError):
            usage = {}  # the head's reply is trusted; a reply without usage still was one request
        seen = Usage(
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
        )
        with self._lock:
            self.usage = self.usage + seen
            self.requests += 1

    def report(self) -> JobReport:
        with self._lock:
            return JobReport(self.usage, self.requests, self.upstream_failures)


class RelayChannels:
    """`Channels` (evolve.engine.evaluate) for a worker node: `open_job` relays to the grant of the job's
    role.

    Use as a context manager so every socket and its directory go away."""

    def __init__(self, grants: dict[str, GatewayGrant], *, timeout_s: float = 600.0) -> None:
        self._grants = dict(grants)
        self._timeout_s = timeout_s
        self._dir = Path(tempfile.mkdtemp(prefix="evolve-relay-"))
        os.chmod(self._dir, 0o711)
        self._relays: dict[str, _Relay] = {}
        self._opened = itertools.count()
        self._lock = threading.Lock()

    def open_job(self, job_id: str | int, node_id: str, role: str, token_budget: int) -> RelayChannel:
        grant = self._grants.get(role)
        if grant is None:
            raise GatewayError(f"job {job_id} has no gateway grant for role {role!r}")
        socket_path = self._dir / f"{role}-{next(self._opened)}.sock"
        with self._lock:
            if str(job_id) in self._relays:
                raise GatewayError(f"job {job_id} is already open")
            self._relays[str(job_id)] = _Relay(socket_path, grant, self._timeout_s)
        return RelayChannel(socket_path)

    def report(self, job_id: str | int) -> JobReport:
        """What one open job was served so far, as this relay saw it."""
        relay = self._relays.get(str(job_id))
        if relay is None:
            raise GatewayError(f"job {job_id} is not open")
        return relay.report()

    def close_job(self, job_id: str | int) -> JobReport:
        with self._lock:
            relay = self._relays.pop(str(job_id), None)
        if relay is None:
            raise GatewayError(f"job {job_id} is not open")
        relay.listener.close()
        relay.socket_path.unlink(missing_ok=True)
        return relay.report()

    def close(self) -> None:
        for job_id in list(self._relays):
            self.close_job(job_id)
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
