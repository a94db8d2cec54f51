"""The regular expression templates.

- `flag`: a call of `re` given each of the flags `MULTILINE`, `DOTALL`, `IGNORECASE` it lacks, or left without
  one it has (`^` and `$` at each line or at the text's ends, `.` across newlines), the flags a pattern's
  meaning turns on. Flags computed otherwise than by or-ing `re.X` names are left alone.
- `quantifier`: the pattern a `re` call is given (a string literal, its first argument) with a repeated
  capturing group made a group of the repetition (`(\\w)*` -> `(\\w*)`: a group repeated by `*`, `+` or
  `{m,n}` keeps only its last repetition, the mistake regex linters warn of), then each repetition `*` made
  `+` and `+` made `*` (the quantifier mutations of regex mutation testing, MutRex), QUANTIFIERS at most.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from evolve.meta.mutant import Mutant

__all__ = ["FLAGGED", "FLAGS", "QUANTIFIERS", "flags", "quantifiers"]

FLAGGED = {"compile": 1, "search": 2, "match": 2, "fullmatch": 2, "findall": 2, "finditer": 2, "split": 3}
"""`re`'s functions that take flags, each with the position of its `flags` argument (`sub` and `subn`: 4)."""
FLAGS = {"MULTILINE": "M", "DOTALL": "S", "IGNORECASE": "I"}
"""The flags `flag` adds or removes, with their short names (the same flag)."""
QUANTIFIERS = 6
"""The `quantifier` edits of one pattern at most (the groups' first)."""
_PATTERNED = {*FLAGGED, "sub", "subn"}
"""`re`'s functions whose first argument is a pattern."""


def flags(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "re"
    ):
        return
    at = {**FLAGGED, "sub": 4, "subn": 4}.get(node.func.attr)
    if at is None or any(isinstance(arg, ast.Starred) for arg in node.args) or len(node.args) > at + 1:
        return
    keyword = next((k for k in node.keywords if k.arg == "flags"), None)
    given = keyword.value if keyword is not None else node.args[at] if len(node.args) > at else None
    terms = _bit_terms(given) if given is not None else []
    if terms is None:
        return  # flags computed some other way: left alone
    named = {FLAGS.get(t, t) for t in terms}
    options = [[*terms, flag] for flag in FLAGS if FLAGS[flag] not in named]
    options += [[t for t in terms if t != gone] for gone in terms]
    positional = keyword is None and len(node.args) >= at  # else flags go as the keyword
    for chosen in options:
        value = _bit_or(chosen)
        args, keywords = list(node.args[:at]), [k for k in node.keywords if k.arg != "flags"]
        if value is not None and positional:
            args.append(value)
        elif value is not None:
            keywords.append(ast.keyword("flags", value))
        new = ast.Call(node.func, args, keywords)
        said = " | ".join(f"re.{flag}" for flag in chosen) or "no flags"
        yield Mutant(node, "flag", new, f"flags -> {said}")


def _bit_terms(node: ast.expr) -> list[str] | None:
    """The `re.X` names `node` ors together (`re.DOTALL | re.M`), or None where it is anything else."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _bit_terms(node.left), _bit_terms(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "re":
        return [node.attr]
    if isinstance(node, ast.Constant) and node.value == 0:
        return []
    return None


def _bit_or(flags: list[str]) -> ast.expr | None:
    terms: list[ast.expr] = [ast.Attribute(ast.Name("re", ast.Load()), flag, ast.Load()) for flag in flags]
    if not terms:
        return None
    value = terms[0]
    for term in terms[1:]:
        value = ast.BinOp(value, ast.BitOr(), term)
    return value


def quantifiers(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """The `quantifier` template at a string literal that is the pattern of a `re` call."""
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str) and _pattern_of_re(node, tree)):
        return
    pattern = node.value
    made = [*_regrouped(pattern), *_swapped(pattern)]
    for new, said in list(dict.fromkeys(made))[:QUANTIFIERS]:
        yield Mutant(node, "quantifier", ast.Constant(new), said)


def _pattern_of_re(node: ast.Constant, tree: ast.Module) -> bool:
    return any(
        isinstance(call, ast.Call)
        and call.args[:1] == [node]
        and isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == "re"
        and call.func.attr in _PATTERNED
        for call in ast.walk(tree)
    )


def _parts(pattern: str) -> Iterator[tuple[int, str]]:
    """Each character of `pattern` that means itself to the regex syntax (not escaped, not in a class), with
    its index."""
    index, in_class = 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]" or pattern[index - 1] == "["
        elif char == "[":
            in_class = True
            if pattern[index + 1 : index + 2] == "^":
                index += 1
        else:
            yield index, char
        index += 1


def _regrouped(pattern: str) -> Iterator[tuple[str, str]]:
    """Each capturing group repeated by `*`, `+` or `{m,n}` made a group of the repetition."""
    opened: list[int] = []
    for index, char in _parts(pattern):
        if char == "(":
            opened.append(index)
        elif char == ")" and opened:
            start = opened.pop()
            capturing = pattern[start + 1 : start + 2] != "?" or pattern[start + 1 : start + 3] == "?P<"
            repeat = _repetition(pattern, index + 1)
            if capturing and repeat:
                end = index + 1 + len(repeat)
                new = pattern[:index] + repeat + ")" + pattern[end:]
                yield new, f"repeated group -> group of the repetition: {pattern[start:end]!r}"


def _repetition(pattern: str, at: int) -> str:
    """The repetition quantifier at `at` (`*`, `+`, `{m,n}`, each with a lazy `?`), or ""."""
    if pattern[at : at + 1] in ("*", "+"):
        end = at + 1
    elif pattern[at : at + 1] == "{" and (close := pattern.find("}", at)) > at:
        end = close + 1
    else:
        return ""
    return pattern[at : end + 1] if pattern[end : end + 1] == "?" else pattern[at:end]


def _swapped(pattern: str) -> Iterator[tuple[str, str]]:
    """Each `*` made `+` and `+` made `*` (a quantifier, not a possessive or lazy suffix)."""
    for index, char in _parts(pattern):
        if char in "*+" and index > 0 and pattern[index - 1] not in "*+?":
            other = "+" if char == "*" else "*"
            yield pattern[:index] + other + pattern[index + 1 :], f"{char} -> {other} at {index}"
