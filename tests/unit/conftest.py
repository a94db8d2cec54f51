from __future__ import annotations

from pathlib import Path

import pytest

from evolve.archive import Run


def write_code(directory: Path, files: dict[str, str]) -> Path:
    """Replace the contents of `directory` with `files` (relative path → text)."""
    directory.mkdir(parents=True, exist_ok=True)
    for old in sorted(directory.rglob("*"), reverse=True):
        if old.is_file():
            old.unlink()
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return directory


@pytest.fixture
def run(tmp_path: Path):
    with Run.create(tmp_path / "run") as created:
        yield created


@pytest.fixture
def code(tmp_path: Path):
    """A factory of code directories: code({"a.py": "..."}) -> Path."""
    counter = iter(range(1_000_000))

    def make(files: dict[str, str]) -> Path:
        return write_code(tmp_path / f"code-{next(counter)}", files)

    return make


@pytest.fixture
def build_run(run, code):
    """A small run: a root, two children, an invalid grandchild, results, a job with exchanges."""

    def build():
        root = run.add_node(code({"agent.py": "v = 0\n", "bin/data.bin": "\x00\x01"}))
        a = run.add_node(
            code({"agent.py": "v = 1\n"}), parent=root.id, origin="self_modify", instructions="one"
        )
        b = run.add_node(
            code({"agent.py": "v = 2\n"}), parent=root.id, origin="self_modify", instructions="two"
        )
        c = run.add_node(
            code({"agent.py": "v = 3\n"}),
            parent=a.id,
            origin="self_modify",
            status="invalid",
            reason="tests fail",
        )
        for node, outcomes in ((root, "pf"), (a, "ppf"), (b, "fi")):
            for index, letter in enumerate(outcomes):
                run.record_evaluation(
                    node.id,
                    f"t{index}",
                    {"p": "pass", "f": "fail", "i": "infra"}[letter],
                    duration_s=1.0 + index,
                    tokens=7,
                )
        job = run.start_job("evaluate", a.id, "t0")
        run.finish_job(job.id, "finished")
        run.exchanges_file(job.id).write_text('{"request": 1}\n')
        run.add_usage(a.id, tokens=123, cost_usd=0.5)
        return root, a, b, c

    return build
