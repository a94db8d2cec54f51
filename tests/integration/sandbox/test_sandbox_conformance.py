"""The sandbox protocol's behaviour, the same for every backend (inspect_ai's conformance idea)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from evolve.sandbox import Sandbox, SandboxLimits, snapshot


def test_is_a_sandbox(sandbox):
    assert isinstance(sandbox, Sandbox)


def test_exit_codes_and_streams_are_results(sandbox):
    ok = sandbox.exec(["sh", "-c", "echo out; echo err >&2"])
    assert (ok.returncode, ok.stdout, ok.stderr, ok.ok) == (0, "out\n", "err\n", True)
    failed = sandbox.exec(["sh", "-c", "exit 3"])
    assert failed.returncode == 3 and not failed.ok and not failed.timed_out


def test_missing_command_is_127(sandbox):
    assert sandbox.exec(["no-such-command-xyz"]).returncode == 127


def test_stdin_text_and_bytes(sandbox):
    assert sandbox.exec(["cat"], input="hello\nworld").stdout == "hello\nworld"
    assert sandbox.exec(["wc", "-c"], input=b"\x00\xff" * 1000).stdout.strip() == "2000"
    assert sandbox.exec(["cat"]).stdout == ""  # no input: stdin is empty, not the host's


def test_env_reaches_the_command(sandbox):
    result = sandbox.exec(["sh", "-c", 'echo "$GREETING"'], env={"GREETING": "hi there"})
    assert result.stdout == "hi there\n"


def test_cwd_relative_to_workdir_and_missing(sandbox):
    sandbox.write_file("sub/dir/marker.txt", "x")
    result = sandbox.exec(["ls"], cwd="sub/dir")
    assert result.stdout == "marker.txt\n"
    assert sandbox.exec(["pwd"]).stdout.strip() == sandbox.workdir
    assert sandbox.exec(["pwd"], cwd="no/such/dir").returncode == 126


def test_binary_files_round_trip(sandbox):
    blob = bytes(range(256)) * 64
    sandbox.write_file("deep/nested/blob.bin", blob)
    assert sandbox.read_file("deep/nested/blob.bin") == blob
    assert sandbox.exec(["wc", "-c", "deep/nested/blob.bin"]).stdout.split()[0] == str(len(blob))
    sandbox.write_file("deep/nested/blob.bin", "replaced")
    assert sandbox.read_file("deep/nested/blob.bin") == b"replaced"


def test_files_the_command_writes_are_readable(sandbox):
    sandbox.exec(["sh", "-c", "printf 'made inside' > made.txt"])
    assert sandbox.read_file("made.txt") == b"made inside"


def test_missing_file_raises_file_not_found(sandbox):
    with pytest.raises(FileNotFoundError):
        sandbox.read_file("nope/missing.txt")
    with pytest.raises(FileNotFoundError):
        sandbox.get_dir("nope", Path("/tmp/never-created-by-evolve-tests"))


def test_put_dir_and_get_dir_round_trip(sandbox, tmp_path):
    source = tmp_path / "src"
    (source / "pkg").mkdir(parents=True)
    (source / "pkg" / "mod.py").write_text("print('hi')\n")
    (source / "data.bin").write_bytes(b"\x00\x01\xfe\xff")
    sandbox.put_dir(source, "repo")
    assert sandbox.exec(["python3", "pkg/mod.py"], cwd="repo").stdout == "hi\n"
    sandbox.exec(["sh", "-c", "echo new > new.txt"], cwd="repo")
    out = tmp_path / "out"
    sandbox.get_dir("repo", out)
    assert (out / "data.bin").read_bytes() == b"\x00\x01\xfe\xff"
    assert (out / "pkg" / "mod.py").read_text() == "print('hi')\n"
    assert (out / "new.txt").read_text() == "new\n"


def test_timeout_kills_the_whole_process_tree_and_keeps_partial_output(sandbox):
    script = "echo started; (sleep 2; echo late > late.txt) & sleep 30; echo never"
    started = time.monotonic()
    result = sandbox.exec(["sh", "-c", script], timeout=1.0)
    assert result.timed_out and not result.ok
    assert result.stdout == "started\n"
    assert time.monotonic() - started < 6
    time.sleep(2.0)  # the background child would have written late.txt by now
    with pytest.raises(FileNotFoundError):
        sandbox.read_file("late.txt")
    assert sandbox.exec(["true"]).returncode == 0  # the sandbox stays usable


def test_output_cap_truncates_and_stops_the_command(sandbox):
    started = time.monotonic()
    result = sandbox.exec(["yes", "spam"], timeout=30)
    assert result.truncated and not result.timed_out
    assert 0 < len(result.stdout) <= 100_000
    assert time.monotonic() - started < 10
    assert sandbox.exec(["echo", "after"]).stdout == "after\n"


def test_snapshot_lays_out_a_baseline_for_the_agents_tools(sandbox, tmp_path):
    # The engine never reads this repository back (it diffs a copied-out tree on the host); the
    # baseline is for the agent's own `git diff`.
    source = tmp_path / "src"
    source.mkdir()
    (source / "a.txt").write_text("one\n")
    sandbox.put_dir(source, "repo")
    snapshot(sandbox, "repo")
    show = ["git", "-c", "safe.directory=*", "diff", "evolve-baseline", "--"]
    assert sandbox.exec(show, cwd="repo").stdout == ""
    sandbox.exec(["sh", "-c", "echo two >> a.txt"], cwd="repo")
    assert "+two" in sandbox.exec(show, cwd="repo").stdout


def test_default_limits_are_the_documented_ones():
    limits = SandboxLimits()
    assert (limits.cpus, limits.memory, limits.pids) == (1.0, "2g", 256)
