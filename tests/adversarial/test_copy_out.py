"""Trees the host cannot take, through the real pipeline (the executor agent in a Docker sandbox, the
engine's copy-out and diff, the real grader; and one expansion through the real runner): hard links that
the size check once counted once while the host read each in full, and trees whose depth or path length
defeated the host's walker or extractor (an exception out of `evaluate()` / `expand_child()`). Each is now
the agent's failure (`error`, an invalid child) with nothing left extracted; the honest twin keeps a few
hard links and a deep-enough tree beside the fix and passes."""

from __future__ import annotations

import pytest

from evolve.sandbox.tarballs import DEPTH_CAP
from evolve.standins.models import ScriptedModel

from .conftest import FIX
from .test_child_tree import NOTE, expand  # noqa: F401 - the expansion fixture
from .test_scoring import _grade_log


def _chain(where: str, name: str, depth: int) -> str:
    """A shell line that makes `depth` nested directories `name` under `where`, each made relative to
    the last (so past PATH_MAX), with a file at the bottom."""
    return (
        f"python3 -c \"import os\nfd = os.open('{where}', os.O_RDONLY)\nfor _ in range({depth}):\n"
        f"    os.mkdir('{name}', dir_fd=fd)\n    below = os.open('{name}', os.O_RDONLY, dir_fd=fd)\n"
        "    os.close(fd)\n    fd = below\nos.close(os.open('f.py', os.O_WRONLY | os.O_CREAT, dir_fd=fd))\"\n"
    )


TREES = {
    # 70 hard links of one 1 MiB file: measured at 1 MiB, read by the host as 71 MiB (the cap is 64 MiB)
    "hard links past the copy cap": (
        "head -c 1048576 /dev/urandom > structs/blob.bin && "
        "for i in $(seq 1 70); do ln structs/blob.bin structs/l$i.bin; done\n"
    ),
    # a tree 1,100 directories deep: os.walk on the host recursed past the stack
    "a tree deeper than the host's stack": _chain("structs", "d", 1100),
    # paths of 5,000 bytes: the host's extractor failed to make them under its own prefix
    "paths longer than the host's PATH_MAX": _chain("structs", "n" * 200, 25),
    # the next form: just past the caps, where nothing on the host would fail yet
    "a tree one directory past the depth cap": _chain(".", "e", DEPTH_CAP + 1),
}


@pytest.mark.parametrize("name", list(TREES))
def test_a_tree_the_host_cannot_take_is_the_agents_error(attempt, name):
    result = attempt(ScriptedModel([FIX + TREES[name]]))
    assert result.outcome == "error", result.detail
    assert "could not be copied out" in result.detail and (result.log_dir / "diff.patch").read_text() == ""


def test_twin_a_fix_beside_hard_links_and_a_deep_tree_within_the_caps_passes(attempt):
    within = (
        "head -c 1000 /dev/urandom > structs/blob.bin && ln structs/blob.bin structs/l1.bin && "
        "ln structs/blob.bin structs/l2.bin\n"
    ) + _chain("structs", "d", 40)
    result = attempt(ScriptedModel([FIX + within]))
    assert result.outcome == "pass", _grade_log(result)
    patch = (result.log_dir / "diff.patch").read_text()
    assert "structs/l2.bin" in patch and "/d/d/d/" in patch


HARD_LINKED_CHILD = (
    "head -c 700000 /dev/urandom > agent/blob.bin && ln agent/blob.bin agent/l1 && ln agent/blob.bin agent/l2"
)


@pytest.mark.parametrize(
    "script",
    [_chain("agent", "d", 1100), HARD_LINKED_CHILD],
    ids=["deeper than the host's stack", "hard links past the copy cap"],
)
def test_a_child_tree_the_host_cannot_take_is_an_invalid_child(expand, script):  # noqa: F811 - the fixture
    _, child, checked = expand(f"{NOTE} && {script}", copy_limit_bytes=2_000_000)
    assert not child.valid and child.reason.startswith("the child's code cannot be copied out"), child.reason
    assert not checked.exists()  # nothing the host extracted is left
