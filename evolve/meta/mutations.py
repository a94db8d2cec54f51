"""Each fix template's mutants of one node of an agent's code: the generic edits of template-based program
repair (TBar, PraPR; GenProg's statement insertion for omissions), Python's and any program's, never one
agent's names. evolve.meta.templates places them at a ranked line, orders them and applies them.

- `number`: a numeric literal scaled by 10 or 2 either way, moved by one, or 0 made 1 (and n made 0);
- `string`: a non-empty string literal emptied;
- `boolean`: `True` made `False` and `False` made `True` (a flag passed, stored or returned the wrong way);
- `unwrap`: a call of one argument replaced by its argument, a method call without arguments by its receiver;
- `call`: a call replaced by another of its family (`min`/`max`, `any`/`all`, `strip`/`removesuffix`, ...);
- `flag`: a regular expression call of `re` given each of the flags `MULTILINE`, `DOTALL`, `IGNORECASE` it
  lacks, or left without one it has (`^` and `$` at each line or the text's ends, `.` across newlines);
- `quantifier`: the pattern of a `re` call with a repeated capturing group made a group of the repetition
  (`(\\w)*` -> `(\\w*)`), or a `*` made `+` and a `+` made `*` (evolve.meta.regexflags);
- `operator`: an arithmetic or bitwise operator changed (`+`/`-`, `*`/`//`, `/`/`//`, `|`/`&`, ...), or one
  operand kept alone;
- `comparison`: a comparison changed (`<`/`<=`, `==`/`!=`, `in`/`not in`, `is`/`is not`, ...);
- `connective`: `and`/`or` swapped, or one sub-condition kept alone;
- `negate`: a condition negated (or un-negated): the test of an `if`, `while`, conditional expression or
  `assert`, a comprehension's filter, one operand of `and`/`or`, or what a function declared to return `bool`
  returns;
- `assign`: `x = e` made `x += e` for a local `x` bound above it (a value accumulated, not replaced), and
  `x op= e` made `x = e` or given the other operator (the assignment-operator mutation of mutation testing);
- `slice`: a slice bound dropped, moved by one, or the bounds swapped; the slicing dropped;
- `drop`: a simple statement replaced by `pass`;
- `keyword` (an omission): a keyword argument that a call of the same name passes elsewhere in the agent,
  added where it is missing, when the names it uses are bound here; and a switch the call leaves at its
  default (a parameter defaulting to `True` or `False`, in the agent's definition or Python's own
  function's signature) passed with the other value (evolve.meta.signatures);
- `argument` (an omission): the trailing positional arguments a call of the same name passes elsewhere,
  added to a call that passes fewer, when the names they use are bound here;
- `insert` (an omission): a call statement of the same file, of a callee the enclosing function calls,
  copied after the ranked statement, when the names it uses are bound here;
- `variable`: a local name read at the line replaced by another its function bound above it, the nearest
  binding first (the variable mutation of TBar and PraPR: a value read from the wrong variable);
- `unused`: a name its function binds above it and never reads (a dead store, evolve.meta.dataflow: a value
  computed for nothing, whose use was turned into a constant or left out) put to use: a literal replaced by
  it, a call given it as the keyword of its name where a function of the agent by the callee's name takes
  that parameter and the call leaves it at its default;
- `combine` (an omission): a local read at the line made `x + v` and `v + x` for a dead store `v` bound above
  it (a value to be added, left out: `return total` where `extra` was computed above it);
- `uncalled` (an omission): `v = f(v)` inserted beside the ranked statement (before it where it reads `v`,
  else after it), for a function `f` of the same file that takes one argument and that no code of the agent
  calls or names (its tests aside: a helper whose call was lost), and each local `v` bound there, the
  values the statement reads first;
- `guard` (an omission): `v is not None and c` or `v and c` for a condition `c` that reads an attribute or an
  item of a local `v` it does not test (TBar's null-pointer checker: a value that may be None read as if it
  could not); and `if v is not None:` around a simple statement that reads a local `v` bound above it from
  a call of a function of the agent that may return None (the same checker, for a statement);
- `field` (an omission): `self.x = x` inserted after the ranked statement of a method, for a field `x` of its
  class that is read but only ever set to a constant (evolve.meta.fields) and a local `x` bound there;
- `wrap` (an omission): a local `v` read at the line made `f(v)`, for a function `f` of the same file that
  takes one argument and names its parameter `v` too; and an argument `e` of a call made `e.m(...)` or
  `f(e, ...)` where another call of its function passes it so at that place among as many arguments (the
  call a value should have gone through, lost);
- `join` (an omission): a local bound to a list or tuple and formatted into text (`str.format`, an f-string,
  `%`, `str()`) made `"\\n".join(v)` or `"".join(v)` (evolve.meta.reprs: the list's repr, its items quoted on
  one line, reached the text where its items were meant);
- `pipe`: a string literal holding a shell pipe (` | ` and a command) cut before it (`"pytest -q | tail"`
  -> `"pytest -q"`, `" | tail"` -> `""`): a pipeline exits with its last command's status, so a check piped
  into a filter always passes (evolve.meta.pipes);
- `similar`: a part of an expression replaced by the part its twin elsewhere in the agent has there, the
  twin the same expression but for that part, its locals renamed one to one (SimFix's and ssFix's
  ingredients from similar code: evolve.meta.similar);
- `placeholder` (an omission): a string literal that a `.format` call passes a keyword it has no field for
  given that field, after its last field and at its end (evolve.meta.formats: a value passed to be shown,
  dropped);
- `reach` (an omission): `if c:` around a `return`, `raise`, `continue` or `break` that cuts off the
  statements after it (evolve.meta.reach), for the conditions its function tests elsewhere, nearest first;
- `keep` (an omission): a statement that drops the value its call computed (`text.strip()`, `sorted(v)`)
  made `x = x.m(...)`, the value stored back where it came from (evolve.meta.discarded);
- `swap`: two positional arguments of a call exchanged, first the pair named as each other's parameters of
  the callee the agent defines (evolve.meta.swapped), then each pair of neighbours;
- `jump`: a loop's `break` made `continue`, or `continue` made `break`;
- `returns` (an omission): a `return` without a value given each local its function bound above it, and
  `return v` after the last statement of a function whose body runs past its end while it returns a value
  elsewhere (evolve.meta.returned: where a None the agent crashed on came from).

The omissions' makers are evolve.meta.omissions, the operators' evolve.meta.operators; what all of them read
of the tree, evolve.meta.mutant.
Pure: a node and its trees in, mutants out.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from evolve.meta.dataflow import function_dead_stores
from evolve.meta.discarded import keeps
from evolve.meta.formats import placeholders
from evolve.meta.mutant import (
    SIMPLE,
    VARIABLES,
    Mutant,
    bindings,
    callee,
    defined,
    enclosing,
    short,
)
from evolve.meta.omissions import (
    adapted,
    arguments,
    checks,
    converted,
    fields,
    guards,
    inserts,
    joins,
    keywords,
    uncalled,
    wraps,
)
from evolve.meta.operators import assignments, comparisons, connectives, jumps, negations, operators
from evolve.meta.pipes import WRITTEN_PIPE
from evolve.meta.reach import reaches
from evolve.meta.regexflags import flags, quantifiers
from evolve.meta.returned import valued
from evolve.meta.signatures import switches
from evolve.meta.similar import similar
from evolve.meta.swapped import swaps

TEMPLATES = (
    "number",
    "string",
    "boolean",
    "unwrap",
    "call",
    "flag",
    "operator",
    "comparison",
    "connective",
    "negate",
    "assign",
    "slice",
    "drop",
    "keyword",
    "argument",
    "insert",
    "variable",
    "unused",
    "combine",
    "uncalled",
    "guard",
    "field",
    "wrap",
    "join",
    "pipe",
    "similar",
    "observed",
    "adapt",
    "placeholder",
    "reach",
    "keep",
    "swap",
    "jump",
    "returns",
    "quantifier",
)
"""Every template, by name (a candidate's record names the one that made it)."""

FAMILIES = (
    ("min", "max"),
    ("any", "all"),
    ("startswith", "endswith"),
    ("strip", "lstrip", "rstrip", "removeprefix", "removesuffix"),
    ("lower", "upper"),
    ("find", "rfind"),
    ("index", "rindex"),
    ("split", "rsplit"),
    ("ljust", "rjust"),
    ("floor", "ceil"),
    ("append", "extend"),
)
"""Callees of one argument list that do a near thing (Python's own names): a call of one is offered each
other. `strip`'s family holds `removeprefix` and `removesuffix`, the methods a string argument of several
characters usually means (`strip(".py")` strips the characters `.`, `p`, `y`, pylint's bad-str-strip-call)."""
_FAMILY = {name: tuple(other for other in family if other != name) for family in FAMILIES for name in family}


def mutants(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> list[Mutant]:
    """Every template's mutants of `node`; none for a node nested too deep to unparse (the agent's code is
    the adversary's: `1 + 1 + ...` nine hundred deep parses, and unparsing it recurses past the limit)."""
    try:
        return [mutant for maker in _MAKERS for mutant in maker(node, tree, donors)]
    except RecursionError:
        return []


def _numbers(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
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
            yield Mutant(node, "number", ast.Constant(option), f"{value!r} -> {option!r}")


def _strings(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value
        and not _docstring(node, tree)
    ):
        yield Mutant(node, "string", ast.Constant(""), f"{short(node.value)} -> ''")


def _booleans(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield Mutant(node, "boolean", ast.Constant(not node.value), f"{node.value} -> {not node.value}")


def _pipes(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and not _docstring(node, tree):
        pipe = WRITTEN_PIPE.search(node.value)
        if pipe is not None:
            kept = node.value[: pipe.start()].rstrip()
            yield Mutant(node, "pipe", ast.Constant(kept), f"{short(node.value)} -> {short(kept)!r}")


def _unwraps(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    if not isinstance(node, ast.Call) or node.keywords:
        return
    if len(node.args) == 1 and not isinstance(node.args[0], ast.Starred):
        yield Mutant(node, "unwrap", node.args[0], f"{short(ast.unparse(node))} -> its argument")
    if isinstance(node.func, ast.Attribute) and not _imported(node.func.value, tree):
        yield Mutant(node, "unwrap", node.func.value, f"{short(ast.unparse(node))} -> its receiver")


def _imported(node: ast.expr, tree: ast.Module) -> bool:
    """Whether `node` is a name the module imports (`json` of `json.loads(text)` is no value to unwrap to)."""
    return isinstance(node, ast.Name) and any(
        (alias.asname or alias.name).split(".")[0] == node.id
        for statement in tree.body
        if isinstance(statement, (ast.Import, ast.ImportFrom))
        for alias in statement.names
    )


def _twins(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    if not isinstance(node, ast.Call):
        return
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    for other in _FAMILY.get(name, ()):
        twin: ast.expr = (
            ast.Attribute(func.value, other, ast.Load())
            if isinstance(func, ast.Attribute)
            else ast.Name(other, ast.Load())
        )
        new = ast.Call(twin, node.args, node.keywords)
        yield Mutant(node, "call", new, f"{callee(node)} -> {callee(new)}")


def _slices(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Slice):
        return
    bounds = node.slice
    whole = short(ast.unparse(node))

    def sliced(lower: ast.expr | None, upper: ast.expr | None) -> Mutant:
        new = ast.Subscript(node.value, ast.Slice(lower, upper, bounds.step), node.ctx)
        return Mutant(node, "slice", new, f"{whole} -> {short(ast.unparse(new))}")

    yield Mutant(node, "slice", node.value, f"{whole} -> {short(ast.unparse(node.value))}")
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


def _drops(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    if isinstance(node, SIMPLE) and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
        yield Mutant(node, "drop", ast.Pass(), f"dropped: {short(ast.unparse(node))}")


def _unused(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """Each name the function binds above the line and never reads (a dead store), put to use here: a literal
    replaced by it; a call given it as a keyword where a function of the agent by the callee's name takes a
    parameter of its name that the call leaves at its default."""
    line = getattr(node, "lineno", None)
    function = enclosing(tree, line) if line is not None else None
    if line is None or function is None:
        return
    stores = [store.name for store in function_dead_stores("", function) if store.line < line]
    if isinstance(node, ast.Constant) and not _docstring(node, tree):
        for name in stores:
            yield Mutant(node, "unused", ast.Name(name, ast.Load()), f"{short(repr(node.value))} -> {name}")
    elif isinstance(node, ast.Call) and not any(k.arg is None for k in node.keywords):
        passed = {k.arg for k in node.keywords}
        for name in stores:
            if name not in passed and _takes(donors, node, name):
                keyword = ast.keyword(name, ast.Name(name, ast.Load()))
                new = ast.Call(node.func, node.args, [*node.keywords, keyword])
                yield Mutant(node, "unused", new, f"{callee(node)}(..., {name}={name})")


def _combined(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """A local read here made `x + v` and `v + x` for each dead store `v` bound above it in its function."""
    if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load):
        return
    function = enclosing(tree, node.lineno)
    if function is None or node.id not in bindings(function, tree, node.lineno):
        return
    for store in function_dead_stores("", function):
        if store.line < node.lineno and store.name != node.id:
            for left, right in ((node.id, store.name), (store.name, node.id)):
                added = ast.BinOp(ast.Name(left, ast.Load()), ast.Add(), ast.Name(right, ast.Load()))
                yield Mutant(node, "combine", added, f"{node.id} -> {left} + {right}")


def _takes(donors: list[ast.Module], call: ast.Call, name: str) -> bool:
    """Whether a function of the agent named as `call`'s callee takes a parameter `name` that `call` does
    not pass by position (a method's receiver not counted when it is called on an object)."""
    for function in defined(donors, callee(call)):
        positional = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
        if isinstance(call.func, ast.Attribute) and positional[:1] in (["self"], ["cls"]):
            positional = positional[1:]
        if name in positional[len(call.args) :] or name in {a.arg for a in function.args.kwonlyargs}:
            return True
    return False


def _variables(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """A local read here replaced by each other local its function bound above it (a parameter counts as
    bound at the function's start; a method's receiver is neither replaced nor a replacement), the
    nearest binding first, at most VARIABLES of them."""
    if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load):
        return
    function = enclosing(tree, node.lineno)
    if function is None:
        return
    above = bindings(function, tree, node.lineno)
    if node.id not in above:
        return
    nearest = sorted((name for name in above if name != node.id), key=lambda name: -above[name])
    for name in nearest[:VARIABLES]:
        yield Mutant(node, "variable", ast.Name(name, ast.Load()), f"{node.id} -> {name}")


_MAKERS: tuple[Callable[[ast.AST, ast.Module, list[ast.Module]], Iterator[Mutant]], ...] = (
    _numbers,
    _strings,
    _booleans,
    _unwraps,
    _twins,
    flags,
    operators,
    comparisons,
    connectives,
    negations,
    assignments,
    _slices,
    _drops,
    keywords,
    switches,
    arguments,
    inserts,
    adapted,
    _variables,
    _unused,
    _combined,
    uncalled,
    guards,
    checks,
    fields,
    wraps,
    converted,
    joins,
    _pipes,
    similar,
    placeholders,
    reaches,
    keeps,
    swaps,
    jumps,
    valued,
    quantifiers,
)


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
