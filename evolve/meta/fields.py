"""Fields a class reads but only ever sets to a constant: a static source of suspicious lines.

An attribute that a class's methods read through their receiver (`self.x`) and only ever set to a constant
is one that "will always have its default value" (C#'s warning CS0649, a field never assigned to). In code
that otherwise keeps what it is given, the assignment that should give it a value was changed or left out:
where a method of the class binds a local of the same name (a parameter, or an assignment), that local is
the value it was likely meant to keep. Where a failing run read such a field, the lines that bind the local
are ranked, with the field as evidence (`constant_field_locations`), and the `field` template
(evolve.meta.omissions) offers `self.x = x` there.

What counts, to stay precise: a plain attribute name of a class with no decorators (a dataclass or any
generated `__init__` sets its fields), every store of it anywhere in the agent a method's receiver's
attribute assigned alone a constant (`None`, a number, a string, a bool) in that class, or a constant in the
class body; a tuple target, an augmented assignment, a `for`/`with` target, a `del`, a store through any
other object or in any other class, `setattr`, `vars` or `__dict__` in the class: not a constant field.

Nothing here knows an agent: it reads Python's syntax tree of whatever files the agent has. Pure: trees in,
data out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from evolve.meta.locations import Line, Location

__all__ = [
    "BINDER_SCORE",
    "READ_SCORE",
    "ConstantField",
    "constant_field_locations",
    "constant_fields",
    "first_statement",
    "receiver",
]

BINDER_SCORE = 1.0
"""A line where a method binds the local a constant field was likely meant to keep: as suspicious as a line
only failing runs ran (the same weight as the statement after a dead store, evolve.meta.dataflow)."""
READ_SCORE = 0.9
"""A line that read the constant field in a failing run: just below the binders."""

_DYNAMIC = frozenset({"setattr", "vars", "__dict__", "__setattr__"})


@dataclass(frozen=True)
class ConstantField:
    """`self.<name>` of class `cls` (in `path`): read at `reads`, only ever set to `value` (its repr)."""

    path: str
    cls: str
    name: str
    value: str
    reads: tuple[int, ...]
    binders: tuple[tuple[str, int], ...]
    """(method, line) where a method of the class binds a local `name`: a parameter at the method's first
    statement after its docstring, an assignment at its own line."""


def constant_fields(path: str, tree: ast.Module, others: Sequence[ast.Module] = ()) -> list[ConstantField]:
    """The constant fields of the classes of one file (`tree`, at `path` as the locations name it); `others`:
    the agent's other files, where a store of the same attribute name makes a field not constant."""
    found: list[ConstantField] = []
    for cls in ast.walk(tree):
        if isinstance(cls, ast.ClassDef) and not cls.decorator_list and not cls.keywords:
            found.extend(_class_fields(path, cls, tree, others))
    return sorted(found, key=lambda field: (field.reads[0], field.name))


def constant_field_locations(fields: Iterable[ConstantField], ran: AbstractSet[Line]) -> list[Location]:
    """For each constant field a failing run read (`ran`: the lines it ran), the lines binding a local of its
    name, then the reads that ran, each with the field as evidence."""
    found: list[Location] = []
    for field in fields:
        read = [line for line in field.reads if (field.path, line) in ran]
        if not read:
            continue
        said = (
            f"`self.{field.name}` of `{field.cls}` is read (line{'s' if len(field.reads) > 1 else ''} "
            f"{', '.join(map(str, field.reads))}) but "
            f"only ever set to {field.value}"
        )
        for method, line in field.binders:
            found.append(
                Location(
                    field.path,
                    line,
                    BINDER_SCORE,
                    f"{said}; `{method}` binds a local `{field.name}` here, a value it may be meant to keep",
                )
            )
        for line in read:
            found.append(Location(field.path, line, READ_SCORE, f"{said}, so this reads that constant"))
    return found


def receiver(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """A method's receiver (its first parameter), None for a static or class method or one without."""
    decorators = {d.id for d in function.decorator_list if isinstance(d, ast.Name)}
    positional = [*function.args.posonlyargs, *function.args.args]
    if decorators & {"staticmethod", "classmethod"} or not positional:
        return None
    return positional[0].arg


def first_statement(function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.stmt:
    """The first statement of a function's body after its docstring (the docstring where it is all)."""
    body = function.body
    docstring = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    return body[1] if docstring and len(body) > 1 else body[0]


def _class_fields(
    path: str, cls: ast.ClassDef, tree: ast.Module, others: Sequence[ast.Module]
) -> Iterator[ConstantField]:
    methods = [f for f in cls.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef) and receiver(f)]
    if any(isinstance(n, ast.Name | ast.Attribute) and _named(n) in _DYNAMIC for n in ast.walk(cls)):
        return
    values: dict[str, set[str]] = {}
    constant: set[int] = set()  # the attribute nodes stored a constant, alone, in this class
    reads: dict[str, list[int]] = {}
    for statement in cls.body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name) and isinstance(statement.value, ast.Constant):
                    values.setdefault(target.id, set()).add(repr(statement.value.value))
    for method in methods:
        self_name = receiver(method)
        for node in ast.walk(method):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.value, ast.Constant)
            ):
                target = node.targets[0]
                if isinstance(target, ast.Attribute) and _on(target, self_name):
                    constant.add(id(target))
                    values.setdefault(target.attr, set()).add(repr(node.value.value))
            if isinstance(node, ast.Attribute) and _on(node, self_name) and isinstance(node.ctx, ast.Load):
                reads.setdefault(node.attr, []).append(node.lineno)
    changed = (
        {
            node.attr
            for module in (tree, *others)
            for node in ast.walk(module)
            if isinstance(node, ast.Attribute)
            and not isinstance(node.ctx, ast.Load)
            and id(node) not in constant
        }
        | {  # a name the class body binds otherwise (a method, an annotated field, a computed value)
            node.id
            for statement in cls.body
            if not (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant))
            for node in ast.walk(statement)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
        }
        | {f.name for f in cls.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
    )
    for name in sorted(set(values) & set(reads) - changed):
        if name.startswith("__"):
            continue
        binders = tuple(_binders(methods, name))
        if binders:
            shown = " or ".join(sorted(values[name]))
            yield ConstantField(path, cls.name, name, shown, tuple(sorted(set(reads[name]))), binders)


def _binders(
    methods: Sequence[ast.FunctionDef | ast.AsyncFunctionDef], name: str
) -> Iterator[tuple[str, int]]:
    for method in methods:
        arguments = [*method.args.posonlyargs, *method.args.args, *method.args.kwonlyargs][1:]
        if name in {a.arg for a in arguments}:
            yield method.name, first_statement(method).lineno
        stores = sorted(
            {
                statement.lineno
                for statement in ast.walk(method)
                if isinstance(statement, ast.Assign | ast.AnnAssign)
                and any(
                    isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                    for n in ast.walk(statement)
                )
            }
        )
        yield from ((method.name, line) for line in stores)


def _on(node: ast.Attribute, name: str | None) -> bool:
    return isinstance(node.value, ast.Name) and node.value.id == name


def _named(node: ast.Name | ast.Attribute) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr
