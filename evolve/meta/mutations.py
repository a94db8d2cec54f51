"""Each fix template's mutants of one node of an agent's code: the generic edits of template-based program
repair (TBar, PraPR; GenProg's statement insertion for omissions), Python's and any program's, never one
agent's names. evolve.meta.templates places them at a ranked line, orders them and applies them.

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

Pure: a node and its trees in, mutants out.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from evolve.meta.dataflow import function_dead_stores

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
    "uncalled",
)
"""Every template, by name (a candidate's record names the one that made it)."""

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
SIMPLE = (
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
"""The statements `drop` replaces and after which `insert` adds one; templates edit their nodes."""
VARIABLES = 3
"""The other locals a read name is replaced by, nearest binding first: enough for the values computed just
above a line, few enough that the other templates still get their turns."""


@dataclass(frozen=True)
class Mutant:
    """One template's edit of one node, before it is applied to the file's text."""

    node: ast.AST
    template: str
    new: ast.AST | None
    """The node that replaces `node` (None: a statement inserted beside `node`, `inserted`)."""
    change: str
    inserted: ast.stmt | None = None
    before: bool = False
    """`inserted` goes before `node` (else after it)."""


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
        yield Mutant(node, "string", ast.Constant(""), f"{_short(node.value)} -> ''")


def _unwraps(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    if not isinstance(node, ast.Call) or node.keywords:
        return
    if len(node.args) == 1 and not isinstance(node.args[0], ast.Starred):
        yield Mutant(node, "unwrap", node.args[0], f"{_short(ast.unparse(node))} -> its argument")
    elif not node.args and isinstance(node.func, ast.Attribute):
        yield Mutant(node, "unwrap", node.func.value, f"{_short(ast.unparse(node))} -> its receiver")


def _twins(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
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
    yield Mutant(node, "call", new, f"{_callee(node)} -> {_callee(new)}")


def _operators(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    if not isinstance(node, ast.BinOp):
        return
    for other in _OPERATORS.get(type(node.op), ()):
        yield Mutant(
            node,
            "operator",
            ast.BinOp(node.left, other(), node.right),
            f"{_symbol(node.op)} -> {_symbol(other())}",
        )
    yield Mutant(
        node, "operator", node.left, f"{_short(ast.unparse(node))} -> {_short(ast.unparse(node.left))}"
    )
    yield Mutant(
        node, "operator", node.right, f"{_short(ast.unparse(node))} -> {_short(ast.unparse(node.right))}"
    )


def _comparisons(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return
    for other in _COMPARISONS.get(type(node.ops[0]), ()):
        yield Mutant(
            node,
            "comparison",
            ast.Compare(node.left, [other()], node.comparators),
            f"{_symbol(node.ops[0])} -> {_symbol(other())}",
        )


def _connectives(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    if not isinstance(node, ast.BoolOp):
        return
    other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    yield Mutant(
        node, "connective", ast.BoolOp(other, node.values), f"{_symbol(node.op)} -> {_symbol(other)}"
    )
    for value in node.values:
        yield Mutant(node, "connective", value, f"only {_short(ast.unparse(value))}")


def _negations(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    for parent in ast.walk(tree):
        if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and parent.test is node:
            break
    else:
        return
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield Mutant(node, "negate", node.operand, "not removed")
    else:
        yield Mutant(node, "negate", ast.UnaryOp(ast.Not(), node), "condition negated")


def _slices(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Slice):
        return
    bounds = node.slice
    whole = _short(ast.unparse(node))

    def sliced(lower: ast.expr | None, upper: ast.expr | None) -> Mutant:
        new = ast.Subscript(node.value, ast.Slice(lower, upper, bounds.step), node.ctx)
        return Mutant(node, "slice", new, f"{whole} -> {_short(ast.unparse(new))}")

    yield Mutant(node, "slice", node.value, f"{whole} -> {_short(ast.unparse(node.value))}")
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
        yield Mutant(node, "drop", ast.Pass(), f"dropped: {_short(ast.unparse(node))}")


def _keywords(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
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
                    yield Mutant(node, "keyword", new, f"{name}(..., {_short(ast.unparse(keyword))})")


def _arguments(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
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
                yield Mutant(node, "argument", new, f"{name}(..., {_short(text)})")


def _inserts(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """A call statement of this file, of a callee the enclosing function calls, copied after this statement
    (GenProg's insertion, its ingredients from the same file; nearest first)."""
    if not isinstance(node, SIMPLE) or isinstance(node, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
        return
    function = enclosing(tree, node.lineno)
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
            yield Mutant(node, "insert", None, f"inserted: {_short(ast.unparse(statement))}", statement)


def _unused(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """A literal replaced by each name its function binds above it and never reads (a dead store)."""
    if not isinstance(node, ast.Constant) or _docstring(node, tree):
        return
    function = enclosing(tree, node.lineno)
    if function is None:
        return
    for store in function_dead_stores("", function):
        if store.line < node.lineno:
            yield Mutant(
                node,
                "unused",
                ast.Name(store.name, ast.Load()),
                f"{_short(repr(node.value))} -> {store.name}",
            )


def _uncalled(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """`v = f(v)` after this statement: `f` a function of this file of one required argument that no code of
    the agent names (`donors` are all of it), `v` each local bound here, the nearest binding first."""
    if not isinstance(node, SIMPLE) or isinstance(node, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
        return
    function = enclosing(tree, node.lineno)
    if function is None:
        return
    named = {n.id for d in donors for n in ast.walk(d) if isinstance(n, ast.Name)} | {
        n.attr for d in donors for n in ast.walk(d) if isinstance(n, ast.Attribute)
    }
    helpers = [
        f.name
        for f in tree.body
        if isinstance(f, ast.FunctionDef) and f is not function and f.name not in named and _one_argument(f)
    ]
    if not helpers:
        return
    above = _bindings(function, tree, node.lineno)
    bound = _bindings(function, tree, (node.end_lineno or node.lineno) + 1)
    called = {id(c.func) for c in ast.walk(node) if isinstance(c, ast.Call)}
    read = {
        n.id
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in called
    }
    # a value the statement reads (not a function it calls) first, through the helper before it; then the
    # others, what it binds first
    nearest = sorted(bound, key=lambda name: (not (name in read and name in above), -bound[name]))
    for helper in helpers:
        for name in nearest[:VARIABLES]:
            call = ast.Call(ast.Name(helper, ast.Load()), [ast.Name(name, ast.Load())], [])
            statement = ast.Assign([ast.Name(name, ast.Store())], call, lineno=0)
            before = name in read and name in above  # through the helper before the statement reads it
            said = f"inserted {'before' if before else 'after'}: {name} = {helper}({name})"
            yield Mutant(node, "uncalled", None, said, statement, before)


def _one_argument(function: ast.FunctionDef) -> bool:
    """Whether `function` can be called with one positional argument and needs one."""
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    required = len(positional) - len(arguments.defaults)
    needed_keywords = any(default is None for default in arguments.kw_defaults)
    return (required == 1 or (required == 0 and positional)) and not needed_keywords


def _variables(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """A local read here replaced by each other local its function bound above it (a parameter counts as
    bound at the function's start; a method's receiver is neither replaced nor a replacement), the
    nearest binding first, at most VARIABLES of them."""
    if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load):
        return
    function = enclosing(tree, node.lineno)
    if function is None:
        return
    above = _bindings(function, tree, node.lineno)
    if node.id not in above:
        return
    nearest = sorted((name for name in above if name != node.id), key=lambda name: -above[name])
    for name in nearest[:VARIABLES]:
        yield Mutant(node, "variable", ast.Name(name, ast.Load()), f"{node.id} -> {name}")


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


_MAKERS: tuple[Callable[[ast.AST, ast.Module, list[ast.Module]], Iterator[Mutant]], ...] = (
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
    _uncalled,
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


def _callee(call: ast.Call) -> str:
    """A call's callee as templates match it: the function's name, or the attribute's (`x.run` is `run`)."""
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def enclosing(tree: ast.Module, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
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
