"""`ProcessSandbox`: the sandbox protocol as local subprocesses in a temporary directory.

It isolates nothing: commands run as the engine's user with the host's files in reach. It exists
for development on machines without Docker and is used only when a config names it
(`[sandbox] backend = "process"`). It does keep the host's environment out (commands get a minimal
one), kill whole process groups at timeouts, and cap output, so the conformance suite holds for it.

Paths a container would have are emulated, so engine code written for containers runs unchanged:
`/work` (a container's work dir) names this sandbox's directory, and `mounts` name host paths for
other container paths (a job's model socket). They are translated in file operations, `cwd`, and
every command argument or environment value that is such a path or starts with one and a `/`.
"""

from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Self

from evolve.sandbox.output import OutputCollector
from evolve.sandbox.types import CopyTooLarge, ExecResult, SandboxLimits, truncation_note

_KEPT_ENV = ("PATH", "LANG", "LC_ALL", "TZ")
_WORK = "/work"


class ProcessSandbox:
    """Subprocesses in a fresh temporary directory; `close()` deletes it."""

    def __init__(
        self,
        *,
        limits: SandboxLimits | None = None,
        base_dir: Path | None = None,
        mounts: Mapping[str, Path] | None = None,
    ) -> None:
        limits = limits or SandboxLimits()
        self._limits = limits
        self._root = Path(tempfile.mkdtemp(prefix="evolve-sandbox-", dir=base_dir))
        self._mounts = {
            _WORK: str(self._root),
            **{where: str(host) for where, host in (mounts or {}).items()},
        }
        self._deadline = time.monotonic() + limits.wall_clock_s
        self._closed = False

    @property
    def workdir(self) -> str:
        return str(self._root)

    def exec(
        self,
        cmd: list[str],
        *,
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> ExecResult:
        if not cmd:
            raise ValueError("exec needs a command")
        started = time.monotonic()
        remaining = self._deadline - started
        if remaining <= 0:
            return ExecResult(-1, "", "sandbox wall clock exhausted", 0.0, timed_out=True)
        limit = remaining if timeout is None else min(timeout, remaining)
        directory = self._path(cwd or ".")
        if not directory.is_dir():
            return ExecResult(126, "", f"no such directory: {directory}\n", time.monotonic() - started)
        try:
            proc = subprocess.Popen(
                [self._host(arg) for arg in cmd],
                cwd=directory,
                env=self._environment({name: self._host(value) for name, value in (env or {}).items()}),
                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # its own process group, so a timeout kills the whole tree
            )
        except (FileNotFoundError, PermissionError) as exc:
            code = 127 if isinstance(exc, FileNotFoundError) else 126
            return ExecResult(code, "", f"{exc}\n", time.monotonic() - started)
        collector = OutputCollector(self._limits.output_limit_bytes)
        readers = [_reader(proc.stdout, collector, True), _reader(proc.stderr, collector, False)]
        if input is not None:
            threading.Thread(target=_feed_stdin, args=(proc.stdin, input), daemon=True).start()
        timed_out = not _wait(proc, readers, collector, limit)
        if timed_out or collector.over_limit.is_set():
            _kill_group(proc)
        returncode = proc.wait()
        for reader in readers:
            reader.join(2.0)
        stdout, stderr = collector.texts()
        return ExecResult(
            returncode,
            stdout,
            stderr,
            time.monotonic() - started,
            timed_out=timed_out,
            truncated=collector.over_limit.is_set(),
        )

    def write_file(self, path: str, content: str | bytes) -> None:
        target = self._path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode() if isinstance(content, str) else content)

    def read_file(self, path: str) -> bytes:
        """As the Docker backend: a file over the copy cap is cut, with a note (sparse ones count in full)."""
        target = self._path(path)
        cap = self._limits.copy_limit_bytes
        note = truncation_note(str(target), cap)
        with target.open("rb") as handle:
            if os.fstat(handle.fileno()).st_size <= cap - len(note):
                return handle.read(cap - len(note))
            return handle.read(cap - len(note)) + note

    def put_dir(self, host_dir: Path, path: str) -> None:
        shutil.copytree(host_dir, self._path(path), symlinks=True, dirs_exist_ok=True)

    def get_dir(self, path: str, host_dir: Path) -> None:
        source = self._path(path)
        if not source.is_dir():
            raise FileNotFoundError(str(source))
        size = sum(os.lstat(os.path.join(d, f)).st_size for d, _, files in os.walk(source) for f in files)
        if size > self._limits.copy_limit_bytes:
            raise CopyTooLarge(
                f"refused to copy {source} out of the sandbox: it holds {size} bytes, "
                f"the cap is {self._limits.copy_limit_bytes}"
            )
        shutil.copytree(source, host_dir, symlinks=True, dirs_exist_ok=True)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            shutil.rmtree(self._root, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _path(self, path: str) -> Path:
        # An absolute `path` outside the emulated ones replaces the root: this backend isolates nothing.
        return self._root / self._host(path)

    def _host(self, text: str) -> str:
        """`text` with a leading container path (see the module's doc) replaced by its host path."""
        for where, host in self._mounts.items():
            if text == where or text.startswith(where + "/"):
                return host + text[len(where) :]
        return text

    def _environment(self, extra: dict[str, str] | None) -> dict[str, str]:
        base = {name: os.environ[name] for name in _KEPT_ENV if name in os.environ}
        base.setdefault("PATH", os.defpath)
        return {**base, "HOME": str(self._root), **(extra or {})}


def _reader(stream: IO[bytes] | None, collector: OutputCollector, is_stdout: bool) -> threading.Thread:
    def drain() -> None:
        assert isinstance(stream, io.BufferedIOBase)  # Popen's default pipes are buffered readers
        with stream:
            for chunk in iter(lambda: stream.read1(65536), b""):
                collector.feed(chunk if is_stdout else None, None if is_stdout else chunk)

    thread = threading.Thread(target=drain, daemon=True)
    thread.start()
    return thread


def _feed_stdin(stdin: IO[bytes] | None, data: str | bytes) -> None:
    assert stdin is not None
    try:
        with stdin:
            stdin.write(data.encode() if isinstance(data, str) else data)
    except BrokenPipeError:
        return  # the command exited without reading all its input, which is its right


def _wait(
    proc: subprocess.Popen[bytes], readers: list[threading.Thread], collector: OutputCollector, limit: float
) -> bool:
    """Wait until the command and everything holding its output end, or the output cap, or the limit.

    False when the limit was hit. Like `docker exec`, a background child that keeps stdout open
    keeps the command running.
    """
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        done = proc.poll() is not None and not any(reader.is_alive() for reader in readers)
        if done or collector.over_limit.is_set():
            return True
        time.sleep(0.01)
    return False


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        return  # the group is already gone
