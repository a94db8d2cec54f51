"""Prompt-lookup replay on token ids (llama-cpp-python's drafter, no model)."""

import json

import pytest

pytest.importorskip("llama_cpp", reason="the `local` extra (llama-cpp-python) is not installed")

from evolve.bench.lookup import bench_lookup, recorded_exchanges, replay_reply


def test_a_reply_that_copies_the_prompt_needs_few_steps():
    prompt = list(range(100, 140))
    copied = replay_reply(prompt, prompt[10:30], max_ngram=2, draft_tokens=10)
    assert copied.tokens == 20 and copied.steps <= 4  # one step to start the copy, then 10 at a time


def test_a_reply_unlike_the_prompt_needs_one_step_per_token():
    fresh = replay_reply(list(range(100, 140)), list(range(500, 520)))
    assert (fresh.tokens, fresh.steps, fresh.drafted) == (20, 20, 0)


def test_records_are_read_by_role_from_a_run_directory(tmp_path):
    (tmp_path / "exchanges").mkdir()
    rows = [
        {
            "role": role,
            "request": {"messages": [{"role": "user", "content": "a b c d e f"}]},
            "response": {"message": {"content": "c d e f"}},
        }
        for role in ("solve", "modify")
    ]
    (tmp_path / "exchanges" / "job-1.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    records = list(recorded_exchanges([tmp_path], role="modify"))
    assert [r["role"] for r in records] == ["modify"]
    words = {w: i for i, w in enumerate("abcdef")}
    result = bench_lookup(records, lambda text: [words[w] for w in text.split()])
    assert result.as_json()["tokens"] == 4
