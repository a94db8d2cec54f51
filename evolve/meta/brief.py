"""The improve step's brief: the diagnosis, then the source of the one target it names and the agent's map.

The diagnosis names an agent-level target on its `Target:` line (`agent/core.py:Runner.step`,
evolve.meta.diagnose.target_of; an agent's own diagnosis may name it anywhere in its text); the
engine adds that target's source as it stands in the parent and the map of the agent's files, so the
improve step can show the model one function and the map instead of the whole agent (thousands of
tokens, which a small model answers with an echo). A diagnosis that names no target of the map
is passed on as it is (the agent then shows what fits). The brief is built from the parent's code on the
host, reading it as text (nothing of it runs); the header line is what the seed's `improve` looks for.

Instructions that show the lines deciding their failure still get the whole target: given those lines and the
map only, a model takes the lines for the whole function and rewrites the function from them.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from evolve.meta.agentmap import agent_map, source_of
from evolve.meta.diagnose import target_of

NAMED = re.compile(r"[\w./-]+\.py(?:::?[\w.]+)?")
"""A file or `FILE:NAME` mentioned in the diagnosis (resolved against the map)."""
HEADER = "--- {target} (the target, as it stands; lines {start}-{end}) ---"
MAP_CHARS = 3000


def focused_brief(instructions: str, code: Path) -> str:
    """The instructions with the first target they name that the parent's map resolves: its source and the
    map; the instructions unchanged when they name none."""
    found = agent_map(code)
    named = [line for line in [target_of(instructions)] if line] + NAMED.findall(instructions)
    target = next((t for t in map(found.resolve, named) if t), None)
    hit = found.symbol(target) if target else None
    if target is None or hit is None:
        return instructions
    agent = (
        f"--- the agent's map (file, then what it defines) ---\n{found.render(MAP_CHARS, summaries=False)}\n"
    )
    symbol = hit[1]
    header = HEADER.format(target=target, start=symbol.start, end=symbol.end)
    # Dedented: a method copied at its class's indentation does not parse on its own, and models copy it
    # so; the merge puts a method back in its class.
    source = textwrap.dedent(source_of(code, target)).rstrip()
    return f"{instructions.rstrip()}\n\n{header}\n{source}\n\n{agent}"
