"""Pure parts of the sandbox package, and the process backend, with no Docker engine."""

from __future__ import annotations

import io
import os
import tarfile
import time
from pathlib import Path

import docker.errors
import pytest
import requests

from evolve.bench.sandbox import Timing
from evolve.config import SandboxConfig
from evolve.sandbox import (
    ExecResult,
    ProcessSandbox,
    Sandbox,
    SandboxLimits,
    SandboxUnavailable,
    cleanup,
    limits_from_config,
    open_sandbox,
)
from evolve.sandbox.engine import oom_kill_count
from evolve.sandbox.images import base_of, parse_requirements, requirements_dockerfile
from evolve.sandbox.kill import _group_members, _uid_members
from evolve.sandbox.output import OutputCollector
from evolve.sandbox.tarballs import extract_dir, single_file, tar_of_bytes, tar_of_dir


def test_output_collector_caps_the_combined_streams():
    collector = OutputCollector(10)
    assert collector.feed(b"12345", b"678")
    assert not collector.feed(b"abcdef", None)
    assert collector.over_limit.is_set() and collector.finished.is_set()
    assert not collector.feed(b"more", b"more")
    assert collector.texts() == ("12345ab", "678")


def test_output_collector_decodes_invalid_utf8_without_failing():
    collector = OutputCollector(100)
    collector.feed(b"ok \xff\xfe", None)
    assert collector.texts()[0].startswith("ok ")


def test_exec_result_ok_needs_a_clean_zero_exit():
    assert ExecResult(0, "", "", 0.1).ok
    assert not ExecResult(0, "", "", 0.1, truncated=True).ok
    assert not ExecResult(1, "", "", 0.1).ok
    assert not ExecResult(124, "", "", 0.1, timed_out=True).ok


def test_tar_round_trip_sets_owner_and_keeps_bytes(tmp_path):
    (tmp_path / "src" / "d").mkdir(parents=True)
    (tmp_path / "src" / "d" / "f.bin").write_bytes(b"\x00\xff")
    with tarfile.open(fileobj=io.BytesIO(tar_of_dir(tmp_path / "src"))) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert set(members) == {"d", "d/f.bin"}
    assert {(m.uid, m.gid) for m in members.values()} == {(1000, 1000)}
    assert single_file(tar_of_bytes("x.txt", b"hello")) == b"hello"


