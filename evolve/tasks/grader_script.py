"""Runs inside a grading sandbox as root (standard library only). For each job: copy the clean repo, apply
the agent's patch, revert every change to a protected path (judged by path after applying, never by
parsing the patch), copy the hidden tests in, run the tests as uid 1000, and judge them from per-test
records sent over a pipe only the grader reads. Prints the results as JSON after MARKER.

The tests cannot signal, ptrace or write the files of the root grader, and their output goes to a pipe
of the grader's, never to its stdout. Suites of other runners (polyglot's C++, Go, Rust, Java,
JavaScript) build first, then write the runner's own report into a directory made after the build
(`run_reported`; parsed by grader_reports.py, staged beside this script). Code inside the test process
can still write its own records (it is the same process as the reporter); canaries (grader_canaries.py,
and grader_canaries_text.py for the compiled runners) make a blanket forgery `forged`: see
docs/guarantees.md "What an agent cannot do".

Usage: python3 grader_script.py MANIFEST.json   (see evolve/tasks/grading.py for the manifest)
"""

import inspect
import json
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

if __package__:  # imported on the host; in the sandbox they sit beside this script
    from evolve.tasks import grader_calls as calls
    from evolve.tasks import grader_canaries as canaries
    from evolve.tasks import grader_canaries_text as text_canaries
    from evolve.tasks import grader_reports as reports
    from evolve.tasks import grader_values as values
else:
    import grader_calls as calls  # type: ignore[import-not-found,no-redef]
    import grader_canaries as canaries  # type: ignore[import-not-found,no-redef]
    import grader_canaries_text as text_canaries  # type: ignore[import-not-found,no-redef]
    import grader_reports as reports  # type: ignore[import-not-found,no-redef]
    import grader_values as values  # type: ignore[import-not-found,no-redef]

OUTPUT_CAP = 20000
RECORDS_CAP = 8_000_000
"""Bytes of per-test records kept; a run that sends more has cut records, which fail as malformed."""
DETAIL_CAP = 2000
"""Characters of a verdict's detail (it may name tests, whose names the tested code can choose)."""
DROPPED_CAP = 100
"""Dropped paths reported by name (the patch chooses how many there are); the rest are counted."""
RECORD_FIELDS = {
    "test": str,
    "when": str,
    "outcome": str,
    "end": int,
    "value_of": str,
    "row": None,
    "raised": list,
    "message": str,
    "value": None,
    "unplain": str,
}
"""A record's fields and their types (None: any JSON value), as the results plugin sends them (per-test
results, the run's end, and checked values for grader_values.py); any other record is malformed."""
RECORD_VALUES = {
    "when": frozenset({"collect", "setup", "call", "teardown"}),
    "outcome": frozenset({"passed", "failed", "skipped"}),
}
"""The values pytest gives a report's phase and outcome."""
MARKER = "=== evolve-grade-results ==="
TEST_UID = 1000
PLUGIN = "evolve_results"
PROTECTED_PARTS = frozenset(
    {
        ".git",
        "sitecustomize",
        "sitecustomize.py",
        "usercustomize",
        "usercustomize.py",  # import hooks
        # the runner itself
        "pytest",
        "pytest.py",
        "_pytest",
        "py.py",
        "pluggy",
        "iniconfig",
        PLUGIN,
        PLUGIN + ".py",
        # how pytest collects
        "conftest.py",
        "pytest.ini",
        ".pytest.ini",
        "tox.ini",
        "setup.cfg",
        "pyproject.toml",
        "build.rs",
        ".cargo",
        "go.work",
        "node_modules",
        ".babelrc",
        "jest.config.js",
        "jest.config.ts",  # other
        # runners' hooks (Cargo.toml: references edit it)
        "jest.config.mjs",
        "jest.config.cjs",
        "jest.config.json",
        ".babelrc.json",
        ".babelrc.js",
        ".babelrc.cjs",
        ".babelrc.mjs",
        "babel.config.json",
        "babel.config.cjs",
        "babel.config.mjs",
        "__mocks__",  # babel rewrites the spec files; jest mocks modules from __mocks__
    }
)
TEST_SUFFIXES = ("_test.py", ".pth", "_test.go", ".test.js", ".spec.js")
"""New test files (a Go TestMain, a jest setup) run inside the hidden tests' process: none may be added."""
"""Path components no change may touch, anywhere in the tree (beside the task's own protected names)."""
PLUGIN_SOURCE = (
    '''"""Sends each test's result to the grader over the pipe it opened (evolve grading). The pipe's
number is written here by the grader, in no environment variable, '''
    '''and nothing the tests start inherits it."""
import json
import os

_FD = {fd}
if os.environ.get("EVOLVE_RESULTS_TAKEN"):  # a pytest the tests started: its records are not the run's
    _FD = -1
else:
    os.environ["EVOLVE_RESULTS_TAKEN"] = "1"
    try:
        os.set_inheritable(_FD, False)
    except OSError:
        _FD = -1


def _send(record):
    if _FD >= 0:
        os.write(_FD, (json.dumps(record) + "\\n").encode())


def pytest_collectreport(report):
    if report.failed:
        _send({{"test": report.nodeid, "when": "collect", "outcome": "failed"}})


def pytest_runtest_logreport(report):
    _send({{"test": report.nodeid, "when": report.when, "outcome": report.outcome}})


def pytest_sessionfinish(session, exitstatus):
    _send({{"end": int(exitstatus)}})
'''
)
VALUE_SOURCE = '''

def value(compute, row=None):
    """A checked value (or the exception computing it raised), with the parametrize row it is checked
    against, sent to the grader as plain data (grader_values.py): the grader compares it."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
    try:
        result = compute()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # an exception is the answer a `pytest.raises` check expects
        _send({"value_of": test, "row": row, "raised": [k.__name__ for k in type(exc).__mro__][:50],
               "message": str(exc)[:2000]})
        return
    try:
        _send({"value_of": test, "row": row, "value": encode(_plain(result))})
    except (ValueError, RecursionError) as exc:
        _send({"value_of": test, "row": row, "unplain": str(exc)[:200]})


def _plain(result, depth=0):
    """Subclasses of the plain types as their base type (a namedtuple as a tuple, an IntEnum as an int)."""
    if depth > 200 or result is None or type(result) in (bool, int, float, str, bytes, complex):
        return result
    for base in (bool, int, float, str, bytes):
        if isinstance(result, base):
            return base(result) if base is not str else str.__str__(result)
    if isinstance(result, dict):
        return {_plain(k, depth + 1): _plain(v, depth + 1) for k, v in dict.items(result)}
    for base in (list, tuple, set, frozenset):
        if isinstance(result, base):
            return base(_plain(item, depth + 1) for item in base.__iter__(result))
    return result

'''


