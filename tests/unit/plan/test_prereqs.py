"""What `evolve plan` reports missing: dataset, API keys, a model server that does not answer."""

from __future__ import annotations

import http.server
import socket
import threading

from evolve.config import parse_config
from evolve.plan.prereqs import missing_prerequisites


class _Models(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b'{"data": []}')

    def log_message(self, *args) -> None:  # quiet: the test reads the result, not the log
        return


POLYGLOT_SMALL = """
[sandbox]
backend = "process"
[tasks]
suite = "polyglot:small"
"""
"""A run on the small polyglot suite; each test adds its models."""


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_missing_checkout_key_and_silent_server_are_each_one_line(monkeypatch, tmp_path):
    monkeypatch.delenv("EVOLVE_POLYGLOT_DIR", raising=False)
    monkeypatch.delenv("H20P_NO_SUCH_KEY", raising=False)
    config = parse_config(
        POLYGLOT_SMALL
        + f"""
[models.solve]
provider = "openai"
model = "gpt-5-mini"
api_key_env = "H20P_NO_SUCH_KEY"
[models.modify]
provider = "openai-compatible"
model = "m"
base_url = "http://127.0.0.1:{_closed_port()}/v1"
[models.diagnose]
provider = "scripted"
"""
    )
    missing = missing_prerequisites(config, (), 0)
    assert any(line.startswith("a polyglot checkout") for line in missing)
    assert any("models.solve" in line and "H20P_NO_SUCH_KEY" in line for line in missing)
    assert any("models.modify" in line and "does not answer" in line for line in missing)
    assert len(missing) == 3


def test_a_server_that_answers_and_a_present_checkout_are_not_missing(monkeypatch, tmp_path):
    server = http.server.HTTPServer(("127.0.0.1", 0), _Models)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("EVOLVE_POLYGLOT_DIR", str(tmp_path))
        config = parse_config(
            POLYGLOT_SMALL
            + f"""
[models.solve]
provider = "openai-compatible"
model = "m"
base_url = "http://127.0.0.1:{server.server_address[1]}/v1"
[models.modify]
provider = "scripted"
[models.diagnose]
provider = "scripted"
"""
        )
        assert missing_prerequisites(config, (), 0) == ()
    finally:
        server.shutdown()
        server.server_close()
