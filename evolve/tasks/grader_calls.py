"""Function-level tasks (HumanEval) graded out of process (standard library only: staged beside
grader_script.py in the grading sandbox).

`check` runs in a process of the grader's (root, no agent code in it): it defines the task's prompt
(the pristine stub, with the prompt's helpers) and the hidden check, from the root-only stage, and binds
the entry point to a proxy. The candidate runs in a process of its own as the test uid (`serve`): it
imports solution.py from the patched repo and answers each call. Arguments and results cross a pipe as
plain data (JSON of None, booleans, numbers, strings, bytes, lists, tuples, dicts, sets), so an object
with a forged `__eq__`, a monkeypatch, an early exit or anything else the candidate does in its own
process decides nothing: the check compares plain values in the grader's process. The candidate never
sees the check, and has no channel to the verdict: its process has only the call pipe.

The check and its canaries (evolve.tasks.grader_canaries: copies of `check` that must fail) each run
once; the records say which passed. Prints the records as JSON lines on stdout (read by the grader only).

Usage: python3 grader_calls.py check SPEC.json    (the grader writes SPEC: prompt, check (which names
the entry point as ENTRY), work, env, canaries, isolate, timeout)
       python3 -c SOURCE serve ENTRY              (the candidate's process; cwd: the patched repo)
"""

import json
import math
import os
import signal
import subprocess
import sys
import threading
import traceback
from typing import Any

TEST_UID = 1000
LINE_CAP = 8_000_000
"""Bytes of one answer read back; a longer one fails the call."""


