"""The gateway over real Unix sockets: accounting, budgets, recording, replay exactness, key hygiene."""

from __future__ import annotations

import http.client
import json
import stat

import pytest

from evolve.llm.client import ModelError, OpenAICompatible, RetryPolicy, host_key
from evolve.llm.gateway import Gateway
from evolve.llm.types import Message, ToolCall
from evolve.standins.models import (
    FakeOpenAIServer,
    GreedyModel,
    ScriptedModel,
    every_role,
    fake_completion_cap,
)


class RecordingSink:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int, float]] = []

    def add_usage(self, node_id: str, *, tokens: int, cost_usd: float) -> None:
        self.calls.append((node_id, tokens, cost_usd))


def test_tokens_are_counted_per_job_and_sent_to_the_archive(tmp_path, post, chat):
    sink = RecordingSink()
    model = ScriptedModel(["one two", "three"])
    with Gateway(every_role(model), exchanges_dir=tmp_path / "ex", usage_sink=sink) as gateway:
        job = gateway.open_job(7, "node-a", "solve", token_budget=1000)
        assert post(job.socket_path, chat("a b c"))[0] == 200
        assert post(job.socket_path, chat("d e"))[0] == 200
        report = gateway.close_job(7)
    usage = report.usage
    assert (report.requests, report.upstream_failures) == (2, 0)
    assert (usage.prompt_tokens, usage.completion_tokens) == (5, 3)
    assert sink.calls == [("node-a", 5, 0.0), ("node-a", 3, 0.0)]
    lines = (tmp_path / "ex" / "job-7.jsonl").read_text().splitlines()
    assert [json.loads(line)["role"] for line in lines] == ["solve", "solve"]
    assert not job.socket_path.exists()


def test_the_socket_is_world_writable_for_the_sandbox_user(tmp_path):
    with Gateway(every_role(ScriptedModel(["x"]))) as gateway:
        job = gateway.open_job("j", "n", "solve", 10)
        assert stat.S_IMODE(job.socket_path.stat().st_mode) == 0o666
        assert job.sandbox_env() == {"EVOLVE_LLM_SOCKET": "/run/evolve/llm.sock"}


def test_a_spent_budget_is_a_clear_error_and_the_model_is_not_called(tmp_path, post, chat):
    model = ScriptedModel(["a long answer of many words"])
    with Gateway(every_role(model)) as gateway:
        job = gateway.open_job("j", "n", "modify", token_budget=35)
        assert post(job.socket_path, chat("hi there"))[0] == 200
        status, body = post(job.socket_path, chat("again"))
    assert status == 403
    error = json.loads(body)["error"]
    assert error["code"] == "token_budget_exceeded"
    assert "used 8 of 35 tokens" in error["message"] and "27 left" in error["message"]
    assert len(model.requests) == 1
    assert model.requests[0].ceiling == 35 - (16 + 8 + len("hi there"))  # clamped to what is left


