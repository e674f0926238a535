"""Which sandbox runs the checks: the one asked for, or for `auto` the best one this machine has.

`auto` prefers Docker when its engine answers and has the image, else bubblewrap. A backend
asked for by name is never silently replaced: if it cannot run, that is the error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from fixbot.errors import SandboxUnavailable
from fixbot.sandbox.bwrap import BwrapSandbox
from fixbot.sandbox.docker import LOCAL_IMAGE, DockerSandbox
from fixbot.sandbox.protocol import Sandbox

Backend = Literal["auto", "docker", "bwrap"]


def choose(
    backend: Backend,
    *,
    image: str | None = None,
    environment: Mapping[str, str] | None = None,
) -> Sandbox:
    """The sandbox for `backend`; `environment` says where the Docker engine is (DOCKER_HOST);
    `image` is the Docker sandbox image (default: the local one, with the host's toolchain)."""
    image = image or LOCAL_IMAGE
    if backend == "bwrap":
        return BwrapSandbox()
    if backend == "docker":
        return DockerSandbox(image, environment=environment)
    problems = []
    try:
        return DockerSandbox(image, environment=environment)
    except SandboxUnavailable as exc:
        problems.append(f"docker: {exc}")
    try:
        return BwrapSandbox()
    except SandboxUnavailable as exc:
        problems.append(f"bubblewrap: {exc}")
    raise SandboxUnavailable(
        "no sandbox can run here. Install one: `apt-get install -y bubblewrap` (simplest), or "
        "Docker (`.ci/docker-setup.sh` as root). What was tried:\n  " + "\n  ".join(problems)
    )
