"""What kind of change made a node: `code`, `prompt` text, a `lesson`, `cosmetic`, or `none`.

A self-modification that only appends a sentence to a prompt (the seed's lesson fallback) or only
re-indents or re-comments is not a change of the agent's logic, and a study of a run needs to tell them
apart. The rule compares each changed Python
file's syntax tree with its parent's:

- `cosmetic`: the trees are equal once docstrings are dropped (whitespace, comments, docstrings) and, in
  a file that existed, every function or class added at its top level that nothing in the file names
  (undecorated, not a `test`/`Test`/`pytest_` name, not a class with bases, which a registry may find):
  dead code (asked for a method, a model may add a top-level function that nothing calls, which
  passes every other filter); an added definition that another file
  imports changes that file's imports, which is code;
- `lesson`: equal once every statement that appends text to a name (`SYSTEM += "Lesson: ..."`, the
  old seed's fallback when `improve` made no edit) is dropped: advice added, nothing the agent does changed;
- `prompt`: equal once every string constant that is not a name is blanked and every statement that only
  binds a name to string text (`SYSTEM += "..."`, `HINT = "..."`, `LESSONS = ["...", ...]`) is dropped:
  only words the model reads changed. A string that reads as a name (`"code"`, `"utf-8"`, `".py"`,
  `"os.path"`: one token of letters, digits, `_`, `-` and inner dots) is the agent's logic, a dict key, an
  encoding, a suffix, not text for the model;
- `code`: anything else, and any file that is not Python changed beyond whitespace (tests and data are
  the agent's too; an empty file added, as a small model may under a prompt's placeholder path, is
  cosmetic).

A node's kind is the strongest over its files (code > prompt > lesson > cosmetic); a root is `none`.
The run's code-edit rate (`code_edit_rate`: valid children with a code edit / expansions) says how often
the meta step changed what the agent does, not only what it is told. A changed string of other text
inside logic (a separator, a pattern with spaces) counts as prompt text too, and the diff shows it.
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from evolve import syntax
from evolve.archive.records import Node
from evolve.archive.store import Run


class EditKind(StrEnum):
    NONE = "none"
    COSMETIC = "cosmetic"
    LESSON = "lesson"
    PROMPT = "prompt"
    CODE = "code"


_STRENGTH = list(EditKind)
NAME = re.compile(r"\.?[A-Za-z_][\w-]*(?:\.[\w-]+)*")
"""A string that reads as a name, not words (`"code"`, `"utf-8"`, `".py"`): kept by the prompt rule."""


def edit_kind(run: Run, node_id: str) -> EditKind:
    """The kind of change between the node's parent's code and its own (see the module docstring)."""
    node = run.node(node_id)
    if node.parent is None:
        return EditKind.NONE
    parent = run.node(node.parent).commit
    kind = EditKind.NONE
    for path in filter(None, run.code.changed_files(parent, node.commit)):
        before, after = run.code.read_file(parent, path), run.code.read_file(node.commit, path)
        kind = max(kind, file_edit_kind(path, before, after), key=_STRENGTH.index)
        if kind == EditKind.CODE:
            break
    return kind


def file_edit_kind(path: str, before: bytes | None, after: bytes | None) -> EditKind:
    """The kind of change of one file (None: the file is absent on that side)."""
    if before == after:
        return EditKind.NONE
    if not path.endswith(".py"):  # whitespace alone (an empty file added) is cosmetic, as in Python files
        return EditKind.COSMETIC if _words(before) == _words(after) else EditKind.CODE
    trees = [_parse(text) for text in (before, after)]
    if trees[0] is None or trees[1] is None:
        return EditKind.CODE  # a file that does not parse on one side changed its behaviour
    if before is not None:
        trees[1] = _without_dead(trees[0], trees[1])
    try:
        for normalise, kind in (
            (_without_docstrings, EditKind.COSMETIC),
            (_without_lessons, EditKind.LESSON),
            (_without_words, EditKind.PROMPT),
        ):
            if _dump(trees[0], normalise) == _dump(trees[1], normalise):
                return kind
    # parsed, but nested too deep to unparse and dump (agent code): as one that does not parse
    except RecursionError:
        return EditKind.CODE
    return EditKind.CODE


def tree_edit_kind(before: Path, after: Path) -> EditKind:
    """The kind of change between two directories of agent code (a candidate and its parent, on disk)."""
    names = {
        p.relative_to(root).as_posix()
        for root in (before, after)
        for p in root.rglob("*")
        if p.is_file() and not _SKIP & set(p.relative_to(root).parts)
    }
    kind = EditKind.NONE
    for name in sorted(names):
        old, new = (root / name for root in (before, after))
        change = file_edit_kind(
            name, old.read_bytes() if old.is_file() else None, new.read_bytes() if new.is_file() else None
        )
        kind = max(kind, change, key=_STRENGTH.index)
    return kind


_SKIP = frozenset({".git", "__pycache__", ".pytest_cache"})


@dataclass(frozen=True)
class EditRate:
    """Valid children with a code edit, of all expansions (children valid or not)."""

    code: int
    expansions: int

    @property
    def rate(self) -> float | None:
        return self.code / self.expansions if self.expansions else None

    def __str__(self) -> str:
        return f"{self.code}/{self.expansions}" + (f" ({self.rate:.2f})" if self.rate is not None else "")


RATE_LIMIT = 300
"""Children past which `code_edit_rate` gives up: each child's kind is read from git (a few ms a node), and
`evolve status` must stay fast on a run of 10,000 nodes."""


def code_edit_rate(run: Run, limit: int = RATE_LIMIT) -> EditRate | None:
    """The run's code-edit rate: each non-root node is one expansion (an invalid child too); None for a run
    of more than `limit` children."""
    children = [node for node in run.nodes() if node.parent is not None]
    if len(children) > limit:
        return None
    code = sum(node.valid and edit_kind(run, node.id) == EditKind.CODE for node in children)
    return EditRate(code, len(children))


def _words(text: bytes | None) -> list[bytes]:
    return (text or b"").split()


def _parse(text: bytes | None) -> ast.Module | None:
    if text is None:
        return ast.Module(body=[], type_ignores=[])
    try:
        return syntax.parse(text)
    except SyntaxError:  # also a null byte or nesting too deep (evolve.syntax)
        return None


def _dump(tree: ast.Module, normalise: Callable[[ast.Module], ast.AST]) -> str:
    """The tree normalised, on a fresh copy (the normalisers edit the tree they get)."""
    return ast.dump(normalise(syntax.parse(ast.unparse(tree))))


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


class _Docstrings(ast.NodeTransformer):
    """Drops the docstring of the module, each class and each function."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if (
            isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body
            and _is_docstring(node.body[0])
        ):
            node.body = node.body[1:]
        return super().generic_visit(node)


