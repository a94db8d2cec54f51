"""LeastLoaded: least-loaded choice, bounded queue with clear errors, dead replicas out and back."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from evolve.llm.balancer import LeastLoaded, Overloaded
from evolve.llm.client import ModelError, OpenAICompatible, RetryPolicy
from evolve.llm.types import ChatRequest, ChatResponse, Message
from evolve.standins.models import FakeOpenAIServer, ScriptedModel


def _ask(text: str = "hi") -> ChatRequest:
    return ChatRequest(messages=(Message(role="user", content=text),))


class GatedModel:
    """Answers with its name once `gate` opens; counts the calls it has in flight."""

    def __init__(self, name: str, gate: threading.Event) -> None:
        self.name, self.base_url, self.gate = "m", name, gate
        self.started = threading.Semaphore(0)
        self.calls = 0

    def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        self.started.release()
        assert self.gate.wait(10)
        return ChatResponse(message=Message(role="assistant", content=self.base_url), model="m")


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def dead_replica() -> OpenAICompatible:
    """A replica whose server is gone: every call is a refused connection (one try, no backoff)."""
    return OpenAICompatible(
        f"http://127.0.0.1:{_closed_port()}/v1", "m", retry=RetryPolicy(attempts=1), timeout_s=5
    )


def _in_threads(model: LeastLoaded, count: int) -> tuple[list[threading.Thread], list]:
    results: list = []

    def call() -> None:
        try:
            results.append(model.complete(_ask()).message.content)
        except ModelError as exc:
            results.append(exc)

    threads = [threading.Thread(target=call) for _ in range(count)]
    for thread in threads:
        thread.start()
    return threads, results


def test_each_request_goes_to_the_least_loaded_replica():
    gates = [threading.Event() for _ in range(3)]
    replicas = [GatedModel(f"r{i}", gate) for i, gate in enumerate(gates)]
    balancer = LeastLoaded(replicas)
    threads, _ = _in_threads(balancer, 3)
    for replica in replicas:  # three requests, three idle replicas: one each
        assert replica.started.acquire(timeout=5)
    gates[1].set()  # r1 finishes its request; it is now the least loaded
    for thread in threads:
        thread.join(0.05)
    deadline = time.monotonic() + 5
    while balancer.health()[1].in_flight and time.monotonic() < deadline:
        time.sleep(0.01)
    gates[1].clear()
    more, _ = _in_threads(balancer, 1)
    assert replicas[1].started.acquire(timeout=5)
    assert [r.calls for r in replicas] == [1, 2, 1]
    for gate in gates:
        gate.set()
    for thread in threads + more:
        thread.join(5)
    assert [s.served for s in balancer.health()] == [1, 2, 1]


def test_sequential_requests_rotate_over_idle_replicas():
    a, b = ScriptedModel(["a"], name="m"), ScriptedModel(["b"], name="m")
    balancer = LeastLoaded([a, b])
    assert [balancer.complete(_ask()).message.content for _ in range(4)] == ["a", "b", "a", "b"]


def test_a_full_queue_refuses_at_once_with_a_clear_error():
    gate = threading.Event()
    replica = GatedModel("only", gate)
    balancer = LeastLoaded([replica], max_in_flight=1, max_waiting=1, wait_timeout_s=10)
    threads, results = _in_threads(balancer, 2)  # one in flight, one waiting
    assert replica.started.acquire(timeout=5)
    while balancer._waiting < 1:
        time.sleep(0.01)
    with pytest.raises(
        Overloaded, match="overloaded: 1 requests already wait.*queue bound 1.*executor.concurrency"
    ):
        balancer.complete(_ask())
    gate.set()
    for thread in threads:
        thread.join(5)
    assert results == ["only", "only"]


def test_a_wait_that_runs_out_is_overloaded():
    gate = threading.Event()
    balancer = LeastLoaded([GatedModel("only", gate)], max_in_flight=1, wait_timeout_s=0.2)
    threads, _ = _in_threads(balancer, 1)
    time.sleep(0.05)
    with pytest.raises(Overloaded, match="waited 0 s"):
        balancer.complete(_ask())
    gate.set()
    threads[0].join(5)


def test_a_dead_replica_is_taken_out_and_its_request_retried_elsewhere():
    now = [0.0]
    dead, live = dead_replica(), ScriptedModel(["live"], name="m")
    balancer = LeastLoaded([dead, live], down_for_s=30, clock=lambda: now[0])
    assert [balancer.complete(_ask()).message.content for _ in range(5)] == ["live"] * 5
    dead_status = balancer.health()[0]
    assert not dead_status.healthy and dead_status.failures == 1  # tried once, then out
    assert "APIConnectionError" in dead_status.last_error
    now[0] = 31.0  # its time out is over: one trial request, which fails, so it stays out
    assert balancer.complete(_ask()).message.content == "live"
    assert balancer.complete(_ask()).message.content == "live"
    assert balancer.health()[0].failures == 2 and len(live.requests) == 7


def test_a_replica_that_comes_back_serves_again():
    now = [0.0]
    port = _closed_port()
    flaky = OpenAICompatible(f"http://127.0.0.1:{port}/v1", "m", retry=RetryPolicy(attempts=1), timeout_s=5)
    balancer = LeastLoaded([flaky, ScriptedModel(["steady"], name="m")], down_for_s=10, clock=lambda: now[0])
    assert balancer.complete(_ask()).message.content == "steady"
    assert not balancer.health()[0].healthy
    with FakeOpenAIServer(port=port):  # the server is back on its address
        now[0] = 11.0
        replies = {balancer.complete(_ask()).message.content for _ in range(4)}
    assert replies == {"ok", "steady"} and balancer.health()[0].healthy


def test_every_replica_dead_is_one_clear_error():
    balancer = LeastLoaded([dead_replica(), dead_replica()], attempts=3)
    with pytest.raises(ModelError, match="no replica of m answered in 3 tries"):
        balancer.complete(_ask())


def test_a_refused_request_is_not_retried_and_the_replica_stays_in():
    with FakeOpenAIServer(failures=5, fail_status=400) as server:
        refusing = OpenAICompatible(server.base_url, "m", retry=RetryPolicy(attempts=1))
        other = ScriptedModel(["other"], name="m")
        balancer = LeastLoaded([refusing, other])
        with pytest.raises(ModelError, match="400"):
            balancer.complete(_ask())
        assert server.chat_requests == 1 and not other.requests
    assert all(s.healthy for s in balancer.health())


def test_a_role_with_several_replica_urls_gets_a_balancer_that_fails_over():
    from evolve.config import ModelConfig
    from evolve.llm.stack import client_for

    with FakeOpenAIServer() as live:
        config = ModelConfig(
            provider="openai-compatible",
            model="m",
            replica_urls=(f"http://127.0.0.1:{_closed_port()}/v1", live.base_url),
        )
        model = client_for(config)
        assert isinstance(model, LeastLoaded)
        assert [model.complete(_ask()).message.content for _ in range(3)] == ["ok"] * 3
        assert [s.healthy for s in model.health()] == [False, True]
    single = client_for(ModelConfig(provider="openai-compatible", model="m", base_url="http://x:1/v1"))
    assert isinstance(single, OpenAICompatible)


def test_no_wait_or_attempt_outlasts_the_retry_window():
    """One call ends within the role's retry window plus one attempt, as the agent's own wait expects
    (capabilities.worst_case_s): the queue wait is cut at the window, and no new attempt starts after it."""
    gate = threading.Event()
    balancer = LeastLoaded([GatedModel("only", gate)], max_in_flight=1, wait_timeout_s=600, window_s=0.3)
    threads, _ = _in_threads(balancer, 1)
    time.sleep(0.05)
    started = time.monotonic()
    with pytest.raises(Overloaded, match="waited 0 s"):
        balancer.complete(_ask())
    assert time.monotonic() - started < 5
    gate.set()
    threads[0].join(5)


def test_replicas_that_keep_failing_are_not_retried_past_the_window():
    now = [0.0]
    calls = []

    class Failing:
        name, base_url = "m", "dead"

        def complete(self, request):
            calls.append(now[0])
            now[0] += 100.0  # each failed attempt takes 100 s of the clock
            raise ModelError("connection refused")

    balancer = LeastLoaded([Failing(), Failing()], attempts=50, window_s=250, clock=lambda: now[0])
    with pytest.raises(ModelError, match="answered in 3 tries"):
        balancer.complete(_ask())
    assert calls == [0.0, 100.0, 200.0]  # none starts at or after 250 s
