"""A host-directory stand-in for a Sandbox, to run the grader script in unit tests (no isolation)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from evolve.sandbox.types import ExecResult


class LocalSandbox:
    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def workdir(self) -> str:
        return str(self.root)

    def exec(self, cmd, *, input=None, cwd=None, env=None, timeout=None) -> ExecResult:
        start = time.monotonic()
        # the host's pytest plugins only slow the graded test runs down (the base image has none)
        env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **(env or {})}
        done = subprocess.run(
            cmd, cwd=cwd or self.root, capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
        return ExecResult(done.returncode, done.stdout, done.stderr, time.monotonic() - start)

    def put_dir(self, host_dir: Path, path: str) -> None:
        shutil.copytree(host_dir, path, dirs_exist_ok=True)

    def write_file(self, path, content):
        Path(path).write_bytes(content.encode() if isinstance(content, str) else content)

    def read_file(self, path):
        return Path(path).read_bytes()

    def get_dir(self, path, host_dir):
        shutil.copytree(path, host_dir, dirs_exist_ok=True)

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
