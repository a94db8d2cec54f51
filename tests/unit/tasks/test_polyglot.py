"""The polyglot adapter on a fixture in the benchmark's layout (tests/data/polyglot): no Docker."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from evolve.tasks import expected_names as names
from evolve.tasks import grader_reports as reports
from evolve.tasks import load_suite
from evolve.tasks.grader_script import judge
from evolve.tasks.grading import expected_tests
from evolve.tasks.polyglot import (
    BASE_IMAGE,
    LANGUAGES,
    POLYGLOT_IMAGE,
    SPECS,
    enable_all_tests,
    load_polyglot,
    name_cmake_project,
    polyglot_suite,
    split_of,
)
from evolve.tasks.subsets import POLYGLOT_SUBSETS
from evolve.tasks.types import TaskError, write_files

FIXTURE = Path(__file__).resolve().parents[2] / "data" / "polyglot"


@pytest.fixture(scope="module")
def suite():
    return load_polyglot(FIXTURE)


def test_every_language_becomes_a_task_named_as_dgm_names_it(suite):
    assert sorted(t.id for t in suite) == sorted(f"{lang}__leap" for lang in LANGUAGES)
    for task in suite:
        assert task.suite == "polyglot" and task.language == task.id.split("__")[0]
        assert task.image == (BASE_IMAGE if task.language == "python" else POLYGLOT_IMAGE)
        assert task.split == split_of(task.id)


def test_tests_are_hidden_and_docs_meta_never_reach_the_agent(suite):
    expected_tests = {
        "python": "leap_test.py",
        "go": "leap_test.go",
        "cpp": "leap_test.cpp",
        "rust": "tests/leap.rs",
        "java": "src/test/java/LeapTest.java",
        "javascript": "leap.spec.js",
    }
    for task in suite:
        test_file = expected_tests[task.language]
        assert test_file in task.hidden_tests and test_file not in task.repo
        assert not any(path.startswith(".") for path in task.repo), sorted(task.repo)
        assert b"year % 4" not in b"".join(task.repo.values())  # the example stays out of the repo


def test_statement_has_introduction_then_instructions_and_names_the_stubs(suite):
    task = suite.get("cpp__leap")
    assert task.statement.index("# Introduction") < task.statement.index("# Instructions")
    assert "`leap.cpp`, `leap.h`" in task.statement


@pytest.mark.parametrize("language", LANGUAGES)
def test_reference_patch_turns_the_stub_into_the_example(suite, tmp_path, language):
    task = suite.get(f"{language}__leap")
    repo = write_files(task.repo, tmp_path / "repo")
    (tmp_path / "ref.diff").write_text(task.reference_patch)
    subprocess.run(["git", "apply", str(tmp_path / "ref.diff")], cwd=repo, check=True, capture_output=True)
    meta = FIXTURE / language / "exercises" / "practice" / "leap" / ".meta"
    examples = [p for p in meta.rglob("*") if p.is_file() and p.name != "config.json"]
    for example in examples:
        changed = [p for p in repo.rglob(f"*{example.suffix}") if p.read_bytes() == example.read_bytes()]
        assert changed, f"{example.name} did not land in the repo"


def test_disabled_tests_are_enabled_as_the_benchmark_runs_them(suite):
    java = suite.get("java__leap").hidden_tests["src/test/java/LeapTest.java"].decode()
    assert "@Disabled(" not in java and java.count("@Test") == 3
    js = suite.get("javascript__leap").hidden_tests["leap.spec.js"].decode()
    assert "xtest(" not in js and js.count("test(") == 3
    assert "--include-ignored" in suite.get("rust__leap").test_command
    assert "EXERCISM_RUN_ALL_TESTS=1" in suite.get("cpp__leap").build_command
    assert enable_all_tests("python", b"xtest(") == b"xtest("


def test_cmake_project_is_named_after_the_exercise_not_the_directory(suite):
    cmake = suite.get("cpp__leap").repo["CMakeLists.txt"].decode()
    assert 'set(exercise "leap")' in cmake and "CMAKE_CURRENT_SOURCE_DIR} NAME" not in cmake
    indented = b"  get_filename_component(exercise ${CMAKE_CURRENT_SOURCE_DIR} NAME)\n"
    assert name_cmake_project(indented, "two-fer") == b'  set(exercise "two-fer")\n'


def test_agent_edits_of_build_files_and_read_only_files_never_reach_grading(suite):
    go = suite.get("go__leap")
    assert {"go.mod", "cases_test.go"} <= set(go.hidden_tests) and "cases_test.go" in go.repo
    assert go.is_protected("go.mod") and go.is_protected("cases_test.go") and not go.is_protected("leap.go")
    cpp = suite.get("cpp__leap")
    assert cpp.is_protected("CMakeLists.txt") and cpp.is_protected("test/catch.hpp")
    assert not cpp.is_protected("leap.cpp")


def test_language_filter_and_errors(tmp_path):
    assert [t.id for t in load_polyglot(FIXTURE, ["go", "rust"])] == ["go__leap", "rust__leap"]
    with pytest.raises(TaskError, match="unknown polyglot language"):
        load_polyglot(FIXTURE, ["cobol"])
    with pytest.raises(TaskError, match="no polyglot checkout"):
        load_polyglot(tmp_path / "absent")
    with pytest.raises(TaskError, match="holds no exercises"):
        load_polyglot(tmp_path)


def test_suite_by_name_needs_a_checkout(monkeypatch):
    monkeypatch.delenv("EVOLVE_POLYGLOT_DIR", raising=False)
    with pytest.raises(TaskError, match="--polyglot-dir"):
        load_suite("polyglot")
    assert len(load_suite("polyglot", polyglot_dir=FIXTURE)) == len(LANGUAGES)
    monkeypatch.setenv("EVOLVE_POLYGLOT_DIR", str(FIXTURE))
    assert len(load_suite("polyglot")) == len(LANGUAGES)


def test_dgm_subsets_select_by_name_and_language(tmp_path):
    assert len(POLYGLOT_SUBSETS["small"]) == 10 and len(POLYGLOT_SUBSETS["medium"]) == 50
    python_small = [i for i in POLYGLOT_SUBSETS["small"] if i.startswith("python__")]
    for task_id in python_small:  # a checkout that holds just those exercises
        shutil.copytree(
            FIXTURE / "python" / "exercises" / "practice" / "leap",
            tmp_path / "python" / "exercises" / "practice" / task_id.split("__")[1],
        )
    chosen = polyglot_suite("polyglot:small", tmp_path, ["python"])
    assert [t.id for t in chosen] == python_small
    with pytest.raises(TaskError, match="lacks"):
        polyglot_suite("polyglot:small", tmp_path)
    with pytest.raises(TaskError, match="unknown polyglot subset"):
        polyglot_suite("polyglot:huge", tmp_path)


def test_a_java_reference_of_several_classes_adds_each_beside_the_solution(tmp_path):
    exercise = tmp_path / "java" / "exercises" / "practice" / "leap"
    shutil.copytree(FIXTURE / "java" / "exercises" / "practice" / "leap", exercise)
    (exercise / ".meta" / "src" / "reference" / "java" / "Year.java").write_text(
        "record Year(int value) {}\n"
    )
    config = json.loads((exercise / ".meta" / "config.json").read_text())
    config["files"]["example"].append(".meta/src/reference/java/Year.java")
    (exercise / ".meta" / "config.json").write_text(json.dumps(config))
    task = load_polyglot(tmp_path).get("java__leap")
    repo = write_files(task.repo, tmp_path / "repo")
    (tmp_path / "ref.diff").write_text(task.reference_patch)
    subprocess.run(["git", "apply", str(tmp_path / "ref.diff")], cwd=repo, check=True, capture_output=True)
    assert (repo / "src/main/java/Year.java").read_text() == "record Year(int value) {}\n"
    assert "year % 400" in (repo / "src/main/java/Leap.java").read_text()


def test_a_rust_reference_brings_its_own_manifest(tmp_path):
    exercise = tmp_path / "rust" / "exercises" / "practice" / "leap"
    shutil.copytree(FIXTURE / "rust" / "exercises" / "practice" / "leap", exercise)
    manifest = (
        '[package]\nedition = "2021"\nname = "leap"\nversion = "1.0.0"\n\n[dependencies]\nanyhow = "1.0"\n'
    )
    (exercise / ".meta" / "Cargo-example.toml").write_text(manifest)
    task = load_polyglot(tmp_path).get("rust__leap")
    assert (
        "diff --git a/Cargo.toml b/Cargo.toml" in task.reference_patch and "+anyhow" in task.reference_patch
    )


# Per-test reports: each runner's real output (tests/data/reports, as the tools wrote them for the
# fixture's leap with a naive `year % 4 == 0`), parsed as the root grader parses it, against the names
# derived from the hidden tests.
REPORTS = Path(__file__).resolve().parents[2] / "data" / "reports"
NAIVE = {  # protocol -> (report file, the tests the naive solution fails)
    "catch2": (
        "catch2.xml",
        ["divisible_by_100_not_divisible_by_400", "divisible_by_200_not_divisible_by_400"],
    ),
    "libtest": ("libtest.json", ["year_divisible_by_100_not_by_400"]),
    "junit": ("TEST-junit-jupiter.xml", ["LeapTest#testYearDivBy100NotBy400"]),
    "jest": (
        "jest.json",
        ["/tmp/h14p/js/leap.spec.js::year divisible by 100, not divisible by 400 in common year"],
    ),
    # go fails the package too: a failure like any other
    "gotest": ("go.json", ["TestLeapYears", "package leap"]),
}


def _job(protocol, expected):
    return {"results": protocol, "expected": expected, "timeout": 1}


@pytest.mark.parametrize("protocol", sorted(NAIVE))
def test_each_runner_report_names_every_test_and_its_outcome(protocol):
    name, failing = NAIVE[protocol]
    records = reports.parse(protocol, {name: (REPORTS / name).read_bytes()})
    assert [r["test"] for r in records if r["outcome"] == "failed"] == failing
    outcome, detail = judge(_job(protocol, [failing[0]]), 0, "", False, records)
    assert outcome == "fail" and detail.startswith(f"{len(failing)} test(s) failed")


@pytest.mark.parametrize("language", [lang for lang in LANGUAGES if lang != "python"])
def test_expected_names_come_from_the_hidden_sources(suite, language):
    task = suite.get(f"{language}__leap")
    names = expected_tests(task)
    assert (
        names
        == {
            "cpp": [
                "not_divisible_by_4",
                "divisible_by_4_not_divisible_by_100",
                "divisible_by_100_not_divisible_by_400",
                "divisible_by_400",
            ],  # not the commented-out one
            "go": ["TestLeapYears"],
            "rust": ["year_not_divisible_by_4", "year_divisible_by_100_not_by_400", "year_divisible_by_400"],
            "java": [
                "LeapTest#testYearNotDivBy4",
                "LeapTest#testYearDivBy100NotBy400",
                "LeapTest#testYearDivBy400",
            ],
            "javascript": [
                f"leap.spec.js::{t}"
                for t in (
                    "year not divisible by 4 in common year",
                    "year divisible by 100, not divisible by 400 in common year",
                    "year divisible by 400 is leap year",
                )
            ],
        }[language]
    )


def _passing(protocol, name):
    """The naive report with its one failure turned into a pass, as a correct solution's report reads."""
    data = (REPORTS / name).read_text()
    if protocol == "catch2":
        data = data.replace('success="false"', 'success="true"')
    elif protocol == "libtest":
        data = data.replace('"event": "failed"', '"event": "ok"')
    elif protocol == "junit":
        data = re.sub(r"<failure .*?</failure>\n", "", data, flags=re.DOTALL)
    elif protocol == "jest":
        data = data.replace('"status":"failed"', '"status":"passed"')
    else:
        data = data.replace('"Action":"fail"', '"Action":"pass"')
    return {name: data.encode()}


