"""The worker-node relay: a job's Unix socket forwarded to the head gateway's TCP port with its token."""

from __future__ import annotations

import socket

import pytest

from evolve.llm.gateway import Gateway, GatewayError
from evolve.llm.relay import GatewayGrant, RelayChannels
from evolve.standins.models import ScriptedModel

from .conftest import unix_json

ASK = {"messages": [{"role": "user", "content": "three words here"}]}


def test_requests_reach_the_head_gateway_with_the_jobs_token_and_usage_is_counted(tmp_path):
    model = ScriptedModel(["the answer"])
    with Gateway({"solve": model}, exchanges_dir=tmp_path) as gateway:
        origin = gateway.start_tcp().removesuffix("/v1")
        head = gateway.open_job("7", "node-a", "solve", 10_000)
        with RelayChannels({"solve": GatewayGrant(origin, head.token, "solve")}) as relay:
            channel = relay.open_job("7", "node-a", "solve", 0)
            assert channel.sandbox_env() == {"EVOLVE_LLM_SOCKET": "/run/evolve/llm.sock"}
            assert channel.socket_path.stat().st_mode & 0o777 == 0o666
            for _ in range(2):
                status, reply = unix_json(channel.socket_path, "POST", "/v1/chat/completions", ASK)
                assert status == 200 and reply["choices"][0]["message"]["content"] == "the answer"
            report = relay.close_job("7")
            assert not channel.socket_path.exists()
        assert report.usage == gateway.usage("7") and report.usage.total_tokens == 2 * (3 + 2)
        assert (report.requests, report.upstream_failures) == (2, 0)
        assert len(model.requests) == 2


def test_a_token_the_head_does_not_know_is_refused(tmp_path):
    with Gateway({"solve": ScriptedModel(["x"])}) as gateway:
        origin = gateway.start_tcp().removesuffix("/v1")
        gateway.open_job("1", "n", "solve", 100)
        with RelayChannels({"solve": GatewayGrant(origin, "forged", "solve")}) as relay:
            channel = relay.open_job("1", "n", "solve", 0)
            status, reply = unix_json(channel.socket_path, "POST", "/v1/chat/completions", ASK)
    assert status == 401 and "token" in reply["error"]["message"]


def test_a_job_closed_on_the_head_gets_no_more_answers(tmp_path):
    with Gateway({"solve": ScriptedModel(["x"])}) as gateway:
        origin = gateway.start_tcp().removesuffix("/v1")
        head = gateway.open_job("1", "n", "solve", 100)
        with RelayChannels({"solve": GatewayGrant(origin, head.token, "solve")}) as relay:
            channel = relay.open_job("1", "n", "solve", 0)
            gateway.close_job("1")
            status, _ = unix_json(channel.socket_path, "POST", "/v1/chat/completions", ASK)
    assert status == 401


def test_an_unreachable_head_is_a_model_error_the_evaluation_calls_infra():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with RelayChannels({"solve": GatewayGrant(f"http://127.0.0.1:{port}", "t", "solve")}) as relay:
        channel = relay.open_job("1", "n", "solve", 0)
        status, reply = unix_json(channel.socket_path, "POST", "/v1/chat/completions", ASK)
        report = relay.close_job("1")
        assert report.usage.total_tokens == 0 and (report.requests, report.upstream_failures) == (0, 1)
    assert (
        status == 502
        and reply["error"]["type"] == "model_error"
        and "unreachable" in reply["error"]["message"]
    )


def test_a_role_without_a_grant_is_a_clear_error():
    with RelayChannels({}) as relay, pytest.raises(GatewayError, match="no gateway grant for role 'modify'"):
        relay.open_job("1", "n", "modify", 0)


@pytest.mark.parametrize(
    "path",
    [
        "/v1/../admin",
        "/v1//@evil.example/x",
        "/v1/chat/completions?x=@evil",
        "/admin",
        "/v1/chat/completions@evil.example:80",
    ],
)
def test_the_relay_forwards_only_v1_paths(tmp_path, path):
    model = ScriptedModel(["x"])
    with Gateway({"solve": model}) as gateway:
        origin = gateway.start_tcp().removesuffix("/v1")
        head = gateway.open_job("1", "n", "solve", 10_000)
        with RelayChannels({"solve": GatewayGrant(origin, head.token, "solve")}) as relay:
            channel = relay.open_job("1", "n", "solve", 0)
            status, reply = unix_json(channel.socket_path, "POST", path, ASK)
    assert status == 404 and "only /v1/" in reply["error"]["message"]
    assert model.requests == []


def test_the_relay_applies_the_head_gateways_body_cap():
    with Gateway({"solve": ScriptedModel(["x"])}) as gateway:
        origin = gateway.start_tcp().removesuffix("/v1")
        head = gateway.open_job("1", "n", "solve", 10_000)
        with RelayChannels(
            {"solve": GatewayGrant(origin, head.token, "solve", max_request_bytes=100)}
        ) as relay:
            channel = relay.open_job("1", "n", "solve", 0)
            status, reply = unix_json(
                channel.socket_path,
                "POST",
                "/v1/chat/completions",
                {"messages": [{"role": "user", "content": "x" * 200}]},
            )
            assert status == 413 and "100-byte cap" in reply["error"]["message"]
            assert unix_json(channel.socket_path, "POST", "/v1/chat/completions", ASK)[0] == 200
