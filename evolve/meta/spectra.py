"""Execution spectra: which of the agent's lines its failing runs ran, ranked by the Ochiai formula.

Spectrum-based fault localization (Tarantula: Jones & Harrold 2005; Ochiai: Abreu et al. 2007) runs a
program on passing and failing cases under line coverage and ranks first the lines run mostly by the failing
runs: Ochiai(line) = ef / sqrt((ef + nf) * (ef + ep)), where ef and ep count the failing and passing runs
that ran the line and nf the failing runs that did not. Here the runs are the agent's replays of its own
recorded evaluations (evolve.engine.spectra) and, apart, the agent's own tests (each test a run), and the
lines its own files'.

Beside the lines, what the agent's code did with what its tools returned: each command the agent ran, how
much output the command produced (with a traceback or not) and how much of it reached the model in the
requests the agent sent, put on the agent's line that ran the command. Output that did not reach the model
is the agent's code's doing, so it ranks the line that ran the command even where nothing else contrasts
the runs; a command that exited non-zero is the command's doing (the model chose it, or the task's code
failed), so it is only said beside a line the spectra rank.

Pure: spectra and tool outputs in, ranked `Location`s out. The readers take the files the coverage probe
(evolve.engine.coverage_probe) wrote in the agent's sandbox: that data is the agent's to change, so a
malformed line is skipped, a file over its bound or not text is skipped whole, and the ranking built from
it may only order places for the diagnosis to look at: it never feeds a score, a verdict or a budget.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace

from evolve.meta.locations import Line, Location, in_turns
from evolve.meta.pipes import TRACEBACK, masked

LINES_BYTES = 2 << 20
"""A coverage file (`lines`) larger than this is skipped whole."""
TOOLS_BYTES = 8 << 20
"""A tool-output file (`tools`) larger than this is skipped whole."""
TOOL_RECORD_CHARS = 256 << 10
"""One tool-output record (a line of `tools`) longer than this is skipped."""
TESTS_BYTES = 8 << 20
"""An own-test spectra file (`tests`) larger than this is skipped whole."""
TEST_RECORD_CHARS = 1 << 20
"""One test's record (a line of `tests`) longer than this is skipped."""
FAILURE_CHARS = 200
"""Of a failing test's message, the characters its evidence quotes."""
ERROR_CHARS = 120
"""Of a command's output where it exited non-zero, the characters of its last line a note quotes."""
VALUES = 4
"""A line's values a probe's record may give (expression and repr); more are not read."""
VALUE_CHARS = 100
"""An expression or a value longer than this in a probe's record is cut (the probe cuts at 80)."""
VALUES_BYTES = 2 << 20
"""A replay's values file (`values`) larger than this is skipped whole."""
VALUE_RECORD_CHARS = 8 << 10
"""One line's values record longer than this is skipped."""

Values = tuple[tuple[str, str], ...]
"""What a line read as it was about to run: (expression, repr) pairs, evolve.engine.line_values."""


@dataclass(frozen=True)
class Spectrum:
    """The agent's lines one replayed run executed, and whether that run failed its task."""

    failed: bool
    lines: frozenset[Line]


@dataclass(frozen=True)
class ToolOutput:
    """One command the agent ran in a replayed run: where, what it printed, and how much the model saw."""

    site: Line
    """The agent's line that ran it."""
    chars: int
    """Characters of output the command produced (stdout and stderr)."""
    traceback: bool
    """The output holds a Python traceback."""
    countable: int
    """The characters of the non-blank lines of the output's kept start (what `reached` is out of)."""
    reached: int
    """Of those, the characters of the lines found in a request the agent sent."""
    failed: bool
    """The run failed its task."""
    exit: int | None = None
    """The command's exit status (None: not recorded)."""
    error: str = ""
    """Where it exited non-zero or was `masked`: the last non-blank line of its output, cut to
    `ERROR_CHARS`."""
    command: str = ""
    """Where it exited non-zero or was `masked`: the command (its arguments joined), cut to `ERROR_CHARS`."""
    masked: bool = False
    """A pipeline that exited 0 while its output reported a failure (evolve.meta.pipes)."""


def ochiai(ef: int, ep: int, nf: int) -> float:
    """The Ochiai suspiciousness of a line run by `ef` failing and `ep` passing runs, missed by `nf` failing
    runs; 0 for a line no failing run ran."""
    if ef == 0:
        return 0.0
    return ef / math.sqrt((ef + nf) * (ef + ep))