@pytest.mark.parametrize(
    ("language", "protocol"),
    [("cpp", "catch2"), ("rust", "libtest"), ("java", "junit"), ("javascript", "jest"), ("go", "gotest")],
)
def test_a_report_passes_only_when_it_names_every_expected_test_passed(suite, language, protocol):
    name, _ = NAIVE[protocol]
    task = suite.get(f"{language}__leap")
    expected = expected_tests(task)
    # the real Catch2 report is of exercism's leap, whose names differ from the fixture's
    if language == "cpp":
        expected = ["not_divisible_by_4", "divisible_by_100_not_divisible_by_400"]
    records = reports.parse(protocol, _passing(protocol, name))
    assert judge(_job(protocol, expected), 0, "", False, records)[0] == "pass"
    # exit status decides nothing: a failing status with a full report passes, a clean one without fails
    assert judge(_job(protocol, expected), 1, "", False, records)[0] == "pass"
    missing = judge(_job(protocol, [*expected, "never_ran"]), 0, "All tests passed", False, records)
    assert missing[0] == "fail" and "never_ran" in missing[1]
    assert judge(_job(protocol, []), 0, "", False, records)[0] == "fail"  # nothing expected proves nothing


def test_a_missing_or_foreign_report_fails():
    assert (
        judge(_job("catch2", ["x"]), 0, "", False, [{"error": "the tests wrote no per-test report"}])[0]
        == "fail"
    )
    with pytest.raises(reports.ReportError):
        reports.parse("catch2", {"catch2.xml": b"All tests passed (4 assertions in 4 test cases)\n"})
    with pytest.raises(reports.ReportError):
        reports.parse("jest", {"jest.json": b"PASS ./leap.spec.js\n"})
    # line streams skip what is not a JSON object (the tested code shares stdout), adding no pass
    noisy = b'test result: ok. 3 passed\n{ "type": "test", "name": "x", "event": "ok" }\n'
    assert reports.parse("libtest", {"l.json": noisy}) == [{"test": "x", "outcome": "passed", "message": ""}]


