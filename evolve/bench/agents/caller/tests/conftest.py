"""A pretend gateway on a Unix socket: it answers with the queued assistant messages, then with `finish`."""
import json
import socketserver
import sys
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
FINISH = {"role": "assistant", "content": "", "tool_calls": [
    {"id": "end", "type": "function",
     "function": {"name": "finish", "arguments": "{\"summary\": \"done\"}"}}]}


class Answers(BaseHTTPRequestHandler):
    def do_POST(self):
        self.server.seen.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        message = self.server.queue.pop(0) if self.server.queue else FINISH
        data = json.dumps({"choices": [{"message": message}]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


class SocketServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):
        return self.socket.accept()[0], ("local", 0)


@pytest.fixture
def pretend_gateway(tmp_path, monkeypatch):
    """`.queue`: assistant messages to send in order; `.seen`: the request bodies received."""
    server = SocketServer(str(tmp_path / "gw.sock"), Answers)
    server.seen, server.queue = [], []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("EVOLVE_LLM_SOCKET", str(tmp_path / "gw.sock"))
    for name in ("EVOLVE_LLM_URL", "EVOLVE_LLM_TOKEN", "EVOLVE_TRANSCRIPT"):
        monkeypatch.delenv(name, raising=False)
    yield server
    server.shutdown()
    server.server_close()
