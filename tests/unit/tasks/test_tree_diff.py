"""The engine's diff of a copied-out tree: nothing in the agent's files steers it, links stay links."""

from __future__ import annotations

import os
import subprocess

from evolve.tasks.tree_diff import diff_trees, keep_unprotected, tree_entries
from evolve.tasks.types import write_files

PRISTINE = {
    "src/a.py": b"x = 1\n",
    "src/gone.py": b"z = 0\n",
    "tests/test_a.py": b"def test_a():\n    pass\n",
}


def _agent_tree(tmp_path):
    tree = write_files(PRISTINE, tmp_path / "after")
    (tree / "src" / "a.py").write_text("x = 2\n")
    (tree / "src" / "gone.py").unlink()
    (tree / "odd dir").mkdir()
    (tree / "odd dir" / 'we"ird\nname.py').write_text("y = 3\n")
    os.symlink("/etc/passwd", tree / "secret")
    os.symlink("../tests", tree / "src" / "tests_link")
    (tree / "blob.bin").write_bytes(b"\x00\x01\x02")
    (tree / ".gitattributes").write_text("* -diff filter=evil\n")
    git = tree / ".git"
    git.mkdir()
    (git / "config").write_text("[diff]\n\texternal = \"sh -c 'echo forged'\"\n")
    (tree / "src" / "__pycache__").mkdir()
    (tree / "src" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"cache")
    return tree


def test_the_diff_applies_to_the_pristine_repo_and_reproduces_the_tree(tmp_path):
    tree = _agent_tree(tmp_path)
    patch = diff_trees(PRISTINE, tree_entries(tree))
    assert "forged" not in patch and ".git/" not in patch and "__pycache__" not in patch
    assert "new file mode 120000" in patch and "+/etc/passwd" in patch  # the link's text, never its target
    clean = write_files(PRISTINE, tmp_path / "clean")
    (tmp_path / "p.diff").write_text(patch)
    subprocess.run(["git", "apply", str(tmp_path / "p.diff")], cwd=clean, check=True)
    assert os.readlink(clean / "secret") == "/etc/passwd"
    expected = {k: v for k, v in tree_entries(tree).items()}
    assert tree_entries(clean) == expected


def test_a_file_mode_0_and_a_locked_directory_are_still_read(tmp_path):
    tree = write_files(PRISTINE, tmp_path / "after")
    (tree / "src" / "a.py").write_text("x = 5\n")
    os.chmod(tree / "src" / "a.py", 0)
    os.chmod(tree / "tests", 0)
    entries = tree_entries(tree)
    assert entries[b"src/a.py"] == ("100644", b"x = 5\n") and b"tests/test_a.py" in entries


def test_protected_changes_and_symlinks_are_undone_by_path_before_the_diff():
    before = {b"a.py": ("100644", b"a\n"), b"tests/t.py": ("100644", b"t\n"), b"link": ("120000", b"a.py")}
    after = {
        b"a.py": ("100644", b"fixed\n"),
        b"tests/t.py": ("100644", b"gutted\n"),
        b"conftest.py": ("100644", b"x"),
        b"b.py": ("120000", b"a.py"),
    }
    kept, dropped = keep_unprotected(before, after, lambda p: p.startswith("tests/") or p == "conftest.py")
    assert kept == {
        b"a.py": ("100644", b"fixed\n"),
        b"tests/t.py": ("100644", b"t\n"),
        b"link": ("120000", b"a.py"),
    }
    assert dropped == ["b.py", "conftest.py", "link", "tests/t.py"]


def test_an_untouched_tree_is_no_change_and_a_mode_change_is_one(tmp_path):
    tree = write_files(PRISTINE, tmp_path / "after")
    (tree / ".git").mkdir()  # the agent's git data and caches are never part of a change
    (tree / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert diff_trees(PRISTINE, tree_entries(tree)) == ""
    os.chmod(tree / "src" / "a.py", 0o755)
    assert "new mode 100755" in diff_trees(PRISTINE, tree_entries(tree))
