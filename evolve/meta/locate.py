"""Fault localization: one ranking of the agent's lines from every source of evidence the engine has.

`locate` is what the diagnosis calls. Its sources find places in the agent's code from data, whatever the
agent's names: the provenance of what the agent sent the model (evolve.meta.provenance) and any further
ranked sources the caller passes (such as execution spectra of replayed runs). Every source scores its
lines in [0, 1] (a share of what went wrong), so the rankings merge as they are: a line ranked by several
keeps its highest score and the evidence of each. One source is not a share: a line where an edit made the
failing own tests pass (evolve.engine.screen) scores 2, above them all.

Ties are common (every line only the failing runs ran scores 1.00), and the ranking's head is where the
candidates go, so a tie is broken by data, not by the order of file names: a line more sources rank comes
first (counted through nested merges: a line the spectra and a dead store both ranked counts two in the
diagnosis's merge too), and among lines still equal each file gets its first line in before any file gets a
second (a defect's file may sort after a file of innocent lines that tie with it).

Last, the guards of the ranking's head (evolve.meta.guards: the tests that decide whether those lines run,
and the lines that bound what the tests read) join it below the lines they decide: where a fault shows is
often one condition away from where it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from evolve.meta.guards import deciding
from evolve.meta.locations import Line, Location, in_turns
from evolve.meta.provenance import Recorded, trace

MAX_LOCATIONS = 12
"""Locations handed on (the diagnosis prompt and instructions.json): the head of the ranking."""


def locate(
    code: Path,
    recorded: Sequence[Recorded],
    *,
    ranked: Sequence[Sequence[Location]] = (),
    limit: int = MAX_LOCATIONS,
) -> list[Location]:
    """The agent's lines (`code`: its root) most suspicious first, at most `limit`: the provenance of its
    recorded requests (`recorded`), merged with the `ranked` lists of other sources, then the guards of its
    head."""
    found = merge([trace(code, recorded), *ranked], limit=None)
    return merge([found, deciding(code, found)], limit)


def merge(rankings: Sequence[Sequence[Location]], limit: int | None = MAX_LOCATIONS) -> list[Location]:
    """One ranking from several: per line the highest score and every distinct evidence (highest first) and
    failing test; ties as the module says; its first `limit` (None: all)."""
    found: dict[Line, list[Location]] = {}
    for ranking in rankings:
        for location in ranking:
            found.setdefault((location.path, location.line), []).append(location)
    merged: dict[Line, Location] = {}
    for (path, line), here in found.items():
        here.sort(key=lambda loc: -loc.score)
        evidence = "; ".join(dict.fromkeys(loc.evidence for loc in here))
        tests = tuple(dict.fromkeys(test for loc in here for test in loc.tests))
        sources = sum(loc.sources for loc in here)
        merged[path, line] = Location(path, line, here[0].score, evidence, tests, sources)
    order = in_turns(merged, key=lambda line: (-merged[line].score, -merged[line].sources))
    return [merged[line] for line in order[:limit]]
