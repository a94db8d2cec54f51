"""A job's exchange log read for replay: a line that is no bounded exchange (cut mid-append, damaged) is
left out with a warning, so its request is a replay miss, never a crash."""

from __future__ import annotations

import logging

from evolve.llm.exchanges import Exchange, read_exchanges
from evolve.llm.types import ChatRequest, ChatResponse, Message


def exchange(seq: int) -> Exchange:
    request = ChatRequest(messages=(Message(role="user", content=f"ask {seq}"),))
    return Exchange(
        seq=seq,
        job_id="1",
        node_id="n",
        role="solve",
        request_sha256="x" * 64,
        request=request,
        response=ChatResponse(message=Message(role="assistant", content="ok"), model="m"),
        response_id=f"r{seq}",
        created=0,
    )


def test_damaged_lines_are_left_out_and_the_rest_replayed(tmp_path, caplog):
    path = tmp_path / "job-1.jsonl"
    lines = [
        exchange(0).model_dump_json().encode(),
        b"[" * 1_000_000,
        b'{"seq": "no exchange"}',
        exchange(1).model_dump_json().encode()[:40],
        b"\xff\xfe",
        exchange(2).model_dump_json().encode(),
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    with caplog.at_level(logging.WARNING, logger="evolve.llm.exchanges"):
        assert [e.seq for e in read_exchanges(path)] == [0, 2]
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 4 and "line 2 left out of the replay: nests more than 64 levels deep" in warned[0]
