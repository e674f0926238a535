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
from fixbot.sandbox.host import python_prefixes, unreadable_toolchain
from fixbot.sandbox.protocol import (
    DEFAULT_LIMITS,
    OUTPUTS,
    PREPARED,
    WORKSPACE,
    Limits,
    RunSpec,
    Sandbox,
    hit_process_cap,
)
from fixbot.sandbox.scratch import attempt_scratch, can_mount
from fixbot.sandbox.select import Backend, choose

__all__ = [
    "DEFAULT_LIMITS",
    "LOCAL_IMAGE",
    "OUTPUTS",
    "PREPARED",
    "WORKSPACE",
    "Backend",
    "BwrapSandbox",
    "DockerSandbox",
    "Limits",
    "RunSpec",
    "Sandbox",
    "attempt_scratch",
    "can_mount",
    "choose",
    "evacuate_root",  # .ci/run calls it in a CI container
    "hit_process_cap",
    "python_prefixes",
    "sdk_version",
    "unreadable_toolchain",
]
