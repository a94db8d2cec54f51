"""What the host takes out of a sandbox: a tree it can walk, write and remove, counted as it reads it."""

from __future__ import annotations

import io
import tarfile

import pytest

from evolve.sandbox.tarballs import DEPTH_CAP, PATH_CAP, TreeRefused, extract_dir


def _tar(members: list[tuple[str, bytes | None, str | None]]) -> bytes:
    """A tar as `tar -c -f - .` makes it: names under `./`; (name, content, hard link target)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name, content, target in members:
            info = tarfile.TarInfo(f"./{name}")
            if target is not None:
                info.type, info.linkname = tarfile.LNKTYPE, f"./{target}"
                tar.addfile(info)
            else:
                info.size = len(content or b"")
                tar.addfile(info, io.BytesIO(content or b""))
    return buffer.getvalue()


def test_hard_links_count_in_full_against_the_cap(tmp_path):
    links = [("big", b"x" * 1000, None)] + [(f"l{n}", None, "big") for n in range(9)]
    with pytest.raises(TreeRefused, match="10000 bytes"):
        extract_dir(_tar(links), tmp_path / "out", strip=".", cap=5000)
    assert not (tmp_path / "out").exists()  # nothing written
    extract_dir(_tar(links), tmp_path / "twin", strip=".", cap=10_000)  # the twin: within the cap
    assert (tmp_path / "twin" / "l8").read_bytes() == b"x" * 1000


@pytest.mark.parametrize(
    "name", ["/".join(["d"] * (DEPTH_CAP + 1)) + "/f", "/".join(["n" * 200] * 20) + "/f"]
)
def test_a_tree_too_deep_or_a_path_too_long_is_refused_before_anything_is_written(tmp_path, name):
    assert len(name) > PATH_CAP or name.count("/") >= DEPTH_CAP
    with pytest.raises(TreeRefused):
        extract_dir(_tar([("a.py", b"x", None), (name, b"x", None)]), tmp_path / "out", strip=".")
    assert not (tmp_path / "out").exists()


def test_a_tar_refused_midway_leaves_nothing_it_extracted(tmp_path):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name in ("./a.py", "./b.py"):
            info = tarfile.TarInfo(name)
            info.size = 1
            tar.addfile(info, io.BytesIO(b"x"))
        info = tarfile.TarInfo("./out")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(info)
    with pytest.raises(tarfile.TarError):
        extract_dir(buffer.getvalue(), tmp_path / "out", strip=".")
    assert not (tmp_path / "out").exists()
