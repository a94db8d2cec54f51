"""Attacks through the gateway by the agent under evaluation, each through the real pipeline (the agent in a
Docker sandbox, the real gateway on the job's socket, the engine's diff, the real grader): a failing agent
that adds a request the gateway or a provider cannot handle gets `fail`/`error`, never `infra`; a job's
flood of bytes outside the token count stops at its byte budget. Each attack has an honest twin that
still passes (or, for a real outage, is still `infra`)."""

from __future__ import annotations

import pytest

from evolve.standins.models import FailsOn, ScriptedModel

from .conftest import FIX

POST = """python3 - <<'PY'
import os, socket
body = {body}
for _ in range({times}):
    s = socket.socket(socket.AF_UNIX)
    s.connect(os.environ["EVOLVE_LLM_SOCKET"])
    try:
        s.sendall(b"POST /v1/chat/completions HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n"
                  + b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body)
    except OSError:
        pass  # refused before the body was read: the answer is still there
    print(s.recv(200).split(b"\\r\\n")[0].decode())
    s.close()
PY
"""


def post(body: bytes | str, times: int = 1) -> str:
    """A shell step that sends `body` (bytes, or a Python expression made in the sandbox) to the job's
    gateway socket `times` times, as raw bytes."""
    return POST.format(body=body if isinstance(body, str) else repr(body), times=times)


TOOL_HEAD = (
    b'{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function",'
    b'"function":{"name":"f","parameters":'
)
MESSAGES_HEAD, TINY = b'{"messages":[', b'{"role":"user"}'
UNHANDLED = {
    "lone surrogate in content": b'{"messages":[{"role":"user","content":"x\\ud800"}]}',
    "lone surrogate in a tool description": b'{"messages":[{"role":"user","content":"x"}],"tools":['
    b'{"type":"function","function":{"name":"f","description":"\\udc00"}}]}',
    "lone surrogate in tool_choice": b'{"messages":[{"role":"user","content":"x"}],"tools":['
    b'{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":'
    b'{"name":"\\ud800"}}}',
    "NaN temperature": b'{"messages":[{"role":"user","content":"x"}],"temperature":NaN}',
    "infinite temperature": b'{"messages":[{"role":"user","content":"x"}],"temperature":1e999}',
    "250,000 tiny messages": f"{MESSAGES_HEAD!r} + b','.join([{TINY!r}] * 250_000) + b']}}'",
    "nesting past the recursion limit": f"{TOOL_HEAD!r} + b'[' * 3000 + b']' * 3000 + b'}}}}]}}'",
}


@pytest.mark.parametrize("body", list(UNHANDLED.values()), ids=list(UNHANDLED))
def test_a_request_the_gateway_cannot_handle_does_not_make_a_failure_infra(attempt, body):
    result = attempt(ScriptedModel([post(body) + "exit 1\n"]))
    assert result.outcome == "error", result.detail
    assert "HTTP/1.1 400" in (result.log_dir / "agent.log").read_text()


def test_twin_a_fix_beside_the_same_requests_passes(attempt):
    result = attempt(ScriptedModel([FIX + "".join(post(body) for body in UNHANDLED.values())]))
    assert result.outcome == "pass", result.detail


POISON = "POISON-7f3a"


def test_a_body_the_provider_fails_on_while_it_answers_others_is_not_infra(attempt):
    body = b'{"messages":[{"role":"user","content":"' + POISON.encode() + b'"}]}'
    model = FailsOn(ScriptedModel([post(body, times=3) + "exit 1\n"]), POISON)
    result = attempt(model)
    assert result.outcome == "error", result.detail
    assert model.failed == 3 and "HTTP/1.1 400" in (result.log_dir / "agent.log").read_text()


def test_twin_a_provider_that_fails_every_request_is_infra(attempt):
    result = attempt(FailsOn(ScriptedModel([FIX]), POISON, down=True))
    assert result.outcome == "infra" and "upstream failure" in result.detail


PADDED_HEAD = b'{"messages":[{"role":"user","content":"x"}]'


