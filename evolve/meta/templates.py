"""Template candidates: the fix patterns of template-based program repair, applied at a ranked line.

A small model transcribes a change it is told but rarely designs one; template-based repair (TBar, PraPR;
GenProg's statement insertion for omissions) needs no model to design it: a handful of generic edits,
tried at the lines fault localization ranked, each validated like any other candidate
(evolve.engine.generate). They are Python's and any program's, never one agent's names:

- `number`: a numeric literal scaled by 10 or 2 either way, moved by one, or 0 made 1 (and n made 0);
- `string`: a non-empty string literal emptied;
- `unwrap`: a call of one argument replaced by its argument, a method call without arguments by its receiver;
- `call`: a call replaced by its twin (`min`/`max`, `any`/`all`, `startswith`/`endswith`, ...);
- `operator`: an arithmetic operator changed (`+`/`-`, `*`/`//`, ...), or one operand kept alone;
- `comparison`: a comparison changed (`<`/`<=`, `==`/`!=`, `in`/`not in`, `is`/`is not`, ...);
- `connective`: `and`/`or` swapped, or one sub-condition kept alone;
- `negate`: the condition of an `if`, `while`, conditional expression or `assert` negated (or un-negated);
- `slice`: a slice bound dropped, moved by one, or the bounds swapped; the slicing dropped;
- `drop`: a simple statement replaced by `pass`;
- `keyword` (an omission): a keyword argument that a call of the same name passes elsewhere in the agent,
  added where it is missing, when the names it uses are bound here;
- `argument` (an omission): the trailing positional arguments a call of the same name passes elsewhere,
  added to a call that passes fewer, when the names they use are bound here;
- `insert` (an omission): a call statement of the same file, of a callee the enclosing function calls,
  copied after the ranked statement, when the names it uses are bound here;
- `variable`: a local name read at the line replaced by another its function bound above it, the nearest
  binding first (the variable mutation of TBar and PraPR: a value read from the wrong variable);
- `unused`: a literal replaced by a name its function binds above it and never reads (a dead store,
  evolve.meta.dataflow: a value computed for nothing, whose use may have been turned into a constant).
  Backed by that evidence, it comes first at its distance; the others take turns after it.

Edits replace the node's own source text (the rest of the file, comments included, stays as it was) and
are kept only when the result parses to the intended tree. Nearest to the ranked line first; within one
distance the templates take turns, in an order drawn from the caller's seeded generator. Pure: source in,
sources out.
"""

from __future__ import annotations

import ast
import builtins
import copy
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evolve import syntax
from evolve.meta.dataflow import function_dead_stores
from evolve.meta.locations import Location

TEMPLATES = (
    "number",
    "string",
    "unwrap",
    "call",
    "operator",
    "comparison",
    "connective",
    "negate",
    "slice",
    "drop",
    "keyword",
    "argument",
    "insert",
    "variable",
    "unused",
)
"""Every template, by name (a candidate's record names the one that made it)."""
WINDOW = 2
"""Lines either side of the ranked line whose nodes are edited too: a ranking's line is often the statement's
first, the fault one line further (a multi-line call, a condition above)."""
TWINS = {
    "min": "max",
    "any": "all",
    "startswith": "endswith",
    "lstrip": "rstrip",
    "lower": "upper",
    "find": "rfind",
    "index": "rindex",
    "split": "rsplit",
    "ljust": "rjust",
    "floor": "ceil",
}
_TWINS = {**TWINS, **{b: a for a, b in TWINS.items()}}
_OPERATORS: dict[type, tuple[type, ...]] = {
    ast.Add: (ast.Sub,),
    ast.Sub: (ast.Add,),
    ast.Mult: (ast.FloorDiv, ast.Div),
    ast.FloorDiv: (ast.Mult,),
    ast.Div: (ast.Mult,),
    ast.Mod: (ast.FloorDiv,),
    ast.LShift: (ast.RShift,),
    ast.RShift: (ast.LShift,),
}
_COMPARISONS: dict[type, tuple[type, ...]] = {
    ast.Lt: (ast.LtE, ast.Gt),
    ast.LtE: (ast.Lt, ast.GtE),
    ast.Gt: (ast.GtE, ast.Lt),
    ast.GtE: (ast.Gt, ast.LtE),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
}
_SIMPLE = (
    ast.Expr,
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.Return,
    ast.Raise,
    ast.Assert,
    ast.Delete,
    ast.Break,
    ast.Continue,
)
VARIABLES = 3
"""The other locals a read name is replaced by, nearest binding first: enough for the values computed just
above a line, few enough that the other templates still get their turns."""
_MAX_SOURCE = 200_000
"""A file larger than this gets no templates (agent code the host reads is the adversary's)."""


