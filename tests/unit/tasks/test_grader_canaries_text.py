"""Canaries for the runners that compile their tests (Polyglot's C++, Go, Rust, Java, JavaScript): a copy
of a real test with its expected constant changed so that it fails wherever the real one passes, in the
forms the real tests use, only where that holds; the copied test renamed too and the copy placed among its
block's tests; the renamed tests' own names restored in the report; and the judge's rule on it."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from evolve.tasks.expected_names import expected_names
from evolve.tasks.grader_canaries_text import other_literal, plant_file, plant_tree, restore_all
from evolve.tasks.grader_script import judge
from evolve.tasks.polyglot import load_polyglot

FIXTURE = Path(__file__).resolve().parents[2] / "data" / "polyglot"
LANGUAGE = {"catch2": "cpp", "gotest": "go", "libtest": "rust", "junit": "java", "jest": "javascript"}
REL = {
    "catch2": "t.cpp",
    "gotest": "t_test.go",
    "libtest": "tests/t.rs",
    "junit": "T.java",
    "jest": "t.spec.js",
}


def _planted(protocol: str, source: str, seed: int = 0, expected=None, taken=None, rel="t"):
    rel = REL[protocol] if rel == "t" else rel
    names = expected if expected is not None else set(expected_names(protocol, {rel: source.encode()}))
    out, ids, renames = plant_file(
        protocol, source.encode(), rel, random.Random(seed), names, set(taken or ())
    )
    return out.decode(), ids, renames


def _plant(protocol: str, source: str, seed: int = 0, expected=None, taken=None, rel="t"):
    out, ids, _ = _planted(protocol, source, seed, expected, taken, rel)
    return out, ids


def _fixture(protocol: str) -> tuple[str, bytes]:
    task = load_polyglot(FIXTURE, [LANGUAGE[protocol]]).get(f"{LANGUAGE[protocol]}__leap")
    ((rel, source),) = [(r, s) for r, s in task.hidden_tests.items() if expected_names(protocol, {r: s})]
    return rel, source


@pytest.mark.parametrize("protocol", [p for p in LANGUAGE if p != "gotest"])
def test_each_fixture_gets_canaries_that_copy_an_expected_test_renamed_and_keep_every_real_one(protocol):
    rel, source = _fixture(protocol)
    expected = set(expected_names(protocol, {rel: source}))
    for seed in range(20):
        out, ids, renames = _planted(protocol, source.decode(), seed, expected, rel=rel)
        assert ids and set(ids.values()) <= expected and not set(ids) & expected, (seed, ids)
        assert len(set(ids.values())) == len(ids) and set(renames.values()) == set(ids.values())
        kept = (expected - set(renames.values())) | set(renames)
        assert set(expected_names(protocol, {rel: out.encode()})) == kept | set(ids)
        real = source.decode()  # every real line is still there, in order, the copied tests under new names
        for twin, own in renames.items():
            real = re.sub(
                rf"(?<!\w){re.escape(re.split('::|#', own)[-1])}(?!\w)",
                re.split("::|#", twin)[-1],
                real,
            )
        lines = iter(out.splitlines())
        assert all(line in lines for line in real.splitlines()), (real, out)


def test_a_go_file_of_table_driven_tests_gets_no_canary():
    rel, source = _fixture("gotest")
    assert _plant("gotest", source.decode(), 0, rel=rel) == (source.decode(), {})


@pytest.mark.parametrize(
    ("protocol", "source", "real", "changed"),
    [
        ("catch2", 'TEST_CASE("sums") {\n    REQUIRE(sum(2, 3) == 5);\n}\n', "== 5)", None),
        ("catch2", 'TEST_CASE("name") {\n    REQUIRE(name() == "abc");\n}\n', '== "abc")', None),
        (
            "catch2",
            'TEST_CASE("flag") {\n    REQUIRE(!ns::flag(1));\n}\n',
            "REQUIRE(!ns::flag(1))",
            "REQUIRE(ns::flag(1))",
        ),
        ("catch2", 'TEST_CASE("flag") {\n    CHECK(a.flag());\n}\n', "CHECK(a.flag())", "CHECK(!a.flag())"),
        ("libtest", "#[test]\nfn sums() {\n    assert_eq!(sum(2, 3), 5);\n}\n", "5);", None),
        (
            "libtest",
            "#[test]\nfn leaps() {\n    assert!(leap::is_leap(1996));\n}\n",
            "assert!(leap",
            "assert!(!leap",
        ),
        (
            "junit",
            (
                "class T {\n    @Test\n    public void sums() {\n        assertThat(sum(2, 3))\n"
                '                .isEqualTo("five");\n    }\n}\n'
            ),
            '"five"',
            None,
        ),
        (
            "junit",
            "class T {\n    @Test\n    void leaps() {\n        assertThat(leap(2)).isTrue();\n    }\n}\n",
            "isTrue()",
            "isFalse()",
        ),
        ("jest", "test('sums', () => {\n  expect(sum(2, 3)).toEqual(5);\n});\n", "toEqual(5)", None),
        ("jest", "test('leaps', () => {\n  expect(leap(2)).toBe(true);\n});\n", "toBe(true)", "toBe(false)"),
        (
            "gotest",
            'func TestSums(t *testing.T) {\n\tif got := Sum(2); got != 5 {\n\t\tt.Errorf("bad")\n\t}\n}\n',
            "got != 5 {",
            None,
        ),
    ],
)
def test_the_changed_assertion_fails_wherever_the_real_one_passes(protocol, source, real, changed):
    for seed in range(10):
        out, ids = _plant(protocol, source, seed)
        assert len(ids) == 1
        assert out.count(real) == source.count(real), out  # the copy holds the assertion changed
        assert changed in out if changed else len(out) > 2 * len(source) // 2, out


@pytest.mark.parametrize(
    ("protocol", "source"),
    [
        ("catch2", 'TEST_CASE("early") {\n    if (skip()) return;\n    REQUIRE(f());\n}\n'),
        ("catch2", 'TEST_CASE("may", "[!mayfail]") {\n    REQUIRE(f());\n}\n'),
        ("catch2", 'TEST_CASE("nested") {\n    for (int i : xs) { REQUIRE(f(i)); }\n}\n'),
        ("libtest", "#[test]\n#[should_panic]\nfn panics() {\n    assert!(f());\n}\n"),
        ("libtest", '#[test]\nfn raw() {\n    assert_eq!(f(), r"x");\n}\n'),
        (
            "junit",
            (
                "class T {\n    @Test\n    void chained() {\n        "
                "assertThat(f()).hasSize(2).contains(1);\n  "
                "  }\n}\n"
            ),
        ),
        ("jest", "test('later', async () => {\n  expect(await f()).toBe(1);\n});\n"),
        (
            "gotest",
            'func TestElse(t *testing.T) {\n\tif f() {\n\t\tt.Fatal("x")\n\t} else {\n\t\tg()\n\t}\n}\n',
        ),
        (
            "gotest",
            'func TestDeep(t *testing.T) {\n\tif tc.err {\n\t\tif f() {\n\t\t\tt.Fatal("x")\n\t\t}\n\t}\n}\n',
        ),
        (
            "gotest",
            (
                "func TestSkips(t *testing.T) {\n\tfor _, c := range cs {\n\t\tif c.x "
                "{\n\t\t\tcontinue\n\t\t}\n"
                '\t\tif f(c) {\n\t\t\tt.Fatal("x")\n\t\t}\n\t}\n}\n'
            ),
        ),
        ("catch2", 'TEST_CASE("negated") {\n    REQUIRE_FALSE(flag());\n}\n'),
        ("catch2", 'TEST_CASE("compared") {\n    REQUIRE(a < b);\n}\n'),
        ("libtest", "#[test]\nfn lists() {\n    assert_eq!(list(), vec![1, 2]);\n}\n"),
        ("libtest", "#[test]\nfn differs() {\n    assert_ne!(f(), 5);\n}\n"),
        ("libtest", "#[test]\nfn wide() {\n    assert!(a == b);\n}\n"),
        (
            "junit",
            "class T {\n    @Test\n    void empties() {\n        assertThat(items()).isEmpty();\n    }\n}\n",
        ),
        ("jest", "test('holds', () => {\n  expect(list())\n    .toContain(1);\n});\n"),
        ("jest", "test('lists', () => {\n  expect(list()).not.toEqual([1]);\n});\n"),
        (
            "gotest",
            'func TestVars(t *testing.T) {\n\tif got := f(); got != want {\n\t\tt.Fatal("x")\n\t}\n}\n',
        ),
        (
            "gotest",
            (
                "func TestLoop(t *testing.T) {\n\tfor _, c := range cs {\n\t\tif f(c) != 3 {\n"
                '\t\t\tt.Fatal("x")\n\t\t}\n\t}\n}\n'
            ),
        ),
    ],
)
def test_a_test_where_the_change_might_not_run_or_might_not_fail_gets_no_canary(protocol, source):
    for seed in range(5):
        assert _plant(protocol, source, seed) == (source, {})


def test_a_test_the_grader_does_not_expect_by_name_is_never_copied():
    source = 'TEST_CASE("one") {\n    REQUIRE(f());\n}\n\nTEST_CASE("two") {\n    REQUIRE(g());\n}\n'
    for seed in range(10):
        _, ids = _plant("catch2", source, seed, expected={"two"})
        assert set(ids.values()) == {"two"}


def test_a_canary_name_and_the_copied_tests_new_name_are_new_to_the_whole_repo():
    source = 'func TestAbBc(t *testing.T) {\n\tif got := f(); got != 3 {\n\t\tt.Fatal("x")\n\t}\n}\n'
    taken = {f"Test{a}{b}" for a in ("Ab", "Bc", "Case", "Basic") for b in ("Ab", "Bc", "Case", "Basic")}
    for seed in range(10):
        _, ids, renames = _planted("gotest", source, seed, taken=taken)
        assert len(ids) == 1 and not (set(ids) | set(renames)) & taken and set(ids) != set(renames)


def test_plant_tree_reads_every_go_file_of_the_package_for_names(tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "tests").mkdir()
    test = (
        'package p\n\nimport "testing"\n\nfunc TestOneTwo(t *testing.T) {\n\tif got := f(); got != 7 '
        '{\n\t\tt.Fatal("x")\n\t}\n}\n'
    )
    (tmp_path / "tests" / "p_test.go").write_text(test)
    (tmp_path / "work" / "p_test.go").write_text(test)
    words = [
        "One",
        "Two",
        "Case",
        "Basic",
        "Other",
        "More",
        "Values",
        "Input",
        "Result",
        "Simple",
        "Edge",
        "Again",
    ]
    (tmp_path / "work" / "p.go").write_text(
        "".join(f"func Test{a}{b}() {{}}\n" for a in words for b in words)
    )
    planted, renames = plant_tree(
        "gotest", tmp_path / "work", tmp_path / "tests", random.Random(3), {"TestOneTwo"}
    )
    assert planted and all(len(name) > len("Test") + 6 for name in [*planted, *renames])


def test_other_literals_differ_by_one_character_and_stay_in_the_narrowest_type():
    rng = random.Random(0)
    for literal in ("1", "5", "120", "255", "1000", "1.5", '"abc"', "'x'", "'ab'", '"a\\n"', "true"):
        for _ in range(50):
            other = other_literal(literal, rng)
            assert (
                other is not None and other != literal and (literal == "true" or len(other) == len(literal))
            )
            if literal.isdigit():
                assert int(other) > 0 and (int(literal) > 127 or int(other) <= 127)
                assert int(literal) > 255 or int(other) <= 255
    assert other_literal('"a\\n"', rng) in {f'"{c}\\n"' for c in "bcdefghijklmnopqrstuvwxyz"}
    for literal in ("x", "-1", "0", '""', '"\\u{1F600}"', '"!"', "0x1F"):
        assert other_literal(literal, rng) is None, literal


def test_a_copy_stays_in_its_block_and_never_crosses_a_preprocessor_conditional():
    catch = (
        'TEST_CASE("alpha") {\n    REQUIRE(f() == 1);\n}\n\n#if defined(ALL)\nTEST_CASE("beta") {\n'
        '    REQUIRE(g() == 2);\n}\n\nTEST_CASE("gamma") {\n    REQUIRE(h() == 3);\n}\n#endif\n'
    )
    jest = (
        "describe('a', () => {\n  test('one', () => {\n    expect(f()).toBe(1);\n  });\n});\n\n"
        "describe('b', () => {\n  test('two', () => {\n    expect(g()).toBe(2);\n  });\n"
        "  test('three', () => {\n    expect(h()).toBe(3);\n  });\n});\n"
    )
    for seed in range(30):
        out, _ = _plant("catch2", catch, seed, expected={"alpha"})
        head, _, rest = out.partition("#if defined(ALL)")
        assert head.count("TEST_CASE") == 2 and "#endif" in rest, out
        out, _ = _plant("jest", jest, seed, expected={"t.spec.js::one"})
        first, _, second = out.partition("describe('b'")
        assert first.count("test(") == 2 and second.count("test(") == 2, out


def test_renamed_tests_get_their_own_names_back_in_the_report():
    cases = {
        "gotest": ({"TestNewName": "TestOwn"}, ["TestNewName/sub", "TestNewName", "TestOther"]),
        "libtest": ({"new_name": "own"}, ["leap::new_name", "other"]),
        "jest": ({"t.spec.js::new name": "t.spec.js::own"}, ["/w/t.spec.js::new name", "/w/t.spec.js::x"]),
        "junit": ({"p.T#newName": "p.T#own"}, ["p.T#newName", "p.T#other"]),
        "catch2": ({"new name": "own"}, ["new name", "other"]),
    }
    restored = {
        "gotest": ["TestOwn/sub", "TestOwn", "TestOther"],
        "libtest": ["leap::own", "other"],
        "jest": ["/w/t.spec.js::own", "/w/t.spec.js::x"],
        "junit": ["p.T#own", "p.T#other"],
        "catch2": ["own", "other"],
    }
    for protocol, (renames, reported) in cases.items():
        records = [{"test": t, "outcome": "passed"} for t in reported]
        fixed, output = restore_all(protocol, records, " ".join(reported), renames)
        assert [r["test"] for r in fixed] == restored[protocol], protocol
        assert output == " ".join(restored[protocol]), protocol


def _job(protocol, expected):
    return {"results": protocol, "expected": expected, "timeout": 60}


def _record(test, outcome):
    return {"test": test, "outcome": outcome, "message": ""}


PLANTED = {"twin": "real"}


@pytest.mark.parametrize(
    ("records", "outcome"),
    [
        ([_record("real", "passed"), _record("twin", "failed")], "pass"),
        ([_record("real", "passed"), _record("twin", "passed")], "forged"),
        ([_record("real", "passed")], "forged"),
        ([_record("real", "failed"), _record("twin", "passed")], "fail"),
        ([_record("real", "failed"), _record("twin", "failed")], "fail"),
    ],
)
def test_the_judge_applies_the_canary_rule_to_a_runner_report(records, outcome):
    assert judge(_job("catch2", ["real"]), 1, "", False, records, PLANTED)[0] == outcome


def test_a_failed_go_canary_fails_its_package_and_its_subtests_without_failing_the_run():
    planted = {"TestTwin": "TestReal"}
    honest = [
        _record("TestReal/a", "passed"),
        _record("TestReal", "passed"),
        _record("TestTwin/a", "failed"),
        _record("TestTwin", "failed"),
        _record("package p", "failed"),
    ]
    assert judge(_job("gotest", ["TestReal"]), 1, "", False, honest, planted)[0] == "pass"
    forged = [_record("TestReal", "passed"), _record("TestTwin", "passed")]
    assert judge(_job("gotest", ["TestReal"]), 0, "", False, forged, planted)[0] == "forged"
    crashed = [_record("TestReal", "passed"), _record("package p", "failed")]
    assert judge(_job("gotest", ["TestReal"]), 1, "", False, crashed, planted)[0] == "fail"
