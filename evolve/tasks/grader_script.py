"""Runs inside a grading sandbox (standard library only): for each job, copy the clean repo, apply the
(already filtered) patch, copy the hidden tests over it, run the test command; print results as JSON.

Usage: python3 grader_script.py MANIFEST.json   (see evolve/tasks/grading.py for the manifest)
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

OUTPUT_CAP = 20000
MARKER = "=== evolve-grade-results ==="


def cap(text):
    return text if len(text) <= OUTPUT_CAP else text[:2000] + "\n...[cut]...\n" + text[-(OUTPUT_CAP - 2100):]


def run(command, cwd, timeout):
    proc = subprocess.Popen(["bash", "-c", command], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        return proc.returncode, out.decode(errors="replace"), False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return -9, out.decode(errors="replace"), True


def grade(job, scratch):
    start = time.monotonic()
    work = os.path.join(scratch, job["key"].replace("/", "_"), "repo")
    shutil.copytree(os.path.join(job["dir"], "repo"), work)
    patch = os.path.join(job["dir"], "patch.diff")
    if os.path.getsize(patch) > 0:
        code, out, _ = run("git apply --whitespace=nowarn " + patch, work, 60)
        if code != 0:
            return {"key": job["key"], "outcome": "fail", "detail": "the patch does not apply",
                    "output": cap(out), "duration": time.monotonic() - start}
    shutil.copytree(os.path.join(job["dir"], "tests"), work, dirs_exist_ok=True)
    code, out, timed_out = run(job["command"], work, job["timeout"])
    if timed_out:
        outcome, detail = "timeout", f"the tests ran past {job['timeout']}s"
    elif code != 0:
        outcome, detail = "fail", f"tests exit with status {code}"
    elif job.get("pass_regex") and not re.search(job["pass_regex"], out):
        outcome, detail = "fail", f"exit 0 but the output lacks {job['pass_regex']!r}"
    else:
        outcome, detail = "pass", "tests pass"
    shutil.rmtree(os.path.dirname(work), ignore_errors=True)
    return {"key": job["key"], "outcome": outcome, "detail": detail, "output": cap(out),
            "duration": time.monotonic() - start}


def main(manifest_path):
    with open(manifest_path) as handle:
        manifest = json.load(handle)
    scratch = tempfile.mkdtemp(prefix="grade-")
    with ThreadPoolExecutor(max_workers=max(1, manifest.get("workers", 1))) as pool:
        results = list(pool.map(lambda job: grade(job, scratch), manifest["jobs"]))
    sys.stdout.write(MARKER + "\n" + json.dumps(results) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