def test_bytes_outside_the_token_count_stop_at_the_jobs_byte_budget(attempt, executor_node):
    run, _ = executor_node
    size = 4 * 1024 * 1024 - 60
    padded = f"{PADDED_HEAD!r} + b' ' * {size} + b'}}'"
    result = attempt(ScriptedModel([post(padded, times=12) + "exit 1\n"]))
    agent_log = (result.log_dir / "agent.log").read_text()
    budget = 300_000 * 64  # EvalSettings' job tokens times the default bytes per token
    logged = sum(path.stat().st_size for path in (run.path / "exchanges").iterdir())
    assert result.outcome == "error", result.detail
    assert "HTTP/1.1 403" in agent_log and logged < budget
    assert agent_log.count("HTTP/1.1 200") <= budget // size


def test_twin_a_fix_after_spending_part_of_the_byte_budget_passes(attempt):
    padded = f"{PADDED_HEAD!r} + b' ' * 1048576 + b'}}'"
    result = attempt(ScriptedModel([post(padded, times=3) + FIX]))
    assert result.outcome == "pass", result.detail


RAW = """python3 - <<'PY'
import os, socket, time
s = socket.socket(socket.AF_UNIX)
s.connect(os.environ["EVOLVE_LLM_SOCKET"])
try:
    s.sendall({data})
    time.sleep({hold})
    print(s.recv(200).split(b"\\r\\n")[0].decode() or "closed")
except OSError as exc:
    print("closed", exc)
PY
"""


def raw(data: str, hold: float = 0.0) -> str:
    """A shell step that sends the bytes of the Python expression `data` as they are, waits, reads the
    answer."""
    return RAW.format(data=data, hold=hold)


NEXT_CLASS = {
    "header flood": raw(
        "b'POST /v1/chat/completions HTTP/1.1\\r\\n' + b''.join(b'X-%d: %s\\r\\n' % (i, b'a' * 1000) "
        "for i in range(90)) + b'\\r\\n'"
    ),
    "over-long request line": raw("b'GET /' + b'a' * 70000 + b' HTTP/1.1\\r\\n\\r\\n'"),
    "slowloris": raw("b'POST /v1/chat/completions HTTP/1.1\\r\\nContent-Length: 100\\r\\n\\r\\n{'", hold=0.5),
    "streaming": post(b'{"messages":[{"role":"user","content":"x"}],"stream":true}'),
    "huge n": post(b'{"messages":[{"role":"user","content":"x"}],"n":100000}'),
    "logprobs": post(b'{"messages":[{"role":"user","content":"x"}],"logprobs":true,"top_logprobs":20}'),
    "max_tokens past 32 bits": post(
        b'{"messages":[{"role":"user","content":"x"}],"max_tokens":1099511627776}'
    ),
    "max_tokens as a bool": post(b'{"messages":[{"role":"user","content":"x"}],"max_tokens":true}'),
    "tool_call id with control characters": post(
        b'{"messages":[{"role":"assistant","tool_calls":[{"id":"a\\u0000\\n",'
        b'"type":"function","function":{"name":"f","arguments":"{}"}}]}]}'
    ),
    "unknown route": raw("b'POST /v1/embeddings HTTP/1.1\\r\\nContent-Length: 2\\r\\n\\r\\n{}'"),
}


@pytest.mark.parametrize("step", list(NEXT_CLASS.values()), ids=list(NEXT_CLASS))
def test_the_next_class_of_gateway_abuse_gets_no_credit(attempt, step):
    result = attempt(ScriptedModel([step + "exit 1\n"]))
    assert result.outcome == "error", result.detail


def test_twin_a_fix_beside_the_same_abuse_passes(attempt):
    result = attempt(ScriptedModel(["".join(NEXT_CLASS.values()) + FIX]))
    assert result.outcome == "pass", result.detail
    log = (result.log_dir / "agent.log").read_text()
    assert "HTTP/1.1 431" in log and "HTTP/1.1 400" in log and "HTTP/1.1 404" in log
