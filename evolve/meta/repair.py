"""Model repairs at a ranked line: the code around it shown to the model with the evidence that ranked it,
its rewrite spliced back in, and each refusal told to the next attempt (conversational repair, ChatRepair:
Xia & Zhang 2023).

The agent's own `improve` step reads instructions about the whole agent and must find, open and edit the
code itself; a small model rarely gets that far. Here the engine does the finding: the unit around the
ranked line (its innermost function, or the largest statement there when no function of a readable size
holds it) goes to the model whole, with the line and its evidence (the failing own tests and how the first
failed, or what the recorded requests and tool outputs showed), and the model only rewrites it. The rewrite
is spliced over the unit and validated like every candidate (evolve.engine.generate); when it is refused, the
next attempt at the same line gets the conversation so far and the refusal (the stage and what it said), so
it is not asked the same question twice.

A line repair asks less (`line_messages`, infilling as in AlphaRepair: Xia & Zhang 2022): the unit with its
lines numbered, the ranked line and its evidence, and the question "what should this line be?"; the reply
is that line, or that line and the one missing after it, spliced in place of the line alone (a reply that
rewrote the code around it anyway gives the one stretch it changed there). A small model that rewrites a
whole function back unchanged often writes one line differently. Each later sample at the line is told the
earlier ones and how they ended, as a repair is: a small model asked the same question twice at a low
temperature answers it the same way.

Nothing here knows an agent: the unit is found by Python's parser, the reply's code is the first fenced
block (else the whole reply), and a function's rewrite is taken by its name. Pure: text in, text out.
"""

from __future__ import annotations

import ast
import difflib
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from evolve import syntax
from evolve.meta.locations import Location

UNIT_LINES = 80
"""The longest unit shown whole: a function longer than this is narrowed to the statement at the line."""
TEST_LINES = 40
"""The longest failing test shown with a unit (cut there: its setup and first checks say what it expects)."""
REASON_CHARS = 900
"""A refusal as the next attempt is told it (the tail of a test run's output is the part that says why)."""
REPLY_CHARS = 12_000
"""A reply is read only this far (a longer one is a runaway generation, not a rewrite)."""
FENCED = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)(?:\n```|\Z)", re.DOTALL)
SYSTEM = (
    "You repair bugs in Python code. Reply with the corrected code only, in one ```python block, "
    "and change only what the fix needs."
)
LINE_SYSTEM = (
    "You repair bugs in Python code, one line at a time. Reply with code only, in one ```python block."
)
LINE_REPLY_LINES = 3
"""The most lines a line repair's reply may put in place of its line (the line and what is missing after
it); a longer reply is a rewrite of more than the line."""
NUMBERED = re.compile(r"^[ \t]*(\d+)(?:[ \t]*[:|])?[ \t]+")
"""A line number a reply copied from the numbered unit it was shown."""
COPIED_NUMBER = re.compile(r"^[ \t]*\d+(?:[ \t]*[:|])?(?: {1,2}|\t)")
"""The same in a rewrite of several lines, where the indentation after it is the code's own."""


@dataclass(frozen=True)
class Unit:
    """The code a repair rewrites: lines `start`..`end` (1-based, inclusive) of `path`."""

    path: str
    start: int
    end: int
    name: str | None
    """The function's name (its rewrite is taken by this name); None: statements, taken whole."""
    text: str
    """The unit's lines as they stand, indentation included."""

    @property
    def prose(self) -> bool:
        """The unit is text only: statements that bind names to string literals (a prompt), so a rewrite of
        it is a prompt edit, never a code edit."""
        try:
            tree = syntax.parse(textwrap.dedent(self.text))
        except SyntaxError:
            return False
        return bool(tree.body) and all(_text_only(statement) for statement in tree.body)

    @property
    def indent(self) -> str:
        first = self.text.splitlines()[0] if self.text else ""
        return first[: len(first) - len(first.lstrip())]

    def what(self) -> str:
        return f"the function `{self.name}`" if self.name else "these lines"