def rank(
    spectra: Sequence[Spectrum],
    tools: Sequence[ToolOutput] = (),
    limit: int = 20,
    *,
    runs: str = "replays",
    shared: bool = False,
) -> list[Location]:
    """The agent's lines run by a failing run, most suspicious first (ties in turns by file: `in_turns`),
    at most `limit` (`runs`: what the runs are, as the evidence names them); a line that ran a command whose
    output reached the model only in part is kept beyond the limit, with that evidence. Lines every run ran,
    where there is a passing one, are left out (they rank nothing). Without a passing run nothing contrasts
    the failing ones (Ochiai then orders lines by how many failing runs ran them: the code every run shares
    first), so only the lines whose commands' output did not all reach the model are ranked. `shared`: the
    lines every run ran are ranked too, after all the others (for a search that tries each line it is given,
    not one that reads the order as evidence)."""
    failing = sum(1 for s in spectra if s.failed)
    passing = len(spectra) - failing
    if failing == 0:
        return []
    ran_failing: dict[Line, int] = {}
    ran_passing: dict[Line, int] = {}
    for spectrum in spectra:
        counts = ran_failing if spectrum.failed else ran_passing
        for line in spectrum.lines:
            counts[line] = counts.get(line, 0) + 1
    notes = tool_notes(tools)
    hid = hiding(tools)
    # A line every replay ran, passing and failing alike (imports, definitions, the loop's head), tells the
    # runs apart no more than chance: it is left out unless what it did to a tool's output is evidence.
    everywhere = {
        line
        for line, ef in ran_failing.items()
        if passing and ef == failing and ran_passing.get(line, 0) == passing and line not in hid
    }
    scored = {
        line: ochiai(ef, ran_passing.get(line, 0), failing - ef)
        for line, ef in ran_failing.items()
        if (shared or line not in everywhere) and (passing or line in hid)
    }
    order = in_turns(scored, key=lambda line: (line in everywhere, -scored[line]))
    kept = order[:limit] + [line for line in order[limit:] if line in hid]
    return [
        Location(
            path,
            number,
            round(scored[(path, number)], 4),
            _evidence(
                ran_failing[(path, number)],
                ran_passing.get((path, number), 0),
                failing,
                passing,
                scored[(path, number)],
                notes.get((path, number)),
                runs,
            ),
        )
        for path, number in kept
    ]


@dataclass(frozen=True)
class OwnTest:
    """One of the agent's own tests as it ran: its id, whether it failed and how, the agent's lines it ran."""

    test: str
    failed: bool
    message: str
    lines: frozenset[Line]
    values: Mapping[Line, Values] = field(default_factory=dict)
    """For a failing test, what the names each line read held when it first ran it: (expression, repr)."""


def rank_own_tests(runs: Sequence[OwnTest], limit: int = 20, *, shared: bool = False) -> list[Location]:
    """The agent's lines ranked by the Ochiai formula over its own tests (each test a run), most suspicious
    first, at most `limit` (`shared`: as for `rank`); each line's evidence names the failing tests that ran
    it and how the first failed (`with_own_tests`). Empty when no test failed."""
    spectra = [Spectrum(run.failed, run.lines) for run in runs]
    ranked = rank(spectra, (), limit, runs="own tests", shared=shared)
    return [with_own_tests(location, runs) for location in ranked]


def with_own_tests(location: Location, runs: Sequence[OwnTest]) -> Location:
    """`location` with the failing tests of `runs` that ran its line: named after its evidence with how the
    first failed and what the line read as it ran (at most three kept as its tests)."""
    line = (location.path, location.line)
    here = [run for run in runs if run.failed and line in run.lines]
    if not here:
        return location
    more = f" and {len(here) - 3} more" if len(here) > 3 else ""
    names = ", ".join(run.test for run in here[:3]) + more
    said = f"{location.evidence}; failing there: {names}"
    reason = failure_line(here[0].message)
    evidence = f"{said} ({reason})" if reason else said
    located = replace(location, evidence=evidence, tests=tuple(run.test for run in here[:3]))
    return with_values(located, here[0].test, here[0].values.get(line, ()))


def with_values(location: Location, run: str, values: Values) -> Location:
    """`location` with what its line read in `run` said after its evidence (as it is, without values)."""
    if not values:
        return location
    held = ", ".join(f"{expression} = {value}" for expression, value in values)
    return replace(location, evidence=f"{location.evidence}; as {run} ran it: {held}")


