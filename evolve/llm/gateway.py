"""The host-side gateway: the only way sandboxed agent code reaches a model (docs/design.md §Security).

Each job gets its own Unix socket (mounted into its sandbox), or a bearer token on a shared TCP
port for the process sandbox. The gateway speaks the OpenAI chat-completions schema, forwards to the
job's role model (keys stay here), counts tokens per job/node/role into a `UsageSink` (the run
archive), refuses requests once the job's token budget is spent, and records every exchange as
JSONL. Built with `replay_from`, it answers from recorded exchanges instead of a model.

An agent-made request is never `infra`: it is read strictly (evolve/llm/agent_request.py) before it
is counted or forwarded, and what fails there is the agent's 400. Of the failures past that, only
those independent of the request count as upstream failures (the engine's one evidence for `infra`):
a failure while the job had other requests in flight is its own load's; a failure while the same
model answers others (evolve/llm/witness.py) is the request's; a bug of the gateway's own is logged
and answered 500 but not counted, since the request that found it would find it again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, Self

from evolve.errors import EvolveError
from evolve.llm.agent_request import RequestInvalid, read_request
from evolve.llm.balancer import Overloaded
from evolve.llm.budget import (
    DEFAULT_GATEWAY_LIMITS,
    RECORD_OVERHEAD_BYTES,
    RESPONSE_BYTES_PER_TOKEN,
    ByteLedger,
    GatewayLimits,
    Grant,
    Refusal,
    TokenLedger,
)
from evolve.llm.client import ChatModel, ModelError
from evolve.llm.exchanges import (
    Exchange,
    ExchangeLog,
    ReplayBook,
    ReplayMiss,
    canonical_request,
    digest_of,
    exchanges_file,
    read_exchanges,
)
from evolve.llm.gateway_http import (
    TCP_LIMITS,
    UNIX_LIMITS,
    Listener,
    ListenerLimits,
    error_body,
    listen_tcp,
    listen_unix,
)
from evolve.llm.types import ChatRequest, Role, Usage, response_to_openai
from evolve.llm.witness import ServiceWitness

log = logging.getLogger(__name__)

SANDBOX_SOCKET_PATH = "/run/evolve/llm.sock"
"""Where sandboxes mount the job's socket; agents find it in `EVOLVE_LLM_SOCKET`."""