@dataclass(frozen=True)
class TemplateEdit:
    """One template applied at one node: the whole file's new text."""

    template: str
    line: int
    """Where the edited node starts."""
    change: str
    """What changed, in a line (`64 -> 640`)."""
    source: str


@dataclass(frozen=True)
class Generated:
    """A template candidate of an agent: its file, the ranked location it was made for, the edit."""

    location: Location
    path: str
    edit: TemplateEdit


@dataclass(frozen=True)
class _Mutant:
    node: ast.AST
    template: str
    new: ast.AST | None
    """The node that replaces `node` (None: a statement inserted after `node`, `inserted`)."""
    change: str
    inserted: ast.stmt | None = None


def edits_at(
    source: str, line: int, limit: int, rng: np.random.Generator, elsewhere: Sequence[str] = ()
) -> list[TemplateEdit]:
    """Up to `limit` template edits of `source` at `line` (1-based), nearest first; `elsewhere`: the agent's
    other sources, where the omission templates find what a call passes or a statement does."""
    if limit <= 0 or len(source) > _MAX_SOURCE:
        return []
    try:
        tree = syntax.parse(source)
        ast.unparse(tree)  # every edit is checked against the whole file's unparsed tree
    except (SyntaxError, RecursionError):  # code nested deeper than unparsing reaches (the agent's doing)
        return []
    lines = source.splitlines(keepends=True)
    donors = [tree, *(_parsed(text) for text in elsewhere)]
    mutants = [(distance, m) for distance, node in _near(tree, line) for m in _mutants(node, tree, donors)]
    edits: list[TemplateEdit] = []
    seen = {source}
    for mutant in _ordered(mutants, rng):
        text = _apply(source, lines, tree, mutant)
        if text is None or text in seen:
            continue
        seen.add(text)
        edits.append(TemplateEdit(mutant.template, getattr(mutant.node, "lineno", line), mutant.change, text))
        if len(edits) == limit:
            break
    return edits


def at_locations(
    code: Path, locations: Sequence[Location], per_location: int, rng: np.random.Generator
) -> list[Generated]:
    """Up to `per_location` template edits at each location (in ranking order) of the agent at `code`; a
    location whose file is not one of the agent's Python files gets none, and an edit already made for an
    earlier location is not made again."""
    sources = _sources(code)
    made: list[Generated] = []
    seen: set[tuple[str, str]] = set()
    for location in locations:
        source = sources.get(location.path)
        if source is None:
            continue
        others = [text for path, text in sources.items() if path != location.path]
        for edit in edits_at(source, location.line, per_location, rng, others):
            if (location.path, edit.source) not in seen:
                seen.add((location.path, edit.source))
                made.append(Generated(location, location.path, edit))
    return made


def _sources(code: Path) -> dict[str, str]:
    """The agent's Python files (not its tests), by path relative to its root."""
    found = {}
    for path in sorted(code.rglob("*.py")):
        relative = path.relative_to(code)
        if path.is_symlink() or not path.is_file() or {"tests", "__pycache__"} & set(relative.parts[:-1]):
            continue
        try:
            found[relative.as_posix()] = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # not text the templates can edit; the other files still get theirs
    return found


def _parsed(source: str) -> ast.Module:
    try:
        return syntax.parse(source) if len(source) <= _MAX_SOURCE else ast.Module([], [])
    except SyntaxError:
        return ast.Module([], [])


def _ordered(mutants: list[tuple[int, _Mutant]], rng: np.random.Generator) -> list[_Mutant]:
    """Nearest first; at one distance each template's first mutant, then each one's second, ..., the
    templates in an order drawn from `rng` (another expansion at the same line tries others first)."""
    turn = {TEMPLATES[int(index)]: rank for rank, index in enumerate(rng.permutation(len(TEMPLATES)))}
    turn["unused"] = -1  # from the code's own evidence (a value computed and dropped), not a blind mutation
    counted: dict[tuple[int, str], int] = {}
    keys = []
    for index, (distance, mutant) in enumerate(mutants):
        earlier = counted.get((distance, mutant.template), 0)
        counted[(distance, mutant.template)] = earlier + 1
        keys.append((distance, earlier, turn[mutant.template], index))
    return [mutants[key[3]][1] for key in sorted(keys)]


