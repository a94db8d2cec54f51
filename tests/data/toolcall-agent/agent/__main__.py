"""`python -m agent solve|improve --workdir DIR (--problem|--instructions) FILE [--budget-steps N]`.

The model gets three tools (bash, write_file, finish) as OpenAI function schemas and calls them; each
result goes back as a `tool` message. It talks to the evolve gateway at EVOLVE_LLM_SOCKET.
"""
import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

TOOLS = [{"type": "function", "function": {"name": name, "description": text, "parameters": {
    "type": "object", "properties": {p: {"type": "string"} for p in params}, "required": list(params)}}}
    for name, text, params in [("bash", "Run a shell command in the working directory.", ["command"]),
                               ("write_file", "Write a whole file.", ["path", "content"]),
                               ("finish", "Stop: the work is done.", [])]]


def chat(messages: list[dict]) -> dict:
    conn = http.client.HTTPConnection("localhost", timeout=1800)
    conn.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.sock.connect(os.environ["EVOLVE_LLM_SOCKET"])
    conn.request("POST", "/v1/chat/completions", json.dumps({"messages": messages, "tools": TOOLS}),
                 {"Content-Type": "application/json"})
    response = conn.getresponse()
    body = json.loads(response.read() or b"{}")
    if response.status != 200:
        raise RuntimeError(f"HTTP {response.status}: {body}")
    return body["choices"][0]["message"]


def run_tool(workdir: Path, name: str, args: dict) -> str:
    if name == "bash":
        done = subprocess.run(args.get("command", ""), shell=True, cwd=workdir, capture_output=True, text=True,
                              timeout=60, check=False)
        return (done.stdout + done.stderr)[-3000:] + f"\n(exit {done.returncode})"
    if name == "write_file":
        target = (workdir / args.get("path", "")).resolve()
        if workdir.resolve() not in target.parents:
            return "error: the path must be inside the working directory"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(args.get("content", ""))
        return "written"
    return f"error: unknown tool {name}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="agent")
    parser.add_argument("command", choices=["solve", "improve"])
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--problem", "--instructions", dest="task", type=Path, required=True)
    parser.add_argument("--budget-steps", type=int, default=10)
    args = parser.parse_args(argv)
    intro = "Edit your own code (this directory) as asked:" if args.command == "improve" else "Solve this task:"
    messages = [{"role": "user", "content": f"{intro}\n{args.task.read_text()}"}]
    for step in range(args.budget_steps):
        try:
            reply = chat(messages)
        except (OSError, RuntimeError) as exc:
            print(f"agent: model failed: {exc}")
            return 1
        calls = reply.get("tool_calls") or []
        messages.append({"role": "assistant", "content": reply.get("content") or "", "tool_calls": calls[:1]})
        if not calls or calls[0]["function"]["name"] == "finish":
            print(f"agent: finished after {step + 1} steps")
            return 0
        function = calls[0]["function"]
        result = run_tool(args.workdir, function["name"], json.loads(function.get("arguments") or "{}"))
        messages.append({"role": "tool", "tool_call_id": calls[0]["id"], "content": result})
    print(f"agent: out of steps after {args.budget_steps}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
