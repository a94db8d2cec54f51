"""Which engine wrote a run directory, and DGM's Polyglot runs.

DGM runs a Polyglot experiment with `coding_agent_polyglot.py` in place of `coding_agent.py`: its
`self_improve_step.py` removes `coding_agent.py`, moves `coding_agent_polyglot.py` there and removes
`utils/eval_utils.py` and `utils/swe_log_parsers.py` before the agent edits the code, so every
`model_patch.diff` of such a run is against that tree, not against the repository as checked out.
The importer rebuilds that tree from the initial code the same way, or says why it cannot.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

from evolve.errors import EvolveError

POLYGLOT_LANGUAGES = frozenset({"cpp", "go", "java", "javascript", "python", "rust"})
"""Polyglot task ids are `<language>__<exercise>` (SWE-bench's are `<owner>__<repo>-<number>`)."""
_SWE_ONLY = ("utils/eval_utils.py", "utils/swe_log_parsers.py")
_LISTS = ("total_resolved_ids", "total_unresolved_ids", "total_emptypatch_ids", "total_submitted_ids")


def _task_ids(metadata: Iterable[dict]) -> list[str]:
    return [
        str(task)
        for m in metadata
        for key in _LISTS
        for task in (m.get("overall_performance") or {}).get(key) or []
    ]


def is_polyglot_run(metadata: Iterable[dict]) -> bool:
    """True when every task id the nodes were evaluated on is a Polyglot exercise."""
    tasks = _task_ids(metadata)
    return bool(tasks) and all(
        task.split("__", 1)[0] in POLYGLOT_LANGUAGES and "__" in task for task in tasks
    )


def as_dgm_polyglot(run_dir: Path, initial_code: Path, dest: Path) -> Path:
    """A copy of `initial_code` at `dest` as DGM's Polyglot runs have it (see the module docstring)."""
    polyglot = initial_code / "coding_agent_polyglot.py"
    if not polyglot.is_file():
        raise EvolveError(
            f"{run_dir}: a DGM Polyglot run (its task ids are Polyglot exercises), which DGM runs with "
            f"coding_agent_polyglot.py as coding_agent.py, but {initial_code} has no "
            "coding_agent_polyglot.py: "
            "pass --initial-code the DGM repository checkout the run started from"
        )
    if not initial_code.is_dir():
        raise EvolveError(f"initial code {initial_code} is not a directory")
    shutil.copytree(initial_code, dest, symlinks=True)
    (dest / "coding_agent_polyglot.py").replace(dest / "coding_agent.py")
    for name in _SWE_ONLY:
        (dest / name).unlink(missing_ok=True)
    return dest


def refuse_other_engine(run_dir: Path, kind: str) -> None:
    """Refuse a run directory that the other engine wrote, naming the right `--from`."""
    if not run_dir.is_dir():
        raise EvolveError(f"{run_dir}: no such run directory")
    has = {engine: (run_dir / f"{engine}_metadata.jsonl").is_file() for engine in ("dgm", "hgm")}
    other = "hgm" if kind == "dgm" else "dgm"
    if has[other] and not has[kind]:
        fix = "--from dgm --initial-code DIR" if other == "dgm" else "--from hgm"
        article = "an" if other == "hgm" else "a"
        raise EvolveError(
            f"{run_dir}: {article} {other.upper()} run directory (it has {other}_metadata.jsonl, not "
            f"{kind}_metadata.jsonl); import it with {fix}"
        )