def request_seed(run_seed: int, job_id: str, request_number: int) -> int:
    """The sampling seed of one request: a hash of (run seed, job, request number), below 2**31 so that
    every provider's seed field takes it (llama.cpp's is 32-bit)."""
    digest = hashlib.sha256(f"{run_seed}:{job_id}:{request_number}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


class GatewayError(EvolveError):
    """A gateway used wrongly (unknown job, a job opened twice, no model for a role)."""


class UsageSink(Protocol):
    """Where token counts go (the run archive's `Run` is one)."""

    def add_usage(self, node_id: str, *, tokens: int, cost_usd: float) -> None: ...


@dataclass(frozen=True)
class JobChannel:
    """How one job's sandbox reaches the gateway."""

    job_id: str
    node_id: str
    role: Role
    token_budget: int
    socket_path: Path
    """The host socket to mount into the sandbox (world-writable: sandboxes run as uid 1000)."""
    token: str
    """Bearer token identifying the job on the TCP listener (`Gateway.start_tcp`)."""
    tcp_url: str | None = None

    def sandbox_env(self, mounted_at: str = SANDBOX_SOCKET_PATH) -> dict[str, str]:
        """Environment for a container that mounts `socket_path` at `mounted_at`."""
        return {"EVOLVE_LLM_SOCKET": mounted_at}

    def process_env(self) -> dict[str, str]:
        """Environment for an unisolated process sandbox on this host (TCP when started, else the socket)."""
        if self.tcp_url is not None:
            return {"EVOLVE_LLM_URL": self.tcp_url, "EVOLVE_LLM_TOKEN": self.token}
        return {"EVOLVE_LLM_SOCKET": str(self.socket_path)}


@dataclass(frozen=True)
class JobReport:
    """What the gateway itself saw of one job (the engine's facts, never the agent's claims).

    `upstream_failures` counts the 5xx answers (model down, overloaded, unreachable) the gateway
    returned to the job: the only model-side evidence `evaluate` accepts for an `infra` verdict."""

    usage: Usage = field(default_factory=Usage)
    requests: int = 0
    """Chat requests answered with a model reply (status 200)."""
    upstream_failures: int = 0
    bytes_taken: int = 0
    """Bytes the job made the host take in: requests received plus its exchange log (its byte budget's
    use)."""
    replay_misses: int = 0
    """Requests a replaying gateway found no recording for (answered 409): the job asked something new."""


@dataclass
class _Job:
    channel: JobChannel
    model: ChatModel | None
    replay: ReplayBook | None
    log: ExchangeLog | None
    listener: Listener | None = None
    usage: Usage = field(default_factory=Usage)
    seq: int = 0
    requests: int = 0
    upstream_failures: int = 0
    replay_misses: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    ledger: TokenLedger = field(init=False)
    limits: GatewayLimits = DEFAULT_GATEWAY_LIMITS
    bytes: ByteLedger = field(init=False)

    def __post_init__(self) -> None:
        self.ledger = TokenLedger(self.channel.token_budget)
        self.bytes = ByteLedger(
            self.channel.token_budget * self.limits.bytes_per_token, self.limits.in_flight_bytes
        )


class Gateway:
    """Serves jobs' model requests; use as a context manager so every socket is closed."""

    def __init__(
        self,
        models: Mapping[Role, ChatModel] | None = None,
        *,
        exchanges_dir: Path | None = None,
        usage_sink: UsageSink | None = None,
        replay_from: Path | None = None,
        socket_dir: Path | None = None,
        clock: Callable[[], float] = time.time,
        on_fatal: Callable[[str], None] | None = None,
        seed: int | None = None,
        limits: GatewayLimits = DEFAULT_GATEWAY_LIMITS,
    ) -> None:
        if models is None and replay_from is None:
            raise GatewayError("a gateway needs models, or a recording to replay (replay_from)")
        self._models = dict(models or {})
        self._exchanges_dir = exchanges_dir
        self._sink = usage_sink
        self._replay_from = replay_from
        self._own_socket_dir = socket_dir is None
        self._socket_dir = socket_dir or Path(tempfile.mkdtemp(prefix="evolve-gw-"))
        self._socket_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self._socket_dir, 0o711)  # sandboxes (uid 1000) may reach a socket they are given
        self._clock = clock
        self._jobs: dict[str, _Job] = {}
        self._tokens: dict[str, str] = {}
        self._lock = threading.Lock()
        self._tcp: Listener | None = None
        self._on_fatal = on_fatal
        self._seed = seed
        """The run seed; each request's sampling seed is derived from it (`request_seed`)."""
        self._limits = limits
        self._witnesses: dict[int, ServiceWitness] = {}
        for model in self._models.values():
            self._witnesses.setdefault(id(model), ServiceWitness(model))
        self.fatal: str | None = None
        """Set (once) when the engine's own key or account is refused: the run cannot go on."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start_tcp(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Also serve on TCP, jobs told apart by their bearer token; returns the base URL."""
        if self._tcp is None:
            self._tcp = listen_tcp(
                host, port, self._job_of_headers, self.handle, self._listener_limits(TCP_LIMITS), self.admit
            )
        bound_host, bound_port = self._tcp.address[:2]
        return f"http://{bound_host}:{bound_port}/v1"

    @property
    def limits(self) -> GatewayLimits:
        """What each job may make this gateway take in."""
        return self._limits

    def _listener_limits(self, base: ListenerLimits) -> ListenerLimits:
        return replace(
            base, body_bytes=self._limits.max_request_bytes, header_bytes=self._limits.header_bytes
        )

    def _job_of_headers(self, headers: dict[str, str]) -> str | None:
        auth = headers.get("authorization", "")
        token = auth[7:].strip() if auth.lower().startswith("bearer ") else ""
        return self._tokens.get(token)

    def open_job(self, job_id: str | int, node_id: str, role: Role, token_budget: int) -> JobChannel:
        """Start serving one job on its own socket; its usage counts toward `node_id` and `role`.

        Exchanges go to `<exchanges_dir>/job-<job_id>.jsonl` (the run's `exchanges/`)."""
        job_id = str(job_id)
        model = None if self._replay_from else self._models.get(role)
        if model is None and self._replay_from is None:
            raise GatewayError(f"no model configured for role {role!r}")
        replay = None
        if self._replay_from is not None:
            replay = ReplayBook(read_exchanges(exchanges_file(self._replay_from, job_id)), job_id)
        socket_path = self._socket_dir / f"job-{hashlib.sha256(job_id.encode()).hexdigest()[:16]}.sock"
        token = secrets.token_urlsafe(24)
        tcp_url = self.start_tcp() if self._tcp is not None else None
        channel = JobChannel(job_id, node_id, role, token_budget, socket_path, token, tcp_url)
        log = ExchangeLog(exchanges_file(self._exchanges_dir, job_id)) if self._exchanges_dir else None
        with self._lock:
            if job_id in self._jobs:
                raise GatewayError(f"job {job_id} is already open")
            job = _Job(channel, model, replay, log, limits=self._limits)
            self._jobs[job_id] = job
            self._tokens[token] = job_id
        socket_path.unlink(missing_ok=True)
        job.listener = listen_unix(
            str(socket_path), job_id, self.handle, self._listener_limits(UNIX_LIMITS), self.admit
        )
        os.chmod(socket_path, 0o666)
        return channel

    def usage(self, job_id: str | int) -> Usage:
        """Tokens and cost of one open job so far."""
        return self._job(str(job_id)).usage

    def report(self, job_id: str | int) -> JobReport:
        """What one open job was served so far."""
        return self._report(self._job(str(job_id)))

    @staticmethod
    def _report(job: _Job) -> JobReport:
        with job.lock:
            return JobReport(
                job.usage, job.requests, job.upstream_failures, job.bytes.used, job.replay_misses
            )

    def close_job(self, job_id: str | int) -> JobReport:
        """Stop serving a job, remove its socket, and return what it was served."""
        job_id = str(job_id)
        with self._lock:
            job = self._jobs.pop(job_id, None)
            if job is not None:
                self._tokens.pop(job.channel.token, None)
        if job is None:
            raise GatewayError(f"job {job_id} is not open")
        if job.listener is not None:
            job.listener.close()
        job.channel.socket_path.unlink(missing_ok=True)
        return self._report(job)

    def close(self) -> None:
        """Close every job and the TCP listener."""
        self._witnesses.clear()
        for job_id in list(self._jobs):
            self.close_job(job_id)
        if self._tcp is not None:
            self._tcp.close()
            self._tcp = None
        if self._own_socket_dir:
            shutil.rmtree(self._socket_dir, ignore_errors=True)

    def _job(self, job_id: str) -> _Job:
        job = self._jobs.get(job_id)
        if job is None:
            raise GatewayError(f"job {job_id} is not open")
        return job

    def handle(self, job_id: str, method: str, path: str, body: bytes) -> tuple[int, bytes]:
        """Answer one HTTP request of a job: (status, JSON body)."""
        job = self._jobs.get(job_id)
        if job is None:
            return 404, error_body(f"job {job_id} is closed", "invalid_request_error")
        route = path.split("?", 1)[0].rstrip("/")
        if method == "GET" and route in ("/v1/models", "/models", "/health"):
            name = job.model.name if job.model else "replay"
            return 200, json.dumps({"object": "list", "data": [{"id": name, "object": "model"}]}).encode()
        if method != "POST" or route not in ("/v1/chat/completions", "/chat/completions"):
            return 404, error_body(f"no route {method} {route}", "invalid_request_error")
        try:
            request = read_request(body, self._limits.request)
        except RequestInvalid as exc:
            return 400, error_body(f"invalid request: {exc}", "invalid_request_error", "invalid_request")
        try:
            return self._complete(job, request)
        except Exception as exc:
            # Not an upstream failure: the request that found the bug would find it again (an agent could
            # otherwise repeat it to make its failures `infra`). The traceback is the engine's to fix.
            log.exception("gateway error on a request of job %s", job.channel.job_id)
            return 500, error_body(
                f"gateway error: {type(exc).__name__}: {exc}", "gateway_error", "internal_error"
            )

    @contextmanager
    def admit(self, job_id: str, size: int) -> Iterator[tuple[int, str] | None]:
        """Charge a request's `size` bytes to its job before they are read (`gateway_http.Admit`)."""
        job = self._jobs.get(job_id)
        if job is None:
            yield None  # `handle` answers 404 for a closed job
            return
        with job.lock:
            refused = job.bytes.take(job_id, size)
        if refused is not None:
            yield refused
            return
        try:
            yield None
        finally:
            with job.lock:
                job.bytes.done(size)

    def _model_failed(self, job: _Job, exc: ModelError, started: float) -> tuple[int, bytes]:
        """The agent's answer for a failed model call, and whether the job's attempt becomes `infra`.

        The request's fault (the provider refused it, or the model fails on it while it answers
        others) is a 4xx with the provider's words; a failure while the job had other requests in
        flight is its own load's (429); only the service's failure is a 5xx counted as an upstream
        failure; a refused engine key also stops the run."""
        if exc.kind in ("request", "context"):
            status = exc.status if exc.status in (400, 413, 422) else 400
            code = "context_length_exceeded" if exc.kind == "context" else "invalid_request"
            return status, error_body(exc.provider_message, "invalid_request_error", code)
        with job.lock:
            in_flight = job.ledger.reserved
        if in_flight:
            return 429, error_body(
                f"the model failed while this job held {in_flight} tokens in other requests; "
                "that is its own load, not a failed service: send fewer requests at once",
                "rate_limit_error",
                "job_load",
            )
        up, probe = self._service_up(job, started)
        # The provider's words on a refused key may quote the key (masked or not): the agent gets none of
        # them.
        said = "the provider refused it" if exc.kind == "auth" else exc.provider_message
        if up:
            return 400, error_body(
                f"the model failed on this request while it answers others ({said}); "
                "the request itself is the cause",
                "invalid_request_error",
                "request_failed_upstream",
            )
        with job.lock:
            job.upstream_failures += 1
        if exc.kind == "auth":
            self._stop_run(f"the model provider refused the engine's key or account: {exc.provider_message}")
            return 502, error_body(
                "model unavailable: the engine's model account was refused",
                "model_error",
                "engine_auth_failed",
            )
        detail = "; a probe request failed too" if probe else ""
        if exc.kind == "internal":
            return 500, error_body(f"model client error: {exc}{detail}", "model_error", "internal_error")
        return 502, error_body(f"model unavailable: {exc}{detail}", "model_error", "model_error")

    def _service_up(self, job: _Job, started: float) -> tuple[bool, bool]:
        """Whether the job's model answered anything since `started` (the witness may probe it), and
        whether any witness was there to ask; a probe's tokens are charged to the job."""
        witness = self._witnesses.get(id(job.model))
        if witness is None:
            return False, False
        up, cost = witness.up_since(started)
        if cost.total_tokens or cost.cost_usd:
            with job.lock:
                job.usage = job.usage + cost
                job.ledger.used += cost.total_tokens
            if self._sink is not None:
                self._sink.add_usage(job.channel.node_id, tokens=cost.total_tokens, cost_usd=cost.cost_usd)
        return up, True

    def _stop_run(self, reason: str) -> None:
        with self._lock:
            first = self.fatal is None
            if first:
                self.fatal = reason
        if first and self._on_fatal is not None:
            self._on_fatal(reason)

    def _complete(self, job: _Job, request: ChatRequest) -> tuple[int, bytes]:
        channel = job.channel
        canonical = canonical_request(request)
        digest, size = digest_of(canonical), len(canonical)
        del canonical  # not held while the model answers
        with job.lock:  # reserve before the call, so concurrent requests cannot overshoot together
            wanted = job.model.completion_cap(request) if job.model is not None else request.max_tokens
            grant = job.ledger.reserve(channel.job_id, request, wanted)
            if isinstance(grant, Refusal):
                return 403, error_body(grant.message, "budget_exceeded", "token_budget_exceeded")
            record = size + RECORD_OVERHEAD_BYTES + RESPONSE_BYTES_PER_TOKEN * grant.max_tokens
            refused = job.bytes.reserve(channel.job_id, record)
            if refused is not None:
                job.ledger.release(grant)
                return 403, error_body(refused, "budget_exceeded", "byte_budget_exceeded")
            seq = job.seq
            job.seq += 1
        witness = self._witnesses.get(id(job.model))
        started = witness.now() if witness is not None else 0.0
        try:
            exchange = self._reserved_exchange(job, request, seq, grant, digest)
        except ReplayMiss as exc:
            self._unrecorded(job, record)
            with job.lock:
                job.replay_misses += 1
            return 409, error_body(str(exc), "replay_miss", "replay_miss")
        except Overloaded as exc:  # backpressure: every replica busy and the queue full
            self._unrecorded(job, record)
            with job.lock:
                # A job with other requests in flight may have overloaded the server itself (a flood
                # to turn its failures into infra): then the refusal is its own doing, not the service's.
                if job.ledger.reserved == 0:
                    job.upstream_failures += 1
            return 503, error_body(str(exc), "overloaded", "overloaded")
        except ModelError as exc:
            self._unrecorded(job, record)
            return self._model_failed(job, exc, started)
        except BaseException:
            self._unrecorded(job, record)
            raise
        if witness is not None:
            witness.answered()
        with job.lock:  # usage itself was settled against the reservation in _reserved_exchange
            job.requests += 1
        written = job.log.append(exchange) if job.log is not None else 0
        with job.lock:
            job.bytes.settle(record, written)
        if self._sink is not None:
            usage = exchange.response.usage
            self._sink.add_usage(channel.node_id, tokens=usage.total_tokens, cost_usd=usage.cost_usd)
        wire = response_to_openai(exchange.response, exchange.response_id, exchange.created)
        return 200, json.dumps(wire, sort_keys=True).encode()

    @staticmethod
    def _unrecorded(job: _Job, record: int) -> None:
        with job.lock:
            job.bytes.settle(record, 0)

    def _reserved_exchange(
        self, job: _Job, request: ChatRequest, seq: int, grant: Grant, digest: str
    ) -> Exchange:
        """The exchange under `grant`: the model gets the reservation as its `ceiling` (the record keeps
        the request as the agent sent it, which replay matches on); usage then replaces it."""
        try:
            seed = None if self._seed is None else request_seed(self._seed, job.channel.job_id, seq)
            sent = request.model_copy(update={"ceiling": grant.max_tokens, "seed": seed})
            exchange = self._exchange(job, request, seq, sent, digest)
        except BaseException:
            with job.lock:
                job.ledger.release(grant)
            raise
        with job.lock:
            job.ledger.settle(grant, exchange.response.usage.total_tokens)
            job.usage = job.usage + exchange.response.usage
        return exchange

    def _exchange(
        self, job: _Job, request: ChatRequest, seq: int, sent: ChatRequest, digest: str
    ) -> Exchange:
        channel = job.channel
        if job.replay is not None:
            recorded = job.replay.answer(request)
            return recorded.model_copy(update={"seq": seq, "node_id": channel.node_id})
        assert job.model is not None
        response = job.model.complete(sent)
        return Exchange(
            seq=seq,
            job_id=channel.job_id,
            node_id=channel.node_id,
            role=channel.role,
            request_sha256=digest,
            request=request,
            response=response,
            response_id=f"chatcmpl-{secrets.token_hex(12)}",
            created=int(self._clock()),
        )
