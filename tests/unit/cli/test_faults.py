"""Faults as one line: damaged databases, full and read-only disks, git errors, a second writer,
a missing API key, a nonexistent suite. Readers leave a damaged file byte-identical."""

from __future__ import annotations

import errno
import sqlite3
import subprocess
import sys
from pathlib import Path

import git
import pytest

from evolve.archive import Run
from evolve.cli.faults import describe


def evolve(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "evolve", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def one_line_error(result) -> str:
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.fixture
def small_run(tmp_path):
    code = tmp_path / "code"
    code.mkdir()
    (code / "agent.py").write_text("print(1)\n")
    with Run.create(tmp_path / "run") as run:
        node = run.add_node(code)
        for index in range(40):
            run.record_evaluation(node.id, f"t{index}", "pass", log_path="x" * 200)
    return tmp_path / "run"


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


def _overwrite(path: Path) -> None:
    path.write_bytes(b"this is not a database at all" * 100)


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _no_tables(path: Path) -> None:
    path.unlink()
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE unrelated (x)")
    other.commit()
    other.close()


@pytest.mark.parametrize("damage", [_truncate, _overwrite, _empty, _no_tables], ids=lambda f: f.__name__[1:])
def test_status_on_a_damaged_database_prints_one_line_and_leaves_the_file_as_it_was(small_run, damage):
    database = small_run / "run.sqlite"
    for sidecar in ("run.sqlite-wal", "run.sqlite-shm"):
        (small_run / sidecar).unlink(missing_ok=True)
    damage(database)
    before = database.read_bytes()
    for command in ("status",):
        line = one_line_error(evolve(command, small_run))
        assert str(database) in line or "run.sqlite" in line
        assert "damaged run database" in line or "empty" in line
    assert database.read_bytes() == before


def test_machine_faults_are_described_with_the_path_cause_and_remedy():
    full = describe(OSError(errno.ENOSPC, "No space left on device", "/data/runs/a/logs/job-3"))
    assert full.startswith("/data/runs/a/logs/job-3: no space left") and "--resume" in full
    assert "read-only" in describe(OSError(errno.EROFS, "Read-only file system", "/ro/run/writer.lock"))
    assert "permission denied" in describe(PermissionError(errno.EACCES, "Permission denied", "/r/run.toml"))
    stderr = "error: unable to write file .git/objects/ab/cdef\nfatal: unable to write new index file"
    gitfull = describe(
        git.GitCommandError(["git", "--git-dir=/data/run/code.git", "commit-tree"], 128, stderr)
    )
    assert gitfull.startswith("/data/run/code.git: git could not write") and "free space" in gitfull
    assert "damaged run database" in describe(sqlite3.DatabaseError("database disk image is malformed"))
    assert describe(ValueError("a bug")) is None and describe(OSError(errno.ENOENT, "gone")) is None


SCRIPTED = """
[models.diagnose]
provider = "scripted"
[models.modify]
provider = "scripted"
[models.solve]
provider = "scripted"
"""


def test_eval_into_a_run_another_process_writes_is_refused_naming_the_holder(small_run, tmp_path):
    config = tmp_path / "scripted.toml"
    config.write_text(SCRIPTED)
    with Run.open(small_run, writer=True):
        line = one_line_error(evolve("eval", "--agent", f"{small_run}:0", "--config", config, "--limit", "1"))
    assert "being written by pid" in line and str(small_run) in line


def test_run_with_a_missing_api_key_writes_nothing(tmp_path):
    config = tmp_path / "hosted.toml"
    roles = "".join(
        f'[models.{role}]\nprovider = "openai"\nmodel = "gpt-x"\napi_key_env = "EVOLVE_TEST_NO_KEY"\n'
        for role in ("diagnose", "modify", "solve")
    )
    config.write_text(f'[run]\nname = "keyless"\narchive_dir = "{tmp_path / "archive"}"\n{roles}')
    env = {k: v for k, v in __import__("os").environ.items() if k != "EVOLVE_TEST_NO_KEY"}
    first = one_line_error(evolve("run", config, env=env))
    assert "EVOLVE_TEST_NO_KEY" in first
    assert not (tmp_path / "archive" / "keyless").exists()
    # same line, not "already holds"
    assert "EVOLVE_TEST_NO_KEY" in one_line_error(evolve("run", config, env=env))


def test_config_check_rejects_a_suite_that_does_not_exist(tmp_path):
    config = tmp_path / "nosuite.toml"
    config.write_text('[tasks]\nsuite = "no-such-suite"\n')
    line = one_line_error(evolve("config", "check", config))
    assert "tasks.suite" in line and "no-such-suite" in line


@pytest.fixture
def read_only_mount(tmp_path):
    """`tmp_path/src` mounted read-only at `tmp_path/ro` (a real EROFS); skipped where mounting is not
    allowed."""
    source, target = tmp_path / "src", tmp_path / "ro"
    source.mkdir()
    target.mkdir()

    def mount() -> Path:
        for command in (["mount", "--bind", source, target], ["mount", "-o", "remount,bind,ro", target]):
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                pytest.skip(f"cannot make a read-only mount here: {done.stderr.strip()}")
        return target

    yield source, mount
    subprocess.run(["umount", target], capture_output=True, check=False)


def test_a_run_on_a_read_only_disk_reads_fine_and_refuses_writers_in_one_line(read_only_mount):
    source, mount = read_only_mount
    code = source / "code"
    code.mkdir()
    (code / "agent.py").write_text("print(1)\n")
    with Run.create(source / "run") as run:
        run.record_evaluation(run.add_node(code).id, "t0", "pass")
    target = mount()
    status = evolve("status", target / "run")
    assert status.returncode == 0 and "nodes: 1 (1 valid" in status.stdout, status.stderr
    line = one_line_error(evolve("run", "--resume", target / "run"))
    assert str(target / "run" / "writer.lock") in line and "read-only" in line