def failure_line(message: str) -> str:
    """What a failing test's report says went wrong, in a line: the first line of its last run of `E ` lines
    (pytest's: the exception, before its explanation), else its last non-blank line, cut to
    `FAILURE_CHARS`."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    said = lines[-1] if lines else ""
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].startswith("E ") and (index == 0 or not lines[index - 1].startswith("E ")):
            said = lines[index][1:].strip()
            break
    return said[:FAILURE_CHARS]


def read_own_tests(data: bytes, is_agent_line: Callable[[Line], bool]) -> list[OwnTest]:
    """The test records of a probe's `tests` file (one JSON object a line, evolve.engine.test_probe), each
    test's lines those `is_agent_line` accepts; none when the file is over `TESTS_BYTES` or not UTF-8. A
    malformed or over-long record is skipped, and so is a second record of one test."""
    runs: dict[str, OwnTest] = {}
    for record in _records(data, TESTS_BYTES, TEST_RECORD_CHARS):
        test, failed, message, lines = (record.get(k) for k in ("test", "failed", "message", "lines"))
        if not (
            isinstance(test, str)
            and type(failed) is bool
            and isinstance(message, str)
            and isinstance(lines, dict)
            and test not in runs
        ):
            continue
        ran = {
            (path, number)
            for path, numbers in lines.items()
            if isinstance(numbers, list)
            for number in numbers
            if type(number) is int and is_agent_line((path, number))
        }
        runs[test] = OwnTest(test, failed, message, frozenset(ran), _values(record.get("values"), ran))
    return list(runs.values())


def _values(record: object, ran: AbstractSet[Line]) -> dict[Line, Values]:
    """A test record's `values` (path -> line -> [[expression, repr], ...]) at the lines it ran; an entry of
    another shape is skipped."""
    if not isinstance(record, dict):
        return {}
    found: dict[Line, Values] = {}
    for path, lines in record.items():
        for number, pairs in lines.items() if isinstance(lines, dict) else ():
            line = (path, int(number)) if number.isdecimal() and len(number) < 10 else None
            kept = _pairs(pairs) if line in ran else ()
            if line is not None and kept:
                found[line] = kept
    return found


def read_values(data: bytes, ran: AbstractSet[Line]) -> dict[Line, Values]:
    """The values of a replay's `values` file (one JSON object a line: `path`, `line`, `values`) at the
    lines it ran; none when the file is over `VALUES_BYTES` or not UTF-8. A malformed or over-long record is
    skipped, and so is a second record of one line."""
    found: dict[Line, Values] = {}
    for record in _records(data, VALUES_BYTES, VALUE_RECORD_CHARS):
        path, number = record.get("path"), record.get("line")
        line = (path, number) if isinstance(path, str) and type(number) is int else None
        kept = _pairs(record.get("values")) if line in ran and line not in found else ()
        if line is not None and kept:
            found[line] = kept
    return found


def _pairs(pairs: object) -> Values:
    """A line's [[expression, repr], ...] as read: at most `VALUES` of them, each part cut to `VALUE_CHARS`;
    a pair of another shape is skipped."""
    if not isinstance(pairs, list):
        return ()
    return tuple(
        (pair[0][:VALUE_CHARS], pair[1][:VALUE_CHARS])
        for pair in pairs[:VALUES]
        if isinstance(pair, list) and len(pair) == 2 and all(isinstance(part, str) for part in pair)
    )


def _evidence(
    ef: int, ep: int, failing: int, passing: int, score: float, note: str | None, runs: str = "replays"
) -> str:
    said = f"run by {ef} of {failing} failing {runs} and {ep} of {passing} passing ones (Ochiai {score:.2f})"
    return f"{said}; {note}" if note else said


def tool_notes(tools: Iterable[ToolOutput]) -> dict[Line, str]:
    """For each line that ran commands in failing runs, what the data says against it, summed over those
    runs: the commands that exited non-zero (how many, and the commonest last line of their output), and
    output that did not all reach the model (what it produced and what reached the model)."""
    notes = {}
    for site, outputs in _failing_by_site(tools).items():
        said = [note for note in (_exits(outputs), _masked(outputs), _lost(outputs)) if note]
        if said:
            notes[site] = "; ".join(said)
    return notes


def masking(tools: Iterable[ToolOutput]) -> list[tuple[str, str]]:
    """The pipelines of failing runs that exited 0 while their output reported a failure (evolve.meta.pipes),
    as (command, the last line of its output) pairs, in the order they ran."""
    return [(output.command, output.error) for output in tools if output.failed and output.masked]


def hiding(tools: Iterable[ToolOutput]) -> set[Line]:
    """The lines that ran commands in failing runs whose output did not all reach the model."""
    return {site for site, outputs in _failing_by_site(tools).items() if _lost(outputs)}


def _failing_by_site(tools: Iterable[ToolOutput]) -> dict[Line, list[ToolOutput]]:
    """The commands of failing runs, by the agent's line that ran them."""
    by_site: dict[Line, list[ToolOutput]] = {}
    for output in tools:
        if output.failed:
            by_site.setdefault(output.site, []).append(output)
    return by_site


def _exits(outputs: list[ToolOutput]) -> str:
    """The commands of `outputs` that exited non-zero, and the commonest last line they printed ("": none)."""
    failed = [output for output in outputs if output.exit not in (None, 0)]  # a masked one exited 0
    if not failed:
        return ""
    errors = Counter(output.error for output in failed if output.error)
    said = f"{len(failed)} of the {len(outputs)} commands it ran in failing replays exited non-zero"
    if not errors:
        return said
    error, times = errors.most_common(1)[0]
    command = next((output.command for output in failed if output.error == error and output.command), "")
    example = f", e.g. from {json.dumps(command, ensure_ascii=False)}" if command else ""
    return f"{said} ({times}× {json.dumps(error, ensure_ascii=False)}{example})"


