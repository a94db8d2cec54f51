"""Fix the lines `ruff format` leaves longer than the limit, without changing what the code does.

`ruff format` wraps code but not comments, docstrings or long string literals. This script does
those three mechanically, then lists what is still long for a person to fix:

- a `#` comment line is reflowed with the rest of its paragraph (the lines below it at the same
  indentation); a long trailing comment moves to its own lines above its code line;
- a docstring paragraph (of a module, class or function, or a bare string statement below an
  attribute) is reflowed; lists keep their hanging indentation, and indented blocks,
  doctest lines, tables and reST directives are left alone;
- a one-line string literal (f-strings too, split outside their `{}` fields) is split at spaces
  into an implicit concatenation on the following lines, in parentheses where it is not already in
  a call's (`--no-strings GLOB` keeps the strings of matching files whole).

A touched file is written only if its AST is unchanged (docstrings compared with their whitespace
collapsed); a file whose AST would change is refused and reported. Run it after `ruff format`,
then run `ruff format` again (it may reindent a moved comment or parenthesise a split string), the
script once more, and `ruff check`. The exit status is 1 while any line is still long.

    python3 scripts/wrap_long_lines.py [--check] [--no-strings GLOB] [--exclude GLOB] PATH ...
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import io
import keyword
import re
import sys
import textwrap
import tokenize
from dataclasses import dataclass
from pathlib import Path

# Comments a tool reads: moving or rewrapping them changes what the tool does.
PRAGMA = re.compile(r"#\s*(noqa|type:|pragma|pyright|mypy|fmt:|ruff|isort|nosec|-\*-)|#!")
# A line that starts a list item, whose continuation lines hang under the item's text.
LIST_ITEM = re.compile(r"^([-*+•]|\d+[.)]|\(\w\)|[a-z][.)])\s+")
# Lines in a docstring that are not prose: doctests, tables, reST markup, section underlines.
NOT_PROSE = re.compile(r"^(>>>|\.\.\.|\||\+[-=]|={3,}|-{3,}|\.\. |:\w+:)")


@dataclass(frozen=True)
class Outcome:
    """What happened to one file: lines fixed, lines still long, or why the file was refused."""

    path: Path
    fixed: int
    remaining: list[tuple[int, str]]
    refused: str = ""


def line_limit(start: Path) -> int:
    """The `line-length` of the nearest pyproject.toml's `[tool.ruff]`, or 88 (ruff's default)."""
    import tomllib

    for folder in [start, *start.parents]:
        config = folder / "pyproject.toml"
        if config.is_file():
            return int(
                tomllib.loads(config.read_text()).get("tool", {}).get("ruff", {}).get("line-length", 88)
            )
    return 88


def width(line: str) -> int:
    return len(line.rstrip("\n"))


def reflow(texts: list[str], room: int) -> list[str]:
    """Rewrap one paragraph (texts without their prefix) to `room` columns, keeping a list item's
    hanging indentation. Words are never broken, so a single word longer than `room` stays long."""
    first = texts[0]
    item = LIST_ITEM.match(first)
    hang = " " * (len(item.group(0)) if item else 0)
    words = " ".join(t.strip() for t in texts)
    return textwrap.wrap(
        words,
        width=room,
        subsequent_indent=hang,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [first]


def paragraph_end(texts: list[str], start: int) -> int:
    """The index after the last line of the paragraph that contains texts[start], counting only the
    lines from `start` down: a paragraph ends at a blank line, a new list item, a line indented
    differently from the continuation indent, or a line that is not prose."""
    item = LIST_ITEM.match(texts[start].lstrip())
    lead = len(texts[start]) - len(texts[start].lstrip())
    hang = lead + (len(item.group(0)) if item else 0)
    if not item and start > 0:
        # A line in the middle of a list item continues that item at the item's hanging indent.
        hang = lead
    end = start + 1
    while end < len(texts):
        text = texts[end]
        body = text.lstrip()
        indent = len(text) - len(body)
        if not body or indent != hang or LIST_ITEM.match(body) or NOT_PROSE.match(body):
            break
        end += 1
    return end


def is_prose(text: str) -> bool:
    body = text.lstrip()
    return bool(body) and not NOT_PROSE.match(body) and not body.endswith("::")


def docstring(node: ast.AST) -> ast.Constant | None:
    """The string of a statement that is a bare string: a docstring, or an attribute's docstring
    below its assignment. Such a statement does nothing when run; its text is read only as prose
    (evolve/docs/reference.py collapses its whitespace), so reflowing it changes no behaviour."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return node.value if isinstance(node.value.value, str) else None
    return None


