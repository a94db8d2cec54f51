"""Where jobs run. The runner hands an executor plain callables and waits on their futures."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

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