def encode(value, depth=0):
    """`value` as JSON-able plain data; ValueError for anything else (an object, a function, a generator)."""
    if depth > 200:
        raise ValueError("nested too deeply")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**53 else {"int": str(value)}
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if isinstance(value, complex):
        return {"complex": [encode(value.real, depth + 1), encode(value.imag, depth + 1)]}
    for kind, cls in (("list", list), ("tuple", tuple), ("set", set), ("frozenset", frozenset)):
        if type(value) is cls:
            return {kind: [encode(item, depth + 1) for item in value]}
    if type(value) is dict:
        return {"dict": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    raise ValueError(f"a {type(value).__name__} is not plain data")


def decode(data):
    if not isinstance(data, dict):
        return data
    ((kind, inner),) = data.items()
    if kind == "int":
        return int(inner)
    if kind == "float":
        return float(inner)
    if kind == "bytes":
        return bytes.fromhex(inner)
    if kind == "complex":
        return complex(decode(inner[0]), decode(inner[1]))
    if kind == "dict":
        return {decode(k): decode(v) for k, v in inner}
    return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[kind](decode(i) for i in inner)


def serve(entry):
    """The candidate's side: import solution, answer calls read from stdin on the saved stdout."""
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # what the candidate prints goes to its log, never into the answers
    sys.path.insert(0, os.getcwd())
    try:
        import solution  # type: ignore[import-not-found]  # the candidate's, in its repo

        function = getattr(solution, entry)
    except BaseException as exc:  # noqa: BLE001 - any failure to import is the candidate's answer
        function, failure = None, f"{type(exc).__name__}: {exc}"
    for line in sys.stdin:
        if function is None:
            reply = ["raise", failure]
        else:
            try:
                args, kwargs = decode(json.loads(line))
                reply = ["ok", encode(function(*args, **kwargs))]
            except BaseException as exc:  # noqa: BLE001 - the candidate's exception is its answer
                reply = ["raise", f"{type(exc).__name__}: {str(exc)[:300]}"]
        answers.write(json.dumps(reply) + "\n")
        answers.flush()


class CandidateFailed(Exception):
    """The candidate raised, answered with something that is not plain data, or did not answer."""


class Candidate:
    """The entry point as the check sees it: each call goes to the candidate's process."""

    def __init__(self, process):
        self.process = process

    def __call__(self, *args, **kwargs):
        request = json.dumps(encode((args, kwargs))) + "\n"
        try:
            self.process.stdin.write(request.encode())
            self.process.stdin.flush()
        except OSError as exc:
            raise CandidateFailed(f"the candidate's process is gone: {exc}") from exc
        line = self.process.stdout.readline(LINE_CAP + 1)
        if not line.endswith(b"\n"):
            raise CandidateFailed("the candidate's process gave no answer (it exited, or answered too much)")
        try:
            kind, value = json.loads(line)
            result = decode(value) if kind == "ok" else None
        except (ValueError, TypeError, KeyError, RecursionError) as exc:
            raise CandidateFailed(f"the candidate's answer is not plain data: {exc}") from exc
        if kind != "ok":
            raise CandidateFailed(f"the candidate raised {value}")
        return result


def check(spec):
    """Run the check, then each canary (ids `path::name`), against one candidate process: records, then
    the end, and the candidate's output. Each runs in a fresh namespace of the prompt and the check."""
    records: list[dict] = []
    log: list[str] = []
    entry = _namespace(spec)["ENTRY"]
    process = _candidate(spec, entry)
    drain = threading.Thread(target=_keep_tail, args=(process.stderr, log), daemon=True)
    drain.start()
    try:
        for test in ["check", *spec["canaries"]]:
            namespace = _namespace(spec)
            namespace[entry] = candidate = Candidate(process)
            try:
                namespace[test.rsplit("::", 1)[-1]](candidate)
                records.append({"test": test, "when": "call", "outcome": "passed"})
            except Exception as exc:  # noqa: BLE001 - any failure of the check is the candidate's failure
                records.append({"test": test, "when": "call", "outcome": "failed"})
                if test == "check":
                    log.append(
                        f"check failed{_where(exc, spec['check'])}: {type(exc).__name__}: {str(exc)[:500]}\n"
                    )
    finally:
        _end(process)
        drain.join(2.0)
    return records + [{"end": 0}], "".join(log)[-20000:]


def _where(exc, source):
    """` at line N: <the check's line>` where the check failed (as a traceback of the old check script
    showed)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "check.py"]
    if not frames or not frames[-1].lineno:
        return ""
    lines = source.splitlines()
    line = lines[frames[-1].lineno - 1].strip() if frames[-1].lineno <= len(lines) else ""
    return f" at line {frames[-1].lineno}: {line[:300]}"


def _namespace(spec):
    """The prompt (its helpers, as the task has them) and the check, defined afresh."""
    namespace = {"__name__": "evolve_check"}
    exec(compile(spec["prompt"], "solution.py", "exec"), namespace)  # noqa: S102 - the task's own prompt
    exec(compile(spec["check"], "check.py", "exec"), namespace)  # noqa: S102 - the task's own hidden check
    return namespace


def _candidate(spec, entry):
    with open(__file__) as handle:  # the candidate gets the code, not the file: the stage is root's alone
        source = handle.read()
    as_user: dict[str, Any] = (
        {"user": TEST_UID, "group": TEST_UID, "extra_groups": []} if spec["isolate"] else {}
    )
    return subprocess.Popen(
        [sys.executable, "-c", source, "serve", entry],
        cwd=spec["work"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=spec["env"],
        **as_user,
    )


def _end(process):
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # already gone
    process.wait()
    for stream in (process.stdin, process.stdout):
        try:
            stream.close()
        except OSError:
            continue  # a broken pipe to a killed process


def _keep_tail(stream, log):
    data = stream.read(200_000)
    log.append(data.decode(errors="replace")[-5000:])
    while stream.read(65536):
        pass


def main(argv):
    if argv[0] == "serve":
        return serve(argv[1])
    with open(argv[1]) as handle:
        spec = json.load(handle)
    signal.alarm(max(1, int(spec["timeout"])))  # a check that never ends ends here (the candidate with it)
    records, log = check(spec)
    sys.stdout.write(json.dumps({"records": records, "log": log}) + "\n")
    return None


if __name__ == "__main__":
    main(sys.argv[1:])