def test_reports_are_read_as_plain_files_only(tmp_path):
    (tmp_path / "real.xml").write_text("<Catch/>")
    (tmp_path / "secret").write_text("root only")
    (tmp_path / "link.xml").symlink_to(tmp_path / "secret")
    os.link(tmp_path / "secret", tmp_path / "hard.xml")
    (tmp_path / "dir.xml").mkdir()
    assert reports.read_reports(str(tmp_path)) == {"real.xml": b"<Catch/>"}


def test_names_in_comments_strings_and_disabled_forms_are_not_expected():
    cpp = (
        '// TEST_CASE("gone")\n/* TEST_CASE("gone too") */\nTEST_CASE("a \\"quoted\\" // name") {}\n'
        'TEST_CASE("hidden", "[.]") {}\nSCENARIO("story") {}\nTEST_CASE_METHOD(Fixture, "method") {}\n'
        "int big = 1'000'000;\nTEST_CASE(\"after separators\") {}\n"
    )
    assert names.catch2_names("t.cpp", cpp) == [
        'a "quoted" // name',
        "Scenario: story",
        "method",
        "after separators",
    ]
    gated = (
        'TEST_CASE("first") {}\n#if defined(EXERCISM_RUN_ALL_TESTS)\nTEST_CASE("all") {}\n'
        '#if defined(EXERCISM_INCLUDE_BENCHMARK)\nTEST_CASE("benchmark") {}\n#endif\n#ifndef X\n'
        'TEST_CASE("not x") {}\n#else\nTEST_CASE("x") {}\n#endif\n#endif\n'
    )
    assert names.catch2_names("t.cpp", gated) == ["first", "all", "not x"]  # as the build compiles it
    go = (
        "func TestMain(m *testing.M) {}\nfunc Testify(t *testing.T) {}\nfunc TestA(t *testing.T) {}\n"
        "// func TestB(t *testing.T) {}\nvar s = `//`\nfunc Test_D(tt *testing.T) {}\n"
    )
    assert names.go_names("x_test.go", go) == ["TestA", "Test_D"]
    rust = (
        "#[test]\n#[ignore]\nfn one() {}\n// #[test]\n// fn two() {}\nfn helper<'a>(s: &'a str) {}\n"
        '#[test]\n#[should_panic(expected = "x")]\nfn three() { let c = \'"\'; }\n'
    )
    assert names.rust_names("tests/t.rs", rust) == ["one", "three"]
    gated = (
        '#[cfg(feature = "io")]\nmod io {\n    #[test]\n    fn reader() { if true { } }\n}\n'
        '#[test]\n#[cfg(feature = "x")]\nfn exp() {}\n#[test]\nfn plain() {}\n'
        '#[cfg(not(feature = "x"))]\n#[test]\nfn without_x() {}\n'
    )
    assert names.rust_names("tests/t.rs", gated) == ["plain", "without_x"]  # no features are built
    java = (
        'package org.leap;\n\nclass T {\n  @Test\n  @DisplayName("d")\n  public void a() {}\n  // @Test void '
        "b() {}\n"
        "  @ParameterizedTest\n  @ValueSource(ints = {1})\n  void c(int x) {}\n  void helper() {}\n}\n"
    )
    assert names.java_names("src/test/java/org/leap/T.java", java) == ["org.leap.T#a", "org.leap.T#c"]
    js = (
        "describe('d', () => {\n  test('a \\'b\\'', () => {});\n  // test('gone', () => {});\n"
        "  it(\"c\", () => {});\n  test.each([1])('each %s', () => {});\n  test(`tpl`, () => {});\n"
        "  test(`tpl ${x}`, () => {});\n  xtest('skipped', () => {});\n});\n"
    )
    assert names.jest_names("a.spec.js", js) == ["a.spec.js::a 'b'", "a.spec.js::c", "a.spec.js::tpl"]


