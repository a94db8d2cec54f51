"""Per-node model exchanges for the report's panel: what each job run on a node asked the model and
what it answered (the gateway's records, `exchanges/job-<id>[-step].jsonl`), with the job's log files.

A node's jobs are its evaluations (role solve) and the expansions run from it (diagnose, modify and
the gate's validate solve), which made its children. Texts are cut (`CHARS` each, `PER_NODE`
exchanges a node) so the page stays small; `evolve show` and the run's `exchanges/` hold all of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from evolve import untrusted
from evolve.archive.lineage import job_exchanges
from evolve.archive.records import Job
from evolve.archive.store import Run
from evolve.llm.exchanges import EXCHANGE_BOUNDS

CHARS = 1_500
"""Characters kept of each prompt (its last message) and each answer."""
PER_NODE = 24
"""Exchanges kept per node (the first ones, in job order)."""


def _cut(text: str | None) -> str:
    text = text or ""
    return text if len(text) <= CHARS else text[:CHARS] + f"\n... cut at {CHARS} characters"


def exchange_rows(path: Path) -> Iterator[dict]:
    """The rows of one job's exchange log that have an exchange's shape. A line cut by a crash mid-append,
    or a row of another shape (a damaged or foreign bundle: `{"request": 1}`), is left out; the others
    count."""
    # a line cut by a crash mid-append, or not a bounded object, is skipped
    for record in untrusted.jsonl(untrusted.read_bytes(path), EXCHANGE_BOUNDS):
        row = dict(record.fields)
        if _shaped(row):
            yield row


def _shaped(row: object) -> bool:
    if not isinstance(row, dict):
        return False
    request, response = row.get("request") or {}, row.get("response") or {}
    if not isinstance(request, dict) or not isinstance(response, dict):
        return False
    messages, usage = request.get("messages") or [], response.get("usage") or {}
    return (
        isinstance(messages, list)
        and all(isinstance(m, dict) for m in messages)
        and isinstance(response.get("message") or {}, dict)
        and isinstance(usage, dict)
        and all(isinstance(v, int | float) for v in usage.values())
        and isinstance(row.get("created", 0), int | float)
    )


def _exchange(path_name: str, job: Job, row: dict) -> dict:
    messages = (row.get("request") or {}).get("messages") or [{}]
    response = row.get("response") or {}
    usage = response.get("usage") or {}
    return {
        "job": job.id,
        "kind": str(job.kind),
        "file": path_name,
        "role": row.get("role", "?"),
        "prompt": _cut(messages[-1].get("content")),
        "answer": _cut((response.get("message") or {}).get("content")),
        "tokens": int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0)),
    }


def node_exchanges(run: Run, nodes: Iterable[str]) -> dict[str, dict]:
    """Node id → {"exchanges": [...], "logs": {job id: [file names]}} for the nodes asked."""
    wanted = set(nodes)
    by_node: dict[str, list[Job]] = {}
    for job in run.jobs():
        if job.node in wanted:
            by_node.setdefault(job.node, []).append(job)
    shown: dict[str, dict] = {}
    for node, jobs in by_node.items():
        exchanges: list[dict] = []
        logs: dict[str, list[str]] = {}
        for job in jobs:
            directory = run.path / "logs" / f"job-{job.id}"
            if directory.is_dir():
                logs[str(job.id)] = sorted(
                    str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file()
                )[:40]
            for path in job_exchanges(run, job.id):
                for row in exchange_rows(path):
                    if len(exchanges) >= PER_NODE:
                        break
                    exchanges.append(_exchange(path.name, job, row))
        shown[node] = {"exchanges": exchanges, "logs": logs}
    return shown
