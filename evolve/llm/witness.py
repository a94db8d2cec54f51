"""Whose fault a failed model call was: the request's, or the service's (only the latter is `infra`).

A request that failed for good (the retry layer repeated the same body through its window) was
caused by its own content if the same model answered anything else meanwhile: a request started at
`t` failed while the service was up if some request of that model succeeded after `t`. When no other
traffic shows it, the witness asks the model one fixed, tiny probe request of its own (one at a
time per model, shared by every failure that waits on it, never longer than `wait_s`): the probe
answers, the service is up and the failure was the request's; it fails or does not answer in time,
the service failed. Nothing the agent sends reaches the probe.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout

from evolve.llm.client import ChatModel
from evolve.llm.types import ChatRequest, Message, Usage

log = logging.getLogger(__name__)

PROBE_WAIT_S = 30.0
"""How long a failure waits for the probe's answer (a part of one gateway call's worst case)."""

PROBE = ChatRequest(messages=(Message(role="user", content="Reply with: ok"),), max_tokens=16, ceiling=16)
"""The witness's own request: fixed, so nothing of the agent's reaches it; a few tokens to answer."""


class ServiceWitness:
    """Remembers when one model last answered, and probes it when nothing recent says it is up."""

    def __init__(
        self, model: ChatModel, *, wait_s: float = PROBE_WAIT_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._model = model
        self._wait_s = wait_s
        self._clock = clock
        self._lock = threading.Lock()
        self._last_answer = float("-inf")
        self._probe: Future[Usage] | None = None
        self._probe_started = float("-inf")

    def now(self) -> float:
        return self._clock()

    def answered(self) -> None:
        """A request of this model succeeded just now."""
        with self._lock:
            self._last_answer = self._clock()

    def up_since(self, started: float) -> tuple[bool, Usage]:
        """Whether the model answered anything after `started` (probing once if nothing shows it), and
        what a probe this call started cost (charged to the job that asked)."""
        with self._lock:
            if self._last_answer > started:
                return True, Usage()
            if self._probe is not None and self._probe_started > started:
                probe, own = self._probe, False  # one already asked after this request started: share it
            else:
                self._probe_started = self._clock()
                self._probe = probe = Future()
                own = True
                # A daemon thread, not a pool: a probe still retrying a dead service must not hold up exit.
                threading.Thread(target=self._ask, args=(probe,), daemon=True, name="evolve-witness").start()
        try:
            usage = probe.result(timeout=self._wait_s)
        except FutureTimeout:
            log.warning(
                "the model's probe did not answer within %.0f s: its failure counts as the service's",
                self._wait_s,
            )
            return False, Usage()
        except Exception as exc:  # noqa: BLE001 - the probe failed: that is the answer (the service is down)
            log.warning("the model's probe failed too (%s: %s): the service is down", type(exc).__name__, exc)
            return False, Usage()
        return True, usage if own else Usage()

    def _ask(self, probe: Future[Usage]) -> None:
        try:
            usage = self._model.complete(PROBE).usage
        except BaseException as exc:  # noqa: BLE001 - handed to the waiters, who log it
            probe.set_exception(exc)
            return
        self.answered()
        probe.set_result(usage)
