"""How the test files of the runners that compile their tests read (Polyglot's C++ Catch2, Go, Rust
libtest, Java JUnit, JavaScript jest), for the canaries planted in them (grader_canaries_text.py): comments
and strings masked, the tests each runner finds with their bodies and names, the statements at the top of
a body, calls and top-level splits. Standard library only: it runs in the grading sandbox as root beside
grader_script.py.
"""

import os
import re

SUFFIXES = {
    "catch2": (".cpp", ".cc", ".cxx"),
    "gotest": ("_test.go",),
    "libtest": (".rs",),
    "junit": (".java",),
    "jest": (".spec.js", ".test.js"),
}
"""The hidden files each runner reads tests from (Rust: only those under `tests/`)."""
SOURCES = {
    "catch2": (".cpp", ".cc", ".cxx", ".h", ".hpp"),
    "gotest": (".go",),
    "libtest": (".rs",),
    "junit": (".java",),
    "jest": (".js",),
}
"""Files whose names a canary's must not collide with (a Go package shares one namespace)."""
QUOTES = {"catch2": '"', "gotest": '"`', "libtest": '"', "junit": '"', "jest": "\"'`"}
UNSAFE = {
    "catch2": re.compile(r'\bR"'),
    "libtest": re.compile(r'\b(?:r#*|br#*)"'),
    "junit": re.compile('"""'),
    "gotest": re.compile(r"(?!)"),
    "jest": re.compile(r"\$\{[^}]*`"),
}
"""Source the masking below cannot read safely (raw strings, text blocks, nested templates): no canary."""
EXITS = {
    "catch2": r"\b(return|SKIP|WARN)\b",
    "gotest": r"\b(return|break|continue|goto|Skip\w*|Parallel)\b",
    "libtest": r"\b(return|panic::catch_unwind)\b|\?",
    "junit": r"\b(return|assume\w*|Assumptions)\b",
    "jest": r"\b(return|await|done|async)\b",
}


def mask(text, quotes):
    """`text` with the insides of comments, strings and character literals blanked (same length, newlines
    kept), so that braces, parentheses and keywords are found only in code."""
    out, i, n = list(text), 0, len(text)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            blank(i, end)
            i = end
        elif text[i] in quotes or (text[i] == "'" and re.match(r"'(\\.|[^\\'\n])'", text[i : i + 4])):
            j = i + 1
            while j < n and text[j] != text[i] and (text[i] == "`" or text[j] != "\n"):
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, min(j, n))
            i = j + 1
        else:
            i += 1
    return "".join(out)


def closing(masked, at):
    """Index just past the bracket that closes the one at `at` (len(masked) when none does)."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = []
    for k in range(at, len(masked)):
        c = masked[k]
        if c in pairs:
            stack.append(pairs[c])
        elif c in ")]}":
            if not stack or stack.pop() != c:
                return len(masked)
            if not stack:
                return k + 1
    return len(masked)


def statements(masked, a, b, lines=False):
    """(start, end) of each statement at the top of the block masked[a:b] (its braces excluded), split at
    `;`, or with `lines` (Go: a `;` there is in a header) at line ends; nested blocks are inside their
    statement."""
    ends = "\n" if lines else ";"
    spans, start, k = [], a, a
    while k < b:
        c = masked[k]
        if c in "([{":
            k = closing(masked, k)
            continue
        if c in ends:
            if masked[start:k].strip():
                spans.append((start, k))
            start = k + 1
        k += 1
    if masked[start:b].strip():
        spans.append((start, b))
    return [(s + len(masked[s:e]) - len(masked[s:e].lstrip()), e) for s, e in spans]


def _test(text, masked, m, name_at, body_open, tail=""):
    """A test found by regex `m`: its span (from the line start to the end of its body or call), body
    (inside the braces), name and the name's span."""
    body_end = closing(masked, body_open)
    end = body_end
    if tail:
        after = re.compile(tail).match(masked, body_end)
        if after is None:
            return None
        end = after.end()
    name_start, name_end = name_at
    return {
        "span": (masked.rfind("\n", 0, m.start()) + 1, end),
        "body": (body_open + 1, body_end - 1),
        "name": text[name_start:name_end],
        "name_span": name_at,
    }


_CATCH = re.compile(r'^[ \t]*TEST_CASE\s*\(\s*"', re.MULTILINE)
_GO = re.compile(r"^func\s+(Test\w*)\s*\(\s*(\w+)\s+\*testing\.T\s*\)\s*\{", re.MULTILINE)
_RUST = re.compile(r"^[ \t]*#\[test\]\s*((?:#\[[^\]]*\]\s*)*)fn\s+(\w+)\s*\(\s*\)\s*\{", re.MULTILINE)
_JAVA = re.compile(
    r"^[ \t]*@Test\b\s*((?:@\w+(?:\s*\([^)]*\))?\s*)*)(?:public\s+)?void\s+(\w+)\s*\(\s*\)\s*"
    r"(?:throws\s+[\w.,\s]+)?\{",
    re.MULTILINE,
)
_JEST = re.compile(r"(?<![\w.$])(?:test|it)\s*\(\s*(['\"])")


