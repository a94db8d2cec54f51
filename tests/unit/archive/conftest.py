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
