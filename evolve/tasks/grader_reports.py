"""Per-test results from the report files test runners write (standard library only: it runs in the
grading sandbox beside grader_script.py, as root, on files the tests wrote).

Each parser turns a runner's structured report into records {"test", "outcome", "message"}, outcome
one of passed / failed / skipped. Test ids are the ones evolve.tasks.expected_names derives from the
hidden test sources, so `matches` can compare them:
- catch2   Catch2's XML reporter (`-r xml`): the TEST_CASE name.
- gotest   `go test -json`: the test name (`TestX`, subtests `TestX/case`).
- libtest  Rust's libtest JSON (`-Z unstable-options --format json`): the test's path in its crate.
- junit    JUnit's legacy XML (`--reports-dir`): `package.Class#method` (nested classes: the outer one).
- jest     jest's `--json --outputFile`: `file::title`.
"""

import json
import os
import stat
import xml.etree.ElementTree as ET

PROTOCOLS = ("catch2", "gotest", "libtest", "junit", "jest")
SEALED = ("catch2", "junit")
"""Protocols whose tests run from a finished build without reading their sources (see `seal`)."""
REPORT_CAP = 8_000_000
"""Bytes of one report file read back; a larger one is unreadable, and its run fails."""
MESSAGE_CAP = 600


class ReportError(ValueError):
    """A report file that is not the runner's format."""


def judge(job, records):
    """A runner's report (catch2, gotest, libtest, junit, jest): pass needs every expected test reported
    passed and no test reported failed. Exit status and output decide nothing."""
    if records and "error" in records[0]:
        return "fail", records[0]["error"]
    if not job["expected"]:
        return "fail", "the grader found no test names in the hidden tests, so nothing can be proved"
    failed = sorted({r["test"] for r in records if r["outcome"] == "failed"})
    if failed:
        return "fail", f"{len(failed)} test(s) failed: {', '.join(failed[:5])}"
    passed = [r["test"] for r in records if r["outcome"] == "passed"]
    missing = [
        name for name in job["expected"] if not any(matches(job["results"], test, name) for test in passed)
    ]
    if missing:
        return "fail", f"{len(missing)} expected test(s) not reported passed: {', '.join(missing[:5])}"
    return "pass", f"{len(passed)} tests pass"