def docstring_lines(tree: ast.Module) -> dict[int, int]:
    """The 1-based line numbers of the docstrings, quotes included, each with its docstring's
    indentation, the column of its quotes (a line indented deeper is a block: code, a quote)."""
    found_lines: dict[int, int] = {}
    for node in ast.walk(tree):
        if (found := docstring(node)) is not None:
            assert found.end_lineno is not None
            found_lines.update(dict.fromkeys(range(found.lineno, found.end_lineno + 1), found.col_offset))
    return found_lines


def hand_laid_lines(tree: ast.Module, lines: list[str]) -> set[int]:
    """The 1-based lines whose code the author laid out by hand (`# fmt: off` to `# fmt: on`, and
    each statement ending in `# fmt: skip`): ruff leaves them as they are, and so do string splits."""
    found: set[int] = set()
    off = False
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped in ("# fmt: off", "# fmt: on"):
            off = stripped == "# fmt: off"
        if off:
            found.add(number)
    statements = (node for node in ast.walk(tree) if isinstance(node, ast.stmt))
    for statement in statements:
        end = statement.end_lineno or statement.lineno
        if "# fmt: skip" in lines[end - 1]:
            found.update(range(statement.lineno, end + 1))
    return found


def normalised_dump(source: str) -> str:
    """ast.dump with each docstring's whitespace collapsed: reflowing a docstring changes nothing
    else, so any other difference is a change of behaviour."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if (found := docstring(node)) is not None:
            found.value = " ".join(str(found.value).split())
    return ast.dump(tree)


def fix_comment_lines(
    lines: list[str], limit: int, number: int, start_col: int
) -> tuple[list[str], int] | None:
    """Replacement for the paragraph of `#` lines starting at the long lines[number], and how many
    lines it replaces; None for a pragma or a line that is not prose."""
    line = lines[number]
    prefix = line[:start_col] + "# "
    if PRAGMA.match(line[start_col:]):
        return None
    texts: list[str] = []
    index = number
    while index < len(lines):
        candidate = lines[index]
        if not candidate.startswith(prefix[:-1]) or candidate[:start_col].strip():
            break
        rest = candidate[start_col + 1 :].rstrip("\n")
        if rest and not rest.startswith(" ") or PRAGMA.match(candidate[start_col:]):
            break
        texts.append(rest[1:] if rest else "")
        index += 1
    end = paragraph_end(texts, 0)
    if not is_prose(texts[0]):
        return None
    lead = " " * (len(texts[0]) - len(texts[0].lstrip()))
    wrapped = reflow([t.strip() for t in texts[:end]], limit - len(prefix) - len(lead))
    return [f"{prefix}{lead}{text}".rstrip() + "\n" for text in wrapped], end


def fix_trailing_comment(line: str, limit: int, col: int) -> list[str] | None:
    """A long trailing comment moved to its own lines above the code line, at its indentation."""
    comment = line[col:].rstrip("\n")
    if PRAGMA.match(comment):
        return None
    code = line[:col].rstrip()
    indent = code[: len(code) - len(code.lstrip())]
    prefix = indent + "# "
    text = comment.lstrip("#").strip()
    wrapped = textwrap.wrap(text, width=limit - len(prefix), break_long_words=False, break_on_hyphens=False)
    return [prefix + w + "\n" for w in wrapped] + [code + "\n"]


def fix_docstring_line(
    lines: list[str], limit: int, number: int, inside: dict[int, int]
) -> tuple[list[str], int] | None:
    """Replacement for the paragraph of a docstring that starts at lines[number] (0-based), and
    how many lines it replaces. The quotes stay glued to the first or last word."""
    line = lines[number].rstrip("\n")
    body = line.lstrip()
    indent = line[: len(line) - len(body)]
    opening = number + 1 - 1 not in inside
    if len(indent) > inside[number + 1] and not opening:
        return None
    text = body
    if opening:
        match = re.match(r"(?i)[rbu]*(\"\"\"|\'\'\')", body)
        if not match:
            return None
        text = body[len(match.group(0)) :]
    if not is_prose(text) or text.lstrip().startswith(('"""', "'''")):
        return None
    # The paragraph runs down while lines stay prose inside the same docstring, at the same indent
    # (or a list item's hanging indent), up to the line with the closing quotes.
    texts = [line[len(indent) :]]
    index = number + 1
    while index < len(lines) and index + 1 in inside:
        skip = len(body) - len(text) if opening and len(texts) == 1 else 0
        if '"""' in texts[-1][skip:] or "'''" in texts[-1][skip:]:
            break
        following = lines[index].rstrip("\n")
        texts.append(following[len(indent) :] if following.startswith(indent) else "\0")
        index += 1
    if opening:
        # The first line's quotes are not part of its text: measure the paragraph without them.
        quotes = len(body) - len(text)
        texts[0] = " " * quotes + texts[0][quotes:]
        end = paragraph_end([texts[0][quotes:], *texts[1:]], 0) if len(texts) > 1 else 1
        texts[0] = body
    else:
        end = paragraph_end(texts, 0)
    if any("\0" in t for t in texts[:end]):
        end = next(i for i, t in enumerate(texts) if "\0" in t)
    # A line that starts with the closing quotes ends the paragraph before it.
    end = next((i for i in range(1, end) if texts[i].strip().startswith(('"""', "'''"))), end)
    if end == 0:
        return None
    wrapped = reflow(texts[:end], limit - len(indent))
    return [indent + w + "\n" for w in wrapped], end


