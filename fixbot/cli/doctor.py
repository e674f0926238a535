"""`fixbot doctor`: what this machine can do for fixbot, each answer with what to do about it.

The sandboxes are tried for real (a bubblewrap that is installed but cannot create a namespace
here is not ready), the sandbox's `python` is compared with fixbot's own (a toolchain the sandbox
cannot see is named as such, with why: never "pip install pytest" for a pytest that is
installed), the checks' environment is made and looked into (a virtualenv of its own: anything
on its `sys.path` outside it and the standard library would shadow the project's packages), the
pytest the checks get is named (the project's own, else fixbot's pin from the package index, and
whether it is built here), and the lint and type tools are asked for their versions inside the
sandbox, with the Python that runs them.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from fixbot import proc
from fixbot.checks.prepare import (
    PINNED,
    IndexSettings,
    shared_built,
    shared_environment,
)
from fixbot.errors import SandboxFailed, SandboxUnavailable, SetupFailed
from fixbot.proc import Completed
from fixbot.sandbox import (
    LOCAL_IMAGE,
    PREPARED,
    BwrapSandbox,
    DockerSandbox,
    Limits,
    RunSpec,
    Sandbox,
    can_mount,
    python_prefixes,
    sdk_version,
    unreadable_toolchain,
)

_LIMITS = Limits(timeout_seconds=60, memory_mb=1024)
_SETUP_LIMITS = Limits(timeout_seconds=300, memory_mb=1024, tmp_size_mb=512)
# (check name, module, what to install when it is missing): fixbot's own, run from its Python
_TOOLS = (
    ("ruff", "ruff", "pip install ruff (the lint gate needs it)"),
    ("mypy", "mypy", "pip install mypy (the type gate needs it)"),
)
# What the checks' Python says of its path: everything on it, and the standard library's folders.
_PATH_PROBE = (
    "import json, sys, sysconfig; paths = sysconfig.get_paths(); "
    "print(json.dumps({'path': sys.path, 'stdlib': [paths['stdlib'], paths['platstdlib']]}))"
)
_SANDBOXES = ("bubblewrap", "docker")


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    version: str
    detail: str


def diagnose(
    *,
    image: str = LOCAL_IMAGE,
    environment: Mapping[str, str] | None = None,
    index: IndexSettings | None = None,
) -> list[Check]:
    """Every check, in order (`index`: the host's package-index settings, which also say
    where the shared environments are cached)."""
    bwrap_check, bwrap = _bubblewrap()
    docker_check, docker = _docker(image, environment)
    checks = [bwrap_check, docker_check, _workspaces(bwrap, docker), _containment(bwrap, docker)]
    checks.append(_git())
    sandbox = docker or bwrap
    python = _python_in(sandbox)
    checks.append(python)
    settings = index or IndexSettings()
    checks.append(_environment_in(sandbox, python, settings))
    checks.append(_pytest_for(sandbox, python, settings))
    for name, module, install in _TOOLS:
        checks.append(_tool_in(sandbox, name, module, install, python))
    return checks


def ready(checks: list[Check]) -> bool:
    """Whether fixbot can run here: a sandbox, git, and an environment of its own in the
    sandbox for the checks."""
    ok = {check.name: check.ok for check in checks}
    sandbox = any(ok.get(name) for name in _SANDBOXES)
    return sandbox and ok.get("git", False) and ok["environment"] and ok["pytest"]


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


_PROBE = "import sys; print(sys.prefix); print(sys.version.split()[0])"


def _python_in(sandbox: Sandbox | None) -> Check:
    """Whether the checks' `python` inside the sandbox is fixbot's own, and if not, why."""
    if sandbox is None:
        return Check("python", False, "", "no sandbox to run it in (see above)")
    try:
        result = _in_sandbox(sandbox, ["python", "-c", _PROBE])
    except SandboxFailed as exc:
        return Check("python", False, "", f"the {sandbox.name} sandbox failed: {exc}")
    lines = result.output.strip().splitlines()
    if result.returncode == 0 and lines and lines[0] == sys.prefix:
        version = lines[1] if len(lines) > 1 else ""
        return Check("python", True, version, f"{sys.executable}, seen inside the sandbox")
    if result.returncode == 0 and lines and not getattr(sandbox, "host_toolchain", True):
        version = lines[1] if len(lines) > 1 else ""
        return Check("python", True, version, f"{lines[0]}, the sandbox image's own")
    if result.returncode == 0 and lines:
        return Check(
            "python",
            False,
            "",
            f"the {sandbox.name} sandbox runs the Python at {lines[0]}, not fixbot's "
            f"({sys.prefix}): install pytest, ruff and mypy there, or run fixbot from a Python "
            "the sandbox mounts",
        )
    return Check("python", False, "", _hidden(sandbox))


def _hidden(sandbox: Sandbox) -> str:
    """Why fixbot's own Python is not visible inside the sandbox, and what to do."""
    where = f"fixbot's Python ({sys.executable}) is not visible inside the {sandbox.name} sandbox"
    closed = unreadable_toolchain()
    if closed:
        return (
            f"{where}: the sandbox's users (not its owner, nor in its group) cannot enter "
            f"{', '.join(closed)}; "
            "chmod o+rx each (or make the virtualenv where others can read it)"
        )
    mounted = ", ".join(["/usr", "/opt", *python_prefixes()])
    return (
        f"{where}, though it mounts {mounted} read-only: with a Docker image of your own, "
        "install pytest, ruff and mypy in it; otherwise run fixbot from a Python under one of "
        "those folders"
    )


