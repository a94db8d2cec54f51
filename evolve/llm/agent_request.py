"""An agent's chat request, read strictly: what the gateway accepts before it counts or forwards anything.

Sandboxed code writes these bytes, so the gateway never hands a provider (or its own client code) a
value it has not checked: a request the provider or the engine could choke on would become an
upstream failure, and upstream failures are the one agent-visible path to an `infra` verdict. Every
failure here is the agent's 400 with one line naming the field. In order:

1. shape, before parsing: at most `max_values` JSON values and `max_depth` nesting, counted on the raw
   bytes (strings skipped), so `json.loads` never builds more than that many objects;
2. strict JSON: UTF-8 only, no `NaN`/`Infinity`, every number finite and integers within 64 bits,
   every string (keys too) valid Unicode (no lone surrogates);
3. the OpenAI chat-completions schema, strictly typed (no bool for a number, no float for an int),
   known fields only, with the caps below.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from types import MappingProxyType
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from evolve.errors import EvolveError
from evolve.llm.types import ChatRequest, Message, ToolCall
from evolve.untrusted import json_path, shape_problem, value_problem


class RequestInvalid(EvolveError):
    """A request the gateway refuses as the agent's own error (HTTP 400); the message is one line."""


@dataclass(frozen=True)
class RequestLimits:
    """What one request may hold (the body cap itself is `GatewayLimits.max_request_bytes`)."""

    max_values: int = 65_536
    """JSON values and keys in one body (a message is about four)."""
    max_depth: int = 32
    """Nesting of arrays and objects (a tool's parameter schema is the deepest part)."""
    max_messages: int = 2_048
    max_parts: int = 4_096
    """Content parts over all messages of one request."""
    max_tools: int = 128
    max_tool_calls: int = 128
    """Tool calls in one assistant message."""
    max_stop: int = 4
    max_stop_chars: int = 256
    max_schema_chars: int = 16_384
    """A `response_format`'s JSON, serialized."""
    max_schema_bound: int = 4_096
    """A schema's `maxLength`, `maxItems` (and their minimums): the grammar repeats a rule that often."""


DEFAULT_LIMITS = RequestLimits()


def check_shape(body: bytes, limits: RequestLimits = DEFAULT_LIMITS) -> None:
    """Refuse a body with too many JSON values or too deep a nesting, from its bytes alone
    (evolve.untrusted.shape_problem: its work and memory stay within the caps whatever the body holds)."""
    problem = shape_problem(body, max_values=limits.max_values, max_depth=limits.max_depth)
    if problem is not None:
        raise RequestInvalid(f"the request {problem} (the gateway's cap)")


def _no_constant(name: str) -> Any:
    raise RequestInvalid(f"{name} is not a JSON number (the gateway takes finite numbers only)")


