"""Mutant screening: many template edits, each tried against the agent's failing own tests in one sandbox.

Where the agent fails some of its own tests, every line those tests ran may hold the fault, and the
templates (evolve.meta.templates) make a handful of edits of each line's own code (its neighbours are
ranked in their own right), tried in rounds: each line's first few, most suspicious lines first and the lines
every own test ran last, then each line's next few. Each edit
is tried on a fresh copy of the agent against the failing tests alone, in the sandbox the own tests'
spectra ran in (evolve.engine.spectra); an edit that makes them pass is tried against every own test, and
one that passes them all is kept: the expansion checks it before its other candidates
(evolve.engine.generate), and its line heads the ranking with what the edit did as evidence. This is
mutation-based fault localization (Metallaxis, MUSE) and PraPR's validation of every mutant, at the price of
a test run per edit, not a container and a live re-run. A fault the spectra rank low (a line the passing
tests also run) is still reached: the screen goes `LINES` deep, where the candidates go a handful. A few
lines holding a key the failing tests' own source reads (`sent["items"]`: evolve.meta.asserted) go first,
and before them a few lines the failing tests' tracebacks pass through in the agent's code (the frame that
raised, then its callers; before them, where it raised on None, the returns that gave it); after each line,
the module-level assignments of the values it reads (evolve.meta.definitions: run at import, by every test
alike); the values the failing tests read at each line feed the `observed` template.

The verdicts are the exit statuses of the agent's own tests, code the agent controls: a screen only chooses
which edits become candidates and where the ranking starts. Every credit is still the gate's and the
graders'.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from evolve import syntax
from evolve.engine.line_values import VALUE_CHARS
from evolve.meta.asserted import asserted_keys, keyed_lines
from evolve.meta.definitions import with_definitions
from evolve.meta.locations import Line, Location
from evolve.meta.observed import seen_values
from evolve.meta.procedure import AGENT
from evolve.meta.returned import NONE, origins
from evolve.meta.spectra import OwnTest, rank_own_tests
from evolve.meta.templates import Generated, agent_sources, at_locations
from evolve.meta.validate import OWN_TESTS
from evolve.sandbox.types import Sandbox, SandboxError, SandboxesClosed

__all__ = ["KEPT", "LINES", "LOG", "ROUND", "Screen", "framed_first", "in_rounds", "keyed_first", "screen"]

LINES = 150
"""The lines the failing tests ran, most suspicious first, that get edits (one failing test of the seed ran
178 lines, in ties of up to 52 at one score: test7's `t7-f` fault was 57th)."""
ALL_LINES = 10_000
"""The lines ranked before `keyed_first` picks from them (a key's line may rank low: every test runs it)."""
KEYED = 4
"""Lines holding a key the failing tests read that are edited first at most."""
FRAMED = 4
"""Lines the failing tests' tracebacks pass through that are edited first at most."""
ORIGINS = 2
"""Of those, the places that may have made a None a failing test crashed on, at most (before the frames)."""
_FRAME = re.compile(r"(?m)^([^\s:]+\.py):(\d+): ")
"""A frame of pytest's report of a failure: `pkg/run.py:64: in run` or, the last, `...: TypeError`."""
KEYED_SCORE = 1 / 3
"""A line scoring less (each of its keys held by more than 3 of the lines) is not moved."""
PER_LINE = 20
"""Edits made at each of those lines, of its own code (the templates taking turns: a template's fifth edit at
a line comes in the fifth round; test5's slice fix was a fifth)."""
ROUND = 5
"""Edits of each line tried before any line's next ones (`in_rounds`): the first ROUND of every line, most
suspicious first, then the next ROUND of each, so a budget spent on the first lines' later edits still reaches
the last line (test14's `t14-c`: its fault's line was the 32nd the failing test ran, and the budget of 300
ended after 4 of its 8 edits, with 20 tried at lines before it)."""
KEPT = 4
"""Edits that pass every own test handed on as candidates; the screen stops at this many."""
TEST_SECONDS = 30.0
"""One edit's test run at most (an edit may make the tests loop)."""
SCORE = 2.0
"""A kept edit's line in the ranking: above every other source's share of what went wrong (each in [0, 1];
evolve.meta.locate), since a test run showed a fix there."""
COPY = "/work/.evolve-screen"
"""Where each edit's copy of the agent is made in the sandbox (outside the agent's root)."""
LOG = "screen.jsonl"
"""Each tried edit's verdict, in the job's log directory."""

_RUN = 'rm -rf "$1" && cp -a "$2" "$1" && cat > "$1/$3" && cd "$1" && shift 3 && exec "$@"'
"""One edit's test run: a fresh copy ($1) of the agent ($2), the edited file ($3, its text on stdin) written
over its own, then the command after them in it. The paths are arguments, so a sandbox that maps paths maps
them."""


@dataclass(frozen=True)
class Screen:
    """What a screen tried and kept."""

    tried: int = 0
    """Edits run against the failing tests."""
    fixing: int = 0
    """Those that made every failing test pass."""
    kept: tuple[Generated, ...] = ()
    """Those that then passed every own test too, in the order they were tried."""
    seconds: float = 0.0
    error: str = ""
    """Why the screen stopped early (its sandbox failed; what it kept is kept); "" when it did not."""

    def to_json(self) -> dict:
        return {
            "tried": self.tried,
            "fixing": self.fixing,
            "seconds": round(self.seconds, 3),
            "error": self.error,
            "kept": [_named(g) for g in self.kept],
        }


def screen(
    box: Sandbox,
    code: Path,
    runs: Sequence[OwnTest],
    *,
    edits: int,
    rng: np.random.Generator,
    log_dir: Path,
) -> Screen:
    """Up to `edits` template edits of the agent at `code` (already at AGENT in `box`), at the lines its
    failing own tests (`runs`, as they ran under the spectra probe) ran, tried until KEPT pass every own
    test. Each verdict is a line of `log_dir / LOG`. Nothing is tried when no test failed; a failure of the
    sandbox ends the screen with what it kept (the run's sandboxes closing raises)."""
    failing = [run.test for run in runs if run.failed and _plain(run.test)]
    if edits <= 0 or not failing:
        return Screen()
    started = time.monotonic()
    ranked = rank_own_tests(runs, ALL_LINES, shared=True)
    locations = with_definitions(code, framed_first(code, runs, keyed_first(code, runs, ranked)))[:LINES]
    made = in_rounds(at_locations(code, locations, PER_LINE, rng, near=False, seen=read_at(runs)))[:edits]
    tried = fixing = 0
    kept: list[Generated] = []
    error = ""
    with (log_dir / LOG).open("w") as out:
        for generated in made:
            if len(kept) == KEPT:
                break
            try:
                fixes = _passes(box, generated, failing)
                passes = fixes and _passes(box, generated, ["tests"])
            except SandboxesClosed:
                raise
            except SandboxError as exc:
                error = f"sandbox failed: {exc}"
                break
            tried += 1
            fixing += fixes
            out.write(json.dumps({**_named(generated), "fixes_failing": fixes, "passes_all": passes}) + "\n")
            if passes:
                kept.append(_kept(generated, len(failing)))
    return Screen(tried, fixing, tuple(kept), time.monotonic() - started, error)


def in_rounds(made: Sequence[Generated]) -> list[Generated]:
    """`made` (each location's edits together, locations in ranking order) with each location's first ROUND
    edits first, locations in order, then each one's next ROUND, and so on."""
    places: dict[tuple[str, int], list[Generated]] = {}
    for generated in made:
        places.setdefault((generated.path, generated.location.line), []).append(generated)
    rounds = max((len(edits) for edits in places.values()), default=0)
    return [
        generated
        for start in range(0, rounds, ROUND)
        for edits in places.values()
        for generated in edits[start : start + ROUND]
    ]


def keyed_first(code: Path, runs: Sequence[OwnTest], ranked: list[Location]) -> list[Location]:
    """`ranked` with up to `KEYED` of its lines that hold a key the failing tests read (evolve.meta.asserted:
    a key one line holds, or a few do, at least `KEYED_SCORE`) moved to the front, highest first."""
    keys = frozenset(key for run in runs if run.failed for key in asserted_keys(run.message))
    scores = keyed_lines(agent_sources(code), [_line(at) for at in ranked], keys)
    strong = sorted((at for at, score in scores.items() if score >= KEYED_SCORE), key=lambda at: -scores[at])
    front = {line: rank for rank, line in enumerate(strong[:KEYED])}
    moved = sorted((at for at in ranked if _line(at) in front), key=lambda at: front[_line(at)])
    return moved + [at for at in ranked if _line(at) not in front]


def framed_first(code: Path, runs: Sequence[OwnTest], ranked: list[Location]) -> list[Location]:
    """`ranked` with up to `FRAMED` of its lines that the failing tests' reports name as frames of the
    exception they failed with (pytest's `path:line: ` lines; the frame that raised, the report's last,
    first, then its callers) moved to the front: where the agent's own code raised, the fault is there or in
    the caller that handed it the value, however many passing tests ran those lines too. Where the exception
    may be Python's for a None met where a value was meant (evolve.meta.returned.NONE), the places of the
    agent's functions (`code`: its root) that may have given the raising frame that None go before the
    frames (a None's origin is where it is made, not where it is read)."""
    trees = {path: tree for path, text in agent_sources(code).items() if (tree := syntax.parsed(text))}
    frames: list[Line] = []
    for run in runs:
        if run.failed:
            stack = [(path, int(number)) for path, number in _FRAME.findall(run.message)]
            made = [line for line, _ in origins(trees, stack)][:ORIGINS] if NONE.search(run.message) else []
            for line in [*made, *reversed(stack)]:
                if line not in frames:
                    frames.append(line)
    present = {_line(at) for at in ranked}
    front = {line: rank for rank, line in enumerate([f for f in frames if f in present][:FRAMED])}
    moved = sorted((at for at in ranked if _line(at) in front), key=lambda at: front[_line(at)])
    return moved + [at for at in ranked if _line(at) not in front]


def _line(location: Location) -> Line:
    return location.path, location.line


def read_at(runs: Sequence[OwnTest]) -> dict[Line, dict[str, object]]:
    """The literal values the failing tests read at each line, by expression (the first failing test's to
    read one), for the `observed` template."""
    seen: dict[Line, dict[str, object]] = {}
    for run in runs:
        if run.failed:
            for line, values in run.values.items():
                found = seen_values(values, VALUE_CHARS)
                seen[line] = {**found, **seen.get(line, {})}
    return seen


def _passes(box: Sandbox, generated: Generated, tests: list[str]) -> bool:
    ran = box.exec(
        ["sh", "-c", _RUN, "sh", COPY, AGENT, generated.path, *OWN_TESTS, *tests],
        input=generated.edit.source,
        env={"PYTHONDONTWRITEBYTECODE": "1"},  # a cached module of another edit must not be loaded
        timeout=TEST_SECONDS,
    )
    return ran.ok


def _kept(generated: Generated, failing: int) -> Generated:
    """The edit with its own location: its line, first in the ranking, saying what the edit did."""
    edit = generated.edit
    said = (
        f"a template edit here ({edit.template}: {edit.change}) makes the {failing} failing own "
        f"test{'s' if failing > 1 else ''} and every other own test pass"
    )
    location = Location(generated.path, edit.line, SCORE, said, generated.location.tests)
    return replace(generated, location=location, screened=True)


def _named(generated: Generated) -> dict:
    edit = generated.edit
    return {"path": generated.path, "line": edit.line, "template": edit.template, "change": edit.change}


def _plain(test: str) -> bool:
    """A test id the probe recorded that can be handed to pytest as one (the agent's code wrote it)."""
    return 0 < len(test) <= 500 and not test.startswith("-") and test.isprintable()
