"""One chat completion through the evolve gateway: a Unix socket, or a URL with a bearer token."""
import http.client
import json
import os
import socket
import urllib.parse


class Refused(Exception):
    """The gateway answered with an error (e.g. 403: the job's tokens are spent) or could not be reached."""


def complete(history: list[dict], functions: list[dict] | None = None) -> dict:
    """The assistant message the model sends after `history`, offered `functions` as tools."""
    payload = {"messages": history, "max_tokens": 4096,
               "temperature": float(os.environ.get("EVOLVE_TEMPERATURE", "0.3"))}
    if functions:
        payload["tools"] = functions
    address = urllib.parse.urlparse(os.environ.get("EVOLVE_LLM_URL", "http://localhost"))
    link = http.client.HTTPConnection(address.hostname, address.port or 80, timeout=1860)
    headers = {"Content-Type": "application/json"}
    if os.environ.get("EVOLVE_LLM_TOKEN"):
        headers["Authorization"] = "Bearer " + os.environ["EVOLVE_LLM_TOKEN"]
    try:
        if os.environ.get("EVOLVE_LLM_SOCKET"):
            link.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            link.sock.connect(os.environ["EVOLVE_LLM_SOCKET"])
        prefix = address.path.rstrip("/").removesuffix("/v1")
        link.request("POST", prefix + "/v1/chat/completions", json.dumps(payload), headers)
        answer = link.getresponse()
        body = answer.read()
    except (OSError, http.client.HTTPException) as exc:
        raise Refused(f"no answer from the gateway: {exc}") from exc
    finally:
        link.close()
    if answer.status != 200:
        raise Refused(f"HTTP {answer.status}: {body[:300]!r}")
    return json.loads(body)["choices"][0]["message"]