def test_reported_ids_match_as_the_runners_report_them():
    """A test of the same name elsewhere (jest's __tests__, a Java class in another package) is not the
    hidden one, so it cannot stand in for a hidden test that never ran."""
    assert reports.matches("jest", "/tmp/x/repo/leap.spec.js::t", "leap.spec.js::t")
    assert not reports.matches("jest", "/tmp/x/repo/other-leap.spec.js::t", "leap.spec.js::t")
    assert not reports.matches("jest", "/tmp/x/repo/__tests__/x.js::t", "leap.spec.js::t")
    xml = (
        b'<testsuite><testcase name="m()" classname="evil.LeapTest$Inner"/><testcase name="n(int)[1]" '
        b'classname="LeapTest"/></testsuite>'
    )
    assert [r["test"] for r in reports.parse("junit", {"TEST-x.xml": xml})] == [
        "evil.LeapTest#m",
        "LeapTest#n",
    ]
    assert not reports.matches("junit", "evil.LeapTest#m", "LeapTest#m")
    assert reports.matches("libtest", "tests::one", "one") and not reports.matches(
        "libtest", "tests::done", "one"
    )
    assert not reports.matches("catch2", "divisible_by_400 ", "divisible_by_400")


@pytest.mark.parametrize(
    ("manifest", "refused"),
    [
        ('[package]\nname = "leap"\nversion = "1.0.0"\n\n[dependencies]\nrand = "0.8"\n', False),
        ('[dev-dependencies]\ntesting = "1"\n', False),
        ('[[test]]\nname = "leap"\npath = "src/fake.rs"\n', True),
        ('test = [{ name = "leap", path = "src/fake.rs" }]\n', True),
        ('[package]\nname = "leap"\nautotests = false\n', True),
        ('[package]\nbuild = "gen.rs"\n', True),
        ("package.autotests = false\n", True),
        ("[lib]\nharness = false\n", True),
        ('[patch.crates-io]\nrand = { path = "r" }\n', True),
        ("[ workspace ]\n", True),
        ('[dependencies]\nmacros = { path = "macros" }\n', True),
        ('[dependencies.macros]\npath = "macros"\n', True),
        ("[lib]\nproc-macro = true\n", True),
        ("lib = { proc_macro = true }\n", True),
    ],
)
def test_a_rust_manifest_that_could_swap_the_hidden_tests_fails_the_build(tmp_path, manifest, refused):
    (tmp_path / "Cargo.toml").write_text(manifest)
    guard = SPECS["rust"].build_command.split(" && CARGO_TARGET_DIR", 1)[0]
    done = subprocess.run(["bash", "-c", guard], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert (done.returncode != 0) == refused, done.stderr
