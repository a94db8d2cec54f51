"""Canaries for the runners that compile their tests (Polyglot's C++, Go, Rust, Java, JavaScript): planted
beside a real test with one assertion changed so that it fails wherever the real one passes, only where
that holds, under names nothing else uses; and the judge's rule on the runner's report."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from evolve.tasks.expected_names import expected_names
from evolve.tasks.grader_canaries_text import other_literal, plant_file, plant_tree
from evolve.tasks.grader_script import judge
from evolve.tasks.polyglot import load_polyglot

FIXTURE = Path(__file__).resolve().parents[2] / "data" / "polyglot"
LANGUAGE = {"catch2": "cpp", "gotest": "go", "libtest": "rust", "junit": "java", "jest": "javascript"}
FLIPPED = {
    "catch2": ("REQUIRE_FALSE(", "REQUIRE("),
    "gotest": ("!(got != tc.expected)",),
    "libtest": ("assert!(!(",),
    "junit": ("isTrue()", "isFalse()"),
    "jest": ("toBe(true)", "toBe(false)"),
}


def _plant(protocol: str, source: str, seed: int = 0, expected=None, taken=None, rel="t"):
    rel = (
        {
            "catch2": "t.cpp",
            "gotest": "t_test.go",
            "libtest": "tests/t.rs",
            "junit": "T.java",
            "jest": "t.spec.js",
        }[protocol]
        if rel == "t"
        else rel
    )
    names = expected if expected is not None else set(expected_names(protocol, {rel: source.encode()}))
    out, ids = plant_file(protocol, source.encode(), rel, random.Random(seed), names, set(taken or ()))
    return out.decode(), ids


@pytest.mark.parametrize("protocol", list(LANGUAGE))
def test_each_fixture_gets_canaries_that_copy_an_expected_test_and_keep_every_real_one(protocol):
    task = load_polyglot(FIXTURE, [LANGUAGE[protocol]]).get(f"{LANGUAGE[protocol]}__leap")
    ((rel, source),) = [(r, s) for r, s in task.hidden_tests.items() if expected_names(protocol, {r: s})]
    expected = set(expected_names(protocol, {rel: source}))
    for seed in range(20):
        out, ids = _plant(protocol, source.decode(), seed, expected, rel=rel)
        assert ids and set(ids.values()) <= expected and not set(ids) & expected, (seed, ids)
        assert len(set(ids.values())) == len(ids)
        assert set(expected_names(protocol, {rel: out.encode()})) == expected | set(ids)
        assert any(flip in out for flip in FLIPPED[protocol]), out
        kept = out
        for line in source.decode().splitlines():  # every real line is still there, in order
            at = kept.find(line)
            assert at >= 0, line
            kept = kept[at + len(line) :]


@pytest.mark.parametrize(
    ("protocol", "source", "real", "changed"),
    [
        ("catch2", 'TEST_CASE("sums") {\n    REQUIRE(sum(2, 3) == 5);\n}\n', "== 5)", None),
        ("catch2", 'TEST_CASE("name") {\n    REQUIRE(name() == "abc");\n}\n', '== "abc")', None),
        (
            "catch2",
            'TEST_CASE("flag") {\n    CHECK_FALSE(flag());\n}\n',
            "CHECK_FALSE(flag())",
            "CHECK(flag())",
        ),
        ("libtest", "#[test]\nfn sums() {\n    assert_eq!(sum(2, 3), 5);\n}\n", "5);", None),
        (
            "libtest",
            "#[test]\nfn lists() {\n    assert_eq!(list(), vec![1, 2]);\n}\n",
            "assert_eq!",
            "assert_ne!(list(), vec![1, 2])",
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
            "class T {\n    @Test\n    void empties() {\n        assertThat(items()).isEmpty();\n    }\n}\n",
            "isEmpty()",
            "isNotEmpty()",
        ),
        ("jest", "test('sums', () => {\n  expect(sum(2, 3)).toEqual(5);\n});\n", "toEqual(5)", None),
        (
            "jest",
            "test('holds', () => {\n  expect(list())\n    .toContain(1);\n});\n",
            "expect(list())\n    .toContain(1)",
            "expect(list())\n    .not.toContain(1)",
        ),
        (
            "jest",
            "test('lists', () => {\n  expect(list()).not.toEqual([1]);\n});\n",
            ".not.toEqual([1])",
            "expect(list()).toEqual([1])",
        ),
        (
            "gotest",
            (
                "func TestSums(t *testing.T) {\n\tfor _, c := range cases {\n\t\tt.Run(c.name, func(tt "
                "*testing.T) {\n"
                "\t\t\tif got := Sum(c.a); got != c.want "
                '{\n\t\t\t\ttt.Errorf("bad")\n\t\t\t}\n\t\t})\n\t}\n}\n'
            ),
            "got != c.want {",
            "!(got != c.want) {",
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


def test_a_canary_name_is_new_to_the_whole_repo():
    source = 'func TestAbBc(t *testing.T) {\n\tif f() {\n\t\tt.Fatal("x")\n\t}\n}\n'
    taken = {f"Test{a}{b}" for a in ("Ab", "Bc", "Case", "Basic") for b in ("Ab", "Bc", "Case", "Basic")}
    for seed in range(10):
        _, ids = _plant("gotest", source, seed, taken=taken)
        assert len(ids) == 1 and not set(ids) & taken


def test_plant_tree_reads_every_go_file_of_the_package_for_names(tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "tests").mkdir()
    test = (
        'package p\n\nimport "testing"\n\nfunc TestOneTwo(t *testing.T) {\n\tif f() '
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
    planted = plant_tree("gotest", tmp_path / "work", tmp_path / "tests", random.Random(3), {"TestOneTwo"})
    assert planted and all(len(name) > len("Test") + 6 for name in planted)


def test_other_literals_differ_and_stay_in_the_narrowest_type():
    rng = random.Random(0)
    for literal in ("0", "1", "5", "120", "255", "1.5", '"abc"', '""', "'x'", "'ab'", '"a\\n"', "true"):
        for _ in range(50):
            other = other_literal(literal, rng)
            assert other is not None and other != literal
            if literal.isdigit():
                assert 0 <= int(other) and (int(literal) >= 118 or int(other) < 127)
    assert other_literal("x", rng) is None and other_literal("-1", rng) is None


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