def protected(path, spec):
    """True when a change of `path` must not reach the tests: the tests dir, hidden test paths (and the
    directories above them), test-runner configuration and import hooks in any directory."""
    parts = path.split("/")
    base = parts[-1]
    tests = spec["tests_dir"].strip("/")
    hidden = spec["hidden"]
    return (
        path == tests
        or path.startswith(tests + "/")
        or path in hidden
        or any(h.startswith(path + "/") for h in hidden)
        or any(p in PROTECTED_PARTS for p in parts)
        or base in spec["names"]
        or base.startswith("test_")
        or base.endswith(TEST_SUFFIXES)
    )


def cap(text):
    return text if len(text) <= OUTPUT_CAP else text[:2000] + "\n...[cut]...\n" + text[-(OUTPUT_CAP - 2100) :]


def snapshot(root):
    """Every file and symlink under `root`: relative path -> (kind, bytes); links are never followed."""
    seen = {}
    for top, dirs, files in os.walk(root, followlinks=False):
        for name in list(dirs):
            if os.path.islink(os.path.join(top, name)):
                dirs.remove(name)
                files.append(name)
        for name in files:
            path = os.path.join(top, name)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                seen[rel] = ("link", os.readlink(path).encode(errors="surrogateescape"))
            elif stat.S_ISREG(info.st_mode):
                with open(path, "rb") as handle:
                    seen[rel] = ("x" if info.st_mode & 0o111 else "f", handle.read())
            else:
                seen[rel] = ("other", b"")
    return seen


