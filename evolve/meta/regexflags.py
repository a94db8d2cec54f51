"""The `flag` template: a call of `re` given each of the flags `MULTILINE`, `DOTALL`, `IGNORECASE` it lacks,
or left without one it has (`^` and `$` at each line or at the text's ends, `.` across newlines), the flags a
pattern's meaning turns on. Flags computed otherwise than by or-ing `re.X` names are left alone."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from evolve.meta.mutant import Mutant

__all__ = ["FLAGGED", "FLAGS", "flags"]

FLAGGED = {"compile": 1, "search": 2, "match": 2, "fullmatch": 2, "findall": 2, "finditer": 2, "split": 3}
"""`re`'s functions that take flags, each with the position of its `flags` argument (`sub` and `subn`: 4)."""
FLAGS = {"MULTILINE": "M", "DOTALL": "S", "IGNORECASE": "I"}
"""The flags `flag` adds or removes, with their short names (the same flag)."""


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