def test_extract_dir_refuses_paths_that_escape(tmp_path):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("./../escaped.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(tarfile.FilterError):
        extract_dir(buffer.getvalue(), tmp_path / "out", strip=".")
    assert not (tmp_path / "escaped.txt").exists()


def test_oom_kill_count_reads_cgroup_v1_and_v2():
    assert oom_kill_count("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n") == 3
    assert oom_kill_count("low 0\nhigh 0\nmax 2\noom 1\noom_kill 1\n") == 1
    assert oom_kill_count("nothing here") is None


def test_requirements_parsing_and_layer():
    assert parse_requirements("# only comments\n\nrequests>=2  # http\n tomli \n") == ["requests>=2", "tomli"]
    layer = requirements_dockerfile("evolve-base:latest", ["requests>=2"])
    assert layer.startswith("FROM evolve-base:latest\n")
    assert "--no-index --find-links /tmp/wheels 'requests>=2'" in layer


def test_base_of_reads_the_dockerfile(tmp_path):
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("# comment\nFROM debian:bookworm-slim AS base\nRUN true\n")
    assert base_of(dockerfile) == "debian:bookworm-slim"
    assert base_of(Path(__file__).parents[3] / "sandboxes" / "base" / "Dockerfile") == "debian:bookworm-slim"


def test_timing_median_and_p95():
    timing = Timing.of([float(x) for x in range(1, 21)])
    assert (timing.median, timing.p95) == (10.5, 19.0)


def test_limits_follow_the_config():
    limits = limits_from_config(
        SandboxConfig(cpus=2, memory="512m", pids=99, timeout_s=30, output_limit_bytes=7)
    )
    assert limits == SandboxLimits(cpus=2, memory="512m", pids=99, wall_clock_s=30, output_limit_bytes=7)
    unbounded = limits_from_config(SandboxConfig(disk="none", copy_limit_bytes=5))
    assert (unbounded.disk, unbounded.copy_limit_bytes) == (None, 5)
    assert limits_from_config(SandboxConfig(disk="3g")).disk == "3g"


def test_group_and_uid_members_match_the_container_and_the_group_or_uid(tmp_path):
    def fake(pid: int, pgrp: int, cgroup: str, uid: int = 1000) -> None:
        entry = tmp_path / str(pid)
        entry.mkdir()
        (entry / "stat").write_text(f"{pid} (weird ) name) S 1 {pgrp} {pgrp} 0 -1\n")
        (entry / "status").write_text(f"Name:\tx\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n")
        (entry / "cgroup").write_text(cgroup)

    fake(101, 100, "12:pids:/docker/abc123\n")
    fake(102, 100, "12:pids:/docker/other\n")
    fake(103, 7, "12:pids:/docker/abc123\n")
    fake(104, 7, "12:pids:/docker/abc123\n", uid=0)  # the grader's root: not the agent's
    (tmp_path / "self").mkdir()
    assert _group_members(100, "abc123", tmp_path) == [101]
    assert sorted(_uid_members(1000, "abc123", tmp_path)) == [101, 103]


def test_process_backend_is_chosen_by_name_and_isolates_no_env(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOLVE_UNIT_SECRET_TOKEN", "leak")
    with open_sandbox(SandboxConfig(backend="process"), run_id="r", job_id="j") as box:
        assert isinstance(box, ProcessSandbox) and isinstance(box, Sandbox)
        assert "EVOLVE_UNIT_SECRET_TOKEN" not in box.exec(["env"]).stdout
        workdir = Path(box.workdir)
    assert not workdir.exists()  # close() removed the temporary directory


def test_process_backend_timeout_and_cap(tmp_path):
    limits = SandboxLimits(output_limit_bytes=1000, wall_clock_s=60)
    with ProcessSandbox(limits=limits, base_dir=tmp_path) as box:
        started = time.monotonic()
        slow = box.exec(["sh", "-c", "echo begun; sleep 20"], timeout=0.5)
        assert slow.timed_out and slow.stdout == "begun\n" and time.monotonic() - started < 5
        loud = box.exec(["yes"])
        assert loud.truncated and len(loud.stdout) == 1000


def test_process_backend_wall_clock(tmp_path):
    with ProcessSandbox(limits=SandboxLimits(wall_clock_s=0.5), base_dir=tmp_path) as box:
        assert box.exec(["sleep", "5"]).timed_out
        assert box.exec(["true"]).timed_out


def test_container_options_are_locked_down(tmp_path):
    from evolve.sandbox.docker_spec import container_options

    limits = SandboxLimits(cpus=1.5, memory="256m", pids=50, wall_clock_s=10.2)
    options = container_options(
        run_id="run 1", job_id="j/2", limits=limits, user="agent", workdir="/work", gateway_socket=None
    )
    assert options["network_mode"] == "none" and options["mounts"] == [] and options["environment"] == {}
    assert options["cap_drop"] == ["ALL"] and options["security_opt"] == ["no-new-privileges"]
    assert (options["nano_cpus"], options["mem_limit"], options["memswap_limit"]) == (
        1_500_000_000,
        "256m",
        "256m",
    )
    # its own clock: the wall clock plus the pool's idle allowance (10 %); the host's deadline comes first
    assert (
        options["pids_limit"] == 50
        and options["command"] == ["timeout", "12", "cat"]
        and options["stdin_open"]
    )
    labels = options["labels"]
    assert (labels["evolve.run"], labels["evolve.job"]) == ("run 1", "j/2")
    assert labels["evolve.owner"].split(":")[1] == str(os.getpid())
    assert options["read_only"] is True
    assert set(options["tmpfs"]) == {"/work", "/tmp", "/var/tmp", "/home/agent"}
    # Files are memory too (tmpfs): the four places together hold at most 3/4 of the 256m, so files can
    # never starve the processes; the work dir gets half of that, each other place a third of the rest.
    mib = 1 << 20
    sizes = {place: int(spec.split("size=")[1].split(",")[0]) for place, spec in options["tmpfs"].items()}
    assert sizes == {"/work": 96 * mib, "/tmp": 32 * mib, "/var/tmp": 32 * mib, "/home/agent": 32 * mib}
    assert all("exec" in spec for spec in options["tmpfs"].values())
    roomy = container_options(
        run_id="r",
        job_id="j",
        limits=SandboxLimits(memory="8g", disk="1g"),
        user="agent",
        workdir="/work",
        gateway_socket=None,
    )
    assert all("size=1073741824," in spec for spec in roomy["tmpfs"].values())  # `disk` caps each place
    writable_root = container_options(
        run_id="r",
        job_id="j",
        limits=SandboxLimits(disk=None),
        user="root",
        workdir="/work",
        gateway_socket=None,
    )
    assert writable_root["read_only"] is False and writable_root["tmpfs"] == {}
    slot = container_options(
        run_id="r",
        job_id="j",
        limits=limits,
        user="agent",
        workdir="/work",
        gateway_socket=None,
        gateway_dir=Path("/tmp/slot"),
    )
    (mount,) = slot["mounts"]  # the gateway's own directory of this container, read-only: one socket in it
    assert (mount["Target"], mount["Source"], mount["ReadOnly"]) == ("/run/evolve", "/tmp/slot", True)
    assert slot["environment"] == {"EVOLVE_LLM_SOCKET": "/run/evolve/llm.sock"}
    assert options["name"].startswith("evolve-run-1-j-2-")
    with_gateway = container_options(
        run_id="r",
        job_id="j",
        limits=limits,
        user="agent",
        workdir="/work",
        gateway_socket=tmp_path / "s.sock",
    )
    (mount,) = with_gateway["mounts"]
    assert (mount["Target"], mount["Source"], mount["Type"]) == (
        "/run/evolve/llm.sock",
        str(tmp_path / "s.sock"),
        "bind",
    )
    assert with_gateway["environment"] == {"EVOLVE_LLM_SOCKET": "/run/evolve/llm.sock"}
    assert with_gateway["network_mode"] == "none"


def test_exec_wrapper_runs_the_command_under_timeout_in_posix_sh(tmp_path):
    import subprocess

    from evolve.sandbox.docker_spec import exec_wrapper

    (tmp_path / "in.txt").write_text("fed")
    argv = exec_wrapper(
        ["sh", "-c", 'cat; echo " $1"', "_", "arg with spaces"],
        pidfile=str(tmp_path / "pid"),
        stdin_file=str(tmp_path / "in.txt"),
        cwd=str(tmp_path),
        limit_s=5,
        grace_s=1,
    )
    result = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=10)
    assert (result.returncode, result.stdout) == (0, "fed arg with spaces\n")
    assert (tmp_path / "pid").read_text().strip().isdigit()
    assert not (tmp_path / "in.txt").exists()  # the stdin file is consumed


def test_process_backend_copies_out_are_capped(tmp_path):
    from evolve.sandbox.types import CopyTooLarge

    boxes = tmp_path / "boxes"
    boxes.mkdir()
    with ProcessSandbox(limits=SandboxLimits(copy_limit_bytes=4096), base_dir=boxes) as box:
        box.write_file("d/sparse", b"")
        os.truncate(Path(box.workdir) / "d" / "sparse", 1 << 30)  # a sparse gigabyte, 0 bytes on disk
        data = box.read_file("d/sparse")
        assert len(data) <= 4096 and data.endswith(b"only its start was kept]\n")
        with pytest.raises(CopyTooLarge, match="1073741824 bytes"):
            box.get_dir("d", tmp_path / "out")


class _Engine:
    """The part of a Docker client a run's closing sweep uses, answering each removal with `error`."""

    def __init__(self, error: Exception):
        self.api = self
        self.error = error

    def containers(self, all: bool, filters: dict) -> list[dict]:
        return [{"Id": "c" * 64, "Labels": {}}]

    def remove_container(self, container_id: str, force: bool) -> None:
        raise self.error


def _api_error(status: int, explanation: str) -> docker.errors.APIError:
    response = requests.Response()
    response.status_code = status
    return docker.errors.APIError("engine said no", response=response, explanation=explanation)


def test_a_sweep_racing_a_sandboxs_own_removal_is_no_error():
    """After a stop, the run's closing sweep meets containers their sandboxes are still removing: the
    engine answers 409 "already in progress". That ended a stopped CPU run with `error:` and exit 1."""
    racing = _api_error(409, "removal of container ccc is already in progress")
    assert cleanup("run-1", client=_Engine(racing)) == []  # not removed by the sweep, and no error
    with pytest.raises(SandboxUnavailable, match="cannot remove container"):
        cleanup("run-1", client=_Engine(_api_error(409, "container is paused")))
    with pytest.raises(SandboxUnavailable, match="cannot remove container"):
        cleanup("run-1", client=_Engine(_api_error(500, "removal is already in progress")))
