"""Canary tests for the runners that compile their tests (Polyglot's C++ Catch2, Go, Rust libtest, Java
JUnit, JavaScript jest): the rule of grader_canaries.py, planted in source text (standard library only:
it runs in the grading sandbox as root beside grader_script.py, before the build).

A canary is a copy of a real hidden test, planted next to it (before or after, by chance) under a name
made of the words of the file's test names, with one assertion changed so that it fails whenever the
real test passes:
- an equality with a literal on one side (`REQUIRE(A == 5)`, `assert_eq!(A, "x")`,
  `assertThat(A).isEqualTo(true)`, `expect(A).toBe('x')`) gets another literal of the same kind;
- any other assertion its opposite (`REQUIRE` <-> `REQUIRE_FALSE`, `assert_eq!` <-> `assert_ne!`,
  `assert!(X)` -> `assert!(!(X))`, `isTrue` <-> `isFalse`, `expect(..).not` toggled, a Go failure guard
  `if C { t.Fatal... }` -> `if !(C) {...}`).
Only what runs whenever the test passes is changed: a statement at the top of the test's body (Go: a
guard whose every enclosing block is the body, a loop or a `t.Run` closure), in a test with no early
exit (`return`, a skip, Go's `break`/`continue`) and none of the runner's markers that change what a
failure means (`[!mayfail]`, `#[should_panic]`, async tests). Only tests the grader expects by name are
copied, so a test the build leaves out (a feature gate, an `#if`) never gets a canary that cannot run.
The choices come from the job's secret seed, as for Python. `judge` applies grader_canaries.verdict to
the runner's report.
"""

import os
import re

if __package__:  # imported on the host; in the sandbox they sit beside this module
    from evolve.tasks import grader_canaries as canaries
    from evolve.tasks import grader_reports as reports
else:
    import grader_canaries as canaries  # type: ignore[import-not-found,no-redef]
    import grader_reports as reports  # type: ignore[import-not-found,no-redef]

PER_FILE = 2
SUFFIXES = {
    "catch2": (".cpp", ".cc", ".cxx"),
    "gotest": ("_test.go",),
    "libtest": (".rs",),
    "junit": (".java",),
    "jest": (".spec.js", ".test.js"),
}
"""The hidden files each runner reads tests from (Rust: only those under `tests/`)."""
_SOURCES = {
    "catch2": (".cpp", ".cc", ".cxx", ".h", ".hpp"),
    "gotest": (".go",),
    "libtest": (".rs",),
    "junit": (".java",),
    "jest": (".js",),
}
"""Files whose names a canary's must not collide with (a Go package shares one namespace)."""
_QUOTES = {"catch2": '"', "gotest": '"`', "libtest": '"', "junit": '"', "jest": "\"'`"}
_UNSAFE = {
    "catch2": re.compile(r'\bR"'),
    "libtest": re.compile(r'\b(?:r#*|br#*)"'),
    "junit": re.compile('"""'),
    "gotest": re.compile(r"(?!)"),
    "jest": re.compile(r"\$\{[^}]*`"),
}
"""Source the masking below cannot read safely (raw strings, text blocks, nested templates): no canary."""
FALLBACK_WORDS = ("case", "basic", "other", "more", "values", "input", "result", "simple", "edge", "again")
_EXITS = {
    "catch2": r"\b(return|SKIP|WARN)\b",
    "gotest": r"\b(return|break|continue|goto|Skip\w*|Parallel)\b",
    "libtest": r"\b(return|panic::catch_unwind)\b|\?",
    "junit": r"\b(return|assume\w*|Assumptions)\b",
    "jest": r"\b(return|await|done|async)\b",
}


