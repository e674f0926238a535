"""`fixbot doctor`: what this machine can do for fixbot, each answer with what to do about it.

The sandboxes are tried for real (a bubblewrap that is installed but cannot create a namespace
here is not ready), and the test, lint and type tools are asked for their versions inside the
sandbox, with the Python the checks will run with.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from fixbot import proc
from fixbot.errors import SandboxFailed, SandboxUnavailable
from fixbot.sandbox import (
    LOCAL_IMAGE,
    BwrapSandbox,
    DockerSandbox,
    Limits,
    RunSpec,
    Sandbox,
    can_mount,
    sdk_version,
)

_LIMITS = Limits(timeout_seconds=60, memory_mb=1024)
# (check name, module, what to install when it is missing)
_TOOLS = (
    ("pytest", "pytest", "pip install pytest"),
    ("ruff", "ruff", "pip install ruff (the lint gate needs it)"),
    ("mypy", "mypy", "pip install mypy (the type gate needs it)"),
)
_SANDBOXES = ("bubblewrap", "docker")


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    version: str
    detail: str


def diagnose(
    *, image: str = LOCAL_IMAGE, environment: Mapping[str, str] | None = None
) -> list[Check]:
    bwrap_check, bwrap = _bubblewrap()
    docker_check, docker = _docker(image, environment)
    checks = [bwrap_check, docker_check, _workspaces(bwrap, docker), _containment(bwrap, docker)]
    checks.append(_git())
    sandbox = docker or bwrap
    for name, module, install in _TOOLS:
        checks.append(_tool_in(sandbox, name, module, install))
    return checks


def ready(checks: list[Check]) -> bool:
    """Whether fixbot can run here: a sandbox, git, and pytest in the sandbox."""
    ok = {check.name: check.ok for check in checks}
    return any(ok.get(name) for name in _SANDBOXES) and ok.get("git", False) and ok["pytest"]


def render(checks: list[Check]) -> str:
    name_width = max(len(check.name) for check in checks)
    version_width = max(len(check.version or "-") for check in checks)
    lines = [
        f"{'ok' if check.ok else 'FAIL':4}  {check.name:{name_width}}  "
        f"{check.version or '-':{version_width}}  {check.detail}"
        for check in checks
    ]
    verdict = "fixbot can run here" if ready(checks) else "fixbot cannot run here yet"
    return "\n".join([*lines, "", verdict]) + "\n"


def _bubblewrap() -> tuple[Check, BwrapSandbox | None]:
    found = shutil.which("bwrap")
    if not found:
        return Check("bubblewrap", False, "", "not installed: apt-get install -y bubblewrap"), None
    version = proc.run([found, "--version"], timeout=10).output.strip().removeprefix("bubblewrap ")
    try:
        sandbox = BwrapSandbox(found)
    except SandboxUnavailable as exc:
        return Check("bubblewrap", False, version, str(exc)), None
    return Check("bubblewrap", True, version, f"creates sandboxes: {sandbox.describe()}"), sandbox


def _docker(
    image: str, environment: Mapping[str, str] | None
) -> tuple[Check, DockerSandbox | None]:
    sdk = sdk_version()
    if sdk is None:
        return Check(
            "docker", False, "", "the Python SDK is missing: pip install 'docker>=7'"
        ), None
    try:
        sandbox = DockerSandbox(image, environment=environment)
    except SandboxUnavailable as exc:
        return Check("docker", False, f"SDK {sdk}", str(exc)), None
    version = f"engine {sandbox.engine_version}, SDK {sdk}"
    return Check("docker", True, version, f"image {image} ({sandbox.image_id})"), sandbox


def _workspaces(*sandboxes: Sandbox | None) -> Check:
    """How each attempt's workspace is made here: a layer (cheap) or a copy; capped or not."""
    layered = [s.name for s in sandboxes if s is not None and s.layered]
    how = f"overlay per attempt ({', '.join(layered)})" if layered else "full copy per attempt"
    if not layered:
        how += " (overlay workspaces need root, util-linux and overlayfs)"
    cap = "disk capped per attempt" if can_mount() else "disk uncapped: only root can mount"
    return Check("workspaces", True, "", f"{how}; {cap}")


def _containment(bwrap: BwrapSandbox | None, docker: DockerSandbox | None) -> Check:
    """What contains a run on each backend here: whole-sandbox caps or per-process ones (and
    why), the uids, the seccomp filter."""
    found = [f"{s.name}: {s.containment()}" for s in (bwrap, docker) if s is not None]
    return Check("containment", bool(found), "", " | ".join(found) or "no sandbox (see above)")


def _git() -> Check:
    if not shutil.which("git"):
        return Check("git", False, "", "not installed: apt-get install -y git")
    result = proc.run(["git", "--version"], timeout=10)
    version = result.output.strip().removeprefix("git version ")
    numbers = tuple(int(n) for n in re.findall(r"\d+", version)[:2])
    # fixbot's git ignores the global config, so `safe.directory` comes on its command line.
    old = " (before 2.38: a checkout owned by another user is refused)" if numbers < (2, 38) else ""
    return Check(
        "git", result.returncode == 0, version, f"runs no program of the repository's{old}"
    )


def _tool_in(sandbox: Sandbox | None, name: str, module: str, install: str) -> Check:
    if sandbox is None:
        return Check(name, False, "", "no sandbox to run it in (see above)")
    scratch = Path(tempfile.mkdtemp(prefix="fixbot-doctor-"))
    try:
        (scratch / "workspace").mkdir()
        (scratch / "outputs").mkdir()
        spec = RunSpec(scratch / "workspace", scratch / "outputs", limits=_LIMITS)
        result = sandbox.run(["python", "-m", module, "--version"], spec)
    except SandboxFailed as exc:
        return Check(name, False, "", f"the {sandbox.name} sandbox failed: {exc}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    where = f"in the {sandbox.name} sandbox's python"
    if result.returncode != 0:
        return Check(name, False, "", f"not importable {where}: {install}")
    lines = result.output.strip().splitlines()
    version = lines[0].removeprefix(f"{name} ") if lines else ""
    return Check(name, True, version, where)