class _Words(_Docstrings):
    """Also drops each statement that only binds a name to text and blanks every string constant."""

    def visit(self, node: ast.AST) -> ast.AST | None:
        if isinstance(node, ast.stmt) and _binds_text(node):
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and not NAME.fullmatch(node.value):
            return ast.Constant("")
        return super().visit(node)


class _Lessons(_Docstrings):
    """Also drops each statement that appends text to a name (`SYSTEM += "..."`)."""

    def visit(self, node: ast.AST) -> ast.AST | None:
        if isinstance(node, ast.AugAssign) and _binds_text(node):
            return None
        return super().visit(node)


def _without_dead(before: ast.Module, after: ast.Module) -> ast.Module:
    """`after` less each top-level function or class it adds to `before` that nothing else in it names."""
    kinds = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    had = {node.name for node in before.body if isinstance(node, kinds)}
    added = [
        node
        for node in after.body
        if isinstance(node, kinds)
        and node.name not in had
        and not node.decorator_list
        and not node.name.startswith(("test", "Test", "pytest_"))
        and not (isinstance(node, ast.ClassDef) and (node.bases or node.keywords))
    ]
    rest = [node for node in after.body if not any(node is new for new in added)]
    named = {
        word
        for node in rest
        for part in ast.walk(node)
        for word in (
            getattr(part, "id", None),
            getattr(part, "attr", None),
            getattr(part, "name", None),
            getattr(part, "value", None) if isinstance(part, ast.Constant) else None,
        )
        if isinstance(word, str)
    }
    return ast.Module(
        body=[node for node in after.body if not any(node is new and new.name not in named for new in added)],
        type_ignores=[],
    )