def plant_file(protocol, source, rel, rng, expected, taken, count=PER_FILE):
    """(`source` with up to `count` canaries, {canary id: id of the real test it copies}); `expected`: the
    ids the grader expects (only those are copied); `taken`: words already used as names nearby."""
    text = source.decode("utf-8")
    if _UNSAFE[protocol].search(text):
        return source, {}
    ids: dict[str, str] = {}
    for _ in range(count):
        masked = mask(text, _QUOTES[protocol])
        tests = [
            t
            for t in TESTS[protocol](text, masked)
            if _id(protocol, rel, t["name"], t) in expected
            and not re.search(_EXITS[protocol], masked[t["body"][0] : t["body"][1]])
            and _id(protocol, rel, t["name"], t) not in ids.values()
        ]
        changes = [(t, change) for t in tests for change in FLIPS[protocol](text, masked, t, rng)]
        if not changes:
            break
        test, (start, end, new) = rng.choice(changes)
        name = _name(rng, protocol, test["name"], [t["name"] for t in TESTS[protocol](text, masked)], taken)
        a, b = test["span"]
        copy = text[a:start] + new + text[end:b]
        n0, n1 = test["name_span"]
        copy = copy[: n0 - a] + name + copy[n1 - a :]
        text = (
            text[:b] + "\n\n" + copy + text[b:] if rng.random() < 0.5 else text[:a] + copy + "\n\n" + text[a:]
        )
        taken.add(name)
        ids[_id(protocol, rel, name, test)] = _id(protocol, rel, test["name"], test)
    return text.encode("utf-8"), ids


def judge(job, records, planted):
    """(outcome, detail) of a runner's report with canaries `planted`: grader_canaries' rule, then
    grader_reports.judge on the real tests' records."""
    protocol = job["results"]

    def same(reported, test):  # a Go canary's subtests are its own
        return reports.matches(protocol, reported, test) or (
            protocol == "gotest" and reported.startswith(test + "/")
        )

    forged, unreported = canaries.verdict(records, planted, same)
    if forged:
        return "forged", forged
    real = [r for r in records if not canaries.is_canary(str(r.get("test")), planted, same)]
    if protocol == "gotest" and len(unreported) < len(planted):  # a failed canary fails its package too
        real = [r for r in real if not str(r.get("test")).startswith("package ")]
    outcome, detail = reports.judge(job, real)
    if outcome == "pass" and unreported:
        return "forged", canaries.not_reported(unreported)
    return outcome, detail


def plant_tree(protocol, work, tests_dir, rng, expected):
    """Canaries in every hidden test file of `protocol` (under `tests_dir`, laid over the repo at `work`)."""
    taken = _words(protocol, work)
    planted: dict[str, str] = {}
    for top, _, files in os.walk(tests_dir):
        for file in sorted(files):
            rel = os.path.relpath(os.path.join(top, file), tests_dir).replace(os.sep, "/")
            path = os.path.join(work, rel)
            if (
                not rel.endswith(SUFFIXES[protocol])
                or (protocol == "libtest" and not rel.startswith("tests/"))
                or os.path.islink(path)
                or not os.path.isfile(path)
            ):
                continue
            with open(path, "rb") as handle:
                source = handle.read()
            try:
                changed, ids = plant_file(protocol, source, rel, rng, expected, taken)
            except UnicodeDecodeError:
                continue  # a test file that is not UTF-8: the runner reads it as it is, without canaries
            with open(path, "wb") as handle:
                handle.write(changed)
            planted |= ids
    return planted


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


def _id(protocol, rel, name, test):
    """The id the runner's report gives the test (evolve.tasks.expected_names's)."""
    if protocol == "jest":
        return f"{rel}::{name}"
    if protocol == "junit":
        return f"{test['package']}{os.path.splitext(os.path.basename(rel))[0]}#{name}"
    return name


def other_literal(literal, rng):
    """Another literal of `literal`'s kind (a number, string, character or boolean), or None."""
    if literal in ("true", "false"):
        return "false" if literal == "true" else "true"
    if re.fullmatch(r"\d+", literal):
        n = int(literal)
        down = n > 0 and (n + 9 >= 127 or rng.random() < 0.5)  # stays within the narrowest type it fits
        return str(n - rng.randint(1, min(n, 9)) if down else n + rng.randint(1, 9))
    if re.fullmatch(r"\d+\.\d+", literal):
        whole, _, frac = literal.partition(".")
        return f"{int(whole) + rng.randint(1, 9)}.{frac}"
    if re.fullmatch(r"""(["'])(\\.|(?!\1)[^\\\n])*\1""", literal):
        quote, inner = literal[0], literal[1:-1]
        # a character literal, or a one-letter string
        if quote == "'" and len(inner) == 1 and inner.isalnum():
            return f"'{rng.choice([c for c in 'abcdefghijklmnopqrstuvwxyz' if c != inner])}'"
        letter = rng.choice("abcdefghijklmnopqrstuvwxyz")
        if inner and inner[-1].isalnum() and not inner.endswith("\\" + inner[-1]) and inner[-1] != letter:
            return quote + inner[:-1] + letter + quote
        return quote + inner + letter + quote
    return None


