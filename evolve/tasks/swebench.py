"""SWE-bench as tasks: instances of SWE-bench Verified or Lite, each in its own harness image.

The dataset comes from the Hugging Face hub through the `swebench` package's loader (or from a local
`.json`/`.jsonl` file in the dataset's format: $EVOLVE_SWEBENCH_DATASET), the images from Docker Hub;
without network neither can be had, and the error says so. A task's repo is empty: the instance
image carries the repository at /testbed, where the agent solves it in a container of that image
(evolve.engine.evaluate). Its hidden part is the instance record itself, so grading
(evolve/tasks/swebench_grading.py, in a fresh container of the same image) has FAIL_TO_PASS,
PASS_TO_PASS and the eval script; the agent never sees them, and its changes to the tests, the test
patch's files and test configuration are dropped. DGM's and HGM's subsets are selectable by name:
`swebench-verified:small` (10 ids), `:medium` (50), `:big` (140).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType

from evolve.tasks.polyglot import split_of
from evolve.tasks.types import Task, TaskError, TaskSuite

DATASETS: Mapping[str, str] = MappingProxyType(
    {
        "verified": "SWE-bench/SWE-bench_Verified",
        "lite": "SWE-bench/SWE-bench_Lite",
    }
)
TESTBED = "/testbed"
"""Where an instance image holds its repository."""
INSTANCE_FILE = ".swebench/instance.json"
"""Where a task keeps its instance record among its hidden files."""
DOCKER_HUB = "docker.io"
NEEDS = (
    "SWE-bench needs network: its dataset comes from the Hugging Face hub ({hub}) and its instance "
    "images (one per task, 1-5 GB each, ~100 GB for Verified) from Docker Hub (docker.io/swebench/...)"
)


class SWEbenchUnavailable(TaskError):
    """The dataset or an image cannot be had here (no network, hub down, image missing)."""


def hub_url() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def hub_reachable(timeout: float = 5.0) -> str | None:
    """None when the Hugging Face hub answers, else why not."""
    import requests

    try:
        requests.head(hub_url(), timeout=timeout, allow_redirects=True)
    except requests.RequestException as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def instance_image(instance: Mapping[str, object]) -> str:
    """The harness image of an instance: its `image` field, else SWE-bench's Docker Hub naming."""
    if instance.get("image"):
        return str(instance["image"])
    slug = str(instance["instance_id"]).lower().replace("__", "_1776_")
    return f"swebench/sweb.eval.x86_64.{slug}:latest"


def instance_task(instance: Mapping[str, object], suite: str) -> Task:
    """One SWE-bench instance as a task (graded by evolve.tasks.swebench_grading)."""
    for key in ("instance_id", "repo", "problem_statement", "patch", "FAIL_TO_PASS", "PASS_TO_PASS"):
        if key not in instance:
            raise TaskError(f"SWE-bench instance {instance.get('instance_id', '?')} lacks {key!r}")
    image = instance_image(instance)
    record = dict(instance) | {"image": image}
    task_id = str(instance["instance_id"])
    return Task(
        id=task_id,
        suite=suite,
        split=split_of(task_id),
        statement=str(instance["problem_statement"]),
        repo={},
        hidden_tests={INSTANCE_FILE: json.dumps(record).encode()},
        reference_patch=str(instance["patch"]),
        test_command="bash /eval.sh",
        tests_dir="tests",
        protected_paths=patched_paths(str(instance.get("test_patch", ""))),
        image=image,
        repo_in_image=TESTBED,
        grader="swebench",
        writable_root=True,
        language=str(instance.get("language", "python")),
        difficulty=str(instance.get("difficulty", "medium")),
        agent_timeout_s=1800.0,
        test_timeout_s=1800.0,
        tags=("swebench", str(instance["repo"])),
    )


def patched_paths(patch: str) -> tuple[str, ...]:
    """The files a patch of the dataset's (trusted, not the agent's) changes: its test patch's are
    protected."""
    return tuple(
        sorted(
            {
                line.split(" b/", 1)[1]
                for line in patch.splitlines()
                if line.startswith("diff --git a/") and " b/" in line
            }
        )
    )