def _without_lessons(tree: ast.Module) -> ast.AST:
    return _Lessons().visit(tree) or ast.Module(body=[], type_ignores=[])


def _without_docstrings(tree: ast.Module) -> ast.AST:
    return _Docstrings().visit(tree)


def _without_words(tree: ast.Module) -> ast.AST:
    return _Words().visit(tree) or ast.Module(body=[], type_ignores=[])


def _binds_text(statement: ast.stmt) -> bool:
    """`NAME = <text>` or `NAME += <text>`, where the text is string constants (joined, formatted, or a
    list of them)."""
    if isinstance(statement, ast.Assign | ast.AugAssign | ast.AnnAssign):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return (
            all(isinstance(t, ast.Name) for t in targets)
            and statement.value is not None
            and _is_text(statement.value)
        )
    return False


def _is_text(value: ast.expr) -> bool:
    if isinstance(value, ast.Constant):
        return isinstance(value.value, str)
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        return _is_text(value.left) and _is_text(value.right)
    if isinstance(value, ast.List | ast.Tuple):  # a list of lessons or of prompt lines
        return all(_is_text(element) for element in value.elts)
    return isinstance(value, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in value.values)


_ABSENT = "0" * 40


def edit_kinds(run: Run, nodes: list[Node]) -> dict[str, EditKind]:
    """`edit_kind` of every node in `nodes`, by the same rule, with two git processes in all (one
    `diff-tree --stdin` for every node's changed files, one `cat-file --batch` for their contents), so
    a report of 10,000 nodes shows each node's kind."""
    commits = {node.id: node.commit for node in nodes}
    pairs = [(n.id, n.commit, commits.get(n.parent) or run.node(n.parent).commit) for n in nodes if n.parent]
    kinds = {node.id: EditKind.NONE for node in nodes}
    if not pairs:
        return kinds
    git = ["git", f"--git-dir={run.code.path}"]
    listing = subprocess.run(
        [*git, "diff-tree", "--stdin", "-r", "--no-renames", "--raw", "--no-abbrev"],
        input="".join(f"{child} {parent}\n" for _, child, parent in pairs),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    # Each input pair with a change prints its commit, then its files; pairs without one print nothing.
    changes: dict[int, list[tuple[str, str, str]]] = {}
    position = -1
    for line in listing.splitlines():
        if line.startswith(":"):
            meta, path = line.split("\t", 1)
            fields = meta.split()
            changes.setdefault(position, []).append((path.strip('"'), fields[2], fields[3]))
        elif line.strip():
            position += 1
            while pairs[position][1] != line.strip():
                position += 1
    blobs = sorted({blob for files in changes.values() for _, *pair in files for blob in pair} - {_ABSENT})
    contents = _read_blobs(git, blobs)
    for position, (node_id, _, _) in enumerate(pairs):
        kind = EditKind.NONE
        for path, old, new in changes.get(position, []):
            kind = max(kind, file_edit_kind(path, contents.get(old), contents.get(new)), key=_STRENGTH.index)
            if kind == EditKind.CODE:
                break
        kinds[node_id] = kind
    return kinds


def _read_blobs(git: list[str], blobs: list[str]) -> dict[str, bytes]:
    """The contents of `blobs`, from one `git cat-file --batch`."""
    if not blobs:
        return {}
    out = subprocess.run(
        [*git, "cat-file", "--batch"],
        input="".join(f"{b}\n" for b in blobs).encode(),
        capture_output=True,
        check=True,
    ).stdout
    contents, at = {}, 0
    for blob in blobs:
        end = out.index(b"\n", at)
        size = int(out[at:end].split()[2])
        contents[blob] = out[end + 1 : end + 1 + size]
        at = end + 1 + size + 1
    return contents
