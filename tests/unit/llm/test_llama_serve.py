"""The embedded server's HTTP side over a stand-in model (no weights): usage with cached tokens,
OpenAI-style errors, and requests abandoned while queued never reach the model."""

from __future__ import annotations

import json
import socket
import threading
import urllib.error
import urllib.request

import pytest

pytest.importorskip("llama_cpp", reason="the `local` extra (llama-cpp-python) is not installed")

from evolve.llm.llama_serve import ServedModel, http_server
from evolve.llm.prefix_cache import PrefixCache


class StandInLlama:
    """Answers 'ok'; says it read 3 of the prompt's 10 tokens; can be held until released."""

    def __init__(self) -> None:
        self.prefix_cache = PrefixCache(1 << 20)
        self.restored = 0
        self.prompt_read = 3
        self.calls = 0
        self.release = threading.Event()
        self.release.set()
        self.started = threading.Event()
        self.reply = "ok"

    def token_eos(self) -> int:
        return 0

    def create_chat_completion(self, **kwargs):
        self.calls += 1
        self.kwargs = kwargs
        self.started.set()
        self.release.wait(30)
        if kwargs["messages"][0]["content"] == "too long":
            raise ValueError("Requested tokens (9000) exceed context window of 8192")
        content = self.reply if kwargs.get("tools") else "ok"
        return {
            "id": "x",
            "object": "chat.completion",
            "model": kwargs["model"],
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
        }


@pytest.fixture
def served():
    llama = StandInLlama()
    server = http_server(ServedModel(llama, "m"), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield llama, f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _post(url: str, body: object, timeout: float = 30) -> tuple[int, dict]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(f"{url}/chat/completions", data, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _chat(text: str) -> dict:
    return {"model": "any", "messages": [{"role": "user", "content": text}], "max_tokens": 4}


def test_the_usage_says_how_many_prompt_tokens_came_from_saved_contexts(served):
    _, url = served
    status, answer = _post(url, _chat("hi"))
    assert status == 200 and answer["model"] == "m"
    assert answer["usage"]["prompt_tokens_details"] == {"cached_tokens": 7}
    with urllib.request.urlopen(f"{url}/models") as reply:
        assert json.loads(reply.read())["data"][0]["id"] == "m"


def test_bad_requests_get_openai_style_errors(served):
    _, url = served
    status, answer = _post(url, _chat("too long"))
    assert (status, answer["error"]["code"]) == (400, "context_length_exceeded")
    assert _post(url, b"{not json")[0] == 400
    status, answer = _post(url, {"messages": "nope"})
    assert status == 400 and "messages" in answer["error"]["message"]
    assert _post(url, {**_chat("hi"), "stream": True})[0] == 400


def test_a_json_schema_format_becomes_a_grammar_and_one_that_does_not_compile_is_the_callers_400(served):
    """llama-cpp-python's request model takes no `json_schema` format and, given a schema it cannot
    convert, falls back to any JSON without a word: the server compiles the schema itself."""
    import llama_cpp

    llama, url = served
    schema = {
        "type": "object",
        "properties": {"target": {"type": "string", "enum": ["agent/a.py:f"]}},
        "required": ["target"],
        "additionalProperties": False,
    }
    shaped = {"type": "json_schema", "json_schema": {"name": "d", "schema": schema}}
    assert _post(url, {**_chat("hi"), "response_format": shaped})[0] == 200
    assert (
        isinstance(llama.kwargs["grammar"], llama_cpp.LlamaGrammar)
        and llama.kwargs.get("response_format") is None
    )
    calls = llama.calls
    bad = {"type": "json_schema", "json_schema": {"name": "d", "schema": {"type": "wat"}}}
    status, answer = _post(url, {**_chat("hi"), "response_format": bad})
    assert (
        status == 400
        and "does not compile to a grammar" in answer["error"]["message"]
        and llama.calls == calls
    )


def test_a_request_whose_client_left_while_it_queued_never_reaches_the_model(served):
    llama, url = served
    llama.release.clear()
    first = threading.Thread(target=_post, args=(url, _chat("first")))
    first.start()
    assert llama.started.wait(10)  # the model is busy with the first request
    with pytest.raises((TimeoutError, socket.timeout, urllib.error.URLError)):
        _post(url, _chat("abandoned"), timeout=0.5)  # gives up while queued, as a client's timeout does
    llama.release.set()
    first.join(10)
    assert _post(url, _chat("next"))[0] == 200
    assert llama.calls == 2  # the first and the next; the abandoned one was never read


TOOLS = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}]


def test_tool_calls_written_in_the_templates_form_come_back_as_openai_tool_calls(served):
    llama, url = served
    llama.reply = (
        'I will look.\n<tool_call>\n{"name": "read", "arguments": {"path": "a.py"}}\n</tool_call>\n'
        "<tool_call>\nnot json\n</tool_call>\n"
        '<tool_call>\n{"name": "read", "arguments": {"path": "b.py"}'
    )
    status, answer = _post(url, {"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS})
    (choice,) = answer["choices"]
    assert status == 200
    assert choice["finish_reason"] == "tool_calls"
    calls = choice["message"]["tool_calls"]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [{"path": "a.py"}]
    assert (
        choice["message"]["content"].startswith("I will look.") and "not json" in choice["message"]["content"]
    )
    llama.reply = '<tool_call>{"name": "read", "arguments": {}}</tool_call>'
    only = _post(url, {"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS})[1]["choices"][0]
    assert only["message"]["content"] is None and only["message"]["tool_calls"][0]["id"] == "call_0"
    plain = _post(url, {"messages": [{"role": "user", "content": "hi"}]})[1]["choices"][0]
    assert plain["message"]["content"] == "ok" and "tool_calls" not in plain["message"]
    llama.reply = '```json\n{"name": "read", "arguments": {"path": "c.py"}}\n```'  # the tags left out
    bare = _post(url, {"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS})[1]["choices"][0]
    assert json.loads(bare["message"]["tool_calls"][0]["function"]["arguments"]) == {"path": "c.py"}
    llama.reply = '{"name": "write", "arguments": {}}'  # a tool it was not offered: text
    other = _post(url, {"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS})[1]["choices"][0]
    assert "tool_calls" not in other["message"] and other["finish_reason"] == "stop"


def test_an_earlier_calls_arguments_reach_the_template_as_an_object(served):
    llama, url = served
    call = {"id": "call_0", "type": "function", "function": {"name": "read", "arguments": '{"path": "a.py"}'}}
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_0", "content": "x = 1"},
    ]
    assert _post(url, {"messages": messages, "tools": TOOLS})[0] == 200
    sent = llama.kwargs["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert sent == {"path": "a.py"}
