"""The one rule of a code tree: the gate's copy, the commit and every checkout hold the same bytes, whatever
ignore, attribute or odd file name the tree holds; the tree id is git's own."""

from __future__ import annotations

import os
import subprocess

import pytest

from evolve.archive.code import CodeStore
from evolve.archive.codetree import git_refuses, tree_entries, tree_id, write_entries


def _odd_tree(root):
    (root / "agent" / "sub").mkdir(parents=True)
    (root / "agent" / "__init__.py").write_text("")
    (root / "agent" / "sub" / "x.py").write_text("x = 1\r\n")
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(root / "run.sh", 0o750)
    (root / "a\nnew line.py").write_text("y = 2\n")
    (root / "a.b").write_text("dot")  # sorts before `a/` in a git tree, after it by plain names
    (root / "a-").write_text("dash")
    os.symlink("agent/sub", root / "link")
    (root / "blob.bin").write_bytes(bytes(range(256)))
    (root / ".gitignore").write_text("*\n")  # the child's own ignore rules: never applied
    (root / ".gitattributes").write_text("* text eol=crlf\n*.py working-tree-encoding=UTF-16\n")
    (root / "agent" / "__pycache__").mkdir()
    (root / "agent" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"cache")
    (root / "agent" / "helper.pyc").write_bytes(b"sourceless")
    (root / "nested" / ".git").mkdir(parents=True)  # a repository inside: its files stay, its .git does not
    (root / "nested" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "nested" / "kept.py").write_text("z = 3\n")
    return root


def test_the_tree_id_is_gits_and_the_commit_holds_every_file_despite_the_trees_own_rules(tmp_path):
    entries = tree_entries(_odd_tree(tmp_path / "src"))
    assert b".gitignore" in entries and b"nested/kept.py" in entries and b"a\nnew line.py" in entries
    assert not any(b"__pycache__" in rel or rel.endswith(b".pyc") or b".git/" in rel for rel in entries)
    assert entries[b"run.sh"][0] == "100755" and entries[b"link"] == ("120000", b"agent/sub")
    store = CodeStore.init(tmp_path / "code.git")
    commit = store.commit_dir(tmp_path / "src", None, "node 0", 0)
    assert store.tree_hash(commit) == tree_id(entries)
    assert store.entries(commit) == entries


def test_a_checkout_is_byte_for_byte_what_was_committed(tmp_path):
    entries = tree_entries(_odd_tree(tmp_path / "src"))
    store = CodeStore.init(tmp_path / "code.git")
    out = store.checkout(store.commit_dir(tmp_path / "src", None, "node 0", 0), tmp_path / "out")
    assert tree_entries(out) == entries
    assert (out / "agent" / "sub" / "x.py").read_bytes() == b"x = 1\r\n"  # no eol or encoding rule applied
    assert os.readlink(out / "link") == "agent/sub" and os.access(out / "run.sh", os.X_OK)


def test_the_empty_tree(tmp_path):
    (tmp_path / "empty").mkdir()
    store = CodeStore.init(tmp_path / "code.git")
    assert (
        store.tree_hash(store.commit_dir(tmp_path / "empty", None, "x", 0))
        == tree_id({})
        == ("4b825dc642cb6eb9a060e54bf8d69288fbee4904")
    )


@pytest.mark.parametrize("rel", [b"../out", b"/etc/x", b"a/../../out", b"a//b", b"./a"])
def test_writing_refuses_a_path_out_of_the_tree(tmp_path, rel):
    with pytest.raises(ValueError, match="not a path inside the tree"):
        write_entries({rel: ("100644", b"x")}, tmp_path / "out")


def test_writing_never_goes_through_a_link(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    # links are made last, so a file under a link's name meets a directory of its own, never the link
    write_entries({b"a": ("120000", str(outside).encode()), b"b/c": ("100644", b"x")}, tmp_path / "one")
    assert not any(outside.iterdir())
    (tmp_path / "two").mkdir()
    os.symlink(outside, tmp_path / "two" / "a")  # a link already there
    with pytest.raises(ValueError, match="is a symlink"):
        write_entries({b"a/c": ("100644", b"x")}, tmp_path / "two")
    assert not any(outside.iterdir())


NAMES = [
    ".git/x",
    ".GIT/x",
    "sub/.Git/x",
    "git~1/x",
    "GIT~1/x",
    ".git. /x",
    ".git::$INDEX_ALLOCATION/x",
    ".gitx/x",
    ".git~1/x",
    "git/x",
    "a.git/x",
    "ok.py",
]


@pytest.mark.parametrize("name", NAMES)
def test_git_refuses_the_paths_git_itself_refuses(tmp_path, name):
    """The rule agrees with the host's git (`update-index` runs git's `verify_path`)."""
    env = {
        "GIT_DIR": str(tmp_path / "r.git"),
        "GIT_INDEX_FILE": str(tmp_path / "index"),
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "r.git")], check=True, env=env)
    added = subprocess.run(
        [
            "git",
            "update-index",
            "--add",
            "--cacheinfo",
            f"100644,e69de29bb2d1d6434b8b29ae775ad8c2e48c5391,{name}",
        ],
        env=env,
        capture_output=True,
        check=False,
    )
    assert git_refuses(name.encode(), "100644") == (added.returncode != 0), added.stderr


def test_git_refuses_a_symlinked_gitmodules(tmp_path):
    assert git_refuses(b".gitmodules", "120000") and git_refuses(b"sub/.GITMODULES", "120000")
    assert not git_refuses(b".gitmodules", "100644")
