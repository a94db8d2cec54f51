"""The agent's own tests pin its contract (the CLI, the gateway client, the editor) and its edit machinery,
not its strategy."""
import json
import socketserver
import sys
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.requests.append((self.path, json.loads(body)))
        status, content = self.server.replies.pop(0) if self.server.replies else (200, "```done\n```")
        reply = ({"choices": [{"message": {"content": content}}], "usage": {"total_tokens": 7}}
                 if status == 200 else {})
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


class UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):
        return self.socket.accept()[0], ("local", 0)


@pytest.fixture
def gateway(tmp_path, monkeypatch):
    """A stand-in gateway on a Unix socket: `.replies` is a list of (status, content), `.requests` what it
    got."""
    server = UnixServer(str(tmp_path / "llm.sock"), Handler)
    server.requests, server.replies = [], []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("EVOLVE_LLM_SOCKET", str(tmp_path / "llm.sock"))
    monkeypatch.delenv("EVOLVE_LLM_URL", raising=False)
    # improve runs these tests: not into its transcript
    monkeypatch.delenv("EVOLVE_TRANSCRIPT", raising=False)
    monkeypatch.setattr("agent.model.time.sleep", lambda s: None)
    yield server
    server.shutdown()
    server.server_close()
