"""The gateway's strict reading of an agent's request: what it refuses (one line naming the field, the
agent's 400) and, property-tested with generated requests, that whatever it accepts every client can
send and the exchange log can record."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evolve.llm.agent_request import RequestInvalid, RequestLimits, check_shape, read_request
from evolve.llm.anthropic_wire import anthropic_payload
from evolve.llm.client import openai_arguments
from evolve.llm.exchanges import Exchange, canonical_request
from evolve.llm.failures import ModelError
from evolve.llm.types import ChatResponse, Message
from evolve.models.capabilities import capabilities


def body(**fields: object) -> bytes:
    return json.dumps({"messages": [{"role": "user", "content": "hi"}], **fields}).encode()


def refused(data: bytes) -> str:
    with pytest.raises(RequestInvalid) as error:
        read_request(data)
    return str(error.value)


TOOL = {"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}

REFUSED = {
    "surrogate in content": (
        b'{"messages":[{"role":"user","content":"a\\ud800b"}]}',
        "messages[0].content: a lone surrogate",
    ),
    "surrogate in a tool description": (
        body(tools=[{**TOOL, "function": {"name": "f", "description": "\udc00"}}]),
        "tools[0].function.description: a lone surrogate",
    ),
    "surrogate in tool_choice": (
        body(tools=[TOOL], tool_choice={"type": "function", "function": {"name": "\ud800"}}),
        "tool_choice.function.name: a lone surrogate",
    ),
    "surrogate in a key": (
        (
            b'{"messages":[{"role":"user","content":"a"}],"tools":[{"type":"function","function":'
            b'{"name":"f","parameters":{"\\ud800":1}}}]}'
        ),
        "a lone surrogate",
    ),
    "surrogate in a name": (
        body(messages=[{"role": "user", "content": "a", "name": "\ud800"}]),
        "lone surrogate",
    ),
    "surrogate in a tool call id": (
        body(
            messages=[
                {
                    "role": "assistant",
                    "tool_calls": [
                        {"id": "\udfff", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                    ],
                }
            ]
        ),
        "lone surrogate",
    ),
    "NaN temperature": (body(temperature=float("nan")), "NaN is not a JSON number"),
    "Infinity temperature": (body(temperature=float("inf")), "Infinity is not a JSON number"),
    "temperature overflowing to inf": (
        body()[:-1] + b',"temperature":1e999}',
        "temperature: inf is not a finite",
    ),
    "NaN in a tool schema": (
        body(tools=[{**TOOL, "function": {"name": "f", "parameters": {"maximum": float("nan")}}}]),
        "NaN",
    ),
    "huge integer in a tool schema": (
        body(tools=[{**TOOL, "function": {"name": "f", "parameters": {"max": 2**70}}}]),
        "outside 64 bits",
    ),
    "bool temperature": (body(temperature=True), "temperature: Input should be a valid number"),
    "float max_tokens": (body(max_tokens=1.5), "max_tokens: Input should be a valid integer"),
    "zero max_tokens": (body(max_tokens=0), "max_tokens: Input should be greater than or equal to 1"),
    "huge max_tokens": (body(max_tokens=2**40), "max_tokens"),
    "negative temperature": (body(temperature=-1), "temperature"),
    "unknown field": (body(logprobs=True), "logprobs: unknown field"),
    "huge n": (body(n=1000), "n: Input should be 1 (the gateway answers one choice)"),
    "streaming": (body(stream=True), "streaming is not supported"),
    "unknown role": (body(messages=[{"role": "developer", "content": "x"}]), "messages[0].role"),
    "image part": (
        body(messages=[{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]),
        "messages[0].content[0].type",
    ),
    "no messages": (body(messages=[]), "messages"),
    "not an object": (b"[1, 2]", "not a JSON object"),
    "not UTF-8": (b'{"messages":"\xff"}', "not UTF-8"),
    "UTF-16": ('{"messages":[]}'.encode("utf-16"), "not UTF-8"),
    "not JSON": (b'{"messages": [', "not valid JSON"),
    "too deep": (
        body(tools=[{**TOOL, "function": {"name": "f", "parameters": json.loads("[" * 40 + "]" * 40)}}]),
        "nests",
    ),
    "a million tiny messages": (
        b'{"messages":[' + b",".join([b'{"role":"user"}'] * 1_000_000) + b"]}",
        "JSON values",
    ),
    "too many messages": (body(messages=[{"role": "user", "content": "x"}] * 3000), "3000 messages"),
    "too many stops": (body(stop=["a", "b", "c", "d", "e"]), "stop: at most 4"),
    "long stop": (body(stop="x" * 300), "stop: at most 4"),
    "empty stop": (body(stop=[""]), "stop[0]"),
    "bad tool name": (body(tools=[{**TOOL, "function": {"name": "no spaces"}}]), "tools[0].function.name"),
    "bad tool_choice": (body(tool_choice="sometimes"), "tool_choice"),
    "unknown response format": (body(response_format={"type": "xml"}), "response_format.type"),
    "a schema format without its schema": (
        body(response_format={"type": "json_schema", "json_schema": {"name": "d"}}),
        "response_format.json_schema.schema: Field required",
    ),
    "a recursive schema": (
        body(
            response_format={
                "type": "json_schema",
                "json_schema": {
                    "name": "d",
                    "schema": {"type": "object", "properties": {"next": {"$ref": "#"}}},
                },
            }
        ),
        "response_format.json_schema.schema.properties.next.$ref: not a schema key",
    ),
    "a schema with a pattern": (
        body(
            response_format={
                "type": "json_schema",
                "json_schema": {
                    "name": "d",
                    "schema": {"type": "array", "items": {"type": "string", "pattern": "(a|b)*c{1,9999}"}},
                },
            }
        ),
        "response_format.json_schema.schema.items.pattern: not a schema key",
    ),
    "a schema whose bound repeats a rule a billion times": (
        body(
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "d", "schema": {"anyOf": [{"type": "string", "maxLength": 10**9}]}},
            }
        ),
        "response_format.json_schema.schema.anyOf[0].maxLength: a bound from 0 to 4096",
    ),
    "a schema too large to compile": (
        body(
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "d", "schema": {"enum": ["x" * 100] * 200}},
            }
        ),
        "response_format: its JSON is over 16384",
    ),
    "tool call id with a space": (
        body(
            messages=[
                {
                    "role": "assistant",
                    "tool_calls": [{"id": "c 1", "type": "function", "function": {"name": "f"}}],
                }
            ]
        ),
        "messages[0].tool_calls[0].id",
    ),
}


@pytest.mark.parametrize(("data", "says"), list(REFUSED.values()), ids=list(REFUSED))
def test_each_bad_request_is_refused_with_one_line_naming_it(data, says):
    message = refused(data)
    assert says in message and "\n" not in message


def test_an_honest_request_is_read_whole():
    request = read_request(
        json.dumps(
            {
                "model": "default",
                "temperature": 0.2,
                "max_tokens": 1024,
                "stop": ["\n```\n"],
                "user": "u",
                "n": 1,
                "stream": False,
                "tools": [TOOL],
                "tool_choice": {"type": "function", "function": {"name": "f"}},
                "messages": [
                    {"role": "system", "content": "be brief \U0001f600"},
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
                    },
                    {
                        "role": "assistant",
                        "content": None,
                        "refusal": None,
                        "annotations": [],
                        "tool_calls": [
                            {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                        ],
                    },
                    {"role": "tool", "tool_call_id": "call_1", "content": "done\u0000\x1b[0m"},
                ],
            }
        ).encode()
    )
    assert [m.role for m in request.messages] == ["system", "user", "assistant", "tool"]
    assert request.messages[1].content == "ab" and request.messages[2].tool_calls[0].id == "call_1"
    assert (request.temperature, request.max_tokens, request.stop) == (0.2, 1024, ("\n```\n",))
    assert request.tools == (TOOL,) and request.tool_choice == {"type": "function", "function": {"name": "f"}}


def test_a_json_schema_format_is_forwarded_where_the_provider_constrains_replies_and_digested_only_if_set():
    """OpenAI's structured outputs: the reply constrained to a schema (the diagnosis asks for its JSON so).
    A request without one digests as before the field existed, so recorded archives still replay."""
    shaped = {
        "type": "json_schema",
        "json_schema": {"name": "diagnosis", "strict": True, "schema": {"type": "object"}},
    }
    request = read_request(body(response_format=shaped))
    assert request.response_format == shaped
    assert openai_arguments(request, "m", capabilities("embedded", "m"), 0.2, 64)["response_format"] == shaped
    assert "response_format" not in openai_arguments(
        request, "m", capabilities("anthropic", "claude-x"), 0.2, 64
    )
    plain = read_request(body())
    assert b"response_format" not in canonical_request(plain) and b'"response_format"' in canonical_request(
        request
    )
    assert "response_format" not in openai_arguments(plain, "m", capabilities("openai", "gpt-4o"), 0.2, 64)


def test_max_completion_tokens_is_read_as_max_tokens():
    assert read_request(body(max_completion_tokens=7)).max_tokens == 7


def test_the_shape_check_counts_values_outside_strings_only():
    check_shape(json.dumps({"messages": [{"role": "user", "content": "[{,:" * 100_000}]}).encode())
    with pytest.raises(RequestInvalid, match="JSON values"):
        check_shape(b"[" + b"0," * 70_000 + b"0]")
    with pytest.raises(RequestInvalid, match="nests more than 2 levels"):
        check_shape(b'[[["\\"]]]"]]]', RequestLimits(max_depth=2))


# -- properties, over generated requests --------------------------------------------------------------------

ANY_CHAR = st.characters(codec=None, exclude_categories=())  # surrogates included
ANY_TEXT = st.text(ANY_CHAR, max_size=12)
SCALARS = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | ANY_TEXT
)
ANY_JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4),
    max_leaves=20,
)

GOOD_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)
NAME = st.from_regex(r"\A[A-Za-z0-9_-]{1,12}\Z")
GOOD_MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "user", "assistant", "tool"]), "content": GOOD_TEXT | st.none()}
)
GOOD_TOOL = st.builds(
    lambda name, text: {
        "type": "function",
        "function": {
            "name": name,
            "description": text,
            "parameters": {"type": "object", "properties": {"x": {"description": text}}},
        },
    },
    NAME,
    GOOD_TEXT,
)
GOOD_REQUEST = st.fixed_dictionaries(
    {"messages": st.lists(GOOD_MESSAGE, min_size=1, max_size=5)},
    optional={
        "tools": st.lists(GOOD_TOOL, max_size=3),
        "temperature": st.floats(0, 2),
        "max_tokens": st.integers(1, 2**31 - 1),
        "stop": st.lists(GOOD_TEXT.filter(bool), max_size=4),
        "model": GOOD_TEXT,
        "tool_choice": st.sampled_from(["auto", "none", "required"]),
    },
)

FIELDS = (
    "messages",
    "tools",
    "tool_choice",
    "temperature",
    "max_tokens",
    "stop",
    "model",
    "n",
    "stream",
    "logprobs",
)
MUTATED = st.builds(
    lambda good, key, value: {**good, key: value}, GOOD_REQUEST, st.sampled_from(FIELDS), ANY_JSON
)
NESTED_MUTATION = st.builds(
    lambda good, value: {**good, "messages": [*good["messages"], value]}, GOOD_REQUEST, ANY_JSON
)


def encode(value: object) -> bytes:
    """What an agent can put on the wire: any JSON text, NaN and lone surrogates (as escapes) included."""
    return json.dumps(value, allow_nan=True, ensure_ascii=True).encode()


def sendable(request) -> None:
    """Everything the gateway does with an accepted request: every client's payload, the canonical form
    and the log line encode as strict JSON in UTF-8."""
    for provider, model in (("openai-compatible", "m"), ("openai", "o3"), ("anthropic", "claude-sonnet-4-6")):
        caps = capabilities(provider, model)
        try:
            if provider == "anthropic":
                payload = anthropic_payload(request, model, 100)
            else:
                payload = openai_arguments(request, model, caps, 0.2, 100)
        # a request the provider's terms cannot hold: the agent's 400, by the client
        except ModelError as exc:
            assert exc.kind == "request"
            continue
        json.dumps(payload, allow_nan=False).encode("utf-8")
    canonical_request(request)
    answer = ChatResponse(message=Message(role="assistant", content="ok"), model="m")
    Exchange(
        seq=0,
        job_id="j",
        node_id="n",
        role="solve",
        request_sha256="0",
        request=request,
        response=answer,
        response_id="r",
        created=0,
    ).model_dump_json().encode("utf-8")


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(ANY_JSON, MUTATED, NESTED_MUTATION))
def test_any_body_is_accepted_sendable_or_refused_as_the_agents_error(value):
    try:
        request = read_request(encode(value))
    except RequestInvalid as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    sendable(request)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(GOOD_REQUEST)
def test_every_well_formed_request_is_accepted_as_sent(value):
    request = read_request(encode(value))
    assert [m.content for m in request.messages] == [m["content"] for m in value["messages"]]
    assert request.max_tokens == value.get("max_tokens") and request.temperature == value.get("temperature")
    assert len(request.tools) == len(value.get("tools", ()))
    sendable(request)


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_any_bytes_are_read_or_refused_never_an_engine_error(data):
    try:
        read_request(data)
    except RequestInvalid:
        pass
