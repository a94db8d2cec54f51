"""Arguments a format string drops: a static source of suspicious lines, and the template that restores a
field.

`str.format` ignores a keyword argument its string has no replacement field for, silently: a value passed
to be shown is dropped (pylint's unused-format-string-argument). In code that otherwise shows what it
passes, such a keyword marks a string that lost a field (or, more rarely, a call that passes the value
meant for another string). Where a failing run ran the call, the string's line is ranked
(`dropped_locations`), with the keyword and the call as evidence, and the `placeholder` template
(`placeholders`) gives the string the field back where a lost one most likely stood: after its last field,
at its end, at an empty line, before its first field.

What counts, to stay precise: a `.format(...)` call whose receiver is a string literal, or a name (`NAME` or
`module.NAME`) that a module of the agent binds once at its top level to a string literal (`NAME` bound in
the call's own module first; otherwise it must be bound so in exactly one module); a keyword passed by name
(not through `**`) that no field of the string names, in the string or in a field's format spec. A string
that is no valid format string is not judged; positional arguments are not judged (a field written `{}`
or `{0}` may be meant for any of them).

Nothing here knows an agent: it reads Python's syntax tree of whatever files the agent has. Pure: trees in,
data out.
"""

from __future__ import annotations

import ast
import string
from collections.abc import Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from evolve.meta.locations import Line, Location
from evolve.meta.mutant import Mutant, short

GAPS = 4
"""Places the `placeholder` template tries a field at in one string (`_gaps`, likeliest first)."""
DROPPED_SCORE = 0.9
"""A string a failing run formatted with a keyword it has no field for: as suspicious as a dead store (a
value computed and dropped, evolve.meta.dataflow), above a deviant and a line every run ran."""


@dataclass(frozen=True)
class Dropped:
    """A format string at `line` of `path` that the call at `call` formats with `keywords` it has no field
    for."""

    path: str
    line: int
    name: str | None
    """The name the string is bound to (None: the call's receiver is the literal itself)."""
    call: Line
    keywords: tuple[str, ...]


def dropped(trees: Mapping[str, ast.Module]) -> list[Dropped]:
    """Every format call of the agent (`trees`: its modules by path) that passes a keyword its string has no
    field for, in the order of the calls' files and lines."""
    bound = {path: constants(tree) for path, tree in trees.items()}
    found = []
    for path, tree in trees.items():
        for call in format_calls(tree):
            string_at = _resolved(call, path, bound)
            if string_at is None:
                continue
            at, name, node = string_at
            keywords = unused(str(node.value), call)
            if keywords:
                found.append(Dropped(at, node.lineno, name, (path, call.lineno), keywords))
    return sorted(found, key=lambda item: item.call)


def dropped_locations(found: Iterable[Dropped], ran: AbstractSet[Line]) -> list[Location]:
    """For each format call a failing run ran (`ran`: the lines it ran), the string's line at DROPPED_SCORE,
    with the keywords and the call as evidence."""
    return [
        Location(
            item.path,
            item.line,
            DROPPED_SCORE,
            f"{_named(item)} is formatted at {item.call[0]}:{item.call[1]} with "
            f"{', '.join(f'`{k}=`' for k in item.keywords)}, and it has no field for "
            f"{'them' if len(item.keywords) > 1 else 'it'}: the value passed is dropped "
            "(or this string lost a field)",
        )
        for item in found
        if item.call in ran
    ]