def revert_protected(work, clean, before, spec):
    """Undo every change under `work` to a protected path or a symlink; returns the reverted paths."""
    after = snapshot(work)
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    reverted = [
        p
        for p in changed
        if protected(p, spec) or "link" in (before.get(p, ("",))[0], after.get(p, ("",))[0])
    ]
    for rel in sorted(reverted, key=lambda p: -p.count("/")):  # remove deepest first
        target = os.path.join(work, rel)
        if os.path.lexists(target):
            remove_tree(target)
    for rel in reverted:
        if rel in before:
            target = os.path.join(work, rel)
            parent = os.path.dirname(target)
            if os.path.lexists(parent) and not os.path.isdir(parent):
                os.unlink(parent)
            os.makedirs(parent, exist_ok=True)
            shutil.copy2(os.path.join(clean, rel), target, follow_symlinks=False)
    return reverted


def apply_patch(patch, work):
    """git apply of the whole patch (all or nothing), with no config from anywhere; (ok, why not).

    Every section must be one git parses: git skips text it cannot read as a patch, so a section it
    did not count is refused here rather than quietly left out."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "HOME": "/nonexistent",
        "LC_ALL": "C",
    }
    git = ["git", "-c", "core.hooksPath=/dev/null", "-c", "core.attributesFile=/dev/null", "apply"]
    parsed = subprocess.run(git + ["--numstat", patch], cwd=work, env=env, capture_output=True, check=False)
    with open(patch, "rb") as handle:
        sections = sum(line.startswith(b"diff --git ") for line in handle)
    files = len(parsed.stdout.splitlines())
    if parsed.returncode == 0 and files < sections:
        return False, f"the patch has {sections} sections but git reads {files} of them"
    done = subprocess.run(
        git + ["--whitespace=nowarn", patch], cwd=work, env=env, capture_output=True, check=False
    )
    return done.returncode == 0, (done.stdout + done.stderr).decode(errors="replace")


def test_env():
    """The tests' environment: as the grader's, with the test user's home."""
    home = "/home/agent" if os.path.isdir("/home/agent") else tempfile.gettempdir()
    return dict(os.environ, HOME=home, USER="agent", LOGNAME="agent")


def _with_plugin(env, plugin_base, fd):
    """`env` with the results plugin on pytest's path: a directory of root's made for this run, the
    plugin in it holding the number of this run's pipe."""
    plugin_dir = tempfile.mkdtemp(prefix="plugin-", dir=plugin_base)
    os.chmod(plugin_dir, 0o755)
    path = os.path.join(plugin_dir, PLUGIN + ".py")
    with open(path, "w") as handle:
        handle.write(
            PLUGIN_SOURCE.format(fd=fd)
            + VALUE_SOURCE
            + "\nimport math\n\n\n"
            + inspect.getsource(calls.encode)
        )
    os.chmod(path, 0o644)
    env = dict(env, PYTHONPATH=os.pathsep.join(p for p in (plugin_dir, env.get("PYTHONPATH")) if p))
    env["PYTEST_ADDOPTS"] = (env.get("PYTEST_ADDOPTS", "") + " -p " + PLUGIN).strip()
    return env, plugin_dir


def run(command, cwd, timeout, env, isolate, plugin_base=None):
    """Run the tests as TEST_UID (when the grader is root); (exit, output, timed out, per-test records).
    `plugin_base`: where to make the results plugin's directory (pytest runs); None: no plugin.

    Both pipes are drained by threads and never awaited past the deadline: a process the tests leave
    behind holding them open cannot stall the grader."""
    read_end, write_end = os.pipe()
    as_user: dict[str, Any] = {"user": TEST_UID, "group": TEST_UID, "extra_groups": []} if isolate else {}
    plugin_dir = None
    if plugin_base is not None:
        env, plugin_dir = _with_plugin(env, plugin_base, write_end)
    # The tests, not the grader, are what the kernel kills first when they exhaust the memory.
    command = "echo 1000 > /proc/self/oom_score_adj 2>/dev/null; " + command
    proc = subprocess.Popen(
        ["bash", "-c", command],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        pass_fds=(write_end,),
        env=env,
        **as_user,
    )
    os.close(write_end)
    assert proc.stdout is not None  # piped above
    output: list[bytes] = []
    results: list[bytes] = []
    readers = [
        threading.Thread(target=_drain, args=(fd, into, limit), daemon=True)
        for fd, into, limit in (
            (proc.stdout.fileno(), output, 4 * OUTPUT_CAP),
            (read_end, results, RECORDS_CAP),
        )
    ]
    for reader in readers:
        reader.start()
    try:
        code, timed_out = proc.wait(timeout=timeout), False
    except subprocess.TimeoutExpired:
        code, timed_out = -9, True
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # what the tests left running in their group goes with them
    except ProcessLookupError:
        pass  # the group is already gone
    for reader in readers:
        reader.join(3.0)
    if plugin_dir is not None:
        remove_tree(plugin_dir)
    return code, b"".join(output).decode(errors="replace"), timed_out, _records(b"".join(results))


