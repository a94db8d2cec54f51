"""Finding the agent's processes in a container from the host: by uid, group and cgroup, in any bytes."""

from __future__ import annotations

from evolve.sandbox.kill import _group_members, _uid_members, container_freezer, freezer_of


def test_a_process_with_a_name_of_any_bytes_is_still_found(tmp_path):
    entry = tmp_path / "101"
    entry.mkdir()
    (entry / "stat").write_bytes(b"101 (\xff\xfe)) S 1 100 100 0 -1\n")
    (entry / "status").write_bytes(b"Name:\t\xff\xfe\nUid:\t1000\t1000\t1000\t1000\n")
    (entry / "cgroup").write_text("0::/docker/abc123\n")
    assert _uid_members(1000, "abc123", tmp_path) == [101]
    assert _group_members(100, "abc123", tmp_path) == [101]


def test_the_freezer_is_the_v1_controller_or_the_unified_hierarchy_where_writable(tmp_path):
    proc, cgroups = tmp_path / "proc", tmp_path / "cgroup"
    (proc / "7").mkdir(parents=True)
    (proc / "7" / "cgroup").write_text("6:freezer:/docker/abc\n0::/docker/abc\n")
    (cgroups / "freezer" / "docker" / "abc").mkdir(parents=True)
    assert freezer_of(7, proc=proc, cgroups=cgroups) is None  # no state file to write
    (cgroups / "freezer" / "docker" / "abc" / "freezer.state").write_text("THAWED\n")
    assert freezer_of(7, proc=proc, cgroups=cgroups) == cgroups / "freezer" / "docker" / "abc"
    (proc / "7" / "cgroup").write_text("0::/system.slice/docker-abc.scope\n")
    (cgroups / "system.slice" / "docker-abc.scope").mkdir(parents=True)
    (cgroups / "system.slice" / "docker-abc.scope" / "cgroup.freeze").write_text("0\n")
    assert freezer_of(7, proc=proc, cgroups=cgroups) == cgroups / "system.slice" / "docker-abc.scope"
    assert freezer_of(8, proc=proc, cgroups=cgroups) is None  # no such process


def test_a_containers_freezer_is_found_where_docker_puts_it(tmp_path):
    assert container_freezer("abc", cgroups=tmp_path) is None
    scope = tmp_path / "system.slice" / "docker-abc.scope"
    scope.mkdir(parents=True)
    (scope / "cgroup.freeze").write_text("0\n")
    assert container_freezer("abc", cgroups=tmp_path) == scope
