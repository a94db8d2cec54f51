"""One template's edit of one node of an agent's code (`Mutant`), and what the templates read of the syntax
tree around a line: the function that holds it, the names bound where it runs, a call's callee. Pure: trees
in, names and nodes out.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

__all__ = [
    "SIMPLE",
    "VARIABLES",
    "Function",
    "Mutant",
    "bindings",
    "bound_at",
    "callee",
    "condition",
    "defined",
    "enclosing",
    "gives_none",
    "header",
    "header_reads",
    "latest_call",
    "names_in",
    "own_nodes",
    "short",
    "statement_at",
    "valueless",
]

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


Function = ast.FunctionDef | ast.AsyncFunctionDef
"""A function or method, as the syntax tree has it."""

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


def enclosing(tree: ast.Module, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function whose lines hold `line` (only the statements holding it are walked into)."""
    found = None
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt) and child.lineno <= line <= (child.end_lineno or 0):
                if isinstance(child, Function) and (found is None or child.lineno >= found.lineno):
                    found = child
                stack.append(child)
            elif isinstance(child, ast.excepthandler | ast.match_case):
                stack.append(child)  # their statements are statements of the block they belong to
    return found


def bound_at(tree: ast.Module, line: int) -> set[str]:
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


def bindings(function: ast.FunctionDef | ast.AsyncFunctionDef, tree: ast.Module, line: int) -> dict[str, int]:
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


def _named_bool(annotation: ast.expr | None) -> bool:
    return (isinstance(annotation, ast.Name) and annotation.id == "bool") or (
        isinstance(annotation, ast.Constant) and annotation.value == "bool"
    )


def condition(node: ast.AST, tree: ast.Module) -> bool:
    """Whether `node` is read as a truth value: a test, a comprehension's filter, an operand of and/or, what a
    function declared to return `bool` returns (PIT's boolean-return mutator: a predicate of its own)."""
    for parent in ast.walk(tree):
        if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and parent.test is node:
            return True
        if isinstance(parent, ast.Return) and parent.value is node and not isinstance(node, ast.Constant):
            function = enclosing(tree, parent.lineno)
            return function is not None and _named_bool(function.returns)
        if isinstance(parent, ast.comprehension) and any(test is node for test in parent.ifs):
            return True
        if isinstance(parent, ast.BoolOp) and any(value is node for value in parent.values):
            return True
    return False


def callee(call: ast.Call) -> str:
    """A call's callee as templates match it: the function's name, or the attribute's (`x.run` is `run`)."""
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def defined(donors: Sequence[ast.Module], name: str) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The functions and methods of the agent's files (`donors`) named `name`."""
    for donor in donors:
        for function in ast.walk(donor):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and function.name == name:
                yield function


def names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _assigned(statement: ast.stmt) -> set[str]:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name}
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in statement.names}
    return {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def latest_call(function: Function, name: str, line: int) -> ast.Call | None:
    """The call the latest plain assignment to `name` above `line` in `function` binds it to (None: the
    latest binds something else, or there is none)."""
    stores = [
        statement
        for statement in ast.walk(function)
        if isinstance(statement, ast.Assign)
        and statement.lineno < line
        and [target.id for target in statement.targets if isinstance(target, ast.Name)] == [name]
    ]
    latest = max(stores, key=lambda statement: statement.lineno, default=None)
    return latest.value if latest is not None and isinstance(latest.value, ast.Call) else None


def gives_none(function: Function) -> list[int]:
    """The lines where `function` gives None to its caller: each `return` without a value or of None, and
    its last statement where its body can run past it; none for a generator (its caller gets a generator)."""
    own = list(own_nodes(function))
    if any(isinstance(node, ast.Yield | ast.YieldFrom) for node in own):
        return []
    lines = [node.lineno for node in own if isinstance(node, ast.Return) and valueless(node)]
    last = function.body[-1]
    if not isinstance(last, ast.Return | ast.Raise) and _returns_value(own):
        lines.append(last.lineno)
    return sorted(set(lines))


def _returns_value(own: list[ast.AST]) -> bool:
    """Whether a function of these nodes returns a value somewhere (a function that never does is called for
    what it does; its value is no one's)."""
    return any(isinstance(node, ast.Return) and not valueless(node) for node in own)


def valueless(node: ast.Return) -> bool:
    return node.value is None or (isinstance(node.value, ast.Constant) and node.value.value is None)


def own_nodes(function: Function) -> Iterator[ast.AST]:
    """The nodes of `function`'s body, not of the functions, classes and lambdas defined in it."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        stack.extend(
            child
            for child in ast.iter_child_nodes(node)
            if not isinstance(child, Function | ast.ClassDef | ast.Lambda)
        )


def statement_at(tree: ast.Module, line: int) -> ast.stmt | None:
    """The innermost statement whose lines hold `line` (a block's header where `line` is in it)."""
    holding = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    return max(reversed(holding), key=lambda node: node.lineno, default=None)  # on one line: the deepest


def header(statement: ast.stmt) -> list[ast.AST]:
    """What of `statement` runs before its blocks: all of a simple statement; a block's test, iterable,
    items or the like, not its bodies."""
    blocks = {"body", "orelse", "finalbody", "handlers", "cases", "decorator_list"}
    if isinstance(statement, Function | ast.ClassDef):
        return []
    return [
        child
        for field, value in ast.iter_fields(statement)
        if field not in blocks
        for child in (value if isinstance(value, list) else [value])
        if isinstance(child, ast.AST)
    ]


def header_reads(statement: ast.stmt) -> set[str]:
    """The names what of `statement` runs before its blocks (`header`) reads."""
    return {
        n.id
        for part in header(statement)
        for n in ast.walk(part)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
