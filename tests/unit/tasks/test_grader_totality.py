"""The grader's clean-up and record readers are total on whatever the tested code leaves: each input here
once raised out of the root grader (no verdict, an `infra` attempt); now each is data."""

from __future__ import annotations

import json
import os
import socket

import pytest

from evolve.tasks import grader_reports as reports
from evolve.tasks import grader_script as gs

BAD_LINES = {
    "nesting past the stack": "[" * 100_000,
    "a digit string past the limit": "9" * 5000,
    "an end that is a list": json.dumps({"end": []}),
    "a test that is an object": json.dumps({"test": {"a": 1}, "when": "call", "outcome": "passed"}),
    "an unknown phase": json.dumps({"test": "t", "when": "later", "outcome": "passed"}),
    "an end that is a bool": json.dumps({"end": True}),
    "a foreign field": json.dumps({"test": "t", "outcome": "passed", "extra": 1}),
    "not an object": json.dumps([1, 2]),
}


@pytest.mark.parametrize("name", list(BAD_LINES))
def test_a_record_of_another_shape_is_malformed_never_an_exception(name):
    good = json.dumps({"test": "t.py::a", "when": "call", "outcome": "passed"})
    records = gs._records(f"{good}\n{BAD_LINES[name]}\n{good}\n".encode())
    assert records[0] == {"test": "t.py::a", "when": "call", "outcome": "passed"}
    assert list(records[1]) == ["malformed"] and len(records) == 2
    job = {"results": "pytest", "timeout": 5, "expected": ["t.py::a"]}
    assert gs.judge(job, 0, "", False, records) == ("fail", "a malformed per-test record")


def test_a_lone_surrogate_in_a_test_name_is_printed_as_valid_utf8():
    (record,) = gs._records(b'{"test": "t.py::\\ud800x", "when": "call", "outcome": "failed"}\n')
    assert record["test"] == "t.py::?x"
    result = gs.as_printed(
        {
            "key": "k",
            "dropped": ["a\udcff"],
            "output": "o\ud800",
            "detail": "d\udc80",
            "outcome": "fail",
            "duration": 0.0,
        }
    )
    json.dumps(result, ensure_ascii=False).encode("utf-8")  # what the host writes: strict UTF-8


def test_the_printed_result_stays_small_whatever_the_names():
    result = gs.as_printed(
        {
            "key": "k",
            "dropped": [f"p{n}" * 500 for n in range(5000)],
            "output": "",
            "detail": "x" * 5_000_000,
            "outcome": "fail",
            "duration": 0.0,
        }
    )
    assert len(json.dumps(result)) < 60_000
    assert result["dropped"][-1] == "... and 4900 more"


def _deep(root, depth):
    """A chain of `depth` directories under `root`, made relative to each level (past PATH_MAX)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d" * 200, dir_fd=fd)
        below = os.open("d" * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = below
    with open(os.open("f", os.O_WRONLY | os.O_CREAT, dir_fd=fd), "w") as handle:
        handle.write("x")
    os.close(fd)


def test_remove_tree_removes_what_the_tests_can_leave(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    _deep(str(root), 1500)  # past the recursion limit and PATH_MAX
    (root / "locked").mkdir()
    (root / "locked" / "inner").mkdir()
    (root / "locked" / "inner" / "f").write_text("x")
    os.chmod(root / "locked" / "inner", 0)
    os.chmod(root / "locked", 0)
    os.mkfifo(root / "fifo")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(root / "sock"))
    os.symlink("loop", root / "loop")
    os.symlink(str(root), root / "up")
    (root / os.fsdecode(b"\xff\xfe name")).write_text("x")
    assert gs.remove_tree(str(root)) == 0
    assert not root.exists() and tmp_path.exists()


def test_remove_tree_of_a_file_or_nothing_never_raises(tmp_path):
    (tmp_path / "f").write_text("x")
    assert gs.remove_tree(str(tmp_path / "f")) == 0 and not (tmp_path / "f").exists()
    assert gs.remove_tree(str(tmp_path / "absent")) == 0


REPORTS = {
    "jest": [
        b"[" * 100_000,
        b'{"testResults": 5}',
        b'{"testResults": [{"assertionResults": [1]}]}',
        (
            b'{"testResults": [{"name": ["x"], "assertionResults": [{"title": {"a": 1}, "status": "passed",'
            b' "failureMessages": 7}]}]}'
        ),
    ],
    "gotest": [
        b'{"Test": ["x"], "Action": "pass"}\n' + b"[" * 100_000,
        b'{"Test": "T", "Action": "output", "Output": {"a": 1}}\n{"Test": "T", "Action": "fail"}',
    ],
    "libtest": [b'{"type": "test", "event": ["ok"], "name": {"a": 1}, "stdout": []}'],
    "catch2": [b"<" * 1000, b"<a>" * 50_000],
    "junit": [b"\xff\xfe<testsuite/>"],
}


@pytest.mark.parametrize("protocol", list(REPORTS))
def test_a_report_of_any_shape_is_records_or_a_report_error(protocol):
    for data in REPORTS[protocol]:
        try:
            records = reports.parse(protocol, {"r": data})
        except reports.ReportError:
            continue
        for record in records:
            assert all(isinstance(record[key], str) for key in ("test", "outcome", "message"))
            json.dumps(record, ensure_ascii=False).encode("utf-8")


def test_reports_skip_fifos_sockets_links_and_directories_and_cap_their_sum(tmp_path):
    os.mkfifo(tmp_path / "fifo.xml")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "sock.xml"))
    (tmp_path / "dir.xml").mkdir()
    os.symlink("/etc/passwd", tmp_path / "link.xml")
    (tmp_path / os.fsdecode(b"\xff.xml")).write_bytes(b"<a/>")
    assert list(reports.read_reports(str(tmp_path)).values()) == [b"<a/>"]
    for n in range(3):
        (tmp_path / f"big{n}.xml").write_bytes(b" " * (reports.REPORT_CAP // 2))
    with pytest.raises(reports.ReportError, match="larger than"):
        reports.read_reports(str(tmp_path))