def _masked(outputs: list[ToolOutput]) -> str:
    """The commands of `outputs` that were pipelines hiding a failure ("": none)."""
    hid = [output for output in outputs if output.masked]
    if not hid:
        return ""
    example = json.dumps(hid[0].command, ensure_ascii=False)
    return (
        f"{len(hid)} of the {len(outputs)} commands it ran in failing replays exited 0 while their output "
        f"reported a failure, each a pipeline (e.g. {example}): the status was the last command's"
    )


def _lost(outputs: list[ToolOutput]) -> str:
    """How much of the output of `outputs` reached the model, where not all of it did ("": all did)."""
    countable = sum(output.countable for output in outputs)
    reached = sum(output.reached for output in outputs)
    if reached >= countable:
        return ""
    chars = sum(output.chars for output in outputs)
    tracebacks = sum(output.traceback for output in outputs)
    with_tracebacks = f" incl. {tracebacks} traceback{'s' * (tracebacks != 1)}" if tracebacks else ""
    commands = f"the {len(outputs)} command{'s' * (len(outputs) != 1)}"
    return (
        f"{commands} it ran in failing replays produced {chars:,} chars{with_tracebacks}; of their "
        f"non-blank lines' {countable:,} chars, {reached:,} reached the model"
    )


def reached_chars(output: str, sent: str) -> tuple[int, int]:
    """The characters of `output`'s non-blank lines (stripped), and of those found in `sent` (the text of the
    requests the agent sent): how much of a command's output reached the model, whatever the agent wrapped or
    reformatted around it."""
    countable = 0
    reached = 0
    for line in output.splitlines():
        text = line.strip()
        countable += len(text)
        if text and text in sent:
            reached += len(text)
    return countable, reached


def read_lines(data: bytes, is_agent_line: Callable[[Line], bool]) -> frozenset[Line] | None:
    """The lines of a coverage file (`PATH<TAB>LINE` a line) that `is_agent_line` accepts; None when the file
    is over `LINES_BYTES` or not UTF-8 (skipped whole). A malformed line is skipped."""
    text = _bounded_text(data, LINES_BYTES)
    if text is None:
        return None
    lines = set()
    for row in text.splitlines():
        path, tab, number = row.partition("\t")
        if not tab or not number.isdigit() or not number.isascii():
            continue
        line = (path, int(number))
        if is_agent_line(line):
            lines.add(line)
    return frozenset(lines)


def read_tools(
    data: bytes, is_agent_line: Callable[[Line], bool], sent: str, *, failed: bool
) -> list[ToolOutput]:
    """The tool outputs of a probe's `tools` file (one JSON object a line) at lines `is_agent_line` accepts,
    with how much of each reached the model (`sent`: the text of the requests the agent sent). A file over
    `TOOLS_BYTES` or not UTF-8 reads as none; a malformed or over-long record is skipped."""
    outputs = []
    for record in _records(data, TOOLS_BYTES, TOOL_RECORD_CHARS):
        path, number, chars, output = (record.get(k) for k in ("path", "line", "chars", "text"))
        if not (
            isinstance(path, str) and type(number) is int and type(chars) is int and isinstance(output, str)
        ):
            continue
        if chars < 0 or not is_agent_line((path, number)):
            continue
        countable, reached = reached_chars(output, sent)
        code, command = record.get("returncode"), record.get("command")
        exit = code if type(code) is int else None
        error = next((line.strip() for line in reversed(output.splitlines()) if line.strip()), "")
        ran = " ".join(command.split()) if isinstance(command, str) else ""
        hid = masked(ran, exit, output)
        erred = exit not in (None, 0) or hid
        outputs.append(
            ToolOutput(
                (path, number),
                chars,
                TRACEBACK in output,
                countable,
                reached,
                failed,
                exit,
                error[:ERROR_CHARS] if erred else "",
                ran[:ERROR_CHARS] if erred else "",
                hid,
            )
        )
    return outputs


def _records(data: bytes, limit: int, record_chars: int) -> Iterator[dict]:
    """The JSON objects of a probe's file, one a line: none when the file is over `limit` bytes or not UTF-8;
    a line over `record_chars`, not JSON or not an object is skipped (the agent's to write)."""
    text = _bounded_text(data, limit)
    for row in text.splitlines() if text is not None else ():
        if len(row) > record_chars:
            continue
        try:
            record = json.loads(row)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict):
            yield record


def _bounded_text(data: bytes, limit: int) -> str | None:
    if len(data) > limit:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