def _near(tree: ast.Module, line: int) -> Iterator[tuple[int, ast.AST]]:
    """Nodes starting within WINDOW lines of `line`, outside f-strings, with their distance from it; then the
    nodes of the conditions on the way to it (`_guards`), at their condition's distance."""
    skipped: set[int] = set()
    yielded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skipped.update(id(inner) for inner in ast.walk(node))
        if id(node) in skipped or not hasattr(node, "lineno"):
            continue
        start, end = node.lineno, getattr(node, "end_lineno", None) or node.lineno
        distance = (
            0
            if start <= line <= end and not hasattr(node, "body")
            else min(abs(start - line), abs(end - line))
        )
        if distance <= WINDOW and (isinstance(node, (ast.expr, *_SIMPLE))):
            yielded.add(id(node))
            yield distance, node
    for guard in _guards(tree, line):
        for node in ast.walk(guard):
            if isinstance(node, ast.expr) and id(node) not in yielded and id(node) not in skipped:
                yielded.add(id(node))
                yield line - guard.lineno, node


def _guards(tree: ast.Module, line: int) -> list[ast.expr]:
    """The conditions that may decide whether `line` runs, beyond WINDOW: the tests of the `if` and `while`
    statements of its function that start above it, nearest first. A line fault localization ranks is often
    the branch a wrong condition sends the failing runs to, the condition itself lines above."""
    function = _enclosing(tree, line)
    if function is None:
        return []
    tests = [
        node.test
        for node in ast.walk(function)
        if isinstance(node, (ast.If, ast.While)) and node.test.lineno < line - WINDOW
    ]
    return sorted(tests, key=lambda test: -test.lineno)


