import json
import socketserver
import threading
from http.server import BaseHTTPRequestHandler

import pytest
from agent.model import GatewayModel, Message, ModelError


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append((self.path, body))
        status, reply = self.server.responses.pop(0)
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


class UnixHTTPServer(socketserver.UnixStreamServer):
    def get_request(self):
        request, _ = super().get_request()
        return request, ("local", 0)


@pytest.fixture
def server(tmp_path):
    path = tmp_path / "llm.sock"
    srv = UnixHTTPServer(str(path), Handler)
    srv.requests, srv.responses = [], []
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv, str(path)
    srv.shutdown()
    srv.server_close()


def completion(content, tool_calls=None):
    return {"choices": [{"message": {"content": content, "tool_calls": tool_calls}}], "usage": {"total_tokens": 42}}


def test_chat_over_a_unix_socket(server):
    srv, path = server
    srv.responses.append((200, completion("hi", [{"id": "c", "function": {"name": "bash", "arguments": "{}"}}])))
    model = GatewayModel(socket_path=path)
    reply = model.query([Message("user", "hello")], tools=[{"type": "function"}])
    assert reply.content == "hi" and reply.tool_calls[0].name == "bash" and reply.tokens == 42
    route, body = srv.requests[0]
    assert route == "/v1/chat/completions" and body["messages"] == [{"role": "user", "content": "hello"}]
    assert body["tools"] == [{"type": "function"}]


def test_server_errors_are_retried_client_errors_are_not(server, monkeypatch):
    monkeypatch.setattr("agent.model.time.sleep", lambda s: None)
    srv, path = server
    srv.responses += [(503, {"error": "busy"}), (200, completion("ok"))]
    assert GatewayModel(socket_path=path).query([Message("user", "x")]).content == "ok"
    srv.responses += [(400, {"error": "bad"}), (200, completion("never"))]
    with pytest.raises(ModelError, match="HTTP 400"):
        GatewayModel(socket_path=path).query([Message("user", "x")])


def test_from_env_needs_an_address(monkeypatch):
    monkeypatch.delenv("EVOLVE_LLM_SOCKET", raising=False)
    monkeypatch.delenv("EVOLVE_LLM_URL", raising=False)
    with pytest.raises(ModelError, match="EVOLVE_LLM_SOCKET"):
        GatewayModel.from_env()


def test_cli_improve_talks_to_the_gateway_and_edits_its_workdir(server, tmp_path, monkeypatch):
    from agent.__main__ import main

    srv, path = server
    srv.responses += [(200, completion("```write agent/notes.py\nNOTE = 'better'\n```")),
                      (200, completion("```done\n```")), (200, completion("```done\n```"))]
    workdir = tmp_path / "self"
    (workdir / "agent").mkdir(parents=True)
    (workdir / "agent/__init__.py").write_text("")
    instructions = tmp_path / "instructions.md"
    instructions.write_text("Add agent/notes.py with NOTE = 'better'.")
    monkeypatch.setenv("EVOLVE_LLM_SOCKET", path)
    monkeypatch.delenv("EVOLVE_LLM_URL", raising=False)
    transcript = tmp_path / "t.jsonl"
    code = main(["improve", "--workdir", str(workdir), "--instructions", str(instructions), "--budget-steps", "3",
                 "--transcript", str(transcript)])
    assert code == 0
    assert (workdir / "agent/notes.py").read_text() == "NOTE = 'better'\n"
    assert "improving your own source code" in srv.requests[0][1]["messages"][1]["content"]
    assert any('"status": "submitted"' in line for line in transcript.read_text().splitlines())
