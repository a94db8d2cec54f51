"""The embedded server with the real model: long whitespace tokens arrive whole, the tokenizer round-trips
them, and two interleaved conversations keep their prefixes (second turns read < 10 % again)."""

from __future__ import annotations

import json
import urllib.request

import pytest

from evolve.bench.model import interleaved
from evolve.llm.client import OpenAICompatible
from evolve.llm.embedded import ensure_embedded_model
from evolve.llm.servers import LlamaCppServer

# "a", 40 spaces, "b", 64 spaces, "c", 128 spaces, "d": Qwen has one token for each of these runs,
# which llama-cpp-python 0.3.x's 32-byte detokenizer returned empty (abetlen/llama-cpp-python#2362)
SPACED = "a" + " " * 40 + "b" + " " * 64 + "c" + " " * 128 + "d"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    pytest.importorskip("llama_cpp", reason="the `local` extra (llama-cpp-python) is not installed")
    with LlamaCppServer(ensure_embedded_model(), log_dir=tmp_path_factory.mktemp("logs")) as running:
        yield running


def test_the_tokenizer_returns_every_byte_of_long_tokens():
    pytest.importorskip("llama_cpp", reason="the `local` extra (llama-cpp-python) is not installed")
    from evolve.llm.llama_fix import load_llama

    llama = load_llama(ensure_embedded_model(), vocab_only=True, verbose=False)
    tokens = llama.tokenize(SPACED.encode(), add_bos=False)
    assert any(len(llama._model.token_to_piece(t)) > 32 for t in tokens)  # the case the bug dropped
    assert llama.detokenize(tokens).decode() == SPACED


def test_a_reply_with_40_64_and_128_space_runs_arrives_intact(server):
    body = {
        "model": server.model,
        "temperature": 0,
        "max_tokens": 64,
        "messages": [{"role": "user", "content": f'Repeat exactly, between the quotes: "{SPACED}"'}],
        "grammar": f'root ::= "{SPACED}"',
    }  # forces the text; the model picks how to tokenize it
    request = urllib.request.Request(
        f"{server.base_urls[0]}/chat/completions",
        json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=300) as reply:
        answer = json.loads(reply.read())
    assert answer["choices"][0]["message"]["content"] == SPACED
    assert answer["usage"]["completion_tokens"] <= 12  # the runs came as long tokens, not one space each


def test_two_interleaved_conversations_keep_their_prefixes(server):
    cache = interleaved(OpenAICompatible(server.base_urls[0], server.model, max_tokens=64))
    assert [t.role for t in cache.turns] == ["modify", "solve", "modify", "solve"]
    for role in ("modify", "solve"):
        assert cache.reread(role) < 0.10, cache.as_json()