def _mutants(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> list[_Mutant]:
    """Every template's mutants of `node`; none for a node nested too deep to unparse (the agent's code is
    the adversary's: `1 + 1 + ...` nine hundred deep parses, and unparsing it recurses past the limit)."""
    try:
        return [mutant for maker in _MAKERS for mutant in maker(node, tree, donors)]
    except RecursionError:
        return []


def _numbers(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[_Mutant]:
    if (
        not isinstance(node, ast.Constant)
        or isinstance(node.value, bool)
        or not isinstance(node.value, (int, float))
    ):
        return
    value = node.value
    options: list[int | float]
    if value == 0:
        options = [1, -1]
    elif isinstance(value, int):
        options = [value * 10, value // 10, value * 2, value // 2, value + 1, value - 1, 0]
    else:
        options = [value * 10, value / 10, value * 2, value / 2, 0.0]
    for option in dict.fromkeys(options):
        if option != value:
            yield _Mutant(node, "number", ast.Constant(option), f"{value!r} -> {option!r}")


def _strings(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[_Mutant]:
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value
        and not _docstring(node, tree)
    ):
        yield _Mutant(node, "string", ast.Constant(""), f"{_short(node.value)} -> ''")


def _unwraps(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[_Mutant]:
    if not isinstance(node, ast.Call) or node.keywords:
        return
    if len(node.args) == 1 and not isinstance(node.args[0], ast.Starred):
        yield _Mutant(node, "unwrap", node.args[0], f"{_short(ast.unparse(node))} -> its argument")
    elif not node.args and isinstance(node.func, ast.Attribute):
        yield _Mutant(node, "unwrap", node.func.value, f"{_short(ast.unparse(node))} -> its receiver")


def _twins(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[_Mutant]:
    if not isinstance(node, ast.Call):
        return
    func = node.func
    if isinstance(func, ast.Name) and func.id in _TWINS:
        twin: ast.expr = ast.Name(_TWINS[func.id], ast.Load())
    elif isinstance(func, ast.Attribute) and func.attr in _TWINS:
        twin = ast.Attribute(func.value, _TWINS[func.attr], ast.Load())
    else:
        return
    new = ast.Call(twin, node.args, node.keywords)
    yield _Mutant(node, "call", new, f"{_callee(node)} -> {_callee(new)}")


def _operators(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[_Mutant]:
    if not isinstance(node, ast.BinOp):
        return
    for other in _OPERATORS.get(type(node.op), ()):
        yield _Mutant(
            node,
            "operator",
            ast.BinOp(node.left, other(), node.right),
            f"{_symbol(node.op)} -> {_symbol(other())}",
        )
    yield _Mutant(
        node, "operator", node.left, f"{_short(ast.unparse(node))} -> {_short(ast.unparse(node.left))}"
    )
    yield _Mutant(
        node, "operator", node.right, f"{_short(ast.unparse(node))} -> {_short(ast.unparse(node.right))}"
    )


def _comparisons(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[_Mutant]:
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return
    for other in _COMPARISONS.get(type(node.ops[0]), ()):
        yield _Mutant(
            node,
            "comparison",
            ast.Compare(node.left, [other()], node.comparators),
            f"{_symbol(node.ops[0])} -> {_symbol(other())}",
        )


def _connectives(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[_Mutant]:
    if not isinstance(node, ast.BoolOp):
        return
    other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    yield _Mutant(
        node, "connective", ast.BoolOp(other, node.values), f"{_symbol(node.op)} -> {_symbol(other)}"
    )
    for value in node.values:
        yield _Mutant(node, "connective", value, f"only {_short(ast.unparse(value))}")


def _negations(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[_Mutant]:
    for parent in ast.walk(tree):
        if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and parent.test is node:
            break
    else:
        return
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield _Mutant(node, "negate", node.operand, "not removed")
    else:
        yield _Mutant(node, "negate", ast.UnaryOp(ast.Not(), node), "condition negated")


def _slices(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[_Mutant]:
    if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Slice):
        return
    bounds = node.slice
    whole = _short(ast.unparse(node))

    def sliced(lower: ast.expr | None, upper: ast.expr | None) -> _Mutant:
        new = ast.Subscript(node.value, ast.Slice(lower, upper, bounds.step), node.ctx)
        return _Mutant(node, "slice", new, f"{whole} -> {_short(ast.unparse(new))}")

    yield _Mutant(node, "slice", node.value, f"{whole} -> {_short(ast.unparse(node.value))}")
    if (bounds.lower is None) != (bounds.upper is None):
        yield sliced(bounds.upper, bounds.lower)
    if bounds.lower is not None:
        yield sliced(None, bounds.upper)
    if bounds.upper is not None:
        yield sliced(bounds.lower, None)
    for name, bound in (("lower", bounds.lower), ("upper", bounds.upper)):
        for step in (1, -1):
            if bound is not None and not _literal(bound):  # a literal bound is moved by `number`
                moved = ast.BinOp(bound, ast.Add() if step > 0 else ast.Sub(), ast.Constant(1))
                yield sliced(moved, bounds.upper) if name == "lower" else sliced(bounds.lower, moved)


def _drops(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[_Mutant]:
    if isinstance(node, _SIMPLE) and not (
        isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    ):
        yield _Mutant(node, "drop", ast.Pass(), f"dropped: {_short(ast.unparse(node))}")


def _keywords(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[_Mutant]:
    """A keyword argument the agent passes elsewhere to a callee of this name, added where it is missing."""
    if not isinstance(node, ast.Call) or any(k.arg is None for k in node.keywords):
        return
    name, have = _callee(node), {k.arg for k in node.keywords}
    bound = _bound(tree, node.lineno)
    added: set[str] = set()
    for donor in donors:
        for call in ast.walk(donor):
            if not isinstance(call, ast.Call) or call is node or _callee(call) != name:
                continue
            for keyword in call.keywords:
                if keyword.arg is None or keyword.arg in have or keyword.arg in added:
                    continue
                if _names(keyword.value) <= bound:
                    added.add(keyword.arg)
                    new = ast.Call(node.func, node.args, [*node.keywords, keyword])
                    yield _Mutant(node, "keyword", new, f"{name}(..., {_short(ast.unparse(keyword))})")


def _arguments(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[_Mutant]:
    """The trailing positional arguments a call of this name passes elsewhere in the agent, added here."""
    if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
        return
    name, have = _callee(node), len(node.args)
    bound = _bound(tree, node.lineno)
    added: set[str] = set()
    for donor in donors:
        for call in ast.walk(donor):
            if (
                not isinstance(call, ast.Call)
                or call is node
                or _callee(call) != name
                or len(call.args) <= have
            ):
                continue
            extra = call.args[have:]
            text = ", ".join(ast.unparse(a) for a in extra)
            if text in added or any(isinstance(a, ast.Starred) for a in extra):
                continue
            if set().union(*(_names(a) for a in extra)) <= bound:
                added.add(text)
                new = ast.Call(node.func, [*node.args, *extra], node.keywords)
                yield _Mutant(node, "argument", new, f"{name}(..., {_short(text)})")


def _inserts(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[_Mutant]:
    """A call statement of this file, of a callee the enclosing function calls, copied after this statement
    (GenProg's insertion, its ingredients from the same file; nearest first)."""
    if not isinstance(node, _SIMPLE) or isinstance(node, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
        return
    function = _enclosing(tree, node.lineno)
    if function is None:
        return
    called = {_callee(c) for c in ast.walk(function) if isinstance(c, ast.Call)}
    bound = _bound(tree, node.lineno)
    here = ast.dump(node)
    statements = [
        (s, s.value) for s in ast.walk(tree) if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
    ]
    seen: set[str] = set()
    for statement, call in sorted(statements, key=lambda pair: abs(pair[0].lineno - node.lineno)):
        text = ast.dump(statement)
        if text == here or text in seen or _callee(call) not in called:
            continue
        if _names(statement) <= bound:
            seen.add(text)
            yield _Mutant(node, "insert", None, f"inserted: {_short(ast.unparse(statement))}", statement)


def _unused(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[_Mutant]:
    """A literal replaced by each name its function binds above it and never reads (a dead store)."""
    if not isinstance(node, ast.Constant) or _docstring(node, tree):
        return
    function = _enclosing(tree, node.lineno)
    if function is None:
        return
    for store in function_dead_stores("", function):
        if store.line < node.lineno:
            yield _Mutant(
                node,
                "unused",
                ast.Name(store.name, ast.Load()),
                f"{_short(repr(node.value))} -> {store.name}",
            )


def _variables(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[_Mutant]:
    """A local read here replaced by each other local its function bound above it (a parameter counts as
    bound at the function's start; a method's receiver is neither replaced nor a replacement), the
    nearest binding first, at most VARIABLES of them."""
    if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load):
        return
    function = _enclosing(tree, node.lineno)
    if function is None:
        return
    above = _bindings(function, tree, node.lineno)
    if node.id not in above:
        return
    nearest = sorted((name for name in above if name != node.id), key=lambda name: -above[name])
    for name in nearest[:VARIABLES]:
        yield _Mutant(node, "variable", ast.Name(name, ast.Load()), f"{node.id} -> {name}")


def _bindings(
    function: ast.FunctionDef | ast.AsyncFunctionDef, tree: ast.Module, line: int
) -> dict[str, int]:
    """The locals of `function` bound above `line`, each with the line of its latest binding there (its
    parameters at the function's own line; names bound only inside a comprehension are not locals)."""
    arguments = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
    receiver = arguments[0].arg if arguments and _method(function, tree) else None
    bound = {a.arg: function.lineno for a in arguments if a.arg != receiver}
    comprehended = {
        id(name)
        for comprehension in ast.walk(function)
        if isinstance(comprehension, ast.comprehension)
        for name in ast.walk(comprehension.target)
    }
    for name in ast.walk(function):
        if (
            isinstance(name, ast.Name)
            and isinstance(name.ctx, ast.Store)
            and id(name) not in comprehended
            and name.lineno < line
            and name.id != receiver
        ):
            bound[name.id] = max(bound.get(name.id, 0), name.lineno)
    return bound


def _method(function: ast.FunctionDef | ast.AsyncFunctionDef, tree: ast.Module) -> bool:
    """Whether `function` is defined directly in a class (its first parameter the receiver) and is no
    staticmethod."""
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)
    return not static and any(
        isinstance(node, ast.ClassDef) and function in node.body for node in ast.walk(tree)
    )


_MAKERS: tuple[Callable[[ast.AST, ast.Module, list[ast.Module]], Iterator[_Mutant]], ...] = (
    _numbers,
    _strings,
    _unwraps,
    _twins,
    _operators,
    _comparisons,
    _connectives,
    _negations,
    _slices,
    _drops,
    _keywords,
    _arguments,
    _inserts,
    _variables,
    _unused,
)


def _apply(source: str, lines: list[str], tree: ast.Module, mutant: _Mutant) -> str | None:
    """The new source with the mutant's node text replaced (or its statement inserted after the node),
    or None when it does not parse to the intended tree."""
    node = mutant.node
    if not isinstance(node, (ast.expr, ast.stmt)):
        return None
    try:
        start, end = (
            _offset(lines, node.lineno, node.col_offset),
            _offset(lines, node.end_lineno, node.end_col_offset),
        )
        if mutant.inserted is not None:
            first = lines[node.lineno - 1]
            indent = first[: len(first) - len(first.lstrip())]
            text = source[:end] + "\n" + indent + ast.unparse(mutant.inserted) + source[end:]
            expected = _inserted(tree, node, mutant.inserted)
            return text if _parses_to(text, expected) else None
        assert mutant.new is not None
        replacement = ast.unparse(mutant.new)
        expected = _replaced(tree, node, mutant.new)
        for spliced in (replacement, f"({replacement})"):  # bare where precedence allows, else parenthesized
            text = source[:start] + spliced + source[end:]
            if _parses_to(text, expected):
                return text
    except (SyntaxError, RecursionError, ValueError, IndexError, TypeError, AttributeError):
        return None  # the edit is not made; the other templates still are
    return None


def _parses_to(text: str, expected: str) -> bool:
    try:
        return ast.unparse(syntax.parse(text)) == expected
    except SyntaxError:
        return False


def _offset(lines: list[str], lineno: int | None, col: int | None) -> int:
    """The character offset of an AST position (its column counts UTF-8 bytes)."""
    if lineno is None or col is None:
        raise ValueError("a node without a position")
    before = sum(len(text) for text in lines[: lineno - 1])
    return before + len(lines[lineno - 1].encode("utf-8")[:col].decode("utf-8", errors="replace"))


class _Swap(ast.NodeTransformer):
    def __init__(self, key: tuple, new: ast.AST | None, inserted: ast.stmt | None = None) -> None:
        self.key, self.new, self.inserted = key, new, inserted

    def visit(self, node: ast.AST) -> ast.AST | list[ast.AST]:
        if _key(node) == self.key:
            if self.inserted is not None:
                return [node, self.inserted]
            assert self.new is not None
            return self.new
        return self.generic_visit(node)


def _key(node: ast.AST) -> tuple:
    return (
        type(node),
        getattr(node, "lineno", None),
        getattr(node, "col_offset", None),
        getattr(node, "end_lineno", None),
        getattr(node, "end_col_offset", None),
    )


def _replaced(tree: ast.Module, node: ast.AST, new: ast.AST) -> str:
    swapped = _Swap(_key(node), new).visit(copy.deepcopy(tree))
    assert isinstance(swapped, ast.Module)
    return ast.unparse(swapped)


def _inserted(tree: ast.Module, node: ast.AST, statement: ast.stmt) -> str:
    swapped = _Swap(_key(node), None, statement).visit(copy.deepcopy(tree))
    assert isinstance(swapped, ast.Module)
    return ast.unparse(swapped)


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return False
    return True


def _docstring(node: ast.Constant, tree: ast.Module) -> bool:
    for owner in ast.walk(tree):
        body = getattr(owner, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and body[0].value is node:
            return True
    return False


def _callee(call: ast.Call) -> str:
    """A call's callee as templates match it: the function's name, or the attribute's (`x.run` is `run`)."""
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _enclosing(tree: ast.Module, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function whose lines hold `line`."""
    found = None
    for node in ast.walk(tree):
        inside = node.lineno <= line <= (node.end_lineno or 0) if isinstance(node, ast.stmt) else False
        if (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and inside
            and (found is None or node.lineno >= found.lineno)
        ):
            found = node
    return found


def _bound(tree: ast.Module, line: int) -> set[str]:
    """Names bound where `line` runs: builtins, the module's top-level names, the enclosing functions'
    parameters and the names they assign (comprehension variables included)."""
    names = set(dir(builtins))
    for statement in tree.body:
        names |= _assigned(statement)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (
            node.end_lineno or 0
        ):
            every = [
                *node.args.posonlyargs,
                *node.args.args,
                *node.args.kwonlyargs,
                node.args.vararg,
                node.args.kwarg,
            ]
            names |= {a.arg for a in every if a is not None}
            names |= {
                n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            }
    return names


def _assigned(statement: ast.stmt) -> set[str]:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name}
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in statement.names}
    return {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _symbol(op: ast.AST) -> str:
    symbols = {
        ast.Add: "+",
        ast.Sub: "-",
        ast.Mult: "*",
        ast.Div: "/",
        ast.FloorDiv: "//",
        ast.Mod: "%",
        ast.LShift: "<<",
        ast.RShift: ">>",
        ast.Lt: "<",
        ast.LtE: "<=",
        ast.Gt: ">",
        ast.GtE: ">=",
        ast.Eq: "==",
        ast.NotEq: "!=",
        ast.In: "in",
        ast.NotIn: "not in",
        ast.Is: "is",
        ast.IsNot: "is not",
        ast.And: "and",
        ast.Or: "or",
    }
    return symbols.get(type(op), type(op).__name__)


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
