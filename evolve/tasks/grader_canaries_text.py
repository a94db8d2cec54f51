"""Canary tests for the runners that compile their tests (Polyglot's C++ Catch2, Go, Rust libtest, Java
JUnit, JavaScript jest): grader_canaries.py's rule, planted in source text (standard library only: it runs
in the grading sandbox as root beside grader_script.py, before the build).

A canary is a copy of a real hidden test with one expected constant changed, so that it fails whenever the
real test passes, in the forms the real tests use and by the rule of the Python canaries (a change that can
be made back as likely, its new character drawn as often as the file's constants use it):
- an equality with a literal on one side (`REQUIRE(A == 5)`, `assert_eq!(A, "x")`,
  `assertThat(A).isEqualTo(7)`, `expect(A).toBe('x')`, a Go failure guard `if A != 5 { t.Fatal... }`):
  the literal changed (a boolean flipped, one significant digit or one letter to another), a number
  kept within the narrowest integer type it fits;
- a boolean assertion, the boolean it expects flipped in the file's own form: `REQUIRE(!f(x))` <->
  `REQUIRE(f(x))`, `assert!(!f(x))` <-> `assert!(f(x))`, `isTrue()` <-> `isFalse()`.
Nothing is wrapped (`!(...)`), and no assertion becomes one the real tests lack (`assert_ne!`, `.not`,
`isNotEqualTo`): a test with no such constant gets no canary. Go's table-driven tests (a guard comparing
two variables inside a loop over a table) have none, so a Go file of them gets no canary: a blanket forgery
there is not caught (docs/guarantees.md).

Only what runs whenever the test passes is changed: a statement at the top of the test's body (Go: a
guard at the top of the body), in a test with no early exit (`return`, a skip, Go's `break`/`continue`)
and none of the runner's markers that change what a failure means (`[!mayfail]`, `#[should_panic]`, async
tests). Only tests the grader expects by name are copied. As for Python, the copied test is renamed too,
both names drawn from one pool of the file's test-name words, and the copy goes on a side of its twin
chosen by a coin at a distance drawn alike for both sides (among the tests of the same block, with no
preprocessor conditional between), so neither name, order nor gap tells which of a pair is the copy;
`restore_all` puts the renamed tests' own names back in the runner's report. The choices come from the
job's secret seed. `judge` applies grader_canaries.verdict to the report.
"""

import os
import re
import string

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
    """(`source` with up to `count` canaries, {canary id: id of the real test it copies}, {a copied test's
    new id: its own id}); `expected`: the ids the grader expects (only those are copied); `taken`: words
    already used as names nearby."""
    text = source.decode("utf-8")
    if _UNSAFE[protocol].search(text):
        return source, {}, {}
    ids: dict[str, str] = {}
    renames: dict[str, str] = {}
    counts = _counts(text, mask(text, _QUOTES[protocol]))
    for _ in range(count):
        masked = mask(text, _QUOTES[protocol])
        every = list(TESTS[protocol](text, masked))
        tests = [
            t
            for t in every
            if _id(protocol, rel, t["name"], t) in expected
            and not re.search(_EXITS[protocol], masked[t["body"][0] : t["body"][1]])
        ]
        changes = [(t, change) for t in tests for change in FLIPS[protocol](text, masked, t, rng, counts)]
        if not changes:
            break
        test, (start, end, new) = rng.choice(changes)
        names = [t["name"] for t in every]
        twin = _name(rng, protocol, test["name"], names, taken)  # both names drawn before either is written
        taken.add(twin)
        name = _name(rng, protocol, test["name"], names, taken)
        taken.add(name)
        (a, b), (n0, n1) = test["span"], test["name_span"]
        copy = text[a:n0] + name + text[n1:start] + new + text[end:b]
        at, last = canaries.place(rng, *_slots(text, masked, every, test))
        text = text[:n0] + twin + text[n1:]  # the copied test under its new name: a slot after it moves
        at += len(twin) - (n1 - n0) if at > n0 else 0
        text = text[:at] + ("\n\n" + copy if last else copy + "\n\n") + text[at:]
        own = _id(protocol, rel, test["name"], test)
        renames[_id(protocol, rel, twin, test)] = own
        ids[_id(protocol, rel, name, test)] = own
    return text.encode("utf-8"), ids, renames


