"""Writes the builtin suite from the project sources in `_src/`: `python3 tasks/builtin/generate.py`.

Each `_src/<project>.py` holds BASE (the project's files, correct) and TASKS. A task breaks the
project (stubs a function, or swaps good text for bad), so `repo/` is the broken project,
`solution.patch` is the diff back to BASE, and `tests/` holds the hidden test file.
"""

from __future__ import annotations

import ast
import importlib.util
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEST_COMMAND = "python3 -m pytest -q -p no:cacheprovider tests"


def stub(source: str, name: str) -> str:
    """Replace the body of function `name` (after its docstring) by `raise NotImplementedError`."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            body = node.body
            keep = 1 if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else 0
            first, last = body[keep].lineno, body[-1].end_lineno
            indent = " " * body[keep].col_offset
            lines = source.splitlines()
            lines[first - 1 : last] = [f"{indent}raise NotImplementedError"]
            return "\n".join(lines) + "\n"
    raise KeyError(name)


def broken_files(base: dict[str, str], task: dict) -> dict[str, str]:
    files = dict(base)
    for path, name in task.get("stubs", ()):
        files[path] = stub(files[path], name)
    for path, good, bad in task.get("edits", ()):
        if files[path].count(good) != 1:
            raise ValueError(f"{task['id']}: {good!r} is not unique in {path}")
        files[path] = files[path].replace(good, bad)
    return files


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def diff(broken: dict[str, str], good: dict[str, str]) -> str:
    """The git diff that turns the broken files into the good ones."""
    with tempfile.TemporaryDirectory() as tmp:
        git = ["git", "-c", "user.name=gen", "-c", "user.email=gen@localhost", "-C", tmp]
        subprocess.run(git[:5] + ["init", "-q", tmp], check=True)
        write(Path(tmp), broken)
        subprocess.run(git + ["add", "-A"], check=True)
        subprocess.run(git + ["commit", "-qm", "broken"], check=True)
        write(Path(tmp), good)
        done = subprocess.run(git + ["diff"], capture_output=True, text=True, check=True)
    return done.stdout


def toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def generate(project_file: Path) -> list[str]:
    spec = importlib.util.spec_from_file_location(project_file.stem, project_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ids = []
    for task in module.TASKS:
        task_dir = HERE / task["id"]
        shutil.rmtree(task_dir, ignore_errors=True)
        broken = broken_files(module.BASE, task)
        write(task_dir / "repo", broken)
        write(task_dir / "tests", {f"test_{task['id'].replace('-', '_')}.py": task["test"]})
        (task_dir / "solution.patch").write_text(diff(broken, module.BASE))
        (task_dir / "statement.md").write_text(task["statement"].strip() + "\n")
        (task_dir / "task.toml").write_text(
            "\n".join(
                [
                    f"id = {toml_string(task['id'])}",
                    'language = "python"',
                    'statement = "statement.md"',
                    f"test_command = {toml_string(TEST_COMMAND)}",
                    f"pass_regex = {toml_string(r'[0-9]+ passed')}",
                    f"split = {toml_string(task['split'])}",
                    f"difficulty = {toml_string(task['difficulty'])}",
                    f"tags = [{toml_string(module.PROJECT)}]",
                    "",
                    "[timeouts]",
                    "agent_s = 900",
                    "test_s = 60",
                    "",
                ]
            )
        )
        ids.append(task["id"])
    return ids


def main() -> None:
    ids = [i for f in sorted((HERE / "_src").glob("*.py")) for i in generate(f)]
    print(f"wrote {len(ids)} tasks")


if __name__ == "__main__":
    sys.exit(main())
