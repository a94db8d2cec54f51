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
    from evolve.tasks import grader_sources as sources
else:
    import grader_canaries as canaries  # type: ignore[import-not-found,no-redef]
    import grader_reports as reports  # type: ignore[import-not-found,no-redef]
    import grader_sources as sources  # type: ignore[import-not-found,no-redef]

PER_FILE = 2
FALLBACK_WORDS = ("case", "basic", "other", "more", "values", "input", "result", "simple", "edge", "again")


def plant_file(protocol, source, rel, rng, expected, taken, count=PER_FILE):
    """(`source` with up to `count` canaries, {canary id: id of the real test it copies}, {a copied test's
    new id: its own id}); `expected`: the ids the grader expects (only those are copied); `taken`: words
    already used as names nearby."""
    text = source.decode("utf-8")
    if sources.UNSAFE[protocol].search(text):
        return source, {}, {}
    ids: dict[str, str] = {}
    renames: dict[str, str] = {}
    counts = _counts(text, sources.mask(text, sources.QUOTES[protocol]))
    for _ in range(count):
        masked = sources.mask(text, sources.QUOTES[protocol])
        every = list(sources.TESTS[protocol](text, masked))
        tests = [
            t
            for t in every
            if sources.test_id(protocol, rel, t["name"], t) in expected
            and not re.search(sources.EXITS[protocol], masked[t["body"][0] : t["body"][1]])
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
        own = sources.test_id(protocol, rel, test["name"], test)
        renames[sources.test_id(protocol, rel, twin, test)] = own
        ids[sources.test_id(protocol, rel, name, test)] = own
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
                not rel.endswith(sources.SUFFIXES[protocol])
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
            k = sources.closing(masked, k)
        elif masked[k].isalnum() or masked[k] in "_." or masked.startswith(("::", "->"), k):
            k += 2 if masked.startswith(("::", "->"), k) else 1
        else:
            return None
    return (s, s + 1, "") if bang else (s, s, "!")


def _catch_flips(text, masked, test, rng, counts):
    for _, a, b in sources.top_calls(masked, test, r"(?:REQUIRE|CHECK)"):
        sides = sources.split(masked, a + 1, b, "==")
        change = _literal_change(text, sides, rng, counts) if len(sides) == 2 else _toggle(masked, a + 1, b)
        if change:
            yield change


def _rust_flips(text, masked, test, rng, counts):
    for m, a, b in sources.top_calls(masked, test, r"(assert_eq|assert)!"):
        args = sources.split(masked, a + 1, b, ",")
        if m.group(1) == "assert_eq":
            change = _literal_change(text, args[:2], rng, counts) if len(args) >= 2 else None
        else:
            change = _toggle(masked, *args[0])
        if change:
            yield change


_JAVA_FLIPPED = {"isTrue": "isFalse", "isFalse": "isTrue"}


def _java_flips(text, masked, test, rng, counts):
    """`assertThat(A).isEqualTo(literal)`, `.isTrue()`, `.isFalse()` (AssertJ, as the Java track uses)."""
    for s, e in sources.statements(masked, *test["body"]):
        m = re.compile(r"assertThat\s*\(").match(masked, s)
        last = (
            re.compile(r"\s*\.\s*(\w+)\s*\(").match(masked, sources.closing(masked, m.end() - 1))
            if m
            else None
        )
        if not last or masked[sources.closing(masked, last.end() - 1) : e].strip():
            continue
        inner = (last.end(), sources.closing(masked, last.end() - 1) - 1)
        if last.group(1) == "isEqualTo" and (change := _literal_change(text, [inner], rng, counts)):
            yield change
        elif last.group(1) in _JAVA_FLIPPED and not masked[inner[0] : inner[1]].strip():
            yield last.start(1), last.end(1), _JAVA_FLIPPED[last.group(1)]


_JEST_LITERAL = ("toBe", "toEqual", "toStrictEqual")


def _jest_flips(text, masked, test, rng, counts):
    for s, e in sources.statements(masked, *test["body"]):
        m = re.compile(r"expect\s*\(").match(masked, s)
        if not m:
            continue
        chain = re.compile(r"\s*\.\s*(\w+)\s*\(").match(masked, sources.closing(masked, m.end() - 1))
        if (
            not chain
            or chain.group(1) not in _JEST_LITERAL
            or masked[sources.closing(masked, chain.end() - 1) : e].strip(" ;")
        ):
            continue
        inner = (chain.end(), sources.closing(masked, chain.end() - 1) - 1)
        if change := _literal_change(text, [inner], rng, counts):
            yield change


_GO_FAIL = r"\b{t}\s*\.\s*(Fatal|Fatalf|Error|Errorf|Fail|FailNow)\s*\("


def _go_flips(text, masked, test, rng, counts):
    """Guards `if [init;] A != literal { t.Fatal...(...) }` (no else) at the top of the test's body: every
    run of the test reaches them."""
    fails = re.compile(_GO_FAIL.format(t=re.escape(test["t"])))
    body_start, body_end = test["body"]
    for s, e in sources.statements(masked, body_start, body_end, lines=True):
        brace = sources.block_open(masked, s, e) if masked.startswith("if", s) else None
        if brace is None or masked[sources.closing(masked, brace) : e].strip():
            continue  # (an else after the block: not a guard)
        inner = (brace + 1, sources.closing(masked, brace) - 1)
        if any(fails.match(masked, x) for x, _ in sources.statements(masked, *inner, lines=True)):
            start, end = sources.split(masked, s + 2, brace, ";")[-1]
            sides = sources.split(masked, start, end, "!=")
            if len(sides) == 2 and (change := _literal_change(text, sides, rng, counts)):
                yield change


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
                file.endswith(sources.SOURCES[protocol])
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
