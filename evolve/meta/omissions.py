"""The omission templates: each restores something a line lacks from what the agent's own code holds elsewhere
(GenProg's insertion, its ingredients from the agent; evolve.meta.mutations lists them with the rest).
Pure: a node and its trees in, mutants out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from copy import deepcopy as copy_tree

from evolve.meta.dataflow import function_dead_stores
from evolve.meta.fields import constant_fields, first_statement, receiver
from evolve.meta.mutant import (
    SIMPLE,
    VARIABLES,
    Mutant,
    bindings,
    bound_at,
    callee,
    condition,
    defined,
    enclosing,
    gives_none,
    latest_call,
    names_in,
    short,
)
from evolve.meta.reprs import formatted_at, joined

__all__ = [
    "adapted",
    "arguments",
    "checks",
    "converted",
    "fields",
    "guards",
    "inserts",
    "joins",
    "keywords",
    "uncalled",
    "wraps",
]

JOINS = ("\n", "")
"""The separators `join` tries, one item a line first."""


def keywords(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """A keyword argument the agent passes elsewhere to a callee of this name, added where it is missing."""
    if not isinstance(node, ast.Call) or any(k.arg is None for k in node.keywords):
        return
    name, have = callee(node), {k.arg for k in node.keywords}
    bound = bound_at(tree, node.lineno)
    added: set[str] = set()
    for donor in donors:
        for call in ast.walk(donor):
            if not isinstance(call, ast.Call) or call is node or callee(call) != name:
                continue
            for keyword in call.keywords:
                if keyword.arg is None or keyword.arg in have or keyword.arg in added:
                    continue
                if names_in(keyword.value) <= bound:
                    added.add(keyword.arg)
                    new = ast.Call(node.func, node.args, [*node.keywords, keyword])
                    yield Mutant(node, "keyword", new, f"{name}(..., {short(ast.unparse(keyword))})")


def arguments(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """The trailing positional arguments a call of this name passes elsewhere in the agent, added here."""
    if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
        return
    name, have = callee(node), len(node.args)
    bound = bound_at(tree, node.lineno)
    added: set[str] = set()
    for donor in donors:
        for call in ast.walk(donor):
            if (
                not isinstance(call, ast.Call)
                or call is node
                or callee(call) != name
                or len(call.args) <= have
            ):
                continue
            extra = call.args[have:]
            text = ", ".join(ast.unparse(a) for a in extra)
            if text in added or any(isinstance(a, ast.Starred) for a in extra):
                continue
            if set().union(*(names_in(a) for a in extra)) <= bound:
                added.add(text)
                new = ast.Call(node.func, [*node.args, *extra], node.keywords)
                yield Mutant(node, "argument", new, f"{name}(..., {short(text)})")


def inserts(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """A call statement of this file, of a callee the enclosing function calls, copied after this statement
    (GenProg's insertion, its ingredients from the same file; nearest first)."""
    if not isinstance(node, SIMPLE) or isinstance(node, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
        return
    function = enclosing(tree, node.lineno)
    if function is None:
        return
    called = {callee(c) for c in ast.walk(function) if isinstance(c, ast.Call)}
    bound = bound_at(tree, node.lineno)
    here = ast.dump(node)
    statements = _call_statements(tree)
    seen: set[str] = set()
    for statement, call in sorted(statements, key=lambda pair: abs(pair[0].lineno - node.lineno)):
        text = ast.dump(statement)
        if text == here or text in seen or callee(call) not in called:
            continue
        if names_in(statement) <= bound:
            seen.add(text)
            yield Mutant(node, "insert", None, f"inserted: {short(ast.unparse(statement))}", statement)


def adapted(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """For a dead store `v` of the function (a value computed and never read: the statement that used it
    lost) bound at this statement, or above it where it returns or raises: a call statement of this file, of
    a callee the function calls, that reads one name not bound there, copied with that name made `v`, and
    inserted where every binding of `v` reaches (before the function's statement after the one holding its
    last binding, or after that one at the function's end). Nearest ingredient first; adapted as SimFix and
    CapGen map a donor's variables to the ones in scope."""
    if not isinstance(node, SIMPLE):
        return
    function = enclosing(tree, node.lineno)
    if function is None:
        return
    stores = list(function_dead_stores("", function))
    last = {store.name: store.line for store in stores}  # met in order: the last binding wins
    if isinstance(node, (ast.Return, ast.Raise)):
        names = [name for name, line in last.items() if line < node.lineno]
    else:
        names = [store.name for store in stores if store.line == node.lineno]
    called = {callee(c) for c in ast.walk(function) if isinstance(c, ast.Call)}
    statements = _call_statements(tree)
    seen: set[str] = set()
    for name in dict.fromkeys(names):
        target, before = _reached_by_all(function, last[name])
        bound = bound_at(tree, target.lineno)
        for statement, call in sorted(statements, key=lambda pair: abs(pair[0].lineno - target.lineno)):
            missing = names_in(statement) - bound
            if callee(call) not in called or len(missing) != 1:
                continue
            copy = _renamed(statement, missing.pop(), name)
            text = ast.dump(copy)
            if text not in seen:
                seen.add(text)
                said = f"inserted: {short(ast.unparse(copy))} (`{name}` computed and never read)"
                yield Mutant(target, "adapt", None, said, copy, before=before)


def _reached_by_all(function: ast.FunctionDef | ast.AsyncFunctionDef, line: int) -> tuple[ast.stmt, bool]:
    """Where a statement goes that every path through `line` reaches: before the function's own statement
    after the one holding `line` (True), or after that one when it is the last (False)."""
    body = function.body
    index = next(
        (n for n, s in enumerate(body) if s.lineno <= line <= (s.end_lineno or s.lineno)), len(body) - 1
    )
    return (body[index + 1], True) if index + 1 < len(body) else (body[index], False)


def _call_statements(tree: ast.Module) -> list[tuple[ast.Expr, ast.Call]]:
    """The statements of `tree` that are a call alone, each with its call: the ingredients of insertions."""
    return [(s, s.value) for s in ast.walk(tree) if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)]


def _renamed(statement: ast.stmt, old: str, new: str) -> ast.stmt:
    """A copy of `statement` with every name `old` made `new`."""
    copy = copy_tree(statement)
    for name in ast.walk(copy):
        if isinstance(name, ast.Name) and name.id == old:
            name.id = new
    return copy


def uncalled(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
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
    above = bindings(function, tree, node.lineno)
    bound = bindings(function, tree, (node.end_lineno or node.lineno) + 1)
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


def fields(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """`self.x = x` for each field `x` of a method's class that is read but only ever set to a constant
    (evolve.meta.fields) and a local `x` of the method: after this statement where `x` is bound there, and
    before the method's first statement (after its docstring) where `x` is a parameter and this node starts
    that statement's line."""
    function = enclosing(tree, getattr(node, "lineno", 0))
    self_name = None if function is None else receiver(function)
    if function is None or self_name is None:
        return
    owners = [c.name for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and function in c.body]
    if not owners:
        return
    first = first_statement(function)
    others = [donor for donor in donors if donor is not tree]
    after = isinstance(node, SIMPLE) and not isinstance(
        node, (ast.Return, ast.Raise, ast.Break, ast.Continue)
    )
    if not after and getattr(node, "lineno", None) != first.lineno:
        return  # no place for the statement here (the class's fields are not read for nothing)
    bound = bindings(function, tree, (getattr(node, "end_lineno", None) or first.lineno) + 1)
    parameters = bindings(function, tree, function.lineno + 1)
    for field in constant_fields("", tree, others):
        if field.cls != owners[0]:
            continue
        target = ast.Attribute(ast.Name(self_name, ast.Load()), field.name, ast.Store())
        statement = ast.Assign([target], ast.Name(field.name, ast.Load()), lineno=0)
        said = f"inserted: {ast.unparse(statement)}"
        if after and field.name in bound:
            yield Mutant(node, "field", None, said, statement)
        if getattr(node, "lineno", None) == first.lineno and field.name in parameters:
            yield Mutant(first, "field", None, f"{said} (first)", statement, before=True)


def guards(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """`v is not None and c`, then `v and c`, for a condition `c` that reads an attribute or an item of a
    local `v` (a parameter or a name bound above) and does not test `v` itself, nor does the `and`/`or` it
    is an operand of; each such `v` in the order `c` reads them (TBar's null-pointer checker)."""
    if not isinstance(node, ast.expr) or isinstance(node, ast.BoolOp) or not condition(node, tree):
        return
    function = enclosing(tree, node.lineno)
    if function is None:
        return
    local = bindings(function, tree, node.lineno)
    tested = _tested(node) | {
        name
        for parent in ast.walk(function)
        if isinstance(parent, ast.BoolOp) and any(value is node for value in parent.values)
        for value in parent.values
        for name in _tested(value)
    }
    read = [
        inner.value.id
        for inner in ast.walk(node)
        if isinstance(inner, (ast.Attribute, ast.Subscript)) and isinstance(inner.value, ast.Name)
    ]
    for name in dict.fromkeys(read):
        if name not in local or name in tested:
            continue
        checked = ast.Compare(ast.Name(name, ast.Load()), [ast.IsNot()], [ast.Constant(None)])
        for guard in (checked, ast.Name(name, ast.Load())):
            new = ast.BoolOp(ast.And(), [guard, node])
            yield Mutant(node, "guard", new, f"guarded: {short(ast.unparse(new))}")


def checks(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """`if v is not None:` around a simple statement that reads a local `v` whose latest binding above it is
    a call of a function of the agent that may return None (it returns None or bare, or is annotated to), when
    no `if` around the statement tests `v` already: TBar's null-pointer checker, for a statement."""
    if not isinstance(node, (ast.Return, ast.Expr, ast.Assign, ast.AugAssign)) or node.value is None:
        return
    function = enclosing(tree, node.lineno)
    if function is None:
        return
    tested = {
        name
        for branch in ast.walk(function)
        if isinstance(branch, ast.If) and any(inner is node for inner in ast.walk(branch))
        for name in _tested(branch.test)
    }
    read = [n.id for n in ast.walk(node.value) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    for name in dict.fromkeys(read):
        call = latest_call(function, name, node.lineno)
        if name in tested or call is None or not _may_return_none(donors, callee(call)):
            continue
        test = ast.Compare(ast.Name(name, ast.Load()), [ast.IsNot()], [ast.Constant(None)])
        yield Mutant(
            node,
            "guard",
            ast.If(test, [node], []),
            f"guarded: if {name} is not None: {short(ast.unparse(node))}",
        )


def _may_return_none(donors: list[ast.Module], name: str) -> bool:
    """Whether a function of the agent by this name may return None: a place of it gives None
    (evolve.meta.mutant.gives_none), or its return annotation names None (`X | None`, `Optional[X]`)."""
    for function in defined(donors, name):
        annotated = function.returns is not None and (
            "None" in ast.unparse(function.returns) or "Optional" in ast.unparse(function.returns)
        )
        if annotated or gives_none(function):
            return True
    return False


def wraps(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """A local `v` read here made `f(v)`: `f` a function of this file, not the enclosing one, that takes one
    argument and names its parameter `v` too (a value that should have gone through the function made for
    it, the call lost)."""
    if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load):
        return
    function = enclosing(tree, node.lineno)
    if function is None or node.id not in bindings(function, tree, node.lineno):
        return
    for helper in tree.body:
        if (
            isinstance(helper, ast.FunctionDef)
            and helper is not function
            and _one_argument(helper)
            and [*helper.args.posonlyargs, *helper.args.args][0].arg == node.id
        ):
            call = ast.Call(ast.Name(helper.name, ast.Load()), [ast.Name(node.id, ast.Load())], [])
            yield Mutant(node, "wrap", call, f"{node.id} -> {helper.name}({node.id})")


def converted(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """An argument `e` of a call here (a name or an attribute of one) made what another call of its function
    passes at the same place among as many arguments: `e.m(...)` or `f(e, ...)` (the sibling branches
    `g(x, p)` and `h(x, p.read_text())`: a value one branch converts and the other hands on raw, the
    conversion lost)."""
    if not isinstance(node, (ast.Name, ast.Attribute)) or not isinstance(node.ctx, ast.Load):
        return
    function = enclosing(tree, node.lineno)
    if function is None:
        return
    calls = [call for call in ast.walk(function) if isinstance(call, ast.Call)]
    sites = [(call, index) for call in calls for index, arg in enumerate(call.args) if arg is node]
    if not sites:
        return
    site, index = sites[0]
    value = ast.dump(node)
    local = {
        name.id
        for name in ast.walk(function)
        if isinstance(name, ast.Name) and not isinstance(name.ctx, ast.Load)
    }
    local |= {arg.arg for arg in ast.walk(function.args) if isinstance(arg, ast.arg)}
    offered: set[str] = set()
    for other in calls:
        if other is site or len(other.args) != len(site.args):
            continue
        arg = other.args[index]
        if not isinstance(arg, ast.Call) or not _converts(arg, value, local):
            continue
        text = ast.unparse(arg)
        if text not in offered:
            offered.add(text)
            yield Mutant(node, "wrap", copy_tree(arg), f"{short(ast.unparse(node))} -> {short(text)}")


def _converts(call: ast.Call, value: str, local: set[str]) -> bool:
    """Whether `call` is `e.m(...)` or `f(e, ...)` for the expression dumped as `value`, `f` a function of no
    local (`len`, `json.loads`; `text.replace(e, ...)` does not convert `e`)."""
    if isinstance(call.func, ast.Attribute) and ast.dump(call.func.value) == value:
        return True
    root = call.func
    while isinstance(root, ast.Attribute):
        root = root.value
    return (
        isinstance(root, ast.Name)
        and root.id not in local
        and bool(call.args)
        and ast.dump(call.args[0]) == value
    )


def _tested(node: ast.expr) -> set[str]:
    """The names `node` tests for themselves: itself a name, `not v`, `v is (not) ...` or an operand `v`."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _tested(node.operand)
    if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name):
        return {node.left.id} if all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops) else set()
    if isinstance(node, ast.BoolOp):
        return set().union(*(_tested(value) for value in node.values))
    return set()


def _one_argument(function: ast.FunctionDef) -> bool:
    """Whether `function` can be called with one positional argument and needs one."""
    signature = function.args
    positional = [*signature.posonlyargs, *signature.args]
    required = len(positional) - len(signature.defaults)
    needed_keywords = any(default is None for default in signature.kw_defaults)
    return (required == 1 or (required == 0 and bool(positional))) and not needed_keywords


def joins(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """A list or tuple formatted into text here made the join of its items, `"\\n".join(v)` then
    `"".join(v)` (evolve.meta.reprs: its repr, quoted and on one line, would reach the text)."""
    others = [donor for donor in donors if donor is not tree]
    for site in formatted_at(node, tree, others):
        for separator in JOINS:
            new = joined(site, separator, node)
            yield Mutant(node, "join", new, f"{site.value.id} -> {separator!r}.join({site.value.id})")