def _split(masked, a, b, sep):
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


def _literal_change(text, spans, rng):
    """A change of the one literal among `spans` (with the other not a literal), as (start, end, new)."""
    values = [
        (s + len(text[s:e]) - len(text[s:e].lstrip()), e - (len(text[s:e]) - len(text[s:e].rstrip())))
        for s, e in spans
    ]
    found = [(s, e, other_literal(text[s:e], rng)) for s, e in values]
    literal = [f for f in found if f[2] is not None]
    return literal[0] if len(literal) == 1 else None


def _call(masked, start, end, name_re):
    """(name match, args open index, args close index) when statement masked[start:end] is one call of
    `name_re` and nothing after it."""
    m = re.compile(name_re + r"\s*\(").match(masked, start)
    if not m:
        return None
    close = closing(masked, m.end() - 1)
    rest = masked[close:end].strip()
    return (m, m.end() - 1, close - 1) if rest in ("", ";") else None


def _top_calls(masked, test, name_re):
    """(name match, args open index, args close index) of each statement at the top of the test's body
    that is one call of `name_re`."""
    for s, e in statements(masked, *test["body"]):
        if call := _call(masked, s, e, name_re):
            yield call


def _catch_flips(text, masked, test, rng):
    for m, a, b in _top_calls(masked, test, r"(REQUIRE|CHECK)(_FALSE)?"):
        sides = _split(masked, a + 1, b, "==")
        change = _literal_change(text, sides, rng) if len(sides) == 2 and not m.group(2) else None
        yield change or (m.start(1), m.end(m.lastindex), m.group(1) + ("" if m.group(2) else "_FALSE"))


def _rust_flips(text, masked, test, rng):
    for m, a, b in _top_calls(masked, test, r"(assert_eq|assert_ne|assert)!"):
        args = _split(masked, a + 1, b, ",")
        if m.group(1) == "assert":
            yield args[0][0], args[0][1], f"!({text[args[0][0] : args[0][1]].strip()})"
            continue
        change = (
            _literal_change(text, args[:2], rng) if m.group(1) == "assert_eq" and len(args) >= 2 else None
        )
        yield change or (m.start(1), m.end(1), ("assert_ne" if m.group(1) == "assert_eq" else "assert_eq"))


_JAVA_OPPOSITE = {
    "isEqualTo": "isNotEqualTo",
    "isNotEqualTo": "isEqualTo",
    "isTrue": "isFalse",
    "isFalse": "isTrue",
    "isEmpty": "isNotEmpty",
    "isNotEmpty": "isEmpty",
    "isNull": "isNotNull",
    "isNotNull": "isNull",
}


def _java_flips(text, masked, test, rng):
    """`assertThat(A).M(...)` with one matcher M that has an opposite (AssertJ, as the Java track uses)."""
    for s, e in statements(masked, *test["body"]):
        m = re.compile(r"assertThat\s*\(").match(masked, s)
        last = re.compile(r"\s*\.\s*(\w+)\s*\(").match(masked, closing(masked, m.end() - 1)) if m else None
        if (
            not last
            or last.group(1) not in _JAVA_OPPOSITE
            or masked[closing(masked, last.end() - 1) : e].strip()
        ):
            continue
        inner = (last.end(), closing(masked, last.end() - 1) - 1)
        change = _literal_change(text, [inner], rng) if last.group(1) == "isEqualTo" else None
        yield change or (last.start(1), last.end(1), _JAVA_OPPOSITE[last.group(1)])


_JEST_LITERAL = ("toBe", "toEqual", "toStrictEqual")


def _jest_flips(text, masked, test, rng):
    for s, e in statements(masked, *test["body"]):
        m = re.compile(r"expect\s*\(").match(masked, s)
        if not m:
            continue
        chain = re.compile(r"(\s*\.\s*not)?\s*\.\s*(\w+)\s*\(").match(masked, closing(masked, m.end() - 1))
        if (
            not chain
            or chain.group(2) in ("resolves", "rejects")
            or masked[closing(masked, chain.end() - 1) : e].strip(" ;")
        ):
            continue
        inner = (chain.end(), closing(masked, chain.end() - 1) - 1)
        change = (
            _literal_change(text, [inner], rng)
            if not chain.group(1) and chain.group(2) in _JEST_LITERAL
            else None
        )
        if change:
            yield change
        elif chain.group(1):
            yield chain.start(1), chain.end(1), ""
        else:
            dot = masked.rfind(".", 0, chain.start(2))
            yield dot, dot, ".not"


