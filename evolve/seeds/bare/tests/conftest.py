"""A stand-in gateway on a Unix socket for the agent's own tests."""
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
        self.server.requests.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        content = self.server.replies.pop(0) if self.server.replies else "```done\n```"
        data = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
        self.send_response(200)
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
    """`.replies`: the model's replies in order (then ```done); `.requests`: the bodies it got."""
    server = UnixServer(str(tmp_path / "llm.sock"), Handler)
    server.requests, server.replies = [], []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("EVOLVE_LLM_SOCKET", str(tmp_path / "llm.sock"))
    for name in ("EVOLVE_LLM_URL", "EVOLVE_LLM_TOKEN", "EVOLVE_TRANSCRIPT"):
        monkeypatch.delenv(name, raising=False)
    yield server
    server.shutdown()
    server.server_close()
