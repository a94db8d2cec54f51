"""Where jobs run. The runner hands an executor plain callables and waits on their futures.

`LocalExecutor` is a thread pool on this machine; `RayExecutor` (extra `distributed`) runs picklable
callables as Ray tasks on a cluster (see evolve.cluster.head for how engine jobs use it).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from typing import Any, Protocol, TypeVar

from evolve.errors import EvolveError

T = TypeVar("T")


class Executor(Protocol):
    """Runs callables somewhere and returns futures of their results."""

    def submit(self, fn: Callable[..., T], /, *args: Any) -> Future[T]: ...

    def shutdown(self, *, cancel_pending: bool = False, wait: bool = True) -> None: ...


class LocalExecutor:
    """A thread pool on this machine; jobs spend their time in sandboxes and model calls, not Python."""

    def __init__(self, concurrency: int) -> None:
        self._pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="evolve-job")

    def submit(self, fn: Callable[..., T], /, *args: Any) -> Future[T]:
        return self._pool.submit(fn, *args)

    def shutdown(self, *, cancel_pending: bool = False, wait: bool = True) -> None:
        self._pool.shutdown(wait=wait, cancel_futures=cancel_pending)


class WorkerLost(EvolveError):
    """A job's remote worker went away (its node died, its process crashed, it was cancelled).

    The job's own code did not fail: the caller turns this into an `infra` outcome and retries."""


def import_ray() -> Any:
    """Ray, imported on first use (extra `distributed`); a clear error where it is not installed."""
    try:
        import ray
    except ImportError as exc:
        raise EvolveError("executor.kind = \"ray\" needs Ray: pip install 'evolve[distributed]'") from exc
    return ray


def _call(fn: Callable[..., T], *args: Any) -> T:
    return fn(*args)


class RayExecutor:
    """Ray tasks on a cluster: `fn` and its arguments are pickled and shipped, the result comes back as data.

    Ray's own retries are off (`max_retries=0`): a task on a node that dies fails with `WorkerLost`,
    so the caller, not Ray, decides about a re-run and nothing runs twice unseen. An exception
    raised by `fn` itself arrives as that exception.
    """

    def __init__(
        self,
        address: str | None = "auto",
        *,
        cpus_per_job: float = 1.0,
        resources: Mapping[str, float] | None = None,
    ) -> None:
        ray = import_ray()
        self._ray = ray
        self._owns_connection = not ray.is_initialized()
        if self._owns_connection:
            ray.init(address=address, log_to_driver=False, logging_level="WARNING", configure_logging=False)
        self._remote = ray.remote(_call).options(
            num_cpus=cpus_per_job, resources=dict(resources or {}), max_retries=0, retry_exceptions=False
        )
        self._lock = threading.Lock()
        self._in_flight: dict[Future, Any] = {}

    def submit(self, fn: Callable[..., T], /, *args: Any) -> Future[T]:
        ref = self._remote.remote(fn, *args)
        future: Future[T] = Future()
        with self._lock:
            self._in_flight[future] = ref
        ref.future().add_done_callback(lambda done: self._settle(future, done))
        return future

    def _settle(self, future: Future, done: Future) -> None:
        with self._lock:
            self._in_flight.pop(future, None)
        exceptions = self._ray.exceptions
        try:
            future.set_result(done.result())
        except exceptions.RayTaskError as exc:  # raised by fn itself: hand on the original
            cause = exc.cause if isinstance(exc.cause, BaseException) else exc
            future.set_exception(cause)
        except (exceptions.RayError, CancelledError) as exc:  # the node, the process or the task is gone
            first_line = (str(exc).strip().splitlines() or [""])[0]
            future.set_exception(WorkerLost(f"{type(exc).__name__}: {first_line}"))
        except Exception as exc:  # noqa: BLE001 - anything else (an unpicklable result): hand it on, never hang
            future.set_exception(exc)

    def alive_nodes(self) -> list[str]:
        """Ids of the cluster's live nodes."""
        return [node["NodeID"] for node in self._ray.nodes() if node.get("Alive")]

    def wait_for_cpus(self, cpus: float, timeout_s: float = 60.0) -> None:
        """Block until the cluster offers `cpus` CPUs (nodes still joining); EvolveError after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while self._ray.cluster_resources().get("CPU", 0.0) < cpus:
            if time.monotonic() > deadline:
                raise EvolveError(
                    f"the Ray cluster offers {self._ray.cluster_resources().get('CPU', 0.0)} "
                    f"CPUs, not {cpus}, after {timeout_s:.0f} s"
                )
            time.sleep(0.2)

    def on_every_node(
        self, fn: Callable[..., T], /, *args: Any, timeout_s: float = 120.0
    ) -> dict[str, T | None]:
        """Run `fn(*args)` once on every live node (e.g. reap a run's containers); None where a node
        failed."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        refs = {
            node: self._ray.remote(_call)
            .options(
                num_cpus=0,
                max_retries=0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False),
            )
            .remote(fn, *args)
            for node in self.alive_nodes()
        }
        results: dict[str, T | None] = {}
        for node, ref in refs.items():
            try:
                results[node] = self._ray.get(ref, timeout=timeout_s)
            except self._ray.exceptions.RayError:
                results[node] = None  # a node that died meanwhile has nothing left to clean
        return results

    def driver_ip(self) -> str:
        """This process's address in the cluster (where worker nodes reach the head's gateway)."""
        return self._ray.util.get_node_ip_address()

    def cancel_pending(self) -> None:
        """Cancel every task in flight (its worker process is killed; its future raises `WorkerLost`)."""
        with self._lock:
            pending = list(self._in_flight.values())
        for ref in pending:
            self._ray.cancel(ref, force=True)

    def shutdown(self, *, cancel_pending: bool = False, wait: bool = True) -> None:
        if cancel_pending:
            self.cancel_pending()
        with self._lock:
            pending = list(self._in_flight)
        if wait:
            futures_wait(pending)
        if self._owns_connection:
            self._ray.shutdown()