def _drain(fd, chunks, limit):
    """Read `fd` to its end, keeping about `limit` bytes (the first chunk and the latest ones): the
    tests may write without end, and the grader's memory must not be theirs to fill."""
    kept = 0
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            return
        chunks.append(chunk)
        kept += len(chunk)
        while kept > limit and len(chunks) > 2:
            kept -= len(chunks.pop(1))


def kill_test_user():
    """Kill whatever the tests left running anywhere in the sandbox: at once, by a process of the test uid
    that signals every process it may (`kill -1`: no fork can slip between), then, in case that could not
    start (the tests hold every pid), one by one from /proc (read as bytes: a process names itself)."""
    try:
        subprocess.run(
            ["sh", "-c", "kill -KILL -1"],
            user=TEST_UID,
            group=TEST_UID,
            extra_groups=[],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        pass  # no process could be made: the scan below kills them
    for _ in range(20):
        if not _kill_by_proc():
            return


def _kill_by_proc():
    """SIGKILL every process of the test uid in /proc; how many there were."""
    found = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", "rb") as handle:
                uid = next((line.split()[1] for line in handle if line.startswith(b"Uid:")), None)
            if uid == str(TEST_UID).encode():
                found += 1
                os.kill(int(entry), signal.SIGKILL)
        except (OSError, IndexError):
            continue  # the process ended while we looked
    return found


def remove_tree(path):
    """Remove `path` and all under it, whatever the tests made of it (any depth or path length, modes,
    links, FIFOs, sockets, odd names); never raises. Iterative through directory descriptors, one open
    at a time, so neither the stack nor PATH_MAX limits it. The paths it could not remove, counted."""
    try:
        os.unlink(path)  # a file or a link where a directory was
        return 0
    except IsADirectoryError:
        pass
    except OSError:
        return 0 if not os.path.lexists(path) else 1
    left = 0
    names: list[str] = []  # the directories entered below `path`, deepest last
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return 1
    while True:
        entered = None
        try:
            entries = list(os.scandir(fd))
        except OSError:
            entries = []
            left += 1
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    os.chmod(entry.name, 0o700, dir_fd=fd)  # one the tests locked (root reads it anyway)
                    entered = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                    names.append(entry.name)
                    break
                os.unlink(entry.name, dir_fd=fd)
            except OSError:
                left += 1
        if entered is not None:
            os.close(fd)
            fd = entered
            continue
        if not names:
            os.close(fd)
            break
        try:
            parent = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        except OSError:
            os.close(fd)
            return left + 1
        os.close(fd)
        fd = parent
        try:
            os.rmdir(names.pop(), dir_fd=fd)
        except OSError:
            left += 1
            os.close(fd)
            return left  # a directory that will not go: stop rather than enter it again
    try:
        os.rmdir(path)
    except OSError:
        left += 1
    return left


def _records(data):
    """The records the pipe carried, up to the first that is not the plugin's shape ({"malformed": its
    start} then): the tested code can write there, so no line of it may raise or carry other types."""
    records: list[dict] = []
    for line in data.decode(errors="replace").splitlines():
        record = _record(line)
        if record is None:
            return records + [{"malformed": line[:200]}]
        records.append(record)
    return records


def _record(line):
    """One line as a record of RECORD_FIELDS' types (strings as valid UTF-8), or None."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):  # not JSON, a number past the digit limit, nesting past the stack
        return None
    if not isinstance(record, dict) or not record:
        return None
    for key, value in record.items():
        if key not in RECORD_FIELDS or RECORD_FIELDS[key] not in (None, type(value)):
            return None
    if any(key in record and record[key] not in values for key, values in RECORD_VALUES.items()):
        return None
    return {key: printable(value) if isinstance(value, str) else value for key, value in record.items()}


def printable(text):
    """`text` as valid UTF-8 (a lone surrogate, from JSON or a file name, becomes `?`): what the grader
    prints must encode wherever the host writes it."""
    return text.encode("utf-8", "replace").decode("utf-8")


def judge(job, code, out, timed_out, records, planted=None, taken=None):
    """(outcome, detail): pass needs every expected test reported passed, none failed, and a clean end;
    `forged` when a canary (`planted`: evolve.tasks.grader_canaries) is reported passed beside the real
    test it copies, or is not reported failed in a run that would pass."""
    if timed_out:
        return "timeout", f"the tests ran past {job['timeout']}s"
    protocol = job["results"]
    planted = planted or {}
    if protocol in reports.PROTOCOLS:
        return text_canaries.judge(job, records, planted)
    if protocol == "exit":
        if code != 0:
            return "fail", f"tests exit with status {code}"
        if job.get("pass_regex") and not re.search(job["pass_regex"], out):
            return "fail", f"exit 0 but the output lacks {job['pass_regex']!r}"
        return "pass", "tests pass (exit status only: this suite reports no per-test results)"
    forged, unreported = canaries.verdict(records, planted, _names)
    if forged:
        return "forged", forged
    forged, wrong = values.judge(records, taken or {}, _names)
    if forged:
        return "forged", forged
    if wrong:
        return "fail", f"{len(wrong)} test(s) failed a checked value: " + "; ".join(
            f"{test}: {why}" for test, why in sorted(wrong.items())[:5]
        )
    if any("malformed" in r for r in records):
        return "fail", "a malformed per-test record"
    ends = [r["end"] for r in records if "end" in r]
    if len(ends) != 1:
        return "fail", "the test run ended without reporting its end (it exited early, or reported twice)"
    real = [r for r in records if "test" in r and not canaries.is_canary(str(r["test"]), planted, _names)]
    failed = sorted({r.get("test", "?") for r in real if r.get("outcome") == "failed"})
    if failed:
        return "fail", f"{len(failed)} test(s) failed: {', '.join(failed[:5])}"
    clean = {0, 1} if planted else {0}  # the canaries' failures make pytest's status 1
    if ends[0] not in clean or code not in clean:
        return "fail", f"the tests exit with status {code} (runner status {ends[0]})"
    passed = [r["test"] for r in real if r.get("outcome") == "passed" and r.get("when", "call") == "call"]
    missing = [name for name in job["expected"] if not any(_names(test, name) for test in passed)]
    if missing:
        return "fail", f"{len(missing)} expected test(s) not reported passed: {', '.join(missing[:5])}"
    if unreported:
        return "forged", canaries.not_reported(unreported)
    return "pass", f"{len(passed)} tests pass"


def plant_canaries(job, work):
    """Checks taken out of the hidden test files and canaries planted in them, from the job's secret seed:
    (canary ids, the checks root keeps, the renamed tests' own ids). pytest: the files named in `expected`
    (grader_values, then grader_canaries); a runner that compiles its tests: every hidden test file of its
    language (grader_canaries_text). Nothing without a seed or for an exit-status run."""
    if not job.get("canary_seed") or job["results"] not in ("pytest", *reports.PROTOCOLS):
        return {}, {}, {}
    rng = random.Random(job["canary_seed"])
    if job["results"] in reports.PROTOCOLS:
        found, moved = text_canaries.plant_tree(
            job["results"], work, os.path.join(job["dir"], "tests"), rng, set(job["expected"])
        )
        return found, {}, moved
    planted: dict[str, str] = {}
    taken: dict[str, list] = {}
    renames: dict[str, str] = {}
    for rel in sorted({name.partition("::")[0] for name in job["expected"]}):
        path = os.path.join(work, rel)
        if rel.endswith(".py") and os.path.isfile(path) and not os.path.islink(path):
            with open(path, "rb") as handle:
                source, checks = values.take(handle.read(), rel)
            if not canaries.stops_early(job["command"]):
                source, ids, moved = canaries.plant_among(
                    source, rel, rng, rename=not canaries.selects(job["command"])
                )
                planted |= ids
                renames |= moved
            with open(path, "wb") as handle:
                handle.write(source)
            taken |= checks
    return planted, taken, renames


def scrub(text, planted):
    """`text` without the lines that name a canary and pytest's failure sections of canaries (what the
    diagnosis later reads names real tests only)."""
    names = sorted({re.split(r"::|#", canary)[-1] for canary in planted})
    # Whole names only: a canary `test_clamp` must not take the line of the real `test_clamp_low` with it.
    named = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, names)) + r")(?!\w)" if names else r"(?!)")
    kept, skipping = [], False
    for line in text.splitlines():
        if line.startswith(("___", "===")):  # a section header ends the section before it
            skipping = line.startswith("___") and named.search(line) is not None
        if not skipping and named.search(line) is None:
            kept.append(line)
    return "\n".join(kept)


def run_reported(job, work, root, scratch, env, isolate, alone):
    """Build (as the test uid), then run the tests with a report directory root makes only now, under a
    name nothing before could know; then root takes the directory back and reads it. `alone`: no other
    job runs in this container meanwhile, so every process of the test uid is this build's.

    (exit, output, timed out, records); records start with {"error": why} when there is no report."""
    deadline = time.monotonic() + job["timeout"]
    build_dir = os.path.join(root, "build")  # outside the repo: the patch cannot pre-seed a build
    os.makedirs(build_dir)
    if isolate:
        os.chown(build_dir, TEST_UID, TEST_UID)
    env = dict(env, EVOLVE_BUILD_DIR=build_dir)
    out = ""
    if job.get("build"):
        code, out, timed_out, _ = run(job["build"], work, job["timeout"], env, isolate)
        if timed_out or code != 0:
            return code, out, timed_out, [{"error": f"the build failed (exit {code})"}]
    if isolate and alone:  # nothing the build started (a Rust proc-macro's daemon) lives on into the run
        kill_test_user()
    if isolate and job["results"] in reports.SEALED:
        reports.seal(work, job["protect"]["hidden"])
    report_dir = tempfile.mkdtemp(prefix="report-", dir=scratch)
    if isolate:
        os.chown(report_dir, TEST_UID, TEST_UID)
    left = max(1.0, deadline - time.monotonic())
    code, run_out, timed_out, _ = run(
        job["command"], work, left, dict(env, EVOLVE_REPORT_DIR=report_dir), isolate
    )
    if isolate:
        os.chown(report_dir, 0, 0)  # mode 0700: whatever the tests left running can add nothing now
        if alone:
            kill_test_user()  # nor write on into a file it holds open
    try:
        records = reports.parse(job["results"], reports.read_reports(report_dir))
    except (OSError, reports.ReportError) as exc:
        records = [{"error": f"the test report is unreadable: {exc}"}]
    remove_tree(report_dir)
    if not records:
        records = [{"error": f"the tests wrote no per-test report (exit {code})"}]
    failures = [f"FAILED {r['test']}: {r['message']}" for r in records if r.get("outcome") == "failed"]
    return code, "\n".join([out, run_out, *failures]).strip("\n"), timed_out, records


def _names(reported, expected):
    """Whether a reported test id (pytest node id, maybe relative to another rootdir, maybe parametrised)
    is the expected `path::name`, or any test of the expected file when it names no test."""
    test = reported.split("[", 1)[0]
    path, _, name = expected.partition("::")
    rpath, _, rname = test.partition("::")
    same_file = rpath == path or path.endswith("/" + rpath)
    return same_file and (not name or rname == name)


def grade(index, job, scratch, isolate, alone=True):
    start = time.monotonic()
    root = os.path.join(scratch, f"{index:04d}")  # not the key: make cannot build under a path with '#'
    clean, work = os.path.join(job["dir"], "repo"), os.path.join(root, "repo")
    shutil.copytree(clean, work, symlinks=True)
    before = snapshot(work)
    patch = os.path.join(job["dir"], "patch.diff")
    result = {"key": job["key"], "dropped": [], "output": ""}
    if os.path.getsize(patch) > 0:
        ok, out = apply_patch(patch, work)
        if not ok:
            failed = dict(result, outcome="fail", detail="the patch does not apply", output=cap(out))
            return as_printed(dict(failed, duration=time.monotonic() - start))
    result["dropped"] = revert_protected(work, clean, before, job["protect"])
    if job["results"] != "calls":  # a function-level check stays in the root-only stage (run_calls)
        shutil.copytree(os.path.join(job["dir"], "tests"), work, dirs_exist_ok=True)
    planted, taken, renames = plant_canaries(job, work)
    if isolate:
        _chown_tree(root, TEST_UID)
    if job["results"] == "calls":
        code, out, timed_out, records, planted = run_calls(job, work, isolate)
    elif job["results"] in reports.PROTOCOLS:
        code, out, timed_out, records = run_reported(job, work, root, scratch, test_env(), isolate, alone)
    else:
        code, out, timed_out, records = run(
            job["command"], work, job["timeout"], test_env(), isolate, scratch
        )
    if job["results"] in reports.PROTOCOLS:
        records, out = text_canaries.restore_all(job["results"], records, out, renames)
    else:
        records, out = canaries.restore_all(records, out, renames)
    outcome, detail = judge(job, code, out, timed_out, records, planted, taken)
    if isolate and alone:
        kill_test_user()  # nothing the tests left running remakes what is removed next
    left = remove_tree(root)
    if left:
        detail += f" ({left} path(s) the tests left could not be removed)"
    shown = out if outcome == "forged" else scrub(out, planted)
    graded = dict(result, outcome=outcome, detail=detail, output=cap(shown))
    return as_printed(dict(graded, duration=time.monotonic() - start))


def as_printed(result):
    """A job's result as printed: every string valid UTF-8, the detail and the dropped paths within caps
    (the tests choose test names and the patch chooses paths; the host's output cap must not cut the
    reply)."""
    dropped = [printable(path)[:300] for path in result["dropped"][:DROPPED_CAP]]
    if len(result["dropped"]) > DROPPED_CAP:
        dropped.append(f"... and {len(result['dropped']) - DROPPED_CAP} more")
    detail = printable(result["detail"])
    if len(detail) > DETAIL_CAP:
        detail = detail[:DETAIL_CAP] + "...[cut]"
    return dict(result, detail=detail, dropped=dropped, output=printable(result["output"]))


def run_calls(job, work, isolate):
    """A function-level check, out of process (grader_calls.py): the check and its canaries run in a
    process of root's, the candidate in its own as the test uid, plain data between them. (exit, output,
    timed out, records, canaries)."""
    calls = job["calls"]
    with open(os.path.join(job["dir"], "repo", calls["prompt"])) as handle:
        prompt = handle.read()
    with open(os.path.join(job["dir"], "tests", calls["check"]), "rb") as handle:
        check = handle.read()
    planted = {}
    if job.get("canary_seed"):
        check, planted = canaries.plant(
            check, calls["check"], random.Random(job["canary_seed"]), prefix="check"
        )
    spec = {
        "prompt": prompt,
        "check": check.decode(),
        "work": work,
        "isolate": isolate,
        "env": test_env(),
        "canaries": list(planted),
        "timeout": job["timeout"],
    }
    fd, spec_path = tempfile.mkstemp(prefix="calls-", suffix=".json")  # root's: the tests never read it
    with os.fdopen(fd, "w") as handle:
        json.dump(spec, handle)
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "grader_calls.py")
    try:
        done = subprocess.run(
            [sys.executable, here, "check", spec_path],
            capture_output=True,
            timeout=job["timeout"] + 5,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8"},
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return -9, "", True, [], planted
    finally:
        os.unlink(spec_path)
    try:
        reply = json.loads(done.stdout.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        timed_out = done.returncode == -signal.SIGALRM
        return done.returncode, done.stderr.decode(errors="replace")[-OUTPUT_CAP:], timed_out, [], planted
    return 0, reply["log"], False, reply["records"], planted


def _chown_tree(root, uid):
    for top, dirs, files in os.walk(root):
        os.lchown(top, uid, uid)
        for name in dirs + files:
            os.lchown(os.path.join(top, name), uid, uid)


def main(manifest_path):
    with open(manifest_path) as handle:
        manifest = json.load(handle)
    # Only in a grading container (root there, and told so): never change uids or kill on a host.
    isolate = bool(manifest.get("isolate")) and os.geteuid() == 0
    if isolate:
        stage = os.path.dirname(os.path.abspath(manifest_path))
        os.chown(stage, 0, 0)
        os.chmod(stage, 0o700)  # the tests (uid 1000) cannot reach the other jobs' patches and hidden tests
    scratch = tempfile.mkdtemp(prefix="grade-")
    os.chmod(scratch, 0o711)
    workers = max(1, manifest.get("workers", 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(
            pool.map(
                lambda n: grade(n, manifest["jobs"][n], scratch, isolate, workers == 1),
                range(len(manifest["jobs"])),
            )
        )
    if isolate:
        kill_test_user()
    sys.stdout.write(MARKER + "\n" + json.dumps({"isolated": isolate, "results": results}) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