_CONDITIONAL = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b", re.MULTILINE)


def _slots(text, masked, every, test):
    """Where a copy of `test` may go, (before it, after it), as (index, whether the copy follows it): before
    the start of each test of its block up to its own, or after the end of each from its own on, with no
    preprocessor conditional between the slot and the test (`place` picks one at a distance drawn alike
    for both sides: the n-th test before it or after it)."""
    block = _block(masked, test["span"][0])
    own = [t for t in every if _block(masked, t["span"][0]) == block]
    a, b = test["span"]
    before = [(t["span"][0], False) for t in own if t["span"][0] <= a]
    after = [(t["span"][1], True) for t in own if t["span"][1] >= b]
    return (
        [s for s in before if not _CONDITIONAL.search(text[s[0] : a])],
        [s for s in after if not _CONDITIONAL.search(text[b : s[0]])],
    )


def _block(masked, at):
    """The index of the `{` of the innermost block open at `at` (-1 at the top of the file)."""
    stack = []
    for k, c in enumerate(masked[:at]):
        if c == "{":
            stack.append(k)
        elif c == "}" and stack:
            stack.pop()
    return stack[-1] if stack else -1


def restore(protocol, test, renames):
    """A reported test id with a renamed test's own name put back (a Go subtest's path kept)."""
    for new, own in renames.items():
        new_name = _name_of(protocol, new)
        if reports.matches(protocol, test, new):
            return test[: len(test) - len(new_name)] + _name_of(protocol, own)
        if protocol == "gotest" and test.startswith(new + "/"):
            return own + test[len(new) :]
    return test


def restore_all(protocol, records, output, renames):
    """A runner's records and output with every renamed test under its own name again."""
    if not renames:
        return records, output
    fixed = [dict(r, test=restore(protocol, str(r["test"]), renames)) if "test" in r else r for r in records]
    for new, own in renames.items():
        new_name, own_name = _name_of(protocol, new), _name_of(protocol, own)
        output = re.sub(
            r"(?<![\w])" + re.escape(new_name) + r"(?![\w])", own_name.replace("\\", r"\\"), output
        )
    return fixed, output


def _name_of(protocol, test_id):
    """The test's own name in its id (`rel::name`, `pkg.Class#name`, `name`)."""
    if protocol == "jest":
        return test_id.partition("::")[2]
    if protocol == "junit":
        return test_id.rpartition("#")[2]
    return test_id


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
    """Canaries in every hidden test file of `protocol` (under `tests_dir`, laid over the repo at `work`):
    ({canary id: the copied test's own id}, {a copied test's new id: its own id})."""
    taken = _words(protocol, work)
    planted: dict[str, str] = {}
    renames: dict[str, str] = {}
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
                changed, ids, moved = plant_file(protocol, source, rel, rng, expected, taken)
            except UnicodeDecodeError:
                continue  # a test file that is not UTF-8: the runner reads it as it is, without canaries
            with open(path, "wb") as handle:
                handle.write(changed)
            planted |= ids
            renames |= moved
    return planted, renames


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
    masked = mask(text, _QUOTES[protocol])
    return [(_id(protocol, rel, t["name"], t), t) for t in TESTS[protocol](text, masked)]


def _id(protocol, rel, name, test):
    """The id the runner's report gives the test (evolve.tasks.expected_names's)."""
    if protocol == "jest":
        return f"{rel}::{name}"
    if protocol == "junit":
        return f"{test['package']}{os.path.splitext(os.path.basename(rel))[0]}#{name}"
    return name