def placeholders(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """The `placeholder` template at a string literal that some format call of the agent (in `tree` or in
    `donors`, its other modules) passes keywords it has no field for: each such field added at each of the
    first GAPS places `_gaps` finds."""
    if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
        return
    text = node.value
    names = [name for name, value in constants(tree).items() if value is node]
    keywords: dict[str, None] = {}
    for call in format_calls(tree):
        receiver = _receiver(call)
        if receiver is node or (isinstance(receiver, ast.Name) and receiver.id in names):
            keywords.update(dict.fromkeys(unused(text, call)))
    others = [donor for donor in donors if donor is not tree]
    for name in names:
        if any(name in constants(donor) for donor in others):
            continue  # another module binds a string by that name too: which one a call formats is unsaid
        for call in (call for donor in others for call in format_calls(donor)):
            if _receiver_name(call) == name:
                keywords.update(dict.fromkeys(unused(text, call)))
    for keyword in keywords:
        field = "{" + keyword + "}"
        for at in _gaps(text)[:GAPS]:
            option = text[:at] + field + text[at:]
            yield Mutant(node, "placeholder", ast.Constant(option), f"{short(text)!r} -> {short(option)!r}")


def constants(tree: ast.Module) -> dict[str, ast.Constant]:
    """The names a module binds once at its top level, and to a string literal, with the literal."""
    counts: dict[str, int] = {}
    found: dict[str, ast.Constant] = {}
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            counts[statement.name] = counts.get(statement.name, 0) + 1
        elif isinstance(statement, ast.Import | ast.ImportFrom):
            for alias in statement.names:
                bound = (alias.asname or alias.name).split(".")[0]
                counts[bound] = counts.get(bound, 0) + 1
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        if isinstance(statement, ast.AnnAssign | ast.AugAssign):
            targets = [statement.target]
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    counts[name.id] = counts.get(name.id, 0) + 1
        value = getattr(statement, "value", None)
        if (
            isinstance(statement, ast.Assign | ast.AnnAssign)
            and len(targets) == 1
            and isinstance(targets[0], ast.Name)
            and isinstance(value, ast.Constant)
            and isinstance(value.value, str)
        ):
            found[targets[0].id] = value
    return {name: value for name, value in found.items() if counts[name] == 1}


def format_calls(tree: ast.Module) -> Iterator[ast.Call]:
    """The `X.format(...)` calls of a module."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
            yield node


def unused(text: str, call: ast.Call) -> tuple[str, ...]:
    """The keywords `call` passes by name that no field of the format string `text` names; none when `text`
    is no valid format string."""
    names = _field_names(text)
    if names is None:
        return ()
    return tuple(k.arg for k in call.keywords if k.arg is not None and k.arg not in names)


def _field_names(text: str, depth: int = 0) -> set[str] | None:
    """The names the replacement fields of `text` start with (their formats' nested fields too); None when
    `text` is no valid format string."""
    names: set[str] = set()
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError:
        return None
    for _, field, spec, _ in parsed:
        if field is None:
            continue
        root = field.split(".", 1)[0].split("[", 1)[0]
        names.add(root)
        if spec and depth < 2:
            nested = _field_names(spec, depth + 1)
            if nested is None:
                return None
            names |= nested
    return names


def _gaps(text: str) -> list[int]:
    """Where a lost field most likely stood in the format string `text` (offsets into it), likeliest first:
    after its last field, at its end, at each empty line (between two newlines), before its first field."""
    fields = _field_spans(text)
    empty = [at + 1 for at in range(len(text) - 1) if text[at : at + 2] == "\n\n"]
    found = ([fields[-1][1]] if fields else []) + [len(text)] + empty + ([fields[0][0]] if fields else [])
    return list(dict.fromkeys(found))


def _field_spans(text: str) -> list[tuple[int, int]]:
    """Where each replacement field of `text` starts and ends (offsets into it); none when it is no valid
    format string."""
    spans = []
    at = 0
    while at < len(text):
        if text[at] in "{}" and text[at + 1 : at + 2] == text[at]:
            at += 2  # an escaped brace
            continue
        if text[at] == "{":
            start = at
            depth, at = 1, at + 1
            while at < len(text) and depth:
                depth += {"{": 1, "}": -1}.get(text[at], 0)
                at += 1
            if depth:
                return []
            spans.append((start, at))
            continue
        at += 1
    return spans


def _receiver(call: ast.Call) -> ast.expr:
    assert isinstance(call.func, ast.Attribute)  # format_calls yields no other
    return call.func.value


def _receiver_name(call: ast.Call) -> str | None:
    """The name of a format call's receiver (`NAME` or `module.NAME`); None for any other receiver."""
    receiver = _receiver(call)
    if isinstance(receiver, ast.Name):
        return receiver.id
    if isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name):
        return receiver.attr
    return None


def _resolved(
    call: ast.Call, path: str, bound: Mapping[str, Mapping[str, ast.Constant]]
) -> tuple[str, str | None, ast.Constant] | None:
    """The string a format call formats: its file, the name bound to it (None: a literal receiver) and the
    literal; None when it is not one the module says how to find."""
    receiver = _receiver(call)
    if isinstance(receiver, ast.Constant) and isinstance(receiver.value, str):
        return path, None, receiver
    name = _receiver_name(call)
    if name is None:
        return None
    if isinstance(receiver, ast.Name) and name in bound[path]:
        return path, name, bound[path][name]
    holders = [other for other, names in bound.items() if name in names and other != path]
    if len(holders) != 1:
        return None
    return holders[0], name, bound[holders[0]][name]


def _named(item: Dropped) -> str:
    return f"`{item.name}`" if item.name else "this string"
