"""Isolation for agent code: the `Sandbox` protocol and its backends (docs/design.md §Security).

`DockerSandbox` isolates (limits, no network but the gateway socket, labels, removal);
`ProcessSandbox` isolates nothing and is for development only, chosen by name in the config.
"""

from evolve.sandbox.cleanup import cleanup, list_sandboxes, reap_run
from evolve.sandbox.docker_backend import DockerSandbox
from evolve.sandbox.factory import limits_from_config, open_sandbox
from evolve.sandbox.images import (
    DEFAULT_IMAGE,
    ImageBuildFailed,
    ImageInfo,
    build_image,
    image_id,
    image_info,
)
from evolve.sandbox.process_backend import ProcessSandbox
from evolve.sandbox.repo import GitFailed, snapshot
from evolve.sandbox.types import (
    GATEWAY_SOCKET_PATH,
    JOB_LABEL,
    RUN_LABEL,
    CopyRefused,
    CopyTooLarge,
    ExecResult,
    Sandbox,
    SandboxError,
    SandboxLimits,
    SandboxUnavailable,
)

__all__ = [
    "DEFAULT_IMAGE",
    "GATEWAY_SOCKET_PATH",
    "JOB_LABEL",
    "RUN_LABEL",
    "CopyRefused",
    "CopyTooLarge",
    "DockerSandbox",
    "ExecResult",
    "GitFailed",
    "ImageBuildFailed",
    "ImageInfo",
    "ProcessSandbox",
    "Sandbox",
    "SandboxError",
    "SandboxLimits",
    "SandboxUnavailable",
    "build_image",
    "cleanup",
    "image_id",
    "image_info",
    "limits_from_config",
    "list_sandboxes",
    "open_sandbox",
    "reap_run",
    "snapshot",
]