def task_instance(task: Task) -> dict:
    """The instance record a SWE-bench task carries."""
    if INSTANCE_FILE not in task.hidden_tests:
        raise TaskError(f"task {task.id} is not a SWE-bench task")
    return json.loads(task.hidden_tests[INSTANCE_FILE])


def is_swebench(task: Task) -> bool:
    return INSTANCE_FILE in task.hidden_tests


def read_local_dataset(path: Path) -> list[dict]:
    """Instances from a `.json` (a list) or `.jsonl` file in the dataset's format."""
    try:
        text = path.read_text()
        if path.suffix == ".jsonl":
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        return list(json.loads(text))
    except (OSError, ValueError) as exc:
        raise TaskError(f"cannot read the SWE-bench dataset {path}: {exc}") from exc


def load_instances(dataset: str, split: str = "test") -> list[dict]:
    """A dataset's instances: a local file, or a Hugging Face dataset through the package's loader."""
    if dataset.endswith((".json", ".jsonl")):
        return read_local_dataset(Path(dataset))
    name = DATASETS.get(dataset, dataset)
    problem = hub_reachable()
    if problem is not None:
        raise SWEbenchUnavailable(
            f"cannot load {name}: the Hugging Face hub at {hub_url()} cannot be reached "
            f"({problem}). " + NEEDS.format(hub=hub_url()) + "; or point "
            "EVOLVE_SWEBENCH_DATASET at a local .json/.jsonl copy of the dataset."
        )
    try:
        from swebench.harness.utils import load_swebench_dataset
    except ImportError as exc:
        raise TaskError(
            "the SWE-bench suites need the swebench extra: pip install 'evolve[swebench]'"
        ) from exc
    try:
        return [dict(i) for i in load_swebench_dataset(name, split)]
    except (OSError, ConnectionError, ValueError) as exc:  # datasets wraps network failures in these
        raise SWEbenchUnavailable(
            f"cannot load {name} from {hub_url()}: {exc}. " + NEEDS.format(hub=hub_url())
        )


def load_swebench(
    dataset: str = "verified",
    ids: Iterable[str] | None = None,
    *,
    suite: str | None = None,
    split: str = "test",
) -> TaskSuite:
    """SWE-bench tasks of `dataset` (`verified`, `lite`, a hub id or a local file), optionally only `ids`."""
    instances = {str(i["instance_id"]): i for i in load_instances(dataset, split)}
    name = suite or f"swebench-{dataset if dataset in DATASETS else 'local'}"
    if ids is None:
        return TaskSuite(name, tuple(instance_task(i, name) for i in instances.values()))
    wanted = list(ids)
    missing = [i for i in wanted if i not in instances]
    if missing:
        raise TaskError(f"{dataset} lacks {len(missing)} chosen instance(s), e.g. {', '.join(missing[:3])}")
    return TaskSuite(name, tuple(instance_task(instances[i], name) for i in wanted))


def swebench_subset(name: str) -> tuple[str, ...]:
    """DGM's/HGM's SWE-bench Verified instance ids by subset name (`small`, `medium`, `big`)."""
    from evolve.tasks.subsets import SWEBENCH_SUBSETS

    if name not in SWEBENCH_SUBSETS:
        raise TaskError(f"unknown SWE-bench subset {name!r}; choose from {', '.join(SWEBENCH_SUBSETS)}")
    return SWEBENCH_SUBSETS[name]


def swebench_suite(name: str, dataset: str | None = None) -> TaskSuite:
    """`swebench-verified`, `swebench-lite`, `swebench-verified:small` ...; $EVOLVE_SWEBENCH_DATASET overrides
    where the instances come from (a local file in the dataset's format)."""
    base, _, subset = name.partition(":")
    which = base.removeprefix("swebench-")
    if which not in DATASETS:
        raise TaskError(
            f"unknown SWE-bench suite {name!r}; choose swebench-verified[:SUBSET] or swebench-lite"
        )
    source = dataset or os.environ.get("EVOLVE_SWEBENCH_DATASET") or which
    return load_swebench(source, swebench_subset(subset) if subset else None, suite=name)
