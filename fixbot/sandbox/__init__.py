"""The Sandbox protocol and its backends: run one command over one attempt's workspace,
contained (see protocol.py for what every backend promises).

    choose(backend)     the backend asked for, or for `auto` the best this machine has
    attempt_scratch     an attempt's capped scratch folder (a tmpfs of disk_mb, as root)
"""

from __future__ import annotations

from fixbot.sandbox.bwrap import BwrapSandbox
from fixbot.sandbox.docker import LOCAL_IMAGE, DockerSandbox, sdk_version
from fixbot.sandbox.host import NOBODY
from fixbot.sandbox.protocol import (
    BASE_ENV,
    DEFAULT_LIMITS,
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
    "OUTPUTS",
    "PREPARED",
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
    "prepared_env",
    "reap",
    "sdk_version",
]
