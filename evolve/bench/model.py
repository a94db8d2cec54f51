"""`evolve bench model`: the embedded model as a run meets it, through the same server and client.

- speed: prompt and generation tokens/s (`evolve.llm.speed`), idle and then with N busy competitor
  processes (a run's sandboxes, graders and Docker compete with the model for the cores);
- prompt caching: two conversations interleaved (A1, B1, A2, B2), as two concurrent jobs send them;
  how much of its prefix each second turn reads again, from the server's usage (`cached_tokens`);
- memory: the server's resident set (peak and now); `soak_s` keeps interleaving conversations that
  long and samples it after every request.
Every figure comes with the machine's load average when it was taken (the machine may be shared).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from evolve.llm.client import ChatModel
from evolve.llm.speed import SpeedReport, measure_speed
from evolve.llm.types import ChatRequest, ChatResponse, Message

_MODULE = "".join(
    f"def step_{i}(values, scale={i}):\n    total = 0\n    for value in values:\n"
    f"        total += value * scale - {i}\n    return total\n\n"
    for i in range(24)
)


@contextmanager
def busy_competitors(count: int) -> Iterator[list[int]]:
    """`count` processes that spin on a core each until the block ends; yields their pids."""
    spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        time.sleep(0.5 if count else 0.0)
        yield [p.pid for p in spinning]
    finally:
        for process in spinning:
            process.kill()
            process.wait()


def load_average() -> float:
    return os.getloadavg()[0]


@dataclass(frozen=True)
class Turn:
    """One request of the interleaved conversations."""

    role: str
    turn: int
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    seconds: float

    @property
    def read(self) -> int:
        return self.prompt_tokens - self.cached_tokens


@dataclass(frozen=True)
class CacheBench:
    """The interleaved turns; per role, how much of the second turn's prefix was read again."""

    turns: tuple[Turn, ...]

    def reread(self, role: str) -> float:
        """Tokens the role's second turn read, over the prefix it shares with its first (its first
        turn's prompt and reply)."""
        first, second = (t for t in self.turns if t.role == role and t.turn in (1, 2))
        return second.read / max(first.prompt_tokens + first.completion_tokens, 1)

    def hit_rate(self, role: str) -> float:
        """Cached prompt tokens over all prompt tokens of the role's requests."""
        mine = [t for t in self.turns if t.role == role]
        return sum(t.cached_tokens for t in mine) / max(sum(t.prompt_tokens for t in mine), 1)

    @property
    def roles(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t.role for t in self.turns))

    def as_json(self) -> dict[str, object]:
        return {
            role: {
                "hit_rate": round(self.hit_rate(role), 3),
                "second_turn_reread": round(self.reread(role), 3),
                "turns": [
                    {
                        "prompt": t.prompt_tokens,
                        "cached": t.cached_tokens,
                        "read": t.read,
                        "completion": t.completion_tokens,
                        "seconds": round(t.seconds, 2),
                    }
                    for t in self.turns
                    if t.role == role
                ],
            }
            for role in self.roles
        }


class _Conversation:
    """A growing chat about one long module (about 1,300 tokens), as an agent's turns grow."""

    def __init__(self, role: str, nonce: str) -> None:
        self.role = role
        self.messages: list[Message] = [
            Message(
                role="user", content=f"[{nonce}] Here is a module.\n\n{_MODULE}\nName one function in it."
            )
        ]
        self.turns = 0

    def ask(self, model: ChatModel, clock: Callable[[], float]) -> Turn:
        started = clock()
        response: ChatResponse = model.complete(
            ChatRequest(messages=tuple(self.messages), temperature=0.0, max_tokens=24)
        )
        self.turns += 1
        self.messages += [
            Message(role="assistant", content=response.message.content or ""),
            Message(role="user", content=f"Name another one ({self.turns})."),
        ]
        usage = response.usage
        return Turn(
            self.role,
            self.turns,
            usage.prompt_tokens,
            usage.cached_prompt_tokens,
            usage.completion_tokens,
            clock() - started,
        )


