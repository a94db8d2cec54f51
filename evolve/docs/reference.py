"""Markdown of the configuration and the CLI, read from the models and the typer app themselves."""

from __future__ import annotations

import ast
import inspect
import itertools
import textwrap
from functools import cache
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined


@cache
def _field_docs(model: type[BaseModel]) -> dict[str, str]:
    """The docstring written under each field of `model` (and of its bases), by field name."""
    docs: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or cls is BaseModel:
            continue
        try:
            body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
        except (OSError, TypeError, IndexError):
            continue
        statements = body.body if isinstance(body, ast.ClassDef) else []
        for current, following in itertools.pairwise(statements):
            if (
                isinstance(current, ast.AnnAssign)
                and isinstance(current.target, ast.Name)
                and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                docs[current.target.id] = " ".join(following.value.value.split())
    return docs


def _type_name(annotation: Any) -> str:
    text = str(annotation).replace("typing.", "").replace("pathlib.", "").replace("NoneType", "None")
    return text.removeprefix("<class '").removesuffix("'>")


def _default(value: Any) -> str:
    if value is PydanticUndefined:
        return "(required)"
    if isinstance(value, BaseModel):
        return "(table)"
    return f"`{value!r}`" if value is not None else "`None`"


def _bounds(metadata: list) -> str:
    found = []
    for item in metadata:
        for name, sign in (("gt", ">"), ("ge", "≥"), ("lt", "<"), ("le", "≤"), ("pattern", "matches")):
            if getattr(item, name, None) is not None:
                found.append(f"{sign} `{getattr(item, name)}`")
    return ", ".join(found)


def _model_section(model: type[BaseModel], table: str, lines: list[str]) -> None:
    doc = " ".join((model.__doc__ or "").split())
    lines += [
        f"## `[{table}]`",
        "",
        doc,
        "",
        "| key | type | default | bounds | meaning |",
        "|---|---|---|---|---|",
    ]
    nested: list[tuple[type[BaseModel], str]] = []
    docs = _field_docs(model)
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            nested.append((annotation, f"{table}.{name}"))
        meaning = docs.get(name, "").replace("|", "\\|")
        kind = _type_name(annotation).replace("|", "\\|")
        lines.append(
            f"| `{name}` | `{kind}` | {_default(field.default)} | {_bounds(field.metadata)} | {meaning} |"
        )
    lines.append("")
    for child, path in nested:
        _model_section(child, path, lines)


def config_reference() -> str:
    """Every table and key of a run configuration (TOML), from `evolve.config.RunConfig`."""
    from evolve.config import RunConfig

    lines = ["# Configuration reference", "",
             ("Generated from `evolve/config.py` (the pydantic models) when the site is built: every key, "
             "its type, default, bounds and the docstring under it in the code. A run's TOML sets any of "
             "them; `evolve config check FILE` validates one."), ""]  # fmt: skip
    for name, field in RunConfig.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            _model_section(annotation, name, lines)
    return "\n".join(lines) + "\n"


def _param_row(param: Any) -> str:
    """One argument or option of a command (typer's own click: read by what it has, not its class)."""
    option = param.param_type_name == "option"
    names = (
        ", ".join(f"`{n}`" for n in [*param.opts, *param.secondary_opts])
        if option
        else f"`{(param.name or '').upper()}`"
    )
    default = "" if param.default is None or not option else f"`{param.default!r}`"
    text = " ".join((getattr(param, "help", None) or "").split()).replace("|", "\\|")
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    kind = "flag" if getattr(param, "is_flag", False) else _type_name(annotation).replace("|", "\\|")
    return f"| {names} | {kind} | {default} | {text} |"


def _command_section(command: Any, path: str, lines: list[str]) -> None:
    if hasattr(command, "commands"):  # a group
        for name in sorted(command.commands):
            _command_section(command.commands[name], f"{path} {name}", lines)
        return
    lines += [f"## `{path}`", "", " ".join((command.help or "").split()), ""]
    params = [p for p in command.params if p.name != "help"]
    if params:
        lines += ["| argument / option | type | default | help |", "|---|---|---|---|"]
        lines += [_param_row(p) for p in params]
        lines.append("")


def cli_reference() -> str:
    """Every `evolve` command with its arguments and options, from the typer app."""
    import typer

    from evolve.cli.app import app

    lines = ["# CLI reference", "",
             ("Generated from the typer app (`evolve/cli/`) when the site is built; `evolve COMMAND --help` "
             "prints the same."), ""]  # fmt: skip
    _command_section(typer.main.get_command(app), "evolve", lines)
    return "\n".join(lines) + "\n"