_BOUNDS = (127, 255, 32767, 65535, 2**31 - 1, 2**32 - 1, 2**63 - 1)
"""The largest value of each integer type, narrowest first: a changed integer stays within its literal's."""
_STRING = re.compile(r"""(["'])((?:\\.|(?!\1)[^\\\n])*)\1""")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")


def other_literal(literal, rng, counts=None):
    """Another literal of `literal`'s kind, by grader_canaries' rule (a change that can be made back as
    likely): a boolean flipped; in a decimal number one significant digit to another (the first and last
    never to 0), an integer kept within the narrowest type it fits; in a string or character literal one
    ASCII letter or digit (not part of an escape) to another of its case or class. None for anything else."""
    counts = counts or {}
    if literal in ("true", "false"):
        return "false" if literal == "true" else "true"
    if _NUMBER.fullmatch(literal) and literal.strip("0."):
        digits = [i for i, c in enumerate(literal) if c != "."]
        first = next(i for i in digits if literal[i] != "0")
        last = next(i for i in reversed(digits) if literal[i] != "0")
        bound = next((b for b in _BOUNDS if int(literal.split(".")[0]) <= b), _BOUNDS[-1])

        def fits(at, digit):
            changed = literal[:at] + digit + literal[at + 1 :]
            return "." in literal or int(changed) <= bound

        places = {
            at: "".join(
                d
                for d in ("123456789" if at in (first, last) else "0123456789")
                if d == literal[at] or fits(at, d)
            )
            for at in digits
            if first <= at <= last
        }
        places = {at: pool for at, pool in places.items() if len(pool) > 1}
        if not places:
            return None
        at = rng.choice(sorted(places))
        return literal[:at] + canaries.pick(places[at], literal[at], counts, rng) + literal[at + 1 :]
    quoted = _STRING.fullmatch(literal)
    if quoted is None or re.search(r"\\[^ntr\\\"'`$]", quoted[2]):
        return None
    inner = quoted[2]
    free = [
        i
        for i, c in enumerate(inner)
        if c.isascii() and c.isalnum() and (len(inner[:i]) - len(inner[:i].rstrip("\\"))) % 2 == 0
    ]
    if not free:
        return None
    at = rng.choice(free)
    pool = next(p for p in (string.ascii_lowercase, string.ascii_uppercase, string.digits) if inner[at] in p)
    return quoted[1] + inner[:at] + canaries.pick(pool, inner[at], counts, rng) + inner[at + 1 :] + quoted[1]


def _counts(text, masked):
    """How often each character occurs in the file's literals (strings' insides, numbers as written)."""
    counts: dict[str, int] = {}
    found = [m[2] for m in _STRING.finditer(text)] + [m[0] for m in _NUMBER.finditer(masked)]
    for literal in found:
        for char in literal[:10_000]:
            counts[char] = counts.get(char, 0) + 1
    return counts


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


def _literal_change(text, spans, rng, counts):
    """A change of the one literal among `spans` (with the other not a literal), as (start, end, new)."""
    values = [
        (s + len(text[s:e]) - len(text[s:e].lstrip()), e - (len(text[s:e]) - len(text[s:e].rstrip())))
        for s, e in spans
    ]
    found = [(s, e, other_literal(text[s:e], rng, counts)) for s, e in values]
    literal = [f for f in found if f[2] is not None]
    return literal[0] if len(literal) == 1 else None


def _toggle(masked, a, b):
    """The boolean an assertion's one argument masked[a:b] expects, flipped in the form the real tests
    use (`!f(x)` <-> `f(x)`), as (start, end, new); None unless the argument is a call, a name or a chain
    of them (where a leading `!` applies to the whole)."""
    s = a + len(masked[a:b]) - len(masked[a:b].lstrip())
    e = b - (len(masked[a:b]) - len(masked[a:b].rstrip()))
    bang = masked.startswith("!", s)
    k = s + bang
    if k >= e or not (masked[k].isalpha() or masked[k] == "_"):
        return None
    while k < e:
        if masked[k] in "([":
            k = closing(masked, k)
        elif masked[k].isalnum() or masked[k] in "_." or masked.startswith(("::", "->"), k):
            k += 2 if masked.startswith(("::", "->"), k) else 1
        else:
            return None
    return (s, s + 1, "") if bang else (s, s, "!")


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


