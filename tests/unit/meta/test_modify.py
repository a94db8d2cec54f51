"""The runner's last word on a child the gate passed: the code it commits must be the tree the gate checked,
and not its parent's tree again (`commit_problem`), wherever the gate ran."""

from __future__ import annotations

from evolve.archive.codetree import tree_entries, tree_id
from evolve.meta.modify import NO_CHANGE, commit_problem
from evolve.tasks.types import write_files


def test_a_child_is_committed_valid_only_as_the_gate_checked_it_and_only_if_it_changed(tmp_path):
    parent = write_files({"agent/__main__.py": b"print(1)\n"}, tmp_path / "parent")
    child = write_files({"agent/__main__.py": b"print(2)\n"}, tmp_path / "child")
    checked, parent_tree = tree_id(tree_entries(child)), tree_id(tree_entries(parent))
    assert commit_problem(child, checked, parent_tree) is None
    (child / "agent" / "late.py").write_text("x = 1\n")  # written after the gate ran
    assert commit_problem(child, checked, parent_tree).startswith("the child's code (")
    assert commit_problem(child, None, parent_tree).endswith("is not the tree the gate checked (none)")
    assert commit_problem(parent, parent_tree, parent_tree) == NO_CHANGE
