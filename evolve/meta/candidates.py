"""The cheap filters a candidate child passes before the gate, and the temperatures candidates are sampled at.

An expansion with `[meta] candidates = k` runs the parent's `improve` k times (evolve.engine.generate), at a
spread of temperatures; each candidate then goes through, in order, the filters below and the validation
gate (evolve.meta.validate), and the first that passes all is the child (OpenEvolve/AlphaEvolve: many
cheap candidates, a cascade of cheap checks before the expensive evaluation). The filters here read the
candidate's files as copied out of its sandbox, on the host, and run nothing of it (Python's parser only):

- `applies`: the engine's diff is not empty (an edit that did not apply changed nothing);
- `compiles`: every changed Python file parses;
- `differs`: its syntax tree differs from the parent's (not only whitespace, comments, docstrings);
- `code edit`: with `[meta] require_code`, the edit kind is `code` (not prompt text or a lesson).

With `[meta] replays`, a candidate that passed them re-runs some of the parent's failed tasks against the
parent's recorded model replies, and one that acts exactly as its parent there is refused at `behaviour`
(evolve.engine.behaviour: sandboxes, no model). The gate's checks follow (`imports`, `own tests`, `solve`,
...: evolve.meta.validate.CHECKS), in the sandbox, whatever the agent's own improve step claimed to have
checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evolve import syntax
from evolve.archive.edits import EditKind, tree_edit_kind
from evolve.meta.modify import NO_CHANGE
from evolve.meta.validate import CHECKS
from evolve.untrusted import read_bytes

SANDBOX = "sandbox"
"""The stage of a candidate whose making or checking ended in a sandbox failure (the engine's, or its own
code's: a tree that cannot be copied out): it got nowhere, and the expansion goes on to the next one."""
FILTERS = ("applies", "compiles", "differs", "code edit")
"""The cheap filters, in order; the replayed behaviour and then the gate's CHECKS come after them."""
BEHAVIOUR = "behaviour"
"""The stage that refuses a candidate acting as its parent on the parent's replayed failures."""
STAGES = (SANDBOX, *FILTERS, BEHAVIOUR, *CHECKS)
"""Every stage a candidate can be refused at, cheapest first: how far a refused candidate got."""
EARLY = CHECKS[:2]
"""The gate's checks that need no model (`imports`, `own tests`): with templates or a live re-run they run
on each candidate before its replayed behaviour, and the gate runs them again."""
RERUN = "rerun"
"""The stage that refuses a candidate whose live re-run of the parent's search tasks fixes none of its
failures or breaks one of its passes (evolve.engine.rerun)."""
VALIDATED = (SANDBOX, *FILTERS, *EARLY, BEHAVIOUR, RERUN, *CHECKS[len(EARLY) :])
"""The stages in their order under generate-and-validate (`[meta] templates` or `rerun`)."""


@dataclass(frozen=True)
class Filtered:
    """A candidate after the cheap filters: its edit kind, and the filter that refused it (None: passed)."""

    kind: EditKind
    stage: str | None = None
    reason: str | None = None


def temperatures(k: int, low: float, high: float) -> tuple[float, ...]:
    """k temperatures spread evenly from `low` to `high` (one candidate: `low`)."""
    if k == 1:
        return (low,)
    return tuple(round(low + (high - low) * i / (k - 1), 3) for i in range(k))


def cheap_filters(parent: Path, child: Path, diff: str, *, require_code: bool = False) -> Filtered:
    """The cheap filters on a candidate (`child`) against its parent's code, in order; the first that fails
    refuses it."""
    if not diff.strip():
        return Filtered(EditKind.NONE, "applies", NO_CHANGE)
    for path in _changed_python(parent, child):
        why = _parse_error(read_bytes(path))
        if why:
            return Filtered(
                EditKind.CODE, "compiles", f"{path.relative_to(child).as_posix()} does not compile: {why}"
            )
    kind = tree_edit_kind(parent, child)
    if kind in (EditKind.NONE, EditKind.COSMETIC):
        return Filtered(
            kind,
            "differs",
            "its syntax tree is the parent's (only whitespace, comments, docstrings or "
            "definitions nothing uses changed)",
        )
    if require_code and kind != EditKind.CODE:
        return Filtered(kind, "code edit", f"no code edit (the edit is {kind}) and meta.require_code is on")
    return Filtered(kind)


def _changed_python(parent: Path, child: Path) -> list[Path]:
    changed = []
    for path in sorted(child.rglob("*.py")):
        relative = path.relative_to(child)
        if "__pycache__" in relative.parts or path.is_symlink() or not path.is_file():  # `x.py/`: a directory
            continue
        before = parent / relative
        if not before.is_file() or read_bytes(before) != read_bytes(path):
            changed.append(path)
    return changed


def _parse_error(source: bytes) -> str | None:
    try:
        syntax.parse(source)
    except SyntaxError as exc:  # also a null byte or nesting too deep for the parser (evolve.syntax)
        return f"line {exc.lineno}: {exc.msg}" if exc.lineno else exc.msg
    return None


def changed_lines(diff: str) -> int:
    """Lines added or removed by a unified diff."""
    return sum(1 for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++ ", "--- ")))


def furthest(stages: list[str | None], order: tuple[str, ...] = STAGES) -> int:
    """The index of the candidate that got furthest through `order` (None: passed everything); the first on
    a tie."""
    rank = [len(order) if stage is None else order.index(stage) for stage in stages]
    return rank.index(max(rank))
