"""Runs inside a fresh grading container of a SWE-bench instance image, as root (standard library only,
staged beside grader_script.py, whose pieces it uses). It applies the engine's patch to /testbed (all
or nothing, with no config from anywhere), hands /testbed to the test uid, and runs the instance's own
eval script as uid 1000 in two parts: its prelude (reset the test files, apply the test patch, maybe
reinstall), then, once everything the prelude started is killed, its tests (the prelude's environment
lines, then the script from its start-of-output marker), with the per-test results plugin on pytest's
path: each result goes over a pipe only this grader reads, which only the tests' run gets.
Prints, after MARKER, the patch's fate, the eval script's exit and output, and the per-test records
of the tests the instance expects (the host judges: evolve.tasks.swebench_grading).

Usage: python3 swebench_grader.py MANIFEST.json   (manifest: testbed, prelude, tests, timeout, expected,
isolate; evolve.tasks.swebench_grading writes it)
"""

import json
import os
import random
import sys
import tempfile
import time

if __package__:  # imported on the host (its tests); in the sandbox it sits beside grader_script.py
    from evolve.tasks import grader_script as gs
else:
    import grader_script as gs  # type: ignore[import-not-found,no-redef]

MARKER = "=== evolve-swebench-results ==="


def first_token(test):
    """The name as the harness's log parsers keep it: up to the first blank (parametrised ids with spaces)."""
    parts = test.split()
    return parts[0] if parts else test


def wanted(records, expected):
    """The records of expected tests, and the end: a big suite's other records stay here (they decide
    nothing, and the reply must stay under the sandbox's output cap)."""
    names = set(expected)

    def named(record):
        test = first_token(str(record.get("test", "")))
        return test in names or test.split("[", 1)[0] in names  # a parametrised canary's cases

    kept, seen, ends = [], set(), 0
    for record in records:
        if not ("end" in record or "malformed" in record or named(record)):
            continue
        key = json.dumps(record, sort_keys=True)
        ends += "end" in record
        if key in seen or ("end" in record and ends > 2):  # the reply stays small whatever the tests repeat
            continue
        seen.add(key)
        kept.append(record)
    return kept


def main(manifest_path):
    stage = os.path.dirname(os.path.abspath(manifest_path))
    with open(manifest_path) as handle:
        manifest = json.load(handle)
    isolate = bool(manifest.get("isolate")) and os.geteuid() == 0
    if isolate:
        os.chown(stage, 0, 0)
        os.chmod(stage, 0o700)  # the tests cannot read the expected names or rewrite the patch
    testbed = manifest["testbed"]
    reply: dict = {
        "isolated": isolate,
        "applied": True,
        "code": None,
        "output": "",
        "timed_out": False,
        "records": [],
    }
    patch = os.path.join(stage, "patch.diff")
    if os.path.getsize(patch) > 0:
        ok, out = gs.apply_patch(patch, testbed)
        if not ok:
            reply.update(applied=False, output=gs.cap(out))
            return emit(reply)
    scratch = tempfile.mkdtemp(prefix="swebench-")
    os.chmod(scratch, 0o755)
    for name, text in (("prelude.sh", manifest["prelude"]), ("tests.sh", manifest["tests"])):
        with open(os.path.join(scratch, name), "w") as handle:
            handle.write(text)
        os.chmod(os.path.join(scratch, name), 0o644)
    if isolate:
        gs._chown_tree(testbed, gs.TEST_UID)  # the harness's tests write in their repo; ours as uid 1000
    env = gs.test_env()
    deadline = time.monotonic() + manifest["timeout"]
    # The prelude (test files reset, test patch applied, maybe a reinstall that runs the agent's setup.py)
    # gets a records pipe of its own, never read; nothing it started lives on into the tests' run.
    code, out, timed_out, _ = gs.run(
        f"bash {scratch}/prelude.sh", testbed, manifest["timeout"], env, isolate, scratch
    )
    if isolate:
        gs.kill_test_user()
    records: list = []
    planted, renames = plant_canaries(manifest, testbed)  # canary id -> the real test it copies
    if not timed_out:
        left = max(1.0, deadline - time.monotonic())
        code, tests_out, timed_out, records = gs.run(
            f"bash {scratch}/tests.sh", testbed, left, env, isolate, scratch
        )
        records, out = gs.canaries.restore_all(records, out + tests_out, renames)
        out = gs.scrub(out, planted)
        if isolate:
            gs.kill_test_user()
    reply.update(
        code=code,
        output=out,
        timed_out=timed_out,
        canaries=planted,
        records=wanted(records, [*manifest["expected"], *planted, *planted.values()]),
    )
    return emit(reply)


def plant_canaries(manifest, testbed):
    """Canaries (grader_canaries.py) in the test files the tests script names and the expected tests are
    in, planted after the prelude applied the test patch: their ids, and the copied tests' new ids -> their
    own (renamed unless the script picks tests by name). None without a seed."""
    if not manifest.get("canary_seed") or gs.canaries.stops_early(manifest["tests"]):
        return {}, {}
    rng = random.Random(manifest["canary_seed"])
    planted: dict[str, str] = {}
    renames: dict[str, str] = {}
    for rel in sorted({first_token(name).partition("::")[0] for name in manifest["expected"]}):
        path = os.path.join(testbed, rel)
        if (
            not rel.endswith(".py")
            or rel not in manifest["tests"]
            or os.path.islink(path)
            or not os.path.isfile(path)
        ):
            continue
        with open(path, "rb") as handle:
            source = handle.read()
        try:
            source, ids, moved = gs.canaries.plant_among(
                source, rel, rng, rename=not gs.canaries.selects(manifest["tests"])
            )
        except (RecursionError, MemoryError, ValueError) as exc:  # the prelude ran the agent's setup.py
            print(f"no canaries in {rel}: its source cannot be read ({type(exc).__name__})", file=sys.stderr)
            continue
        with open(path, "wb") as handle:
            handle.write(source)
        planted |= ids
        renames |= moved
    return planted, renames


def emit(reply):
    sys.stdout.write(MARKER + "\n" + json.dumps(reply) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