def _in_sandbox(sandbox: Sandbox, argv: list[str], prepared: Path | None = None) -> Completed:
    scratch = Path(tempfile.mkdtemp(prefix="fixbot-doctor-"))
    try:
        (scratch / "workspace").mkdir()
        (scratch / "outputs").mkdir()
        spec = RunSpec(
            scratch / "workspace", scratch / "outputs", prepared=prepared, limits=_LIMITS
        )
        return sandbox.run(argv, spec)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _environment_in(sandbox: Sandbox | None, python: Check, index: IndexSettings) -> Check:
    """The checks' virtualenv (the shared one, made here if need be: no download), and
    whether anything on its sys.path lies outside it and the standard library."""
    if sandbox is None or not python.ok:
        return Check("environment", False, "", "no Python to make it with (see python above)")
    try:
        env = shared_environment(sandbox, _SETUP_LIMITS, index, None)
        done = _in_sandbox(sandbox, ["python", "-I", "-c", _PATH_PROBE], prepared=env)
        seen = json.loads(done.output.strip().splitlines()[-1])
    except (SetupFailed, SandboxFailed) as exc:
        return Check("environment", False, "", f"cannot make the checks' virtualenv: {exc}")
    except (ValueError, IndexError):
        return Check("environment", False, "", f"its python said: {done.tail(300).strip()}")
    stdlib = tuple(str(p) for p in seen["stdlib"])
    outside = [p for p in seen["path"] if p and not p.startswith(PREPARED) and not _std(p, stdlib)]
    where = f"the checks' virtualenv in the {sandbox.name} sandbox"
    if outside:
        why = "outside itself and the standard library: their packages would shadow the project's"
        return Check("environment", False, "", f"{where} sees {', '.join(outside)}, {why}")
    nothing = "its sys.path holds itself and the standard library, nothing of fixbot's"
    return Check("environment", True, "", f"{where} is a virtualenv of its own: {nothing}")


def _std(path: str, stdlib: tuple[str, ...]) -> bool:
    """The standard library's own folders (and its zip), never a site-packages under them."""
    packages = "/site-packages" in path or "/dist-packages" in path
    return not packages and (path.startswith(stdlib) or path.endswith(".zip"))


def _pytest_for(sandbox: Sandbox | None, python: Check, index: IndexSettings) -> Check:
    """Which pytest the checks run: the project's own, else fixbot's pin, built here or not."""
    if sandbox is None or not python.ok:
        return Check("pytest", False, "", "no environment to run it in (see python above)")
    built = shared_built(sandbox, index, PINNED)
    where = f"built here ({built})" if built else "not built here yet: the first run fetches it"
    return Check(
        "pytest",
        True,
        PINNED.requirement.partition("==")[2],
        f"in the {sandbox.name} sandbox, the project's own (its setup_command's), else "
        f"{PINNED.requirement} from the package index, once per machine: {where}",
    )


def _tool_in(sandbox: Sandbox | None, name: str, module: str, install: str, python: Check) -> Check:
    if sandbox is None:
        return Check(name, False, "", "no sandbox to run it in (see above)")
    try:
        result = _in_sandbox(sandbox, ["python", "-m", module, "--version"])
    except SandboxFailed as exc:
        return Check(name, False, "", f"the {sandbox.name} sandbox failed: {exc}")
    where = f"in the {sandbox.name} sandbox's python"
    if result.returncode != 0 and not python.ok:
        return Check(name, False, "", f"not importable {where}: see python above")
    if result.returncode != 0 and importlib.util.find_spec(module) is not None:
        return Check(
            name,
            False,
            "",
            f"installed in fixbot's Python ({sys.prefix}) but not importable {where}: "
            f"{result.tail(300).strip()}",
        )
    if result.returncode != 0:
        return Check(name, False, "", f"not importable {where}: {install}")
    lines = result.output.strip().splitlines()
    version = lines[0].removeprefix(f"{name} ") if lines else ""
    return Check(name, True, version, where)