def seal(work, hidden):
    """Make the built hidden test files root's alone, so the tested code cannot read the test names out
    of them to forge a report (it still can out of its own binary: see docs/guarantees.md)."""
    for rel in hidden:
        try:
            fd = os.open(os.path.join(work, rel), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue  # gone or a link after the build: nothing of ours to protect there
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                os.fchown(fd, 0, 0)
                os.fchmod(fd, 0o600)
        finally:
            os.close(fd)


def read_reports(directory):
    """name -> bytes of every plain file in `directory` (symlinks, hard links, FIFOs, sockets and
    directories are skipped: the grader reads as root, the directory was the tests' to write); ReportError
    when the files pass REPORT_CAP bytes together. Each is opened without blocking or following a link and
    checked again once open, so a file swapped for a FIFO or a link meanwhile is never waited on."""
    found = {}
    total = 0
    for name in sorted(os.listdir(directory)):
        try:
            fd = os.open(os.path.join(directory, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue  # a link, or gone: not a report
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            os.close(fd)
            continue
        with os.fdopen(fd, "rb") as handle:
            total += info.st_size
            if total > REPORT_CAP:
                raise ReportError(f"the reports are larger than {REPORT_CAP} bytes (at {_shown(name)})")
            found[name] = handle.read(REPORT_CAP + 1)
    return found


def _shown(name):
    return name.encode("utf-8", "replace").decode("utf-8")[:200]


def parse(protocol, files):
    """Records from every report file of `protocol`; ReportError when one is not in its format. The files
    are the tests' to write, so a shape no parser expects (a field of another type, nesting past the
    stack) is that error too, never another exception."""
    parser = PARSERS[protocol]
    records = []
    for name, data in sorted(files.items()):
        try:
            records += parser(data, _shown(name))
        except (TypeError, AttributeError, KeyError, IndexError, RecursionError) as exc:
            raise ReportError(f"{_shown(name)} is not {protocol}'s report: {type(exc).__name__}") from exc
    return records


def matches(protocol, reported, expected):
    """Whether a reported test id is the expected one (libtest ids may carry a module path, jest's file is
    reported by its absolute path)."""
    if protocol == "libtest":
        return reported == expected or reported.endswith("::" + expected)
    if protocol == "jest":
        path, _, title = reported.partition("::")
        want_path, _, want_title = expected.partition("::")
        return title == want_title and (path == want_path or path.endswith("/" + want_path))
    return reported == expected


def _record(test, outcome, message=""):
    test, message = (_text(value) for value in (test, message))
    return {"test": test, "outcome": outcome, "message": " ".join(message.split())[:MESSAGE_CAP]}


def _text(value):
    """A report's field as valid UTF-8 text (a number or a string; anything else is `?`)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return "?"
    return str(value).encode("utf-8", "replace").decode("utf-8")


def _xml(data, name):
    try:
        return ET.fromstring(data)
    except ET.ParseError as exc:
        raise ReportError(f"{name} is not XML: {exc}") from exc


def _json_lines(data):
    """JSON objects of a line stream; other lines are skipped (the tested code shares the stream and may
    print, which can hide a record but never add a passed one it did not forge)."""
    for line in data.decode(errors="replace").splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict):
            yield record


def parse_catch2(data, name):
    root = _xml(data, name)
    records = []
    for case in root.iter("TestCase"):
        result = case.find("OverallResult")
        ok = result is not None and result.get("success") == "true"
        failed = [
            " ".join((e.findtext("Original") or "").split())
            for e in case.iter("Expression")
            if e.get("success") == "false"
        ]
        failed += [(e.text or "").strip() for e in case.iter("FatalErrorCondition")]
        failed += [(e.text or "").strip() for e in case.iter("Exception")]
        records.append(
            _record(case.get("name", "?"), "passed" if ok and not failed else "failed", "; ".join(failed))
        )
    return records


def parse_gotest(data, name):
    records: list[dict] = []
    output: dict[str, str] = {}
    for event in _json_lines(data):
        test, action = event.get("Test"), event.get("Action")
        if test is not None and not isinstance(test, str):
            continue  # not go's event
        key = test or f"package {_text(event.get('Package', '?'))}"
        if action == "output":
            output[key] = (output.get(key, "") + _text(event.get("Output", "")))[-MESSAGE_CAP:]
        elif action in ("pass", "fail", "skip"):
            outcome = {"pass": "passed", "fail": "failed", "skip": "skipped"}[action]
            if test or outcome == "failed":  # a package's own pass names no test
                records.append(_record(key, outcome, output.get(key, "") if outcome == "failed" else ""))
        elif action == "build-fail":
            records.append(
                _record(f"package {_text(event.get('ImportPath', '?'))}", "failed", "build failed")
            )
    return records


def parse_libtest(data, name):
    records = []
    for event in _json_lines(data):
        if event.get("type") != "test" or event.get("event") == "started":
            continue
        outcome = {"ok": "passed", "failed": "failed", "timeout": "failed", "ignored": "skipped"}.get(
            _text(event.get("event")), "failed"
        )
        records.append(
            _record(event.get("name", "?"), outcome, _text(event.get("stdout", ""))[-MESSAGE_CAP:])
        )
    return records


def parse_junit(data, name):
    root = _xml(data, name)
    records = []
    for case in root.iter("testcase"):
        cls = case.get("classname", "").split("$", 1)[0]
        method = case.get("name", "?").split("(", 1)[0]
        bad = [e for e in case if e.tag in ("failure", "error")]
        outcome = "failed" if bad else "skipped" if case.find("skipped") is not None else "passed"
        message = "; ".join(e.get("message") or (e.text or "")[:MESSAGE_CAP] for e in bad)
        records.append(_record(f"{cls}#{method}", outcome, message))
    return records


def parse_jest(data, name):
    try:
        report = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise ReportError(f"{name} is not JSON: {str(exc)[:200]}") from exc
    if not isinstance(report, dict):
        raise ReportError(f"{name} is not jest's JSON report")
    records = []
    for suite in _dicts(report.get("testResults", [])):
        path = _text(suite.get("name", "?"))
        if suite.get("status") == "failed" and not suite.get("assertionResults"):
            records.append(_record(path, "failed", _text(suite.get("message", ""))))  # the file did not run
        for test in _dicts(suite.get("assertionResults", [])):
            status = test.get("status")
            outcome = "passed" if status == "passed" else "failed" if status == "failed" else "skipped"
            messages = test.get("failureMessages", [])
            records.append(
                _record(
                    f"{path}::{_text(test.get('title', '?'))}",
                    outcome,
                    " ".join(_text(m) for m in (messages if isinstance(messages, list) else [])),
                )
            )
    return records


def _dicts(value):
    """The objects of a JSON list; ReportError for anything that is not a list of objects."""
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise ReportError("a list of objects is not one")
    return value


PARSERS = {
    "catch2": parse_catch2,
    "gotest": parse_gotest,
    "libtest": parse_libtest,
    "junit": parse_junit,
    "jest": parse_jest,
}