def _catch_flips(text, masked, test, rng, counts):
    for _, a, b in _top_calls(masked, test, r"(?:REQUIRE|CHECK)"):
        sides = _split(masked, a + 1, b, "==")
        change = _literal_change(text, sides, rng, counts) if len(sides) == 2 else _toggle(masked, a + 1, b)
        if change:
            yield change


def _rust_flips(text, masked, test, rng, counts):
    for m, a, b in _top_calls(masked, test, r"(assert_eq|assert)!"):
        args = _split(masked, a + 1, b, ",")
        if m.group(1) == "assert_eq":
            change = _literal_change(text, args[:2], rng, counts) if len(args) >= 2 else None
        else:
            change = _toggle(masked, *args[0])
        if change:
            yield change


_JAVA_FLIPPED = {"isTrue": "isFalse", "isFalse": "isTrue"}


def _java_flips(text, masked, test, rng, counts):
    """`assertThat(A).isEqualTo(literal)`, `.isTrue()`, `.isFalse()` (AssertJ, as the Java track uses)."""
    for s, e in statements(masked, *test["body"]):
        m = re.compile(r"assertThat\s*\(").match(masked, s)
        last = re.compile(r"\s*\.\s*(\w+)\s*\(").match(masked, closing(masked, m.end() - 1)) if m else None
        if not last or masked[closing(masked, last.end() - 1) : e].strip():
            continue
        inner = (last.end(), closing(masked, last.end() - 1) - 1)
        if last.group(1) == "isEqualTo" and (change := _literal_change(text, [inner], rng, counts)):
            yield change
        elif last.group(1) in _JAVA_FLIPPED and not masked[inner[0] : inner[1]].strip():
            yield last.start(1), last.end(1), _JAVA_FLIPPED[last.group(1)]


_JEST_LITERAL = ("toBe", "toEqual", "toStrictEqual")


def _jest_flips(text, masked, test, rng, counts):
    for s, e in statements(masked, *test["body"]):
        m = re.compile(r"expect\s*\(").match(masked, s)
        if not m:
            continue
        chain = re.compile(r"\s*\.\s*(\w+)\s*\(").match(masked, closing(masked, m.end() - 1))
        if (
            not chain
            or chain.group(1) not in _JEST_LITERAL
            or masked[closing(masked, chain.end() - 1) : e].strip(" ;")
        ):
            continue
        inner = (chain.end(), closing(masked, chain.end() - 1) - 1)
        if change := _literal_change(text, [inner], rng, counts):
            yield change


_GO_FAIL = r"\b{t}\s*\.\s*(Fatal|Fatalf|Error|Errorf|Fail|FailNow)\s*\("


def _go_flips(text, masked, test, rng, counts):
    """Guards `if [init;] A != literal { t.Fatal...(...) }` (no else) at the top of the test's body: every
    run of the test reaches them."""
    fails = re.compile(_GO_FAIL.format(t=re.escape(test["t"])))
    body_start, body_end = test["body"]
    for s, e in statements(masked, body_start, body_end, lines=True):
        brace = _block_open(masked, s, e) if masked.startswith("if", s) else None
        if brace is None or masked[closing(masked, brace) : e].strip():
            continue  # (an else after the block: not a guard)
        inner = (brace + 1, closing(masked, brace) - 1)
        if any(fails.match(masked, x) for x, _ in statements(masked, *inner, lines=True)):
            start, end = _split(masked, s + 2, brace, ";")[-1]
            sides = _split(masked, start, end, "!=")
            if len(sides) == 2 and (change := _literal_change(text, sides, rng, counts)):
                yield change


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
