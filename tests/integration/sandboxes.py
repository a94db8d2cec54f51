"""What the sandbox and containment conftests share: a session's run label, proven empty at its end, and
a maker of Docker sandboxes under that label that closes them when the test ends."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

from evolve.sandbox import DockerSandbox, SandboxLimits, cleanup, list_sandboxes


def labelled_run(prefix: str, client) -> Iterator[str]:
    """Yield a fresh `evolve.run` label; afterwards sweep it and fail if any container was left."""
    run_id = f"{prefix}-{uuid.uuid4().hex[:8]}"
    yield run_id
    left = list_sandboxes(run_id, client=client)
    cleanup(run_id, client=client)
    assert left == [], f"tests left containers behind: {left}"


def box_maker(
    image: str, run_id: str, test_name: str, limits: SandboxLimits, client
) -> Iterator[Callable[..., DockerSandbox]]:
    """Yield `make(**create_kwargs)` (default limits `limits`); every box it made is closed afterwards."""
    made: list[DockerSandbox] = []

    def make(**kwargs) -> DockerSandbox:
        kwargs.setdefault("limits", limits)
        box = DockerSandbox.create(image, run_id=run_id, job_id=test_name[:40], client=client, **kwargs)
        made.append(box)
        return box

    yield make
    for box in made:
        box.close()
