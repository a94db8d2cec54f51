"""Reading back what W&B wrote offline (`run-<id>.wandb`: its LevelDB-style record log of protobuf records),
so a test checks what `wandb sync` would upload without a W&B server."""

from __future__ import annotations

import json
import struct
from pathlib import Path

BLOCK = 32768
HEADER = struct.Struct("<4sHB")  # ":W&B", magic, version
RECORD = struct.Struct("<IHB")  # crc32, length, type (1 full, 2 first, 3 middle, 4 last)


def records(path: Path) -> list[bytes]:
    """The raw records of one `.wandb` file, in order."""
    data = path.read_bytes()
    ident, _magic, _version = HEADER.unpack_from(data, 0)
    assert ident == b":W&B", f"{path} is no W&B data file"
    found: list[bytes] = []
    position = HEADER.size
    pending = b""
    while position + RECORD.size <= len(data):
        left_in_block = BLOCK - position % BLOCK
        if left_in_block < RECORD.size:
            position += left_in_block  # the block's tail is padding
            continue
        _crc, length, kind = RECORD.unpack_from(data, position)
        position += RECORD.size
        chunk = data[position : position + length]
        position += length
        if kind == 0 and length == 0:
            continue
        pending = chunk if kind in (1, 2) else pending + chunk
        if kind in (1, 4):
            found.append(pending)
            pending = b""
    return found


def offline_files(directory: Path, run_id: str) -> list[Path]:
    """The data files of every session of one W&B run under `directory` (the `dir` given to `wandb.init`),
    in path order. Each session gets `offline-run-<second>-<id>`; one started within the same second as the
    last gets `-1`, `-2`, ... after the id."""
    sessions = [
        *directory.glob(f"wandb/offline-run-*-{run_id}"),
        *directory.glob(f"wandb/offline-run-*-{run_id}-*"),
    ]
    return sorted(path for session in sessions for path in session.glob("*.wandb"))


def history(path: Path) -> list[dict]:
    """Each `run.log(...)` of the file: {key: value}, with `_step`."""
    from wandb.proto import wandb_internal_pb2 as pb

    rows = []
    for raw in records(path):
        record = pb.Record()
        record.ParseFromString(raw)
        if record.WhichOneof("record_type") == "history":
            rows.append(
                {
                    item.key or "/".join(item.nested_key): json.loads(item.value_json)
                    for item in record.history.item
                }
            )
    return rows