def parse_json(body: bytes) -> Any:
    """Strict JSON: UTF-8 text, no NaN/Infinity (as literals or by overflow), 64-bit integers, valid
    Unicode."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RequestInvalid(f"the body is not UTF-8 (byte {exc.start}: {exc.reason})") from exc
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except RequestInvalid:
        raise
    except ValueError as exc:  # JSONDecodeError, and integers past Python's digit limit
        raise RequestInvalid(f"the body is not valid JSON: {exc}") from exc
    return value


def check_values(value: Any) -> None:
    """Every string valid Unicode, every number finite and every integer within 64 bits, anywhere in
    `value`."""
    problem = value_problem(value)
    if problem is not None:
        raise RequestInvalid(problem)


# -- the schema (strict: a bool is no number, a float no integer; unknown keys are refused) ------------------

_Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
_Id = Annotated[str, StringConstraints(pattern=r"^[!-~]{1,256}$")]
_Short = Annotated[str, StringConstraints(max_length=256)]


class _Wire(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class _Function(_Wire):
    name: _Name
    arguments: str = "{}"


class _WireCall(_Wire):
    id: _Id | None = None
    type: Literal["function"] = "function"
    function: _Function


class _TextPart(_Wire):
    type: Literal["text"]
    text: str


class _WireMessage(_Wire):
    role: Literal["system", "user", "assistant", "tool"]
    content: str | list[_TextPart] | None = None
    name: _Name | None = None
    tool_calls: list[_WireCall] | None = None
    tool_call_id: _Id | None = None
    # What an OpenAI response message carries besides; an agent may echo one back. Only empty values.
    refusal: None = None
    function_call: None = None
    audio: None = None
    annotations: Annotated[list[None], Field(max_length=0)] | None = None


class _FunctionSpec(_Wire):
    name: _Name
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class _Tool(_Wire):
    type: Literal["function"]
    function: _FunctionSpec


class _NamedFunction(_Wire):
    name: _Name


class _ToolChoice(_Wire):
    type: Literal["function"]
    function: _NamedFunction


class _JsonSchema(_Wire):
    name: _Name
    description: str | None = None
    schema_: dict[str, Any] = Field(alias="schema")
    strict: bool | None = None


class _Text(_Wire):
    type: Literal["text", "json_object"]


class _SchemaFormat(_Wire):
    type: Literal["json_schema"]
    json_schema: _JsonSchema


class _WireRequest(_Wire):
    messages: list[_WireMessage] = Field(min_length=1)
    model: _Short | None = None
    """Ignored: the gateway picks the job's model."""
    tools: list[_Tool] | None = None
    tool_choice: Literal["none", "auto", "required"] | _ToolChoice | None = None
    temperature: Annotated[float, Field(ge=0.0, le=2.0)] | None = None
    max_tokens: Annotated[int, Field(ge=1, lt=2**31)] | None = None
    max_completion_tokens: Annotated[int, Field(ge=1, lt=2**31)] | None = None
    stop: Annotated[str, Field(min_length=1)] | list[Annotated[str, Field(min_length=1)]] | None = None
    stream: Literal[False] | None = None
    n: Literal[1] | None = None
    user: _Short | None = None
    """Ignored."""
    seed: int | None = None
    """Ignored: the gateway derives each request's seed from the run seed (`gateway.request_seed`)."""
    response_format: _Text | _SchemaFormat | None = None


ACCEPTED_FIELDS = tuple(_WireRequest.model_fields)


_HINTS = MappingProxyType(
    {"stream": "streaming is not supported by the gateway", "n": "the gateway answers one choice"}
)
_UNION_TAGS = frozenset(
    {
        "str",
        "list[_TextPart]",
        "_ToolChoice",
        "literal['none','auto','required']",
        "list[constrained-str]",
        "constrained-str",
        "_Text",
        "_SchemaFormat",
    }
)


def _first_error(exc: ValidationError) -> str:
    """One line for the deepest error (of a union's alternatives, the one that got furthest)."""
    errors = exc.errors(include_url=False)
    error = max(errors, key=lambda e: len(e["loc"]))
    loc = tuple(step for step in error["loc"] if not (isinstance(step, str) and step in _UNION_TAGS))
    where = json_path(loc)
    if error["type"] == "extra_forbidden":
        known = f" (a request takes {', '.join(ACCEPTED_FIELDS)})" if len(loc) == 1 else ""
        return f"{where}: unknown field{known}"
    hint = f" ({_HINTS[where]})" if where in _HINTS else ""
    return f"{where}: {error['msg']}{hint}"


def _count(value: Any) -> int:
    return len(value) if isinstance(value, list) else 0


