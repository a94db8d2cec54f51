"""The names of the tests hidden test files define, read from their source on the host before any of the
agent's code runs, in the ids evolve.tasks.grader_reports gives reported tests. A test defined in a
way these readers do not see (a generated name, a table) is not expected by name; its failure still
fails the run, since the grader fails any reported failure."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import PurePosixPath

_STRING = r'"((?:\\.|[^"\\\n])*)"'
_CATCH = re.compile(
    r"\b(TEST_CASE|SCENARIO|TEST_CASE_METHOD\s*\(\s*[\w:<>]+\s*,)\s*\(?\s*"
    + _STRING
    + r"(?:\s*,\s*"
    + _STRING
    + r")?"
)
_CPP_IF = re.compile(r"#\s*(ifdef|ifndef|if)\s+(?:(\w+)\s*$|defined\s*\(?\s*(\w+)\s*\)?\s*$)")
_GO = re.compile(r"^func\s+(Test(?![a-z])\w*)\s*\(\s*\w+\s+\*testing\.T\s*\)", re.MULTILINE)
_RUST = re.compile(r"#\[test\]\s*(?:#\[[^\]]*\]\s*)*(?:pub\s+)?(?:async\s+)?fn\s+(\w+)")
_FEATURE_GATE = re.compile(r"#\[cfg\(\s*feature\s*=\s*\"[^\"]*\"\s*\)\]")
_JAVA_TEST = re.compile(
    r"@(?:Test|ParameterizedTest)\b(?:\([^)]*\))?\s*(?:@\w+(?:\([^)]*\))?\s*)*"
    r"(?:(?:public|protected|private|static|final)\s+)*void\s+(\w+)\s*\("
)
_JAVA_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.MULTILINE)
_JEST = re.compile(
    r"(?<![\w.$])(?:test|it)\s*\(\s*(?:'((?:\\.|[^'\\\n])*)'|\"((?:\\.|[^\"\\\n])*)\"|`([^`$\\]*)`)"
)


def strip_comments(source: str, quotes: str = '"') -> str:
    """`source` without // and /* */ comments (string literals kept whole, so a `//` in one stays):
    a commented-out test is not a test. `quotes` open strings; a ' outside them opens only a character
    literal ('x', '\\n'), so Rust lifetimes and C++ digit separators pass through."""
    out, i, n = [], 0, len(source)
    while i < n:
        c = source[i]
        if source.startswith("//", i):
            i = source.find("\n", i)
            i = n if i < 0 else i
        elif source.startswith("/*", i):
            end = source.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
        elif c in quotes or (c == "'" and re.match(r"'(\\.|[^\\'])'", source[i : i + 4])):
            j = i + 1
            while j < n and source[j] != c:
                j += 2 if source[j] == "\\" else 1
            out.append(source[i : j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def compiled_cpp(code: str, defined: frozenset[str] = frozenset({"EXERCISM_RUN_ALL_TESTS"})) -> str:
    """The lines of C++ `code` the build compiles, as far as `#ifdef X` / `#if defined(X)` / `#ifndef X`
    on `defined` macros tell (other conditions count as true): `#if defined(EXERCISM_INCLUDE_BENCHMARK)`
    tests are not built."""
    kept, stack = [], []  # stack: is each open block active
    for line in code.splitlines():
        directive = line.strip()
        if match := _CPP_IF.match(directive):
            neg, name = match.group(1) == "ifndef", match.group(2) or match.group(3)
            stack.append((name in defined) != neg)
        elif directive.startswith("#if"):
            stack.append(True)
        elif directive.startswith("#else") and stack:
            stack[-1] = not stack[-1]
        elif directive.startswith("#endif") and stack:
            stack.pop()
        elif all(stack):
            kept.append(line)
    return "\n".join(kept)


def catch2_names(rel: str, source: str) -> list[str]:
    names = []
    for macro, name, tags in _CATCH.findall(compiled_cpp(strip_comments(source))):
        if tags and ("[." in tags or "[!hide]" in tags):
            continue  # a hidden test case: Catch2 runs it only when asked by name
        names.append(("Scenario: " if macro == "SCENARIO" else "") + _unescape(name))
    return names


def go_names(rel: str, source: str) -> list[str]:
    return _GO.findall(strip_comments(source, '"`'))


def rust_names(rel: str, source: str) -> list[str]:
    return _RUST.findall(drop_feature_gated(strip_comments(source)))


def drop_feature_gated(code: str) -> str:
    """Rust source without the items behind `#[cfg(feature = ...)]` (a test fn, a `mod` of tests): the
    benchmark builds no features, so those tests do not exist."""
    while match := _FEATURE_GATE.search(code):
        body = code.find("{", match.end())
        end, depth = body, 0
        while 0 <= end < len(code):
            depth += {"{": 1, "}": -1}.get(code[end], 0)
            if depth == 0:
                break
            end += 1
        code = code[: match.start()] + code[end + 1 :] if body >= 0 else code[: match.start()]
    return code


def java_names(rel: str, source: str) -> list[str]:
    """`package.Class#method`: the file's top-level class (nested classes report as `Class$Inner`, matched
    by their outer class), so a class of the same name in another package never stands in for it."""
    code = strip_comments(source)
    package = _JAVA_PACKAGE.search(code)
    cls = (package.group(1) + "." if package else "") + PurePosixPath(rel).stem
    return [f"{cls}#{method}" for method in _JAVA_TEST.findall(code)]


def jest_names(rel: str, source: str) -> list[str]:
    return [f"{rel}::{_unescape(a or b or c)}" for a, b, c in _JEST.findall(strip_comments(source, "\"'`"))]


READERS: Mapping[str, tuple[tuple[str, ...], Callable[[str, str], list[str]]]] = {
    "catch2": ((".cpp", ".cc", ".cxx"), catch2_names),
    "gotest": (("_test.go",), go_names),
    "libtest": ((".rs",), rust_names),
    "junit": ((".java",), java_names),
    "jest": ((".spec.js", ".test.js"), jest_names),
}


def expected_names(protocol: str, hidden: Mapping[str, bytes]) -> list[str]:
    """Every test the hidden files of a `protocol` suite define, in file order (Rust: only `tests/`)."""
    suffixes, read = READERS[protocol]
    names: list[str] = []
    for rel, content in sorted(hidden.items()):
        if not rel.endswith(suffixes) or (protocol == "libtest" and not rel.startswith("tests/")):
            continue
        names += [n for n in read(rel, content.decode(errors="replace")) if n not in names]
    return names
