"""The operator templates: an arithmetic, bitwise, comparison or boolean operator changed, a condition
negated, an assignment's operator changed, `break` and `continue` exchanged -- the classic mutation operators
(AOR, ROR, LCR, UOI, ASR) as fix templates.
evolve.meta.mutations lists them with the rest. Pure: a node and its trees in, mutants out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from evolve.meta.mutant import Mutant, bindings, condition, enclosing, short

__all__ = [
    "OPERATORS",
    "assignments",
    "comparisons",
    "connectives",
    "jumps",
    "negations",
    "operators",
    "symbol",
]

OPERATORS: dict[type, tuple[type, ...]] = {
    ast.Add: (ast.Sub,),
    ast.Sub: (ast.Add,),
    ast.Mult: (ast.FloorDiv, ast.Div),
    ast.FloorDiv: (ast.Mult, ast.Div),
    ast.Div: (ast.Mult, ast.FloorDiv),
    ast.Mod: (ast.FloorDiv,),
    ast.LShift: (ast.RShift,),
    ast.RShift: (ast.LShift,),
    ast.BitOr: (ast.BitAnd,),
    ast.BitAnd: (ast.BitOr,),
    ast.BitXor: (ast.BitOr, ast.BitAnd),
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


def operators(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    if not isinstance(node, ast.BinOp):
        return
    for other in OPERATORS.get(type(node.op), ()):
        yield Mutant(
            node,
            "operator",
            ast.BinOp(node.left, other(), node.right),
            f"{symbol(node.op)} -> {symbol(other())}",
        )
    yield Mutant(
        node, "operator", node.left, f"{short(ast.unparse(node))} -> {short(ast.unparse(node.left))}"
    )
    yield Mutant(
        node, "operator", node.right, f"{short(ast.unparse(node))} -> {short(ast.unparse(node.right))}"
    )


def comparisons(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return
    for other in _COMPARISONS.get(type(node.ops[0]), ()):
        yield Mutant(
            node,
            "comparison",
            ast.Compare(node.left, [other()], node.comparators),
            f"{symbol(node.ops[0])} -> {symbol(other())}",
        )


def connectives(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    if not isinstance(node, ast.BoolOp):
        return
    other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    yield Mutant(node, "connective", ast.BoolOp(other, node.values), f"{symbol(node.op)} -> {symbol(other)}")
    for value in node.values:
        yield Mutant(node, "connective", value, f"only {short(ast.unparse(value))}")


def negations(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    if not isinstance(node, ast.expr) or not condition(node, tree):
        return
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield Mutant(node, "negate", node.operand, f"not removed: {short(ast.unparse(node))}")
    else:
        yield Mutant(node, "negate", ast.UnaryOp(ast.Not(), node), f"negated: {short(ast.unparse(node))}")


def assignments(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        name, sign = node.target.id, symbol(node.op)
        plain = ast.Assign([ast.Name(name, ast.Store())], node.value, lineno=node.lineno)  # unparse reads it
        yield Mutant(node, "assign", plain, f"{name} {sign}= -> {name} =")
        for other in OPERATORS.get(type(node.op), ()):
            changed = ast.AugAssign(node.target, other(), node.value)
            yield Mutant(node, "assign", changed, f"{name} {sign}= -> {name} {symbol(other())}=")
        return
    if not isinstance(node, ast.Assign) or len(node.targets) != 1:
        return
    if not isinstance(node.targets[0], ast.Name):
        return
    name = node.targets[0].id
    function = enclosing(tree, node.lineno)
    if function is not None and name in bindings(function, tree, node.lineno):
        accumulated = ast.AugAssign(ast.Name(name, ast.Store()), ast.Add(), node.value)
        yield Mutant(node, "assign", accumulated, f"{name} = -> {name} +=")


def jumps(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """A loop's `break` made `continue` and `continue` made `break` (the loop left where the item was to be
    skipped, or the other way)."""
    if isinstance(node, ast.Break):
        yield Mutant(node, "jump", ast.Continue(), "break -> continue")
    elif isinstance(node, ast.Continue):
        yield Mutant(node, "jump", ast.Break(), "continue -> break")


def symbol(op: ast.AST) -> str:
    symbols = {
        ast.Add: "+",
        ast.Sub: "-",
        ast.Mult: "*",
        ast.Div: "/",
        ast.FloorDiv: "//",
        ast.Mod: "%",
        ast.LShift: "<<",
        ast.RShift: ">>",
        ast.BitOr: "|",
        ast.BitAnd: "&",
        ast.BitXor: "^",
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
