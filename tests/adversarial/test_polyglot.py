"""Attacks on the polyglot grader of a compiled language (C++: the only polyglot image CI builds), in one
shared grading sandbox: a solution that prints Catch2's summary or report and exits 0, pre-seeds report
files, or forges the report from inside the test binary gets no credit; honest twins pass."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from evolve.sandbox.factory import grading_sandbox
from evolve.tasks.grading import GradeItem, grade_in
from evolve.tasks.polyglot import load_polyglot
from evolve.tasks.tree_diff import diff_trees, tree_entries
from evolve.tasks.types import write_files

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "data" / "polyglot"
NAMES = (
    "not_divisible_by_4",
    "divisible_by_4_not_divisible_by_100",
    "divisible_by_100_not_divisible_by_400",
    "divisible_by_400",
)
PASSING_XML = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<Catch name="leap">\n  <Group name="leap">\n'
    + "".join(
        f'    <TestCase name="{n}">\n      <OverallResult success="true"/>\n    </TestCase>\n' for n in NAMES
    )
    + "  </Group>\n</Catch>\n"
)
"""The report a correct solution gets, with the real names (which an agent never sees)."""
WRONG = (
    '#include "leap.h"\n#include <cstdio>\n#include <cstdlib>\n#include <fstream>\n#include <string>\n'
    "#include <unistd.h>\n\nnamespace leap {\nbool is_leap_year(int) { return false; }\n}  // namespace "
    "leap\n"
)
"""A wrong solution, to which each attack adds its trick."""
C_XML = PASSING_XML.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")

SEEDED = {p: PASSING_XML for p in ("catch2.xml", "build/catch2.xml", "report/catch2.xml")}
ATTACKS = {  # each a C++ build (seconds on a loaded machine), so related tricks share one
    # Before main, from a static constructor: Catch2's console summary, and the report (with the real
    # names) wherever a runner might write it (the repo, the build dir, /tmp), then exit 0; the patch
    # also brings report files of its own.
    "summary-and-guessed-reports-before-main": {
        "leap.cpp": WRONG
        + (
            "namespace { struct Lie { Lie() {\n"
            '  std::puts("All tests passed (4 assertions in 4 test cases)");\n'
            '  for (const char* p : {"catch2.xml", "../build/catch2.xml", "/tmp/catch2.xml"}) {\n'
            f'    std::ofstream(p) << "{C_XML}"; }}\n'
            "  std::fflush(stdout); _exit(0); } } lie; }\n"
        ),
        **SEEDED,
    },
    # Catch2's XML report (the real names) on stdout from an atexit handler, then exit 0.
    "xml-on-stdout-at-exit": {
        "leap.cpp": WRONG
        + (
            f'static void lie() {{ std::fputs("{C_XML}", stdout); std::fflush(stdout); _exit(0); }}\n'
            "namespace { struct Reg { Reg() { std::atexit(lie); } } reg; }\n"
        )
    },
    # From inside the test binary, into the real report directory, with names read from the hidden
    # test source (root seals it after the build, so the forger finds no names).
    "xml-from-the-hidden-source": {
        "leap.cpp": WRONG
        + (
            "namespace { struct Forge { Forge() {\n"
            '  std::ifstream src("leap_test.cpp");\n'
            '  std::string text, line, xml = "<Catch><Group>";\n'
            "  while (std::getline(src, line)) text += line;\n"
            '  for (size_t at = text.find("TEST_CASE(\\""); at != std::string::npos; at = '
            'text.find("TEST_CASE(\\"", at + 1)) {\n'
            "    size_t start = at + 11, end = text.find('\"', start);\n"
            '    xml += "<TestCase name=\\"" + text.substr(start, end - start) + "\\"><OverallResult '
            'success=\\"true\\"/></TestCase>";\n'
            "  }\n"
            '  const char* dir = std::getenv("EVOLVE_REPORT_DIR");\n'
            '  if (dir) std::ofstream(std::string(dir) + "/catch2.xml") << xml << "</Group></Catch>";\n'
            "  _exit(0); } } forge; }\n"
        )
    },
}
FROM_THE_BINARY = {
    "leap.cpp": WRONG
    + (
        # Every printable run in its own executable (the test names among them: Catch2 keeps them as string
        # literals) reported passed, into the real report directory, before main: only a canary, a name
        # among the others that must fail, tells this report from an honest one.
        "namespace { struct Forge { Forge() {\n"
        '  std::ifstream self("/proc/self/exe", std::ios::binary);\n'
        '  std::string bytes((std::istreambuf_iterator<char>(self)), {}), run, xml = "<Catch><Group>";\n'
        "  for (char c : bytes) {\n"
        "    if (std::isalnum((unsigned char)c) || c == '_' || c == ' ') { run += c; continue; }\n"
        '    if (run.size() >= 3) xml += "<TestCase name=\\"" + run + "\\"><OverallResult '
        'success=\\"true\\"/></TestCase>";\n'
        "    run.clear();\n  }\n"
        '  const char* dir = std::getenv("EVOLVE_REPORT_DIR");\n'
        '  if (dir) std::ofstream(std::string(dir) + "/catch2.xml") << xml << "</Group></Catch>";\n'
        "  _exit(0); } } forge; }\n"
    )
}
"""Names read out of the test binary itself, which root cannot seal: a forgery only the canaries catch."""
NO_OP_ASSERTIONS = {
    "leap.h": (
        # The header the hidden tests include first takes Catch2 in and turns its assertions into no-ops:
        # every test, canaries included, then passes for Catch2 itself.
        '#pragma once\n#include "test/catch.hpp"\n'
        + "".join(
            f"#undef {m}\n#define {m}(...) ((void)0)\n"
            for m in ("REQUIRE", "CHECK", "REQUIRE_FALSE", "CHECK_FALSE")
        )
        + "\nnamespace leap {\nbool is_leap_year(int year);\n}  // namespace leap\n"
    ),
    "leap.cpp": WRONG,
}
"""A blanket forgery from inside the test build, with no report written: the canaries' rule."""


