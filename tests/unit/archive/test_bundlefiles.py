"""A damaged or incomplete bundle is refused with one line naming the file and what is wrong,
exit status 1, and nothing left at `--dest` (`evolve import`) or reported verified (`evolve replay`)."""

import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from evolve.archive import Run, export_lineage


def evolve(*args):
    return subprocess.run(
        [sys.executable, "-m", "evolve", *map(str, args)], capture_output=True, text=True, check=False
    )


def exported(root: Path, name: str, versions: list[str]) -> Path:
    """A bundle of a chain of nodes whose agent.py takes each of `versions` in turn."""
    with Run.create(root / name) as run:
        parent = None
        for index, text in enumerate(versions):
            code = root / f"{name}-code-{index}"
            code.mkdir()
            (code / "agent.py").write_text(text)
            parent = run.add_node(code, parent=parent).id
            run.record_evaluation(parent, "t0", "pass" if index else "fail")
        return export_lineage(run, root / f"{name}.evolve.tar.gz")


def members(bundle: Path) -> dict[str, bytes]:
    with tarfile.open(bundle) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]


def pack(files: dict[str, bytes], dest: Path) -> Path:
    staging = dest.parent / (dest.name + ".d")
    for name, data in files.items():
        (staging / name).parent.mkdir(parents=True, exist_ok=True)
        (staging / name).write_bytes(data)
    with tarfile.open(dest, "w:gz") as tar:
        for item in sorted(staging.iterdir()):
            tar.add(item, arcname=item.name)
    return dest


def damaged_pack(data: bytes) -> bytes:
    """The git bundle with bytes in the middle of its pack (after the header) overwritten."""
    start = data.index(b"PACK") + 40
    middle = start + (len(data) - start) // 2
    return data[:middle] + bytes(b ^ 0xFF for b in data[middle : middle + 16]) + data[middle + 16 :]


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    root = tmp_path_factory.mktemp("bundles")
    good = exported(root, "good", ["v = 0\n", "v = 1\n", "v = 2\n"])
    other = exported(root, "other", ["w = 0\n", "w = 1\n", "w = 2\n"])
    files = members(good)
    raw = good.read_bytes()
    (root / "truncated.evolve.tar.gz").write_bytes(raw[: len(raw) // 2])
    return {
        "good": good,
        "truncated": root / "truncated.evolve.tar.gz",
        "no-run-toml": pack({k: v for k, v in files.items() if k != "run.toml"}, root / "no-run-toml.tar.gz"),
        "no-nodes": pack({k: v for k, v in files.items() if k != "nodes.jsonl"}, root / "no-nodes.tar.gz"),
        "damaged-pack": pack(
            {**files, "code.bundle": damaged_pack(files["code.bundle"])}, root / "pack.tar.gz"
        ),
        "stale-nodes": pack({**files, "nodes.jsonl": members(other)["nodes.jsonl"]}, root / "stale.tar.gz"),
        "bad-json": pack(
            {**files, "evaluations.jsonl": files["evaluations.jsonl"][:-20]}, root / "json.tar.gz"
        ),
    }


CASES = {
    "truncated": "the archive is truncated",
    "no-run-toml": "the bundle has no run.toml",
    "no-nodes": "the bundle has no nodes.jsonl",
    "damaged-pack": "code.bundle is damaged",
    "stale-nodes": "nodes.jsonl names commit",
    "bad-json": "evaluations.jsonl line 3 is not JSON",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_import_refuses_with_one_line_and_leaves_nothing(bundles, case, tmp_path):
    dest = tmp_path / "dest"
    out = evolve("import", bundles[case], "--dest", dest)
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {bundles[case]}: ") and CASES[case] in lines[0], (
        out.stderr
    )
    assert "Traceback" not in out.stderr and not dest.exists()


@pytest.mark.parametrize("case", ["truncated", "no-nodes", "damaged-pack", "stale-nodes"])
def test_replay_refuses_with_one_line(bundles, case):
    out = evolve("replay", bundles[case])
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and CASES[case] in lines[0] and "verified" not in out.stdout, out.stderr


def test_the_good_bundle_imports(bundles, tmp_path):
    out = evolve("import", bundles["good"], "--dest", tmp_path / "dest")
    assert out.returncode == 0 and "imported 3 nodes" in out.stdout, out.stderr
