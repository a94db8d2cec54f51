"""Seeded sampling: the gateway gives each request a seed derived from (run seed, job, request number),
providers that accept one get it, and records and replay are unchanged by it."""

from __future__ import annotations

import json

from evolve.llm.client import openai_arguments
from evolve.llm.exchanges import read_exchanges, request_digest
from evolve.llm.gateway import Gateway, request_seed
from evolve.llm.types import ChatRequest, Message
from evolve.models.capabilities import capabilities
from evolve.standins.models import ScriptedModel, every_role


def seeds_sent(run_seed, post, chat, jobs=(1, 2), prompts=("a", "b", "a")) -> list[int | None]:
    model = ScriptedModel(["ok"])
    with Gateway(every_role(model), seed=run_seed) as gateway:
        for job_id in jobs:
            channel = gateway.open_job(job_id, "n", "solve", 10_000)
            for prompt in prompts:
                assert post(channel.socket_path, chat(prompt, seed=12345))[0] == 200
    return [r.seed for r in model.requests]


def test_each_request_gets_a_seed_from_run_seed_job_and_request_number(post, chat):
    first = seeds_sent(7, post, chat)
    assert first == seeds_sent(7, post, chat)  # the same config seeds the same requests alike
    assert first == [request_seed(7, str(job), n) for job in (1, 2) for n in range(3)]
    assert len(set(first)) == 6  # per job and per request, not one seed for all (nor the agent's 12345)
    assert seeds_sent(8, post, chat) != first
    assert all(0 <= s < 2**31 for s in first)


def test_without_a_run_seed_nothing_is_seeded(post, chat):
    assert seeds_sent(None, post, chat, jobs=(1,)) == [None, None, None]


def test_providers_that_take_a_seed_get_it_and_others_do_not():
    request = ChatRequest(messages=(Message(role="user", content="hi"),), seed=42)
    for provider, model in (("openai", "gpt-4o"), ("vllm", "qwen"), ("llamacpp", "qwen"), ("embedded", "q")):
        assert openai_arguments(request, model, capabilities(provider, model), 0.2, 100)["seed"] == 42
    assert "seed" not in openai_arguments(request, "o3", capabilities("openai", "o3"), 0.2, 100)
    assert not capabilities("anthropic", "claude-sonnet-4").seed
    unseeded = request.model_copy(update={"seed": None})
    assert "seed" not in openai_arguments(unseeded, "qwen", capabilities("vllm", "qwen"), 0.2, 100)


def test_records_and_replay_ignore_the_seed(tmp_path, post, chat):
    exchanges = tmp_path / "exchanges"
    # an old recording
    with Gateway(every_role(ScriptedModel(["r1", "r2"])), exchanges_dir=exchanges) as unseeded:
        job = unseeded.open_job(3, "n", "solve", 1000)
        recorded = [post(job.socket_path, chat(p)) for p in ("first", "second")]
    with Gateway(
        every_role(ScriptedModel(["r1", "r2"])), exchanges_dir=tmp_path / "seeded", seed=5
    ) as seeded:
        job = seeded.open_job(3, "n", "solve", 1000)
        for p in ("first", "second"):
            post(job.socket_path, chat(p))
    old = [e.request_sha256 for e in read_exchanges(exchanges / "job-3.jsonl")]
    new = read_exchanges(tmp_path / "seeded" / "job-3.jsonl")
    assert [e.request_sha256 for e in new] == old  # the seed is not part of a request's digest
    assert all(
        "seed" not in json.loads(line)["request"]
        for line in (tmp_path / "seeded" / "job-3.jsonl").read_text().splitlines()
    )
    assert request_digest(new[0].request.model_copy(update={"seed": 9})) == old[0]
    with Gateway(replay_from=exchanges, seed=5) as replay:
        job = replay.open_job(3, "n", "solve", 1000)
        assert [post(job.socket_path, chat(p)) for p in ("first", "second")] == recorded
