"""The Sandbox protocol and its backends: run one command over one attempt's workspace,
contained (see protocol.py for what every backend promises).

    choose(backend)     the backend asked for, or for `auto` the best this machine has
    attempt_scratch     an attempt's capped scratch folder (a tmpfs of disk_mb, as root)
    evacuate_root       for a CI container: let its cgroup root cap fixbot's sandboxes
"""

from __future__ import annotations

from fixbot.sandbox.bwrap import BwrapSandbox
from fixbot.sandbox.cgroup_detect import evacuate_root
from fixbot.sandbox.docker import LOCAL_IMAGE, DockerSandbox, sdk_version
from fixbot.sandbox.host import NOBODY, SANDBOX_GID
from fixbot.sandbox.protocol import (
    BASE_ENV,
    DEFAULT_LIMITS,
    OOM_NOTE,
    OUTPUTS,
    PREPARED,
    SETUP_ENV,
    WORKSPACE,
    Limits,
    RunSpec,
    Sandbox,
    prepared_env,
)
from fixbot.sandbox.scratch import Scratch, attempt_scratch, can_mount, reap
from fixbot.sandbox.select import Backend, choose

__all__ = [
    "BASE_ENV",
    "DEFAULT_LIMITS",
    "LOCAL_IMAGE",
    "NOBODY",
    "OOM_NOTE",
    "OUTPUTS",
    "PREPARED",
    "SANDBOX_GID",
    "SETUP_ENV",
    "WORKSPACE",
    "Backend",
    "BwrapSandbox",
    "DockerSandbox",
    "Limits",
    "RunSpec",
    "Sandbox",
    "Scratch",
    "attempt_scratch",
    "can_mount",
    "choose",
    "evacuate_root",
    "prepared_env",
    "reap",
    "sdk_version",
]