def interleaved(
    model: ChatModel, turns: int = 2, nonce: str | None = None, clock: Callable[[], float] = time.perf_counter
) -> CacheBench:
    """Two conversations (a `modify` and a `solve` job's), their turns alternating."""
    nonce = nonce or str(time.time_ns())
    conversations = [_Conversation("modify", f"{nonce}-a"), _Conversation("solve", f"{nonce}-b")]
    return CacheBench(tuple(c.ask(model, clock) for _ in range(turns) for c in conversations))


@dataclass(frozen=True)
class Memory:
    """The server's resident set in MiB: now and its peak (the kernel's high-water mark)."""

    rss_mb: float
    peak_mb: float


def server_memory(pid: int) -> Memory:
    fields = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                fields[name] = int(value.split()[0]) / 1024
    return Memory(fields["VmRSS"], fields["VmHWM"])


@dataclass(frozen=True)
class Soak:
    """Interleaved conversations for `seconds`: requests sent and the server's memory over time."""

    seconds: float
    requests: int
    samples: tuple[float, ...]
    """RSS in MiB after each request."""
    peak_mb: float

    def as_json(self) -> dict[str, object]:
        half = self.samples[len(self.samples) // 2 :] or (0.0,)
        return {
            "seconds": round(self.seconds),
            "requests": self.requests,
            "peak_rss_mb": round(self.peak_mb),
            "first_rss_mb": round(self.samples[0]) if self.samples else None,
            "last_rss_mb": round(self.samples[-1]) if self.samples else None,
            "steady_rss_mb": round(max(half)),
        }


def soak(model: ChatModel, pid: int, seconds: float, clock: Callable[[], float] = time.monotonic) -> Soak:
    """Pairs of conversations of 6 turns each, interleaved, until `seconds` have passed."""
    started, samples, requests, pair = clock(), [], 0, 0
    while clock() - started < seconds:
        pair += 1
        conversations = [_Conversation("modify", f"soak-{pair}-a"), _Conversation("solve", f"soak-{pair}-b")]
        for _ in range(6):
            for conversation in conversations:
                conversation.ask(model, clock)
                requests += 1
                samples.append(server_memory(pid).rss_mb)
            if clock() - started >= seconds:
                break
    return Soak(clock() - started, requests, tuple(samples), server_memory(pid).peak_mb)


@dataclass(frozen=True)
class ModelBench:
    threads: int
    threads_batch: int
    idle: SpeedReport
    idle_load: float
    cache: CacheBench
    memory: Memory
    competitors: int = 0
    contended: SpeedReport | None = None
    contended_load: float | None = None
    soak: Soak | None = None
    notes: tuple[str, ...] = field(default=())

    def as_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "model": self.idle.model,
            "threads": self.threads,
            "threads_batch": self.threads_batch,
            "cores": os.cpu_count(),
            "idle": {**self.idle.as_json(), "load_1min": round(self.idle_load, 2)},
            "cache": self.cache.as_json(),
            "server_rss_mb": round(self.memory.rss_mb),
            "server_peak_rss_mb": round(self.memory.peak_mb),
        }
        if self.contended is not None:
            out["contended"] = {
                **self.contended.as_json(),
                "competitors": self.competitors,
                "load_1min": round(self.contended_load or 0.0, 2),
                "generation_vs_idle": round(
                    self.contended.generation_tokens_per_s / max(self.idle.generation_tokens_per_s, 1e-9), 3
                ),
            }
        if self.soak is not None:
            out["soak"] = self.soak.as_json()
        return out


def bench_model(
    model: ChatModel, pid: int, threads: tuple[int, int], contention: int = 0, soak_s: float = 0.0
) -> ModelBench:
    """Speed idle (and with `contention` competitors), interleaved caching, memory (and a soak)."""
    idle_load = load_average()
    idle = measure_speed(model)
    contended = contended_load = None
    if contention:
        with busy_competitors(contention):
            contended_load = load_average()
            contended = measure_speed(model)
    cache = interleaved(model)
    soaked = soak(model, pid, soak_s) if soak_s > 0 else None
    return ModelBench(
        threads[0],
        threads[1],
        idle,
        idle_load,
        cache,
        server_memory(pid),
        contention,
        contended,
        contended_load,
        soaked,
    )
