"""Switches a call leaves at their defaults: a parameter whose default is `True` or `False`, which the call
does not pass, offered with the other value (`subprocess.run(command)` -> `subprocess.run(command,
capture_output=True)`; a switch dropped from a call is an omission no other call of the agent may show).

The signature is read from the callee's definition in the agent's files (its tree), or, for a callee the
module names through its imports or a builtin, from Python's own function (inspect.signature) -- only of a
module of Python's standard library (sys.stdlib_module_names, less the few whose import does something):
the agent's code is never imported. Pure: a node and its trees in, mutants out.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import importlib.util
import inspect
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

from evolve.meta.mutant import Mutant, callee, defined, short

__all__ = ["SWITCHES", "switches"]

SWITCHES = 4
"""Switches offered for one call at most, in the signature's order."""

_ACTING = frozenset({"antigravity", "this", "idlelib", "turtledemo", "test"})
"""Standard packages whose import may act (open a browser, print, run tests): never imported for a signature,
nor any module a part of whose name begins with `__` (`venv.__main__` runs)."""

_PASSABLE = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def switches(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """Each switch of `node`'s callee that `node` leaves at its default, passed with the other value."""
    if not isinstance(node, ast.Call) or any(k.arg is None for k in node.keywords):
        return
    if any(isinstance(a, ast.Starred) for a in node.args):
        return
    passed = {k.arg for k in node.keywords}
    offered = 0
    for name, default in _switches(node, tree, donors):
        if name in passed or offered == SWITCHES:
            continue
        offered += 1
        keyword = ast.keyword(name, ast.Constant(not default))
        new = ast.Call(node.func, node.args, [*node.keywords, keyword])
        yield Mutant(node, "keyword", new, f"{short(callee(node))}(..., {name}={not default})")


def _switches(node: ast.Call, tree: ast.Module, donors: list[ast.Module]) -> list[tuple[str, bool]]:
    """The callee's parameters with a bool default that `node`'s positional arguments do not reach: its
    definitions' in the agent where the agent defines the name (all of them agreeing), else the library's."""
    own = list(defined(donors, callee(node))) if isinstance(node.func, (ast.Name, ast.Attribute)) else []
    if own:
        found = [_defined_switches(function, len(node.args)) for function in own]
        return found[0] if all(f == found[0] for f in found) else []
    function = _library(node.func, tree)
    if not callable(function):
        return []
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: no switches known
        return []
    return [
        (p.name, p.default)
        for index, p in enumerate(parameters)
        if p.kind in _PASSABLE
        and isinstance(p.default, bool)
        and not (p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD and index < len(node.args))
    ]


def _defined_switches(function: ast.FunctionDef | ast.AsyncFunctionDef, given: int) -> list[tuple[str, bool]]:
    """A definition's switches that `given` positional arguments leave to their defaults (a method's `self`
    or `cls` counted as given)."""
    signature = function.args
    positional = [*signature.posonlyargs, *signature.args]
    reached = given + (1 if positional and positional[0].arg in ("self", "cls") else 0)
    defaulted = list(
        zip(positional[len(positional) - len(signature.defaults) :], signature.defaults, strict=True)
    )
    first = len(positional) - len(signature.defaults)
    found = [
        (arg.arg, default.value)
        for index, (arg, default) in enumerate(defaulted, start=first)
        if index >= reached
        and index >= len(signature.posonlyargs)
        and isinstance(default, ast.Constant)
        and isinstance(default.value, bool)
    ]
    found += [
        (arg.arg, default.value)
        for arg, default in zip(signature.kwonlyargs, signature.kw_defaults, strict=True)
        if isinstance(default, ast.Constant) and isinstance(default.value, bool)
    ]
    return found


def _library(func: ast.expr, tree: ast.Module) -> object | None:
    """The library function a callee names: `module.name` of a module the file imports, a name the file
    imports from a module, or a builtin the file does not rebind; None otherwise."""
    imported: dict[str, str] = {}
    for statement in ast.walk(tree):
        if isinstance(statement, ast.Import):
            for alias in statement.names:  # `import a.b as c` binds c to a.b, `import a.b` binds a to a
                top = alias.name.split(".")[0]
                imported[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
            for alias in statement.names:
                imported[alias.asname or alias.name] = f"{statement.module}:{alias.name}"
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        module = imported.get(func.value.id)
        found = _standard(module) if module is not None and ":" not in module else None
        return getattr(found, func.attr, None) if found is not None else None
    if isinstance(func, ast.Name):
        origin = imported.get(func.id)
        if origin is not None and ":" in origin:
            module, name = origin.split(":")
            found = _standard(module)
            return getattr(found, name, None) if found is not None else None
        if origin is None and not _bound(tree, func.id):
            return getattr(builtins, func.id, None)
    return None


def _standard(module: str) -> object | None:
    """The standard library's module of this name (imported if it is not yet); None for any other."""
    parts = module.split(".")
    if (
        parts[0] not in sys.stdlib_module_names
        or parts[0] in _ACTING
        or any(p.startswith("__") for p in parts)
    ):
        return None
    if module in sys.modules:
        return sys.modules[module]
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):  # a standard module this build lacks (tkinter without Tk)
        return None
    if spec is None or not _standard_origin(spec.origin):
        return None  # a file of that name shadowing the library's (the working directory's): never imported
    try:
        return importlib.import_module(module)
    except ImportError:  # a standard module this build lacks a part of: no signature
        return None


def _standard_origin(origin: str | None) -> bool:
    """Whether a module found at `origin` is the library's own (built in, frozen or in its directories)."""
    if origin in ("built-in", "frozen"):
        return True
    paths = sysconfig.get_paths()
    homes = [Path(paths[key]).resolve() for key in ("stdlib", "platstdlib")]
    return origin is not None and any(Path(origin).resolve().is_relative_to(home) for home in homes)


def _bound(tree: ast.Module, name: str) -> bool:
    """Whether the module binds `name` anywhere (a definition, an assignment, a parameter)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, ast.arg) and node.arg == name:
            return True
    return False
