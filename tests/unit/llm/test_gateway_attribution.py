"""Whose failure a failed request is, through the real gateway on its Unix socket: a request the gateway
cannot read, or one the model fails on while it answers others, is the agent's (4xx, no upstream
failure); only a service that fails every request makes the job's attempt `infra`."""

from __future__ import annotations

import json
import threading
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evolve.llm.gateway import Gateway
from evolve.llm.witness import ServiceWitness
from evolve.standins.models import FailsOn, ScriptedModel, every_role, fake_completion_cap

from .test_agent_request import ANY_JSON, MUTATED, encode

ATTACKS = {
    "surrogate in content": b'{"messages":[{"role":"user","content":"fail\\ud800"}]}',
    "surrogate in a tool description": b'{"messages":[{"role":"user","content":"a"}],"tools":['
    b'{"type":"function","function":{"name":"f","description":"\\udc00"}}]}',
    "surrogate in tool_choice": b'{"messages":[{"role":"user","content":"a"}],"tools":[{"type":"function",'
    b'"function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"\\ud800"}}}',
    "NaN temperature": b'{"messages":[{"role":"user","content":"a"}],"temperature":NaN}',
    "overflowing temperature": b'{"messages":[{"role":"user","content":"a"}],"temperature":-1e400}',
    "deep nesting": b'{"messages":[{"role":"user","content":"a"}],"tools":[{"type":"function",'
    b'"function":{"name":"f","parameters":' + b"[" * 5000 + b"]" * 5000 + b"}}]}",
}


def _raw_post(path, data: bytes) -> tuple[int, dict]:
    from .conftest import _UnixConnection

    connection = _UnixConnection(path)
    connection.request(
        "POST", "/v1/chat/completions", body=data, headers={"Content-Type": "application/json"}
    )
    reply = connection.getresponse()
    result = reply.status, json.loads(reply.read() or b"{}")
    connection.close()
    return result


def test_requests_the_gateway_cannot_read_are_the_agents_400_and_reach_no_model():
    model = ScriptedModel(["ok"])
    with Gateway(every_role(model)) as gateway:
        job = gateway.open_job("j", "n", "solve", 100_000)
        answers = {name: _raw_post(job.socket_path, data) for name, data in ATTACKS.items()}
        report = gateway.close_job("j")
    assert {name: status for name, (status, _) in answers.items()} == {name: 400 for name in ATTACKS}
    assert all(body["error"]["code"] == "invalid_request" for _, body in answers.values())
    assert (report.upstream_failures, model.requests) == (0, [])


def test_a_body_the_model_fails_on_while_it_answers_others_is_the_agents(post, chat):
    model = FailsOn(ScriptedModel(["ok"]), "poison")
    with Gateway(every_role(model)) as gateway:
        job = gateway.open_job("j", "n", "solve", 100_000)
        status, body = post(job.socket_path, chat("poison"))
        honest, _ = post(job.socket_path, chat("hello"))
        report = gateway.close_job("j")
    error = json.loads(body)["error"]
    assert (status, error["code"], honest) == (400, "request_failed_upstream", 200)
    assert "while it answers others" in error["message"] and report.upstream_failures == 0
    assert report.usage.total_tokens > 0  # the probe's tokens are the job's


def test_twin_a_service_that_fails_every_request_is_an_upstream_failure(post, chat):
    model = FailsOn(ScriptedModel(["ok"]), "poison", down=True)
    with Gateway(every_role(model)) as gateway:
        job = gateway.open_job("j", "n", "solve", 100_000)
        status, body = post(job.socket_path, chat("hello"))
        report = gateway.close_job("j")
    assert status == 502 and "a probe request failed too" in json.loads(body)["error"]["message"]
    assert report.upstream_failures == 1 and model.failed == 2  # the request and the probe


