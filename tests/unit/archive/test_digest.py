"""The lineage digest pins a bundle: a forgery that passes the bundle's own check is refused."""

import json
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from evolve.archive import Run, export_lineage, import_bundle
from evolve.archive.code import CodeStore
from evolve.archive.digest import run_digest
from evolve.errors import EvolveError


def evolve(*args):
    return subprocess.run(
        [sys.executable, "-m", "evolve", *map(str, args)], capture_output=True, text=True, check=False
    )


@pytest.fixture
def published(run, build_run, tmp_path):
    """An honest bundle and the digest `evolve export` printed for it."""
    build_run()
    bundle = tmp_path / "honest.evolve.tar.gz"
    out = evolve("export", run.path, "-o", bundle)
    assert out.returncode == 0, out.stderr
    digest = next(line.split()[1] for line in out.stdout.splitlines() if line.startswith("digest "))
    assert digest == run_digest(run) and digest.startswith("sha256:")
    return bundle, digest


def forge(bundle: Path, dest: Path, node: str) -> Path:
    """A copy of `bundle` whose `node` has other code: a new commit on the same parent, and nodes.jsonl
    rewritten to that commit and its tree hash, so the bundle still checks itself."""
    staging = dest.parent / "forge"
    with tarfile.open(bundle) as tar:
        tar.extractall(staging, filter="data")
    store = CodeStore.init(dest.parent / "forge.git")
    store.fetch_bundle(staging / "code.bundle")
    rows = [json.loads(line) for line in (staging / "nodes.jsonl").read_text().splitlines()]
    row = next(r for r in rows if r["id"] == node)
    files = store.checkout(row["commit"], dest.parent / "files")
    (files / "agent.py").write_text("v = 'forged: always pass'\n")
    parent = next(r["commit"] for r in rows if r["id"] == row["parent"])
    forged = store.commit_dir(files, parent, "forged", row["created"])
    store.delete_ref(node)
    store.create_ref(node, forged)
    row["commit"], row["tree"] = forged, store.tree_hash(forged)
    (staging / "nodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (staging / "code.bundle").unlink()
    store.bundle(staging / "code.bundle", [r["id"] for r in rows])
    with tarfile.open(dest, "w:gz") as tar:
        for item in sorted(staging.iterdir()):
            tar.add(item, arcname=item.name)
    return dest


def test_a_forged_bundle_verifies_itself_but_not_against_the_published_digest(published, tmp_path):
    bundle, digest = published
    forged = forge(bundle, tmp_path / "forged.evolve.tar.gz", "2")
    alone = evolve("replay", forged)
    assert alone.returncode == 0 and "4/4 nodes' code verified" in alone.stdout  # the self-check is fooled
    refused = evolve("replay", forged, "--expect", digest)
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines() == [
        f"error: {forged}: lineage digest is {run_digest_of(forged)}, expected {digest}; refusing it"
    ]
    imported = evolve("import", forged, "--dest", tmp_path / "copy", "--expect", digest)
    assert imported.returncode == 1 and "refusing it" in imported.stderr
    assert not (tmp_path / "copy").exists()


def run_digest_of(bundle: Path) -> str:
    out = evolve("replay", bundle, "--json")
    return json.loads(out.stdout)["digest"]


def test_the_honest_bundle_passes_with_its_digest(published, tmp_path):
    bundle, digest = published
    replayed = evolve("replay", bundle, "--expect", digest.removeprefix("sha256:"))
    assert replayed.returncode == 0 and f"digest {digest} (as expected)" in replayed.stdout
    imported = evolve("import", bundle, "--dest", tmp_path / "copy", "--expect", digest)
    assert imported.returncode == 0, imported.stderr
    with Run.open(tmp_path / "copy") as copy:
        assert run_digest(copy) == digest


def test_the_digest_covers_outcomes_and_parents(run, build_run, tmp_path):
    build_run()
    before = run_digest(run)
    run.record_evaluation("2", "t9", "pass")
    assert run_digest(run) != before
    bundle = export_lineage(run, tmp_path / "b.tar.gz")
    with pytest.raises(EvolveError, match="lineage digest is"):
        import_bundle(bundle, tmp_path / "copy", expect=before)
    assert not (tmp_path / "copy").exists()


def test_a_lineage_export_has_the_digest_of_that_lineage(run, build_run, tmp_path):
    root, a, _b, c = build_run()
    bundle = export_lineage(run, tmp_path / "c.tar.gz", c.id)
    expected = run_digest(run, [root.id, a.id, c.id])
    assert expected != run_digest(run)
    with import_bundle(bundle, tmp_path / "copy", expect=expected) as copy:
        assert run_digest(copy) == expected
    out = evolve("replay", run.path, "--node", c.id, "--expect", expected)
    assert out.returncode == 0, out.stderr


def test_the_published_readme_states_each_published_bundles_digest():
    """Each bundle in archive/published verifies against the digest its README's check command names."""
    from evolve.replay import verify

    published = Path(__file__).resolve().parents[3] / "archive" / "published"
    readme = (published / "README.md").read_text()
    # `evolve replay archive/published/NAME \ --expect sha256:...`
    checks = dict(
        re.findall(
            r"evolve replay archive/published/(\S+\.evolve\.tar\.gz)\s*\\?\s*--expect (sha256:[0-9a-f]{64})",
            readme,
        )
    )
    assert sorted(checks) == sorted(path.name for path in published.glob("*.evolve.tar.gz"))
    for name, digest in checks.items():
        report = verify(published / name)
        assert report.digest == digest and report.checks and all(check.ok for check in report.checks), name
    assert {word for word in readme.split() if word.startswith("sha256:")} == set(checks.values())