@pytest.fixture(scope="module")
def cpp_box(polyglot_cpp_image):
    """One grading sandbox on a polyglot image with the C++ toolchain (the session's, tests/conftest.py)."""
    with grading_sandbox(polyglot_cpp_image, "adversarial-polyglot") as box:
        yield box


@pytest.fixture(scope="module")
def task():
    return load_polyglot(FIXTURE, ["cpp"]).get("cpp__leap")


def _patch(task, tree: Path, files: dict[str, str], *, fix: bool = False) -> str:
    write_files(task.repo, tree)
    for rel, text in files.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    return diff_trees(task.repo, tree_entries(tree)) + (task.reference_patch if fix else "")


NOISY = (
    '#include "leap.h"\n#include <cstdio>\n\nnamespace leap {\n'
    "bool is_leap_year(int year) {\n"
    '    std::printf("<TestCase name=\\"x\\"> All tests passed\\n");\n'
    "    return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);\n}\n}  // namespace leap\n"
)
"""An honest solution that prints what looks like a report, beside a file named like one."""


@pytest.fixture(scope="module")
def grades(cpp_box, task, tmp_path_factory):
    """Every attack and twin, graded side by side in one call (a C++ build takes seconds each)."""
    items = dict(
        ATTACKS, **{"names-from-its-own-binary": FROM_THE_BINARY, "no-op-assertions": NO_OP_ASSERTIONS}
    )
    items["honest"] = {"leap.cpp": NOISY, "catch2.xml": "not a report"}
    root = tmp_path_factory.mktemp("polyglot-attacks")
    patches = [GradeItem(name, task, _patch(task, root / name, files)) for name, files in items.items()]
    done = grade_in(cpp_box, patches, workers=2, remote=f"/tmp/grade-{uuid.uuid4().hex[:8]}")
    return {g.key: g for g in done}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_printed_or_forged_catch2_result_gets_no_credit(grades, attack):
    grade = grades[attack]
    assert grade.outcome == "fail", (grade.detail, grade.output[-2000:])
    if attack != "xml-on-stdout-at-exit":  # that one lies after the real report is written, failures and all
        assert "no per-test report" in grade.detail or "unreadable" in grade.detail, grade.detail


@pytest.mark.parametrize("attack", ["names-from-its-own-binary", "no-op-assertions"])
def test_a_verdict_forged_from_inside_the_test_build_is_caught_by_the_canaries(grades, attack):
    grade = grades[attack]
    assert grade.outcome == "forged", (grade.detail, grade.output[-2000:])
    assert "canary test" in grade.detail and "reported passed beside it" in grade.detail


EXPECT_PATCHED = (  # jest's global `expect`, replaced when the hidden test imports the solution
    "const never = new Proxy(function () {}, { get: () => never, apply: () => never });\n"
    "globalThis.expect = () => never;\n"
    "export const isLeap = () => false;\n"
)
HONEST_JS = "export const isLeap = (year) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);\n"


def test_javascript_an_expect_patched_by_the_solution_is_forged_and_an_honest_one_passes(
    docker_client, tmp_path
):
    """Where the full polyglot image is built (`sandboxes/polyglot/build.sh`; CI builds C++ only)."""
    import docker.errors

    try:
        docker_client.images.get("evolve-polyglot:latest")
    except docker.errors.ImageNotFound:
        pytest.skip("evolve-polyglot:latest (all five languages) is not built here")
    task = load_polyglot(FIXTURE, ["javascript"], image="evolve-polyglot:latest").get("javascript__leap")
    items = [
        GradeItem(name, task, _patch(task, tmp_path / name, {"leap.js": text}))
        for name, text in (("forged", EXPECT_PATCHED), ("honest", HONEST_JS))
    ]
    with grading_sandbox("evolve-polyglot:latest", "adversarial-jest") as box:
        done = {g.key: g for g in grade_in(box, items, remote=f"/tmp/grade-{uuid.uuid4().hex[:8]}")}
    assert done["forged"].outcome == "forged", done["forged"].detail
    assert done["honest"].outcome == "pass", (done["honest"].detail, done["honest"].output[-2000:])


def test_twin_an_honest_solution_that_prints_and_leaves_files_passes(grades):
    grade = grades["honest"]
    assert grade.outcome == "pass", (grade.detail, grade.output[-2000:])
    assert grade.detail == f"{len(NAMES)} tests pass"
