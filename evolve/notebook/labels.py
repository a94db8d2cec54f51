"""Short, unique axis labels for node ids (DGM's are timestamps like 20250101_000002_000001)."""

from __future__ import annotations

import os
from collections.abc import Iterable

MAX_CHARS = 14


def short_labels(ids: Iterable[str], max_chars: int = MAX_CHARS) -> dict[str, str]:
    """id → label: short ids as they are; long ones without their shared prefix (and cut to their last
    `max_chars` characters, after "…"), unless that would make two labels equal (then in full)."""
    ids = [str(i) for i in ids]
    long = [i for i in ids if len(i) > max_chars]
    prefix = os.path.commonprefix(long) if len(long) > 1 else ""
    prefix = prefix[: max(prefix.rfind(sep) for sep in "_-./:") + 1]  # cut at a separator, not mid-field
    labels = {}
    for node in ids:
        if len(node) <= max_chars:
            labels[node] = node
            continue
        rest = node[len(prefix) :]
        labels[node] = "…" + (rest if len(rest) <= max_chars else rest[-max_chars:])
    if len(set(labels.values())) < len(labels):
        return {node: node for node in ids}
    return labels