def _catch_tests(text, masked):
    for m in _CATCH.finditer(masked):
        close = masked.find('"', m.end())
        args_end = closing(masked, masked.find("(", m.start()))
        tags = text[close + 1 : args_end]
        brace = re.compile(r"\s*\{").match(masked, args_end)
        if brace and not re.search(r"\[(\.|!hide|!mayfail|!shouldfail|!nonportable)", tags):
            yield _test(text, masked, m, (m.end(), close), brace.end() - 1)


def _go_tests(text, masked):
    for m in _GO.finditer(masked):
        if found := _test(text, masked, m, m.span(1), m.end() - 1):
            yield dict(found, t=m.group(2))


def _rust_tests(text, masked):
    for m in _RUST.finditer(masked):
        if "should_panic" not in m.group(1) and (found := _test(text, masked, m, m.span(2), m.end() - 1)):
            yield found


def _java_tests(text, masked):
    package = re.search(r"^\s*package\s+([\w.]+)\s*;", masked, re.MULTILINE)
    for m in _JAVA.finditer(masked):
        start = m.start()
        while above := re.search(r"^[ \t]*@\w+(?:\([^)\n]*\))?[ \t]*\n\Z", masked[:start], re.MULTILINE):
            start = above.start()  # the annotations above @Test (@DisplayName, @Tag) go with the copy
        found = _test(text, masked, m, m.span(2), m.end() - 1)
        if found:
            yield dict(
                found, span=(start, found["span"][1]), package=package.group(1) + "." if package else ""
            )


def _jest_tests(text, masked):
    for m in _JEST.finditer(masked):
        close = masked.find(m.group(1), m.end())
        arrow = re.compile(r"\s*,\s*(?:\(\s*\)\s*=>|function\s*\(\s*\))\s*\{").match(masked, close + 1)
        found = _test(text, masked, m, (m.end(), close), arrow.end() - 1, r"\s*\)\s*;?") if arrow else None
        if found and "\n" not in masked[m.end() : close]:
            yield found


TESTS = {
    "catch2": _catch_tests,
    "gotest": _go_tests,
    "libtest": _rust_tests,
    "junit": _java_tests,
    "jest": _jest_tests,
}


def tests_in(protocol, rel, text):
    """[(id, test)] of every test the runner of `protocol` would find in file `rel` (text), in file order."""
    masked = mask(text, QUOTES[protocol])
    return [(test_id(protocol, rel, t["name"], t), t) for t in TESTS[protocol](text, masked)]


def test_id(protocol, rel, name, test):
    """The id the runner's report gives the test (evolve.tasks.expected_names's)."""
    if protocol == "jest":
        return f"{rel}::{name}"
    if protocol == "junit":
        return f"{test['package']}{os.path.splitext(os.path.basename(rel))[0]}#{name}"
    return name


def split(masked, a, b, sep):
    """Top-level parts of masked[a:b] split at `sep` (a comma or `==`), as spans."""
    parts, start, k = [], a, a
    while k < b:
        if masked[k] in "([{":
            k = closing(masked, k)
            continue
        if masked.startswith(sep, k) and (
            sep != "==" or masked[k + 2 : k + 3] != "=" and masked[k - 1] not in "=!<>"
        ):
            parts.append((start, k))
            start = k + len(sep)
            k += len(sep)
            continue
        k += 1
    parts.append((start, b))
    return parts


def call(masked, start, end, name_re):
    """(name match, args open index, args close index) when statement masked[start:end] is one call of
    `name_re` and nothing after it."""
    m = re.compile(name_re + r"\s*\(").match(masked, start)
    if not m:
        return None
    close = closing(masked, m.end() - 1)
    rest = masked[close:end].strip()
    return (m, m.end() - 1, close - 1) if rest in ("", ";") else None


def top_calls(masked, test, name_re):
    """(name match, args open index, args close index) of each statement at the top of the test's body
    that is one call of `name_re`."""
    for s, e in statements(masked, *test["body"]):
        if found := call(masked, s, e, name_re):
            yield found


def block_open(masked, s, e):
    """The `{` that opens the block of the `if`/`for` statement masked[s:e]: the first one outside
    parentheses (Go requires a composite literal there to be parenthesised; a header that builds a slice,
    map or struct literal of its own is not read)."""
    k = s
    while k < e:
        if masked[k] in "([":
            k = closing(masked, k)
        elif masked[k] == "{":
            return None if re.search(r"\b(struct|map|interface)\b|\]\s*\w*\s*$", masked[s:k]) else k
        else:
            k += 1
    return None