_GO_FAIL = r"\b{t}\s*\.\s*(Fatal|Fatalf|Error|Errorf|Fail|FailNow)\s*\("


def _go_flips(text, masked, test, rng):
    """Guards `if C { t.Fatal...(...) }` (no else) reached whenever the test runs: every block around them is
    the body, a `for` loop or a `t.Run` closure."""
    start, end = test["body"]
    yield from _go_guards(text, masked, start, end, {test["t"]})


def _go_guards(text, masked, a, b, names):
    fails = re.compile(_GO_FAIL.format(t="(?:" + "|".join(sorted(names)) + ")"))
    for s, e in statements(masked, a, b, lines=True):
        head = masked[s:e]
        brace = _block_open(masked, s, e) if re.match(r"(if|for)\b", head) else None
        if head.startswith("if") and brace is not None and not masked[closing(masked, brace) : e].strip():
            inner = (brace + 1, closing(masked, brace) - 1)  # (an else after the block: not a guard)
            if any(fails.match(masked, x) for x, _ in statements(masked, *inner, lines=True)):
                start, end = _split(masked, s + 2, brace, ";")[-1]
                cond = text[start:end].strip()
                at = start + len(text[start:end]) - len(text[start:end].lstrip())
                yield at, at + len(cond), f"!({cond})"
        elif head.startswith("for") and brace is not None:
            yield from _go_guards(text, masked, brace + 1, closing(masked, brace) - 1, names)
        elif run := re.match(
            r"\w+\s*\.\s*Run\s*\(.*?func\s*\(\s*(\w+)\s+\*testing\.T\s*\)\s*\{", head, re.DOTALL
        ):
            brace = s + run.end() - 1
            yield from _go_guards(text, masked, brace + 1, closing(masked, brace) - 1, names | {run.group(1)})


def _block_open(masked, s, e):
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


FLIPS = {
    "catch2": _catch_flips,
    "gotest": _go_flips,
    "libtest": _rust_flips,
    "junit": _java_flips,
    "jest": _jest_flips,
}


def _words(protocol, work):
    """Every identifier and string word in the repo's files of the language (a canary's name must be new)."""
    taken = set()
    for top, dirs, files in os.walk(work):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "node_modules"]
        for file in files:
            path = os.path.join(top, file)
            if (
                file.endswith(_SOURCES[protocol])
                and not os.path.islink(path)
                and os.path.getsize(path) < 2_000_000
            ):
                with open(path, "rb") as handle:
                    source = handle.read().decode("utf-8", "replace")
                taken |= set(re.findall(r"\w+", source)) | set(
                    re.findall(r"[\"'`]([^\"'`\n]*)[\"'`]", source)
                )
    return taken


def _name(rng, protocol, copied, names, taken):
    """A new test name in the style of `copied`, from the words of the file's test names."""
    words = [w.lower() for n in names for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", n)]
    pool = sorted({w for w in words if w != "test"} | (set(FALLBACK_WORDS) if len(set(words)) < 4 else set()))
    for attempt in range(100):
        picked = rng.sample(pool, k=min(len(pool), rng.randint(2, 4)))
        first = next((w for w in picked if w.isalpha()), FALLBACK_WORDS[attempt % len(FALLBACK_WORDS)])
        picked = [first, *(w for w in picked if w != first)]  # a name starts with a letter
        if protocol == "gotest":
            name = "Test" + "".join(w.capitalize() for w in picked)
        elif protocol == "junit":
            head = re.match(r"[a-z]+", copied)
            first = head.group(0) if head else picked.pop(0)
            name = first + "".join(w.capitalize() for w in picked)
        elif protocol == "libtest" or "_" in copied and " " not in copied:
            name = "_".join(picked)
        else:
            name = " ".join(picked)
        if name not in taken and name not in names and name != copied:
            return name
    return (
        f"{copied}_{rng.randrange(10**6)}".replace(" ", "_")
        if protocol != "jest"
        else f"{copied} {rng.randrange(10**6)}"
    )