def split_string(text: str, limit: int, col: int) -> list[str] | None:
    """A single-line string literal `text` starting at column `col` split at spaces into pieces that
    each fit, or None when it cannot be split safely."""
    match = re.match(r"(?i)([rbuf]*)('|\")", text)
    if not match or text.startswith(('"""', "'''"), len(match.group(1))):
        return None
    prefix, quote = match.group(1), match.group(2)
    body = text[len(prefix) + 1 : -1]
    fstring = "f" in prefix.lower()
    room = limit - col - len(prefix) - 2 - 1  # quotes, and a comma or closing bracket after
    pieces: list[str] = []
    start = 0
    depth = 0
    last_space = -1
    for index, char in enumerate(body):
        if fstring and char in "{}":
            # `{{`/`}}` are literal braces, outside any field, and counted as such by depth 0.
            depth += 1 if char == "{" else -1
            depth = max(depth, 0)
        if char == " " and depth == 0 and (index == 0 or body[index - 1] != "\\"):
            last_space = index
        if index - start + 1 > room and last_space > start:
            pieces.append(body[start : last_space + 1])
            start = last_space + 1
            last_space = -1
    pieces.append(body[start:])
    if len(pieces) < 2 or any(not p for p in pieces):
        return None
    if fstring:
        # A piece with no field is an ordinary string; keeping the f is harmless but ruff flags it.
        return [
            (prefix if "{" in p or "}" in p else prefix.replace("f", "").replace("F", "")) + quote + p + quote
            for p in pieces
        ]
    return [prefix + quote + p + quote for p in pieces]