@dataclass(frozen=True)
class Attempt:
    """An earlier repair at the same line: the model's reply and why the candidate it made was refused."""

    reply: str
    stage: str
    reason: str


def _text_only(statement: ast.stmt) -> bool:
    """`NAME = "text"` (or annotated), or a bare string: a statement whose only value is a string literal."""
    value = statement.value if isinstance(statement, ast.Assign | ast.AnnAssign | ast.Expr) else None
    return isinstance(value, ast.Constant) and isinstance(value.value, str)


def unit_at(path: str, source: str, line: int, max_lines: int = UNIT_LINES) -> Unit | None:
    """The unit around `line` of `source`: its innermost function of at most `max_lines` lines, else its
    outermost statement of at most that many (None: the line is in none, or the file does not parse)."""
    try:
        tree = syntax.parse(source)
    except SyntaxError:
        return None
    lines = source.splitlines()
    functions: list[tuple[int, int, str]] = []
    statements: list[tuple[int, int]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or node.end_lineno is None:
            continue
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        if not start <= line <= node.end_lineno or node.end_lineno - start + 1 > max_lines:
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            functions.append((start, node.end_lineno, node.name))
        else:
            statements.append((start, node.end_lineno))
    if functions:
        start, end, name = max(functions)  # the innermost: the latest start among those that hold the line
        return Unit(path, start, end, name, "\n".join(lines[start - 1 : end]))
    if statements:
        start, end = min(statements, key=lambda span: (span[0], -span[1]))  # the outermost: the most context
        return Unit(path, start, end, None, "\n".join(lines[start - 1 : end]))
    return None


def repair_messages(
    unit: Unit, location: Location, attempts: Sequence[Attempt], problem: str = "", test: str = ""
) -> list[dict[str, str]]:
    """The conversation of the next attempt: the unit, the ranked line and its evidence (and the problem the
    diagnosis chose, unless the evidence says it already, and the source of a failing test that ran the
    line), then each earlier attempt's reply and its refusal."""
    ranked = location.line - unit.start
    shown = unit.text.splitlines()
    suspicious = shown[ranked].strip() if 0 <= ranked < len(shown) else ""
    ask = _shown(unit, textwrap.dedent(unit.text), f": `{suspicious}`", location, problem, test)
    ask += [
        "",
        (
            f"Rewrite {unit.what()} so that the fault is fixed. A fault can be a wrong value, a wrong "
            "condition or operator, or a line that is missing. Reply with the whole corrected code in one "
            "```python block."
        ),
    ]
    again = "Fix the fault differently. Reply with the whole corrected code in one ```python block."
    return _conversation(SYSTEM, "\n".join(ask), attempts, again)


def line_messages(
    unit: Unit, location: Location, attempts: Sequence[Attempt] = (), problem: str = "", test: str = ""
) -> list[dict[str, str]]:
    """A line repair's conversation: the unit with its lines numbered, the ranked line and its evidence (the
    problem and a failing test's source as `repair_messages` gives them) and what the line should be, then
    each earlier sample's reply at the line and how it ended."""
    width = len(str(unit.end))
    numbered = [f"{n:>{width}}  {text}" for n, text in enumerate(unit.text.splitlines(), unit.start)]
    ask = _shown(unit, "\n".join(numbered), ".", location, problem, test)
    reply = "Reply with only those lines, without their numbers, in one ```python block."
    ask += [
        "",
        (
            f"Write line {location.line} as it should be, so that the fault is fixed: a wrong value, a wrong "
            f"condition or operator, a wrong call. If a line is missing just after it, write line "
            f"{location.line} and then the missing line. {reply}"
        ),
    ]
    again = f"Write line {location.line} differently (and the line missing after it, if one is). {reply}"
    return _conversation(LINE_SYSTEM, "\n".join(ask), attempts, again)


def _conversation(system: str, ask: str, attempts: Sequence[Attempt], again: str) -> list[dict[str, str]]:
    """The question `ask`, then each earlier attempt's reply, how it was refused and the question `again`."""
    messages = [{"role": "system", "content": system}, {"role": "user", "content": ask}]
    for attempt in attempts:
        refused = (
            f"That change was tried and refused at `{attempt.stage}`: {_tail(attempt.reason, REASON_CHARS)}"
        )
        messages += [
            {"role": "assistant", "content": attempt.reply[:REPLY_CHARS]},
            {"role": "user", "content": f"{refused}\n\n{again}"},
        ]
    return messages


def _shown(unit: Unit, code: str, line_said: str, location: Location, problem: str, test: str) -> list[str]:
    """What every repair is shown: the unit's `code`, the ranked line (`line_said` after its number) and its
    evidence, the source of a failing test that ran it, and the problem where the evidence does not say it."""
    shown = [
        f"File {unit.path}, lines {unit.start}-{unit.end}:",
        "```python",
        code,
        "```",
        "",
        f"Fault localization ranks line {location.line} as the most suspicious{line_said}",
        f"Why: {location.evidence}",
    ]
    if test:
        shown += ["", f"A failing test that runs it ({location.tests[0]}):", "```python", test, "```"]
    if problem and problem not in location.evidence:
        shown += ["", f"The problem seen when the program runs: {problem}"]
    return shown


def line_spliced(source: str, line: int, reply: str) -> tuple[str | None, str]:
    """`source` with its line `line` replaced by the reply's lines (at most LINE_REPLY_LINES, copied line
    numbers dropped, indented as the line was), and "" (or None and why it could not be)."""
    lines = source.splitlines(keepends=True)
    if not 1 <= line <= len(lines):
        return None, f"the file has no line {line}"
    found = FENCED.search(reply[:REPLY_CHARS])
    body = found.group(1) if found else reply[:REPLY_CHARS]
    written = [text for text in body.splitlines() if text.strip()]
    if not written:
        return None, "the reply held no line"
    if len(written) > LINE_REPLY_LINES:
        changed = _changed_at(lines, line, written)
        if changed is None:
            return None, f"the reply held {len(written)} lines, not the line (and one missing after it)"
        written = changed
    written = [_unnumbered(text, number) for number, text in enumerate(written, line)]
    after = [text.strip() for text in lines[line : line + len(written) - 1]]
    if len(written) > 1 and [text.strip() for text in written[1:]] == after:
        written = written[:1]  # the lines after it, copied as they stand: nothing is missing there
    old = lines[line - 1]
    indent = old[: len(old) - len(old.lstrip())]
    ending = "\n" if old.endswith("\n") else ""
    new = textwrap.indent(textwrap.dedent("\n".join(written)), indent) + ending
    if new == old:
        return None, f"the reply wrote line {line} as it stands"
    result = "".join([*lines[: line - 1], new, *lines[line:]])
    try:
        syntax.parse(result)
    except SyntaxError as exc:
        return None, f"the file does not parse with the reply's line in place: line {exc.lineno}: {exc.msg}"
    return result, ""


def _changed_at(lines: list[str], line: int, written: list[str]) -> list[str] | None:
    """What a reply that rewrote the code around `line` wrote there: its one changed stretch, where that
    replaces line `line` or adds lines just after it (the line first), at most LINE_REPLY_LINES lines in
    all. Blank lines and whole-line comments are left out on both sides (a comment explains, it changes
    nothing). None: the reply reproduced too little of the code to be a rewrite of it, or changed it
    elsewhere or more."""
    numbers = [COPIED_NUMBER.match(text) for text in written]
    if all(found is not None for found in numbers):
        written = [
            text[found.end() :] if found else text for text, found in zip(written, numbers, strict=True)
        ]
    code = [text for text in written if not _comment(text)]
    around = range(max(0, line - 1 - UNIT_LINES), min(len(lines), line + UNIT_LINES))
    kept = [n for n in around if (lines[n].strip() and not _comment(lines[n])) or n == line - 1]
    matcher = difflib.SequenceMatcher(
        None, [lines[n].strip() for n in kept], [text.strip() for text in code], autojunk=False
    )
    blocks = [block for block in matcher.get_matching_blocks() if block.size]
    if sum(block.size for block in blocks) < max(2, len(code) // 2):
        return None
    start, end = blocks[0].a, blocks[-1].a + blocks[-1].size  # the stretch of the file the reply rewrote
    different = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    changes = [op for op in different if start <= op[1] and op[2] <= end]
    if len(changes) != 1 or any(op[0] != "delete" for op in different if op not in changes):
        return None  # more than one stretch changed, or code written before or after what it reproduced
    kind, old_start, old_end, new_start, new_end = changes[0]
    at = kept.index(line - 1)
    if kind == "replace" and (old_start, old_end) == (at, at + 1):
        taken = code[new_start:new_end]
    elif kind == "insert" and old_start == at + 1 and new_start > 0:
        taken = code[new_start - 1 : new_end]  # the line as the reply wrote it sets the added lines' indent
    else:
        return None
    return taken if len(taken) <= LINE_REPLY_LINES else None


def _comment(text: str) -> bool:
    return text.strip().startswith("#")


def _unnumbered(text: str, number: int) -> str:
    """`text` without the line number `number` a reply copied from the numbered unit (any other stays)."""
    found = NUMBERED.match(text)
    return text[found.end() :] if found and int(found.group(1)) == number else text


def source_of_test(source: str, test: str, max_lines: int = TEST_LINES) -> str | None:
    """The source of the test named by pytest's id `test` (`path::name`, `path::Class::name`, a
    parametrized `name[case]`) in its file's `source`, dedented and cut at `max_lines`; None: not there."""
    names = [part.split("[", 1)[0] for part in test.split("::")[1:]]
    if not names:
        return None
    try:
        scope: list[ast.stmt] = syntax.parse(source).body
    except SyntaxError:
        return None
    found: ast.stmt | None = None
    for name in names:
        found = next((node for node in scope if _defines(node, name)), None)
        if found is None:
            return None
        scope = found.body  # type: ignore[attr-defined]
    assert found is not None
    start = min([found.lineno, *(d.lineno for d in getattr(found, "decorator_list", []))])
    lines = source.splitlines()[start - 1 : found.end_lineno]
    cut = lines[:max_lines] + (["    ..."] if len(lines) > max_lines else [])
    return textwrap.dedent("\n".join(cut))


def spliced(source: str, unit: Unit, reply: str) -> tuple[str | None, str]:
    """`source` with the unit replaced by the reply's code, and "" (or None and why it could not be)."""
    code = reply_code(reply[:REPLY_CHARS])
    if code is None:
        return None, "the reply held no Python code that parses"
    if unit.name is not None:
        code = _function(code, unit.name)
        if code is None:
            return None, f"the reply's code defines no function `{unit.name}`"
    lines = source.splitlines(keepends=True)
    ending = "\n" if unit.end < len(lines) or source.endswith("\n") else ""
    replaced = textwrap.indent(code.rstrip("\n"), unit.indent, lambda line: bool(line.strip())) + ending
    result = "".join([*lines[: unit.start - 1], replaced, *lines[unit.end :]])
    try:
        syntax.parse(result)
    except SyntaxError as exc:
        return None, f"the file does not parse with the reply's code in place: line {exc.lineno}: {exc.msg}"
    return result, ""


def reply_code(reply: str) -> str | None:
    """The code of a reply, dedented: its first fenced block that parses, else the whole reply if it does."""
    for text in [*(m.group(1) for m in FENCED.finditer(reply)), reply]:
        code = textwrap.dedent(text).strip("\n")
        if not code.strip():
            continue
        try:
            syntax.parse(code)
        except SyntaxError:
            continue
        return code + "\n"
    return None


def _defines(node: ast.stmt, name: str) -> bool:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name


def _function(code: str, name: str) -> str | None:
    """The text of the first function named `name` in `code` (decorators included), dedented."""
    tree = syntax.parse(code)
    lines = code.splitlines()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            end = node.end_lineno or node.lineno
            return textwrap.dedent("\n".join(lines[start - 1 : end])) + "\n"
    return None


def _tail(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]
