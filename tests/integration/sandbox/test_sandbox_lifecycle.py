"""Labels, removal, reaping, image ids, infra errors, the CLI and the benchmark, on a real engine."""

from __future__ import annotations

import json

import docker.errors
import pytest
from typer.testing import CliRunner

from evolve.bench.sandbox import bench_sandbox
from evolve.cli.app import app
from evolve.sandbox import (
    JOB_LABEL,
    RUN_LABEL,
    DockerSandbox,
    SandboxLimits,
    SandboxUnavailable,
    cleanup,
    image_id,
    image_info,
    list_sandboxes,
    reap_run,
)
from evolve.sandbox.images import registry_reachable

TINY = SandboxLimits(cpus=0.5, memory="64m", pids=32, wall_clock_s=60)


def test_container_is_labelled_limited_offline_and_removed_on_close(make_docker, docker_client, test_run_id):
    box = make_docker()
    attrs = docker_client.containers.get(box.container_id).attrs
    assert attrs["Config"]["Labels"][RUN_LABEL] == test_run_id
    assert attrs["Config"]["Labels"][JOB_LABEL]
    host = attrs["HostConfig"]
    assert host["NetworkMode"] == "none"
    assert (host["Memory"], host["PidsLimit"], host["NanoCpus"]) == (128 * 2**20, 64, 500_000_000)
    # The main process is root's (no capabilities): commands run as the agent user cannot kill it.
    assert host["CapDrop"] == ["ALL"] and attrs["Config"]["User"] == "0:0" and host["ReadonlyRootfs"]
    assert box.exec(["id", "-u"]).stdout.strip() == "1000"
    assert box.exec(["sh", "-c", "kill -9 -1; kill -9 1"]).returncode != 0
    assert box.exec(["true"]).ok  # still running
    box.close()
    box.close()  # idempotent
    with pytest.raises(docker.errors.NotFound):
        docker_client.containers.get(box.container_id)


def test_reap_run_removes_only_that_runs_leftovers(docker_client, base_image, test_run_id):
    crashed_run = f"{test_run_id}-crashed"
    other_run = f"{test_run_id}-other"
    leftovers = [
        DockerSandbox.create(
            base_image, run_id=crashed_run, job_id=f"j{i}", limits=TINY, client=docker_client
        )
        for i in range(2)
    ]
    survivor = DockerSandbox.create(
        base_image, run_id=other_run, job_id="j", limits=TINY, client=docker_client
    )
    try:
        assert sorted(reap_run(crashed_run, client=docker_client)) == sorted(
            b.container_id for b in leftovers
        )
        assert list_sandboxes(crashed_run, client=docker_client) == []
        assert list_sandboxes(other_run, client=docker_client) == [survivor.container_id]
        assert reap_run(crashed_run, client=docker_client) == []
    finally:
        survivor.close()
        for box in leftovers:
            box.close()  # already reaped: closing must not fail
    with pytest.raises(ValueError):
        reap_run("", client=docker_client)


def test_exec_after_the_container_is_gone_is_unavailable(make_docker, docker_client):
    box = make_docker()
    docker_client.api.remove_container(box.container_id, force=True)
    with pytest.raises(SandboxUnavailable):
        box.exec(["true"])


def test_copies_ride_with_the_next_command_and_a_failed_copy_runs_nothing(
    make_docker, docker_client, monkeypatch
):
    box = make_docker()
    box.write_file("/work/a/b.txt", "x")
    execs: list[list[str]] = []
    create = docker_client.api.exec_create
    monkeypatch.setattr(
        docker_client.api, "exec_create", lambda cid, cmd, **kw: execs.append(cmd) or create(cid, cmd, **kw)
    )
    ran = box.exec(["sh", "-c", "cat /work/a/b.txt; echo err >&2; stat -c %u /work/a/b.txt"])
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "x1000\n", "err\n")  # the command's output alone
    assert len(execs) == 1  # the copy and the command: one exec
    # A copy that cannot be made (the root is read-only): the engine says so, and the command never ran,
    # so printing the engine's line cannot pass for a copy made.
    box.write_file("/etc/evolve-x", "x")
    with pytest.raises(SandboxUnavailable, match="cannot copy into /etc"):
        box.exec(["sh", "-c", "echo '[evolve: copies made]' >&2; touch /work/ran"])
    assert box.exec(["ls", "/work"]).stdout.split() == ["a"]