def fix_source(source: str, limit: int, strings: bool) -> tuple[str, int]:
    """The source with its long comments, docstrings and (if `strings`) string literals fixed, and
    how many long lines were fixed."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    inside = docstring_lines(tree)
    by_hand = hand_laid_lines(tree, lines)
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    comments: dict[int, int] = {}
    # Per line, its one-line strings and whether their pieces can continue at the string's column:
    # directly in a call's parentheses, or already one part of an implicit concatenation. Anywhere
    # else (a collection, a statement) parentheses keep the concatenation one visible item.
    strings_on: dict[int, list[tuple[tokenize.TokenInfo, bool]]] = {}
    calls: list[bool] = []
    significant = [t for t in tokens if t.type not in (tokenize.NL, tokenize.COMMENT)]
    for position, token in enumerate(significant):
        previous = significant[position - 1] if position else None
        following = significant[position + 1] if position + 1 < len(significant) else None
        if token.type == tokenize.OP and token.string in "([{":
            called = previous is not None and (
                previous.type == tokenize.NAME
                and not keyword.iskeyword(previous.string)
                or previous.string in ")]"
            )
            calls.append(token.string == "(" and called)
        elif token.type == tokenize.OP and token.string in ")]}":
            calls.pop()
        elif token.type == tokenize.STRING and token.start[0] == token.end[0]:
            adjacent = tokenize.STRING in (getattr(previous, "type", None), getattr(following, "type", None))
            bare = (bool(calls) and calls[-1]) or (bool(calls) and adjacent)
            strings_on.setdefault(token.start[0], []).append((token, bare))
    for token in tokens:
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.start[1]
    out: list[str] = []
    fixed = 0
    number = 0
    while number < len(lines):
        line = lines[number]
        lineno = number + 1
        if width(line) <= limit:
            out.append(line)
            number += 1
            continue
        col = comments.get(lineno)
        if col is not None and not line[:col].strip():
            result = fix_comment_lines(lines, limit, number, col)
            if result:
                replacement, count = result
                out.extend(replacement)
                number += count
                fixed += 1
                continue
        elif col is not None and width(line[:col].rstrip()) <= limit:
            moved = fix_trailing_comment(line, limit, col)
            if moved:
                out.extend(moved)
                number += 1
                fixed += 1
                continue
        if lineno in inside:
            result = fix_docstring_line(lines, limit, number, inside)
            if result:
                replacement, count = result
                out.extend(replacement)
                number += count
                fixed += 1
                continue
        if strings and lineno in strings_on and lineno not in by_hand:
            # The longest string on the line is split: in a call's arguments the pieces continue at
            # its column; elsewhere parentheses around them keep the concatenation one visible item.
            token, in_call = max(strings_on[lineno], key=lambda pair: len(pair[0].string))
            pieces = split_string(token.string, limit, token.start[1] + (0 if in_call else 1))
            if pieces:
                col = token.start[1]
                if in_call:
                    joined = ("\n" + " " * col).join(pieces)
                else:
                    joined = "(" + ("\n" + " " * (col + 1)).join(pieces) + ")"
                out.append(line[:col] + joined + line[token.end[1] :])
                number += 1
                fixed += 1
                continue
        out.append(line)
        number += 1
    return "".join(out), fixed


def process(path: Path, limit: int, strings: bool, check: bool) -> Outcome:
    source = path.read_text()
    try:
        new, fixed = fix_source(source, limit, strings)
    except (SyntaxError, tokenize.TokenError) as error:
        return Outcome(path, 0, [], refused=f"cannot parse: {error}")
    if new != source:
        try:
            same = normalised_dump(new) == normalised_dump(source)
        except SyntaxError as error:
            return Outcome(path, 0, [], refused=f"the fixed text does not parse: {error}")
        if not same:
            return Outcome(path, 0, _long(source, limit), refused="the fixes would change its AST")
        if not check:
            path.write_text(new)
    return Outcome(path, fixed, _long(new, limit))


def _long(source: str, limit: int) -> list[tuple[int, str]]:
    return [(n, line) for n, line in enumerate(source.splitlines(), 1) if len(line) > limit]


def python_files(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        found.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--line-length", type=int, help="default: [tool.ruff] line-length")
    parser.add_argument("--check", action="store_true", help="report only; write nothing")
    parser.add_argument(
        "--no-strings",
        action="append",
        default=[],
        metavar="GLOB",
        help="paths whose string literals are never split (their text is sent to a model)",
    )
    parser.add_argument("--exclude", action="append", default=[], metavar="GLOB", help="paths never touched")
    args = parser.parse_args(argv)
    limit = args.line_length or line_limit(Path.cwd())
    fixed = refused = remaining = 0
    for path in python_files(args.paths):
        name = path.as_posix()
        if any(fnmatch.fnmatch(name, pattern) for pattern in args.exclude):
            continue
        strings = not any(fnmatch.fnmatch(name, pattern) for pattern in args.no_strings)
        outcome = process(path, limit, strings, args.check)
        fixed += outcome.fixed
        if outcome.refused:
            refused += 1
            print(f"{name}: refused: {outcome.refused}")
        for number, line in outcome.remaining:
            remaining += 1
            print(f"{name}:{number}: {len(line)} > {limit}: {line.strip()[:80]}")
    print(
        f"fixed {fixed} long lines; {remaining} remain for hand fixing; {refused} files refused",
        file=sys.stderr,
    )
    return 1 if remaining or refused else 0


if __name__ == "__main__":
    sys.exit(main())
