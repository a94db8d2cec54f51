"""`python -m agent solve|improve|diagnose`: a bare coding agent.

The model answers each step with one fenced block: ```bash (a shell command), ```write PATH (a whole
file), ```replace PATH (SEARCH/REPLACE markers) or ```done. The result of each block is its next message.
"""
import argparse
import http.client
import json
import os
import re
import socket
import sys
import urllib.parse
from pathlib import Path

from agent import tools

SYSTEM = """You are a coding agent working in a repository. Each reply holds exactly one fenced block:
```bash
a shell command, run in the repository
```
```write path/to/file.py
the whole new content of the file
```
```replace path/to/file.py
<<<<<<< SEARCH
the exact old lines
=======
the new lines
>>>>>>> REPLACE
```
```done
```
You see the result of each block. Reply with ```done when the task is finished."""
SOLVE = "Solve this task in the repository.\n\n{task}\n\nFiles:\n{files}"
IMPROVE = "This repository is your own code. Change it as asked.\n\n{task}\n\nFiles:\n{files}"
DIAGNOSE = ("Below is material about a coding agent's failed runs. Name the most important problem and write "
            "short instructions for changing the agent's code to fix it.\n\n{task}")
BLOCK = re.compile(r"^```(\w+)[ \t]*(\S*)[ \t]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
MARKERS = re.compile(r"<<<<<<< SEARCH\n(.*?)\n?=======\n(.*?)\n?>>>>>>> REPLACE", re.DOTALL)


def chat(messages: list[dict]) -> str:
    """The model's reply through the evolve gateway (a Unix socket, else a URL with a bearer token)."""
    url = urllib.parse.urlparse(os.environ.get("EVOLVE_LLM_URL", "http://localhost"))
    connection = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=1860)
    headers = {"Content-Type": "application/json"}
    if os.environ.get("EVOLVE_LLM_TOKEN"):
        headers["Authorization"] = f"Bearer {os.environ['EVOLVE_LLM_TOKEN']}"
    if os.environ.get("EVOLVE_LLM_SOCKET"):
        connection.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.sock.connect(os.environ["EVOLVE_LLM_SOCKET"])
    body = {"messages": messages, "max_tokens": 2048,
            "temperature": float(os.environ.get("EVOLVE_TEMPERATURE", "0.2"))}
    path = url.path.rstrip("/").removesuffix("/v1") + "/v1/chat/completions"
    connection.request("POST", path, json.dumps(body), headers)
    response = connection.getresponse()
    data = response.read()
    if response.status != 200:
        raise RuntimeError(f"HTTP {response.status}: {data[:300]!r}")
    return json.loads(data)["choices"][0]["message"].get("content") or ""


def act(root: Path, reply: str) -> str | None:
    """Run the reply's first block; what to tell the model, or None when it says done."""
    block = BLOCK.search(reply)
    if block is None:
        return "No fenced block found. Reply with one ```bash, ```write, ```replace or ```done block."
    kind, path, body = block.groups()
    try:
        if kind == "done":
            return None
        if kind == "bash":
            return tools.bash(root, body)
        if kind == "write":
            return tools.write(root, path, body)
        if kind == "replace" and (edit := MARKERS.search(body)):
            return tools.replace(root, path, edit.group(1), edit.group(2))
    except (OSError, ValueError) as exc:
        return f"error: {exc}"
    return f"error: a ```{kind} block is not an action (or has no SEARCH/REPLACE markers)"


def trim(messages: list[dict], limit: int) -> list[dict]:
    """The system prompt, the task and the latest messages that fit in `limit` characters."""
    kept = messages[:2]
    for message in reversed(messages[2:]):
        if sum(len(m["content"]) for m in kept) + len(message["content"]) > limit:
            break
        kept.insert(2, message)
    return kept


def run(root: Path, prompt: str, steps: int, transcript: Path | None) -> None:
    """The loop: ask, act, show the result, until done or out of steps."""
    limit = int(os.environ.get("EVOLVE_CONTEXT_CHARS", "26000"))
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
    for _ in range(steps):
        try:
            reply = chat(trim(messages, limit))
        except (OSError, RuntimeError) as exc:  # e.g. the job's tokens are spent: stop, keep the transcript
            print(f"agent: the model failed: {exc}", file=sys.stderr)
            break
        messages.append({"role": "assistant", "content": reply})
        result = act(root, reply)
        if result is None:
            break
        messages.append({"role": "user", "content": result})
    if transcript is not None:
        with transcript.open("a") as out:
            out.writelines(json.dumps(m) + "\n" for m in messages)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="agent")
    parser.add_argument("command", choices=["solve", "improve", "diagnose"])
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--problem", "--instructions", dest="task", type=Path)
    parser.add_argument("--material", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--budget-steps", type=int, default=10)
    args = parser.parse_args(argv)
    transcript = Path(os.environ["EVOLVE_TRANSCRIPT"]) if os.environ.get("EVOLVE_TRANSCRIPT") else None
    if args.command == "diagnose":
        if args.material is None or args.out is None:
            parser.error("diagnose needs --material and --out")
        material = "\n\n".join(f"## {p.relative_to(args.material)}\n{p.read_text(errors='replace')}"
                               for p in sorted(args.material.rglob("*")) if p.is_file())
        limit = int(os.environ.get("EVOLVE_CONTEXT_CHARS", "26000"))
        reply = chat([{"role": "user", "content": DIAGNOSE.format(task=material[:limit * 3 // 4])}])
        if not reply.strip():
            print("agent: the model wrote no instructions", file=sys.stderr)
            return 1
        args.out.write_text(reply)
        return 0
    if args.workdir is None or args.task is None:
        parser.error(f"{args.command} needs --workdir and --problem/--instructions")
    root = args.workdir.resolve()
    files = tools.bash(root, "git ls-files 2>/dev/null || find . -type f | head -200")
    template = SOLVE if args.command == "solve" else IMPROVE
    run(root, template.format(task=args.task.read_text(), files=files), args.budget_steps, transcript)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