def test_a_root_command_takes_copies_made_as_uid_1000_in_its_own_exec(
    make_docker, docker_client, monkeypatch
):
    box = make_docker(user="root", cap_add=("SETUID", "SETGID"))  # a grader's
    box.write_file("/tmp/stage/x", "1")
    execs: list[list[str]] = []
    create = docker_client.api.exec_create
    monkeypatch.setattr(
        docker_client.api, "exec_create", lambda cid, cmd, **kw: execs.append(cmd) or create(cid, cmd, **kw)
    )
    ran = box.exec(["sh", "-c", "cat /tmp/stage/x; stat -c ' %u' /tmp/stage /tmp/stage/x; id -u"])
    assert ran.stdout.split() == ["1", "1000", "1000", "0"] and ran.stderr == ""  # as `put_tars` made them
    assert len(execs) == 1
    # An image without setpriv (here: a PATH without it): the copies take an exec of their own, as before.
    tools = (
        "mkdir -p /tmp/np && ln -s /bin/sh /bin/mkdir /bin/cat /usr/bin/stat /usr/bin/tar "
        "/usr/bin/timeout /tmp/np/"
    )
    assert box.exec(["sh", "-c", tools]).ok
    box.write_file("/tmp/stage/y", "2")
    execs.clear()
    ran = box.exec(["sh", "-c", "cat /tmp/stage/y; stat -c ' %u' /tmp/stage/y"], env={"PATH": "/tmp/np"})
    assert (ran.stdout, len(execs)) == ("2 1000\n", 3)  # tried together, then the copy, then the command


def test_missing_image_is_unavailable(docker_client, test_run_id):
    with pytest.raises(SandboxUnavailable):
        DockerSandbox.create(
            "evolve-no-such-image:never", run_id=test_run_id, job_id="x", client=docker_client
        )
    assert list_sandboxes(test_run_id, client=docker_client) == []


def test_image_id_is_what_the_engine_reports(docker_client, base_image):
    assert image_id(base_image, client=docker_client) == docker_client.images.get(base_image).id
    assert image_info(base_image, client=docker_client).id.startswith("sha256:")
    with pytest.raises(SandboxUnavailable):
        image_info("evolve-no-such-image:never", client=docker_client)


def test_registry_reachability(docker_client, base_image):
    assert registry_reachable(base_image, client=docker_client)  # local images need no registry
    assert not registry_reachable("localhost:1/evolve/none:never", client=docker_client)


def test_cli_exec_prints_output_and_exit_code(docker_client, base_image):
    result = CliRunner().invoke(
        app,
        [
            "sandbox",
            "exec",
            "--timeout",
            "10",
            "--memory",
            "64m",
            "--",
            "sh",
            "-c",
            "echo from-inside; exit 5",
        ],
    )
    assert result.exit_code == 5
    assert "from-inside" in result.output and "exit code 5" in result.output


def test_cli_cleanup_sweeps_a_run(docker_client, base_image, test_run_id):
    run_id = f"{test_run_id}-cli"
    box = DockerSandbox.create(base_image, run_id=run_id, job_id="left", limits=TINY, client=docker_client)
    result = CliRunner().invoke(app, ["sandbox", "cleanup", run_id])
    assert result.exit_code == 0 and "removed 1 container" in result.output
    assert cleanup(run_id, client=docker_client) == []
    box.close()


def test_bench_sandbox_is_fast_enough(docker_client, base_image):
    report = bench_sandbox(3, image=base_image, client=docker_client)
    assert 0 < report.create_exec_destroy_s.median <= report.create_exec_destroy_s.p95
    assert report.create_exec_destroy_s.median < 1.5  # the target on this machine
    assert report.copy_in_10mb_s.median > 0 and report.diff_out_s.median > 0


def test_cli_bench_sandbox_json(docker_client, base_image):
    result = CliRunner().invoke(app, ["bench", "sandbox", "--runs", "2", "--json"])
    assert result.exit_code == 0, result.output
    numbers = json.loads(result.output)
    assert set(numbers) == {"create_exec_destroy_s", "copy_in_10mb_s", "diff_out_s"}
    assert all(set(v) == {"median", "p95"} and v["median"] > 0 for v in numbers.values())