def test_tools_and_tool_calls_pass_through(post, chat):
    call = ToolCall(id="c1", name="bash", arguments='{"cmd": "ls"}')
    model = ScriptedModel([Message(role="assistant", tool_calls=(call,))])
    tools = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]
    with Gateway(every_role(model)) as gateway:
        job = gateway.open_job("j", "n", "solve", 1000)
        status, body = post(job.socket_path, chat("list", tools=tools))
    assert status == 200
    choice = json.loads(body)["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["tool_calls"][0]["function"] == {"name": "bash", "arguments": '{"cmd": "ls"}'}
    assert model.requests[0].tools[0]["function"]["name"] == "bash"


def test_replay_answers_byte_identically_and_refuses_unrecorded_requests(tmp_path, post, chat):
    exchanges = tmp_path / "exchanges"
    prompts = ["first", "second", "first"]
    with Gateway(every_role(ScriptedModel(["r1", "r2", "r3"])), exchanges_dir=exchanges) as live:
        job = live.open_job(3, "n", "solve", 1000)
        recorded = [post(job.socket_path, chat(p)) for p in prompts]
    with Gateway(replay_from=exchanges) as replay:
        job = replay.open_job(3, "n", "solve", 1000)
        replayed = [post(job.socket_path, chat(p)) for p in prompts]
        assert (replay.report(3).requests, replay.report(3).replay_misses) == (3, 0)
        status, body = post(job.socket_path, chat("never asked"))
        # what a re-run asked anew
        assert (replay.report(3).requests, replay.report(3).replay_misses) == (3, 1)
    assert replayed == recorded
    assert [json.loads(b)["choices"][0]["message"]["content"] for _, b in replayed] == ["r1", "r2", "r3"]
    assert status == 409
    assert "never recorded" in json.loads(body)["error"]["message"]


def test_replay_of_a_job_that_was_never_recorded_fails_loudly(tmp_path):
    with Gateway(replay_from=tmp_path) as replay, pytest.raises(Exception, match="no recorded exchanges"):
        replay.open_job(99, "n", "solve", 10)


def test_tcp_mode_tells_jobs_apart_by_token():
    with Gateway(every_role(ScriptedModel(["ok"]))) as gateway:
        url = gateway.start_tcp()
        job = gateway.open_job("j", "n", "solve", 100)
        host, port = url.split("//")[1].split("/")[0].split(":")
        body = json.dumps({"messages": [{"role": "user", "content": "hi"}]})
        results = []
        for token in (job.token, "wrong"):
            connection = http.client.HTTPConnection(host, int(port), timeout=10)
            connection.request("POST", "/v1/chat/completions", body, {"Authorization": f"Bearer {token}"})
            results.append(connection.getresponse().status)
            connection.close()
    assert results == [200, 401]
    assert job.process_env()["EVOLVE_LLM_URL"] == url


def test_api_keys_never_reach_the_sandbox_or_the_records(tmp_path, monkeypatch, post, get, chat):
    openai_key, anthropic_key = "sk-test-OPENAI-5b1f9c", "sk-ant-test-ANTHROPIC-77e2"
    monkeypatch.setenv("OPENAI_API_KEY", openai_key)
    monkeypatch.setenv("ANTHROPIC_API_KEY", anthropic_key)
    exchanges = tmp_path / "exchanges"
    with FakeOpenAIServer() as server:
        model = OpenAICompatible(
            server.base_url, "fake", api_key=host_key("OPENAI_API_KEY"), retry=RetryPolicy(attempts=1)
        )
        with Gateway(every_role(model), exchanges_dir=exchanges, socket_dir=tmp_path / "sock") as gateway:
            gateway.start_tcp()
            job = gateway.open_job("k", "n", "solve", 1000)
            seen = [post(job.socket_path, chat("hello")), get(job.socket_path, "/v1/models")]
            visible = json.dumps([job.sandbox_env(), job.process_env()]).encode()
            visible += b"".join(body for _, body in seen)
            visible += b"".join(p.read_bytes() for p in exchanges.rglob("*") if p.is_file())
            visible += b"".join(str(p).encode() for p in (tmp_path / "sock").rglob("*"))
    assert seen[0][0] == 200
    for key in (openai_key, anthropic_key):
        assert key.encode() not in visible


class BrokenModel:
    name = "broken"
    completion_cap = staticmethod(fake_completion_cap)

    def complete(self, request):
        raise ModelError("server down after retries")


def test_bad_requests_and_model_failures_are_errors_the_agent_can_read(post):
    with Gateway(every_role(BrokenModel())) as gateway:
        job = gateway.open_job("j", "n", "solve", 100)
        bad_status, _ = post(job.socket_path, {"messages": [{"content": "no role"}]})
        down_status, down_body = post(job.socket_path, {"messages": [{"role": "user", "content": "hi"}]})
        assert gateway.usage("j").total_tokens == 0
        report = gateway.close_job("j")
    assert (report.requests, report.upstream_failures) == (0, 1)  # the 400 was the agent's, the 502 upstream
    assert bad_status == 400
    assert down_status == 502 and "server down" in json.loads(down_body)["error"]["message"]


def test_concurrent_requests_of_one_job_never_pass_its_budget(post, chat):
    from concurrent.futures import ThreadPoolExecutor

    with Gateway(every_role(GreedyModel(delay_s=0.2))) as gateway:
        job = gateway.open_job("j", "n", "solve", token_budget=200)
        with ThreadPoolExecutor(10) as pool:
            replies = list(pool.map(lambda _: post(job.socket_path, chat("hi")), range(10)))
        used = gateway.usage("j").total_tokens
    assert used <= 200
    assert any(status == 200 for status, _ in replies)
    refused = [json.loads(body)["error"]["message"] for status, body in replies if status == 403]
    assert refused and all("left" in message for message in refused)


class _OverloadedModel:
    """Refuses every call as overloaded once `crowd` calls are waiting together (or at once if 1)."""

    name = "busy"
    completion_cap = staticmethod(fake_completion_cap)

    def __init__(self, crowd: int) -> None:
        import threading

        self._barrier = threading.Barrier(crowd, timeout=10)

    def complete(self, request):
        from evolve.llm.balancer import Overloaded

        self._barrier.wait()
        raise Overloaded("overloaded: every replica busy")


def test_a_lone_overloaded_request_is_an_upstream_failure(post, chat):
    with Gateway(every_role(_OverloadedModel(crowd=1))) as gateway:
        job = gateway.open_job("j", "n", "solve", token_budget=10_000)
        assert post(job.socket_path, chat("hi"))[0] == 503
        assert gateway.close_job("j").upstream_failures == 1


def test_a_job_that_floods_the_server_into_overload_gets_no_infra(post, chat):
    """The attack: keep many requests in flight so the server answers "overloaded", and every failed
    attempt would be retried as infra. Refusals while the job's own requests crowd the server are its own."""
    from concurrent.futures import ThreadPoolExecutor

    with Gateway(every_role(_OverloadedModel(crowd=6))) as gateway:
        job = gateway.open_job("j", "n", "solve", token_budget=100_000)
        with ThreadPoolExecutor(6) as pool:
            statuses = list(pool.map(lambda _: post(job.socket_path, chat("hi", max_tokens=50))[0], range(6)))
        report = gateway.close_job("j")
    assert statuses == [503] * 6
    assert report.upstream_failures < 6  # only the last one left alone may count