class _Gated:
    """Answers "ok" once `release` is set (a slow request kept in flight)."""

    name = "gated"
    completion_cap = staticmethod(fake_completion_cap)

    def __init__(self) -> None:
        self.release = threading.Event()
        self._inner = ScriptedModel(["ok"])

    def complete(self, request):
        if "slow" in (request.messages[-1].content or ""):
            self.release.wait(10)
        return self._inner.complete(request)


def test_a_failure_while_the_job_has_other_requests_in_flight_is_its_own_load(post, chat):
    gated = _Gated()
    model = FailsOn(gated, "poison")
    with Gateway(every_role(model)) as gateway:
        job = gateway.open_job("j", "n", "solve", 100_000)
        slow = threading.Thread(target=post, args=(job.socket_path, chat("slow")))
        slow.start()
        deadline = time.monotonic() + 5
        while gateway._jobs["j"].ledger.reserved == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        status, body = post(job.socket_path, chat("poison"))
        gated.release.set()
        slow.join()
        report = gateway.close_job("j")
    assert status == 429 and json.loads(body)["error"]["code"] == "job_load"
    assert report.upstream_failures == 0


class _Buggy:
    """A model whose client breaks on one request with an exception no client should raise (an engine bug)."""

    name = "buggy"
    completion_cap = staticmethod(fake_completion_cap)

    def complete(self, request):
        raise RuntimeError("engine bug")


def test_a_gateway_bug_is_a_500_but_no_upstream_failure(post, chat, caplog):
    with Gateway(every_role(_Buggy())) as gateway:
        job = gateway.open_job("j", "n", "solve", 100_000)
        status, body = post(job.socket_path, chat("hi"))
        again, _ = post(job.socket_path, chat("hi"))
        report = gateway.close_job("j")
    assert (status, again, json.loads(body)["error"]["type"]) == (500, 500, "gateway_error")
    assert report.upstream_failures == 0
    assert "RuntimeError: engine bug" in caplog.text  # the engine's traceback is kept for its maintainers


def test_an_auth_failure_on_one_body_while_others_are_answered_does_not_stop_the_run(post, chat):
    from evolve.llm.failures import ModelError

    class KeyRefusedOnMarker(ScriptedModel):
        def complete(self, request):
            if "poison" in (request.messages[-1].content or ""):
                raise ModelError("refused", "auth", 403, "sk-secret is not allowed")
            return super().complete(request)

    stops: list[str] = []
    with Gateway(every_role(KeyRefusedOnMarker(["ok"])), on_fatal=stops.append) as gateway:
        job = gateway.open_job("j", "n", "solve", 100_000)
        status, body = post(job.socket_path, chat("poison"))
        report = gateway.close_job("j")
    assert (status, stops, gateway.fatal, report.upstream_failures) == (400, [], None, 0)
    assert "sk-secret" not in body.decode()


def test_the_witness_takes_other_traffic_as_proof_and_shares_one_probe():
    calls: list[str] = []

    class Counting(ScriptedModel):
        def complete(self, request):
            calls.append(request.messages[0].content or "")
            time.sleep(0.2)
            return super().complete(request)

    clock = [100.0]
    witness = ServiceWitness(Counting(["ok"]), clock=lambda: clock[0])
    witness.answered()
    # an answer after it began
    assert witness.up_since(99.0) == (True, witness.up_since(99.0)[1]) and calls == []
    clock[0] = 200.0
    results: list[bool] = []
    waiters = [threading.Thread(target=lambda: results.append(witness.up_since(150.0)[0])) for _ in range(4)]
    for waiter in waiters:
        waiter.start()
    for waiter in waiters:
        waiter.join()
    assert results == [True] * 4 and len(calls) == 1  # four failures, one probe


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.one_of(ANY_JSON, MUTATED))
def test_no_generated_request_makes_an_upstream_failure(value):
    model = ScriptedModel(["ok"])
    with Gateway(every_role(model)) as gateway:
        gateway.open_job("j", "n", "solve", 100_000)
        status, _ = gateway.handle("j", "POST", "/v1/chat/completions", encode(value))
        report = gateway.close_job("j")
    assert status in (200, 400, 403) and report.upstream_failures == 0
