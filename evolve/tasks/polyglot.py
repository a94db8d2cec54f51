"""Polyglot as tasks: Aider's Exercism-based benchmark (225 exercises in six languages), as DGM and HGM use
it.

A checkout has `<language>/exercises/practice/<exercise>/` with `.docs/*.md` (the statement),
`.meta/config.json` (which files are the solution stubs, the tests and the example), the stubs and
the tests. Each exercise becomes a task `<language>__<exercise>` (DGM's ids): the stubs are the repo,
the tests are hidden, the example (`.meta/example.*`, `.meta/proof.ci.js`,
`.meta/src/reference/...`) is the reference. Python runs in the base image, the other languages in
the image built from `sandboxes/polyglot/`, with the test commands the benchmark intends: every test
enabled (no `@Disabled`, `xtest`, `#[ignore]`, and `EXERCISM_RUN_ALL_TESTS` for C++). Each language's
runner writes its per-test report (Catch2 XML, `go test -json`, libtest JSON, JUnit XML, jest JSON) into
a directory the root grader makes after the build; only that report decides (evolve.tasks.grader_reports).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import MappingProxyType

from evolve.tasks.diffs import files_diff
from evolve.tasks.types import (
    DEFAULT_PROTECTED,
    ResultsProtocol,
    Split,
    Task,
    TaskError,
    TaskSuite,
    read_files,
)

BASE_IMAGE = "evolve-base:latest"
POLYGLOT_IMAGE = "evolve-polyglot:latest"
STATEMENT_DOCS = ("introduction.md", "instructions.md", "instructions.append.md")
"""The statement, in this order (as Aider's benchmark assembles it); other docs are appended."""

_JUNIT = "/usr/share/java/junit-platform-console-standalone.jar"
_ASSERTJ = "/usr/share/java/assertj-core.jar"
_RUST_MANIFEST_GUARD = (
    "! grep -nEi "
    '\'^[[:space:]]*(\\[\\[?[[:space:]]*"?(test|bench|workspace|patch|replace)\\b|([a-z_."-]*\\.)?"?'
    '(test|autotests|harness|build|workspace)"?[[:space:]]*=)|\\b(path|proc[-_]macro)"?[[:space:]]*=\' '
    "Cargo.toml"
    " || { echo 'Cargo.toml declares test targets, a harness, a build script, a proc-macro, paths or patches:"
    " refused' >&2;"
    " false; }"
)
"""The agent edits Cargo.toml (the references add crates), but a manifest that names its own test targets
(`[[test]] name = "leap" path = ...`) would swap the hidden tests for its own, and a proc-macro (the
crate itself, or a path dependency of its own) runs its code in the build, where it could replace the
built test binary: such a manifest fails. Crates come only from Debian's packaged registry."""


@dataclass(frozen=True)
class LanguageSpec:
    """How one language's exercises are graded: `build_command`, then `test_command`, which writes the
    runner's per-test report (format `results`) into $EVOLVE_REPORT_DIR (evolve.tasks.grader_reports).
    Both run in the repo; $EVOLVE_BUILD_DIR is a fresh directory outside it; `{exercise}` and `{tests}`
    (Rust's hidden test targets) are filled in per exercise."""

    test_command: str
    tests_dir: str
    """Where the exercise keeps test support files; the agent's changes there are dropped."""
    build_files: tuple[str, ...]
    """File names that decide how the tests build and run: restored at grading, like the tests."""
    test_timeout_s: float
    results: ResultsProtocol
    build_command: str = ""
    image: str = POLYGLOT_IMAGE


SPECS: Mapping[str, LanguageSpec] = MappingProxyType(
    {
        "cpp": LanguageSpec(
            '"$EVOLVE_BUILD_DIR/{exercise}" -r xml -o "$EVOLVE_REPORT_DIR/catch2.xml"',
            "test",
            ("CMakeLists.txt",),
            300.0,
            "catch2",
            'cmake -S . -B "$EVOLVE_BUILD_DIR" -DEXERCISM_RUN_ALL_TESTS=1 -G "Unix Makefiles" >/dev/null '
            '&& cmake --build "$EVOLVE_BUILD_DIR" --target "{exercise}"',
        ),
        "go": LanguageSpec(
            'go test -json ./... > "$EVOLVE_REPORT_DIR/go.json"',
            "tests",
            ("go.mod", "go.sum"),
            180.0,
            "gotest",
        ),
        "java": LanguageSpec(
            f'java -jar {_JUNIT} --class-path "$EVOLVE_BUILD_DIR":{_ASSERTJ} --scan-class-path '
            "--fail-if-no-tests "
            '--disable-banner --details=tree --reports-dir="$EVOLVE_REPORT_DIR"',
            "src/test",
            ("build.gradle", "settings.gradle"),
            180.0,
            "junit",
            f'javac -nowarn -encoding UTF-8 -d "$EVOLVE_BUILD_DIR" -cp {_JUNIT}:{_ASSERTJ} $(find src '
            "-name '*.java')",
        ),
        "javascript": LanguageSpec(
            'ln -sfn "$POLYGLOT_NODE_MODULES" node_modules && node node_modules/jest/bin/jest.js --ci '
            '--json --outputFile="$EVOLVE_REPORT_DIR/jest.json" ./*',
            "tests",
            ("package.json", "babel.config.js", ".npmrc"),
            180.0,
            "jest",
        ),
        "python": LanguageSpec(
            "python3 -m pytest -q -p no:cacheprovider", "tests", (), 60.0, "pytest", image=BASE_IMAGE
        ),
        # libtest's JSON is unstable: RUSTC_BOOTSTRAP lets the test binaries print it (cargo does not
        # rebuild); --no-fail-fast: a failing canary must not stop the next test target.
        "rust": LanguageSpec(
            'CARGO_TARGET_DIR="$EVOLVE_BUILD_DIR" RUSTC_BOOTSTRAP=1 cargo test --offline --no-fail-fast '
            "{tests} -- "
            "--include-ignored "
            '-Z unstable-options --format json > "$EVOLVE_REPORT_DIR/libtest.json"',
            "tests",
            (),
            300.0,
            "libtest",
            _RUST_MANIFEST_GUARD
            + ' && CARGO_TARGET_DIR="$EVOLVE_BUILD_DIR" cargo test --offline --no-run {tests}',
        ),
    }
)
LANGUAGES: tuple[str, ...] = tuple(SPECS)

STATEMENT = """{docs}

# Your task

Solve the exercise above in {language} by editing {files}. The tests are hidden; they use the names
the stubs define, so keep those names and signatures. Use only the standard library."""


def split_of(task_id: str) -> Split:
    """A fixed split by a hash of the id: one task in five is held out."""
    return "heldout" if int(hashlib.sha256(task_id.encode()).hexdigest(), 16) % 5 == 4 else "dev"


def exercise_dirs(root: Path, languages: Iterable[str] | None = None) -> list[tuple[str, Path]]:
    """(language, exercise dir) for every exercise of `languages` (all by default) under a checkout."""
    chosen = list(languages) if languages else list(LANGUAGES)
    unknown = [lang for lang in chosen if lang not in SPECS]
    if unknown:
        raise TaskError(
            f"unknown polyglot language(s) {', '.join(unknown)}; choose from {', '.join(LANGUAGES)}"
        )
    if not root.is_dir():
        raise TaskError(
            f"no polyglot checkout at {root} (git clone https://github.com/Aider-AI/polyglot-benchmark)"
        )
    found = [
        (lang, d)
        for lang in chosen
        for d in sorted((root / lang / "exercises" / "practice").glob("*"))
        if (d / ".meta" / "config.json").is_file()
    ]
    if not found:
        raise TaskError(
            f"{root} holds no exercises of {', '.join(chosen)} "
            "(expected <language>/exercises/practice/<exercise>/.meta/config.json)"
        )
    return found


def load_polyglot(
    root: Path,
    languages: Iterable[str] | None = None,
    *,
    ids: Iterable[str] | None = None,
    image: str = POLYGLOT_IMAGE,
) -> TaskSuite:
    """The polyglot suite from a checkout; `ids` (e.g. a DGM subset) keeps only those tasks, in that order."""
    tasks = {
        t.id: t for t in (load_exercise(lang, d, image=image) for lang, d in exercise_dirs(root, languages))
    }
    if ids is None:
        return TaskSuite("polyglot", tuple(tasks.values()))
    wanted = list(ids)
    missing = [i for i in wanted if i not in tasks]
    if missing:
        raise TaskError(
            f"{root} lacks {len(missing)} of the chosen polyglot tasks, e.g. {', '.join(missing[:3])}"
        )
    return TaskSuite("polyglot", tuple(tasks[i] for i in wanted))


def load_exercise(language: str, exercise: Path, *, image: str = POLYGLOT_IMAGE) -> Task:
    spec = SPECS[language]
    try:
        config = json.loads((exercise / ".meta" / "config.json").read_text())["files"]
    except (OSError, ValueError, KeyError) as exc:
        raise TaskError(f"{exercise}/.meta/config.json: {exc}") from exc
    solution, tests = list(config.get("solution", [])), set(config.get("test", []))
    files = {rel: data for rel, data in read_files(exercise).items() if not rel.startswith(".")}
    if language == "java":  # every test source, not only the listed ones
        tests |= {rel for rel in files if rel.startswith("src/test/")}
    missing = [rel for rel in [*solution, *tests] if rel not in files]
    if missing or not solution or not tests:
        raise TaskError(f"{exercise}: solution or test files missing ({', '.join(missing) or 'none listed'})")
    restored = [
        *config.get("editor", []),
        *config.get("invalidator", []),
        *(rel for rel in files if PurePosixPath(rel).name in spec.build_files),
    ]
    repo = {rel: data for rel, data in files.items() if rel not in tests}
    hidden = {rel: enable_all_tests(language, files[rel]) for rel in sorted(tests)}
    hidden |= {rel: files[rel] for rel in restored if rel in files and rel not in tests}
    if "CMakeLists.txt" in repo:  # it takes the exercise's name from its directory, which grading renames
        repo["CMakeLists.txt"] = hidden["CMakeLists.txt"] = name_cmake_project(
            repo["CMakeLists.txt"], exercise.name
        )
    task_id = f"{language}__{exercise.name}"
    examples = list(config.get("example", []))
    if (exercise / ".meta" / "Cargo-example.toml").is_file():
        examples.append(".meta/Cargo-example.toml")
    return Task(
        id=task_id,
        suite="polyglot",
        split=split_of(task_id),
        statement=statement(language, exercise, solution),
        repo=repo,
        hidden_tests=hidden,
        reference_patch=files_diff(repo, reference_files(exercise, examples, solution, repo)),
        test_command=fill(spec.test_command, exercise.name, hidden),
        build_command=fill(spec.build_command, exercise.name, hidden),
        results=spec.results,
        tests_dir=spec.tests_dir,
        image=BASE_IMAGE if language == "python" else image,
        language=language,
        agent_timeout_s=900.0,
        test_timeout_s=spec.test_timeout_s,
        protected=DEFAULT_PROTECTED + spec.build_files,
        tags=("polyglot", language),
    )


def fill(command: str, exercise: str, hidden: Mapping[str, bytes]) -> str:
    """A language's command for one exercise: its name, and Rust's test targets (`tests/X.rs` -> `--test X`:
    only the hidden tests run, never the agent's own)."""
    targets = [
        PurePosixPath(rel).stem
        for rel in sorted(hidden)
        if rel.startswith("tests/") and rel.endswith(".rs") and rel.count("/") == 1
    ]
    return command.replace("{exercise}", exercise).replace(
        "{tests}", " ".join(f"--test {t}" for t in targets)
    )


def statement(language: str, exercise: Path, solution: list[str]) -> str:
    docs_dir = exercise / ".docs"
    names = [n for n in STATEMENT_DOCS if (docs_dir / n).is_file()]
    names += sorted(p.name for p in docs_dir.glob("*.md") if p.name not in names)
    if not names:
        raise TaskError(f"{exercise}: no .docs/*.md statement")
    docs = "\n\n".join((docs_dir / n).read_text().strip() for n in names)
    return STATEMENT.format(docs=docs, language=language, files=", ".join(f"`{f}`" for f in solution))


def reference_files(
    exercise: Path, examples: list[str], solution: list[str], repo: Iterable[str] = ()
) -> dict[str, bytes]:
    """Example file -> where it goes. A generic name (`.meta/example.cpp`, `proof.ci.js`) replaces the
    solution file of its suffix; a real name (Java's `.meta/src/reference/java/Frame.java`) goes to the
    file of that name, or beside the solution file of its suffix."""
    mapped: dict[str, bytes] = {}
    for example in examples:
        path = PurePosixPath(example)
        same_suffix = next(
            (PurePosixPath(s) for s in solution if PurePosixPath(s).suffix == path.suffix), None
        )
        target: str | None
        if path.name == "Cargo-example.toml":  # the Rust example's manifest (its crates)
            target = "Cargo.toml"
        elif path.stem.split(".")[0] in ("example", "proof"):
            target = str(same_suffix) if same_suffix else None
        else:
            target = next((s for s in [*solution, *repo] if PurePosixPath(s).name == path.name), None)
            target = target or (str(same_suffix.parent / path.name) if same_suffix else None)
        if target is None:
            raise TaskError(f"{exercise}: no solution file for the example {example}")
        mapped[target] = (exercise / example).read_bytes()
    if not mapped:
        raise TaskError(f"{exercise}: .meta/config.json names no example")
    return mapped


_CMAKE_NAME = re.compile(
    rb"^([ \t]*)get_filename_component\(exercise \$\{CMAKE_CURRENT_SOURCE_DIR\} NAME\)", re.MULTILINE
)


def name_cmake_project(cmake: bytes, exercise: str) -> bytes:
    """Exercism's CMakeLists name the build after the directory; pin the exercise's name instead (as DGM
    does)."""
    return _CMAKE_NAME.sub(lambda m: m.group(1) + f'set(exercise "{exercise}")'.encode(), cmake)


_DISABLED = re.compile(rb"^[ \t]*@Disabled(\([^)]*\))?[ \t]*\r?\n", re.MULTILINE)
_XTEST = re.compile(rb"\bx(test|it)\(")


def enable_all_tests(language: str, source: bytes) -> bytes:
    """The benchmark runs every test: Java's `@Disabled` and JavaScript's `xtest` are skips to undo."""
    if language == "java":
        return _DISABLED.sub(b"", source)
    if language == "javascript":
        return _XTEST.sub(rb"\1(", source)
    return source


def polyglot_suite(
    name: str,
    polyglot_dir: Path | None = None,
    languages: Iterable[str] | None = None,
    *,
    image: str | None = None,
) -> TaskSuite:
    """`polyglot` (every exercise) or `polyglot:SUBSET` (a DGM subset), from `polyglot_dir` or
    $EVOLVE_POLYGLOT_DIR; its other languages' image is `image`, else $EVOLVE_POLYGLOT_IMAGE (e.g. the
    C++-only `evolve-polyglot:cpp` CI builds), else evolve-polyglot:latest."""
    image = image or os.environ.get("EVOLVE_POLYGLOT_IMAGE") or POLYGLOT_IMAGE
    root = polyglot_dir or (
        Path(os.environ["EVOLVE_POLYGLOT_DIR"]) if os.environ.get("EVOLVE_POLYGLOT_DIR") else None
    )
    if root is None:
        raise TaskError(
            "the polyglot suite reads a checkout of the benchmark: pass --polyglot-dir DIR, set "
            "tasks.polyglot_dir or EVOLVE_POLYGLOT_DIR (git clone "
            "https://github.com/Aider-AI/polyglot-benchmark)"
        )
    _, _, subset = name.partition(":")
    ids = polyglot_subset(subset) if subset else None
    if ids is not None and languages:
        chosen = set(languages)
        ids = tuple(i for i in ids if i.split("__", 1)[0] in chosen)
    return load_polyglot(root, languages, ids=ids, image=image)


def polyglot_subset(name: str) -> tuple[str, ...]:
    """A DGM/HGM subset of polyglot ids by name (`small`: 10, `medium`: 50)."""
    from evolve.tasks.subsets import POLYGLOT_SUBSETS

    if name not in POLYGLOT_SUBSETS:
        raise TaskError(f"unknown polyglot subset {name!r}; choose from {', '.join(POLYGLOT_SUBSETS)}")
    return POLYGLOT_SUBSETS[name]