def _caps(body: dict[str, Any], limits: RequestLimits) -> None:
    """The count caps, on the parsed body before the schema builds a model of each item."""
    messages = body.get("messages")
    if _count(messages) > limits.max_messages:
        raise RequestInvalid(
            f"messages: {_count(messages)} messages; the gateway takes at most {limits.max_messages}"
        )
    messages = messages if isinstance(messages, list) else []
    parts = sum(_count(m.get("content")) for m in messages if isinstance(m, dict))
    if parts > limits.max_parts:
        raise RequestInvalid(f"messages: {parts} content parts; the gateway takes at most {limits.max_parts}")
    if _count(body.get("tools")) > limits.max_tools:
        raise RequestInvalid(
            f"tools: {_count(body.get('tools'))} tools; the gateway takes at most {limits.max_tools}"
        )
    for index, message in enumerate(messages):
        if isinstance(message, dict) and _count(message.get("tool_calls")) > limits.max_tool_calls:
            raise RequestInvalid(f"messages[{index}].tool_calls: more than {limits.max_tool_calls} calls")
    shaped = body.get("response_format")
    if isinstance(shaped, dict):
        if len(json.dumps(shaped)) > limits.max_schema_chars:
            raise RequestInvalid(
                f"response_format: its JSON is over {limits.max_schema_chars} characters (the "
                "gateway's cap: a schema becomes a grammar the model server compiles)"
            )
        inner = shaped.get("json_schema")
        if isinstance(inner, dict):
            _check_schema(inner.get("schema"), ("response_format", "json_schema", "schema"), limits)
    stop = body.get("stop")
    stops = [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else []
    if len(stops) > limits.max_stop or any(
        isinstance(s, str) and len(s) > limits.max_stop_chars for s in stops
    ):
        raise RequestInvalid(
            f"stop: at most {limits.max_stop} sequences of at most {limits.max_stop_chars} characters each"
        )


SCHEMA_KEYS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "oneOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "description",
        "title",
        "strict",
    }
)
"""What a `response_format` schema may use: no `$ref` (no recursion in the grammar it becomes), no `pattern`
(a regular expression compiled to a grammar); every length or count bound at most `max_schema_bound`."""
_BOUNDS = ("minLength", "maxLength", "minItems", "maxItems")


def _check_schema(schema: Any, where: tuple[str | int, ...], limits: RequestLimits) -> None:
    """Refuse a schema whose grammar could be large or recursive, naming the first key that makes it so."""
    stack = [(schema, where)]
    while stack:
        node, path = stack.pop()
        if isinstance(node, list):
            stack.extend((item, (*path, index)) for index, item in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            if key not in SCHEMA_KEYS:
                place = json_path((*path, key))
                known = ", ".join(sorted(SCHEMA_KEYS))
                raise RequestInvalid(f"{place}: not a schema key the gateway takes ({known})")
            if key in _BOUNDS and not (isinstance(value, int) and 0 <= value <= limits.max_schema_bound):
                place = json_path((*path, key))
                raise RequestInvalid(f"{place}: a bound from 0 to {limits.max_schema_bound}")
            if key == "properties" and isinstance(value, dict):
                stack.extend((inner, (*path, key, name)) for name, inner in value.items())
            elif key in ("items", "anyOf", "oneOf", "additionalProperties"):
                stack.append((value, (*path, key)))


def _message(wire: _WireMessage) -> Message:
    content = wire.content
    if isinstance(content, list):
        content = "".join(part.text for part in content)
    calls = tuple(
        ToolCall(id=c.id or "", name=c.function.name, arguments=c.function.arguments or "{}")
        for c in wire.tool_calls or ()
    )
    return Message(
        role=wire.role, content=content, tool_calls=calls, tool_call_id=wire.tool_call_id, name=wire.name
    )


def request_from_openai(body: Any, limits: RequestLimits = DEFAULT_LIMITS) -> ChatRequest:
    """The `ChatRequest` of a parsed OpenAI chat-completions body, or `RequestInvalid` naming the field."""
    if not isinstance(body, dict):
        raise RequestInvalid("the body is not a JSON object")
    _caps(body, limits)
    check_values(body)
    try:
        wire = _WireRequest.model_validate(body)
    except ValidationError as exc:
        raise RequestInvalid(_first_error(exc)) from None
    stop = wire.stop
    tool_choice = (
        wire.tool_choice.model_dump() if isinstance(wire.tool_choice, _ToolChoice) else wire.tool_choice
    )
    return ChatRequest(
        messages=tuple(_message(m) for m in wire.messages),
        tools=tuple(tool.model_dump(exclude_none=True) for tool in wire.tools or ()),
        tool_choice=tool_choice,
        temperature=wire.temperature,
        max_tokens=wire.max_tokens or wire.max_completion_tokens,
        stop=(stop,) if isinstance(stop, str) else tuple(stop or ()),
        response_format=wire.response_format.model_dump(by_alias=True, exclude_none=True)
        if wire.response_format is not None
        else None,
    )


def read_request(body: bytes, limits: RequestLimits = DEFAULT_LIMITS) -> ChatRequest:
    """The `ChatRequest` in a raw body: shape, strict JSON, then the schema."""
    check_shape(body, limits)
    return request_from_openai(parse_json(body), limits)
