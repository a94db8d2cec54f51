"""Disk writes are bounded inside the sandbox; copies out never load more than the cap on the host."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from evolve.sandbox import SandboxLimits
from evolve.sandbox.types import CopyTooLarge

from .conftest import LIMITS


def test_filling_the_disk_is_an_error_inside_and_costs_the_host_nothing(make_box, docker_client):
    box = make_box()
    fill = box.exec(["sh", "-c", "dd if=/dev/zero of=/work/fill bs=1M count=200 2>&1; exit 1"])
    assert fill.disk_full and "No space left on device" in fill.stdout
    assert "the sandbox's disk is full" in fill.stderr
    for place in ("/", "/etc", "/usr/local/bin", "/opt"):  # the root filesystem takes no writes at all
        wrote = box.exec(["sh", "-c", f"echo x > {place}/evolve-probe"])
        assert wrote.returncode != 0 and "Read-only file system" in wrote.stderr
    box.exec(["rm", "/work/fill"])
    for place in ("/tmp", "/var/tmp", "/home/agent"):  # each place alike (together they also count as memory)
        assert box.exec(["sh", "-c", f"head -c 100000000 /dev/zero > {place}/big"]).disk_full
        box.exec(["rm", f"{place}/big"])
    (sizes,) = docker_client.api.containers(all=True, size=True, filters={"id": box.container_id})
    assert sizes.get("SizeRw", 0) < 1024 * 1024  # nothing reached the host's disk
    # What is honest still works: an ordinary file in /work after freeing space.
    assert box.exec(["sh", "-c", "echo ok > /work/a && cat /work/a"]).stdout == "ok\n"


def test_files_can_never_take_the_memory_the_sandbox_s_processes_need(make_box):
    # Files in tmpfs are memory no kill frees. With `disk` over `memory`, files filling every writable
    # place would leave nothing for any process, and the OOM killer would take the container's main process:
    # a dead sandbox, so an agent could turn its failure into `infra`. The places together hold 3/4 of it.
    box = make_box(limits=SandboxLimits(memory="96m", pids=64, wall_clock_s=120, disk="1g"))
    for place in ("/work", "/tmp", "/var/tmp", "/home/agent"):
        fill = box.exec(["sh", "-c", f"dd if=/dev/zero of={place}/fill bs=1M count=200 2>&1; exit 1"])
        assert fill.disk_full and not fill.oom_killed and "No space left on device" in fill.stdout, fill
    assert "its files may hold /work 36 MiB, /tmp 12 MiB" in fill.stderr
    # Every place is full, and the sandbox still does what the engine asks of it after an agent's run.
    assert box.exec(["sh", "-c", "echo ok > /work/fill2; echo alive"]).stdout == "alive\n"
    assert len(box.read_file("/work/fill")) == 36 << 20
    assert box.exec(["python3", "-c", "print(len(bytearray(16 << 20)))"]).stdout == "16777216\n"


def test_a_sparse_gigabyte_is_cut_at_the_cap_without_being_loaded(
    make_box, base_image, containment_run, tmp_path
):
    box = make_box()
    assert box.exec(["truncate", "-s", "1G", "/work/transcript.jsonl"]).ok
    with pytest.raises(CopyTooLarge, match="1073741"):
        box.get_dir("/work", tmp_path / "out")
    assert not any((tmp_path / "out").glob("*"))
    # The engine side in a fresh process, so its peak RSS is the copy's alone.
    script = textwrap.dedent(f"""
        import json, resource
        from evolve.sandbox import DockerSandbox, SandboxLimits
        with DockerSandbox.create({base_image!r}, run_id={containment_run!r}, job_id="sparse",
                                  limits=SandboxLimits(memory="256m", disk="64m", \
copy_limit_bytes=8 << 20)) as box:
            box.exec(["truncate", "-s", "1G", "/work/transcript.jsonl"])
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            data = box.read_file("transcript.jsonl")
            after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps({{"size": len(data), "tail": data[-200:].decode(), "grew_kib": after - before}}))
    """)
    done = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["size"] <= 8 << 20 and "over the 8388608-byte copy cap" in result["tail"]
    assert result["grew_kib"] < 64 * 1024  # a loaded gigabyte would be 1,048,576 KiB


def test_a_writable_root_is_still_available_for_images_that_need_it(make_box):
    box = make_box(limits=SandboxLimits(memory="128m", wall_clock_s=60, disk=None))
    assert box.exec(["sh", "-c", "echo hi > /work/x && cat /work/x"]).stdout == "hi\n"
    assert LIMITS.disk == "64m"


LAYER = SandboxLimits(memory="256m", wall_clock_s=120, disk=None, layer_disk="64m", layer_poll_s=0.5)
"""A writable root (an image whose tools write anywhere), its layer capped at 64 MiB."""
_WRITER = "while :; do head -c 50000000 /dev/zero >> /tmp/fill || exit 1; done"


def _layer(docker_client, box) -> int:
    (sizes,) = docker_client.api.containers(all=True, size=True, filters={"id": box.container_id})
    return sizes.get("SizeRw", 0)


def test_a_writable_root_is_capped_by_its_layer_and_the_writer_is_killed(make_box, docker_client):
    box = make_box(limits=LAYER)
    # twin
    assert box.exec(["sh", "-c", "head -c 8000000 /dev/zero > /tmp/honest && echo ok"]).stdout == "ok\n"
    fill = box.exec(["sh", "-c", f"{_WRITER}; echo survived"], timeout=60)
    assert fill.disk_full and not fill.timed_out and "survived" not in fill.stdout
    assert "writable layer passed its cap of 64m" in fill.stderr
    assert _layer(docker_client, box) < 2 << 30  # the cap plus what one writer wrote between two looks
    refused = box.exec(["echo", "hi"])
    assert refused.disk_full and refused.stdout == "" and "no command runs in it now" in refused.stderr
    assert box.read_file("/tmp/honest")[:4] == b"\0\0\0\0"  # the engine's own copies out still work


def test_a_writer_left_in_the_background_dies_with_its_command(make_box, docker_client):
    """No process of the agent's uid outlives the command that started it (DockerSandbox.exec), so a
    writer left in the background writes nothing once its command has ended."""
    box = make_box(limits=LAYER)
    started = box.exec(
        ["sh", "-c", f"setsid sh -c 'sleep 1; {_WRITER}' </dev/null >/dev/null 2>&1 & echo started"]
    )
    assert started.ok and started.stdout == "started\n"
    size = _layer(docker_client, box)
    time.sleep(3)
    assert _layer(docker_client, box) == size and not box.exec(["true"]).disk_full  # no writer is left


@pytest.mark.parametrize("make", ["ln -s /etc/shadow evil", "mkfifo pipe"])
def test_a_link_out_or_a_special_file_refuses_the_copy_with_a_sandbox_error(make_box, tmp_path, make):
    from evolve.sandbox.types import CopyRefused

    box = make_box()
    assert box.exec(["sh", "-c", f"mkdir -p /work/self && cd /work/self && echo hi > a && {make}"]).ok
    with pytest.raises(CopyRefused, match="refused to copy /work/self"):
        box.get_dir("/work/self", tmp_path / "out")
