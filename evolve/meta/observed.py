"""The `observed` template: a comparison with a constant whose other side, as a failing run reached the line,
held another value of the constant's type, compared with that value instead.

A failing run that read `mode == "fast"` while `mode` held `"slow"` took the branch for "not fast"; if the
constant is the fault, the run's own value is the likeliest one it meant (Nopol and the other condition
synthesizers of program repair read the same thing: the values a failing test held at the condition). The
values are the probes' (evolve.engine.line_values: what a line read as it was about to run, each shown by its
`repr`), so only a value whose `repr` reads back as a literal of the constant's own type is offered. The
values are written in the agent's sandbox: like every template, they only propose an edit, which is tried
against the agent's own tests and checked like any other candidate.

Pure: a node and the values seen in, mutants out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping

from evolve.meta.mutant import Mutant, short

LITERALS = (str, bytes, int, float)
"""The constants' types offered another value: `True`/`False`/`None` are the `boolean` and `comparison`
templates' to flip."""
_COMPARISONS = (ast.Eq, ast.NotEq)


def seen_values(values: Iterable[tuple[str, str]], cut: int) -> dict[str, object]:
    """The literal values of `(expression, repr)` pairs as a failing run read them at one line, by expression
    (the first of each): a `repr` of `cut` characters or more may have been shortened and is left out, and
    so is one that is no literal of `LITERALS`."""
    seen: dict[str, object] = {}
    for expression, shown in values:
        if expression in seen or len(shown) >= cut:
            continue
        try:
            value = ast.literal_eval(shown)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue  # a repr that is not a literal (an object's): no value to compare with
        if type(value) in LITERALS:
            seen[expression] = value
    return seen


def observed(node: ast.AST, seen: Mapping[str, object]) -> Iterator[Mutant]:
    """`node`, a comparison `x == C` or `x != C` (either side) where a failing run saw `x` hold a literal
    other than `C` of `C`'s own type: `C` made that literal."""
    if not seen or not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return
    if not isinstance(node.ops[0], _COMPARISONS):
        return
    pair = (node.left, node.comparators[0])
    for subject, constant in (pair, pair[::-1]):
        if not isinstance(constant, ast.Constant) or type(constant.value) not in LITERALS:
            continue
        text = ast.unparse(subject)
        value = seen.get(text, constant.value)
        if type(value) is type(constant.value) and value != constant.value:
            was, now = short(repr(constant.value)), short(repr(value))
            change = f"{was} -> {now} (a failing run read {short(text)} = {now})"
            yield Mutant(constant, "observed", ast.Constant(value), change)
