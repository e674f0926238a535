"""The baseline's own rules: a run that did not complete is the environment's problem, the
tests import the project from the repository and everything else from the project's own
environment (imports_checked), and a probe shows what the sandbox's network gives (nothing)."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from fixbot.errors import EnvironmentProblem
from fixbot.records import COMPLETED, CheckResult
from fixbot.sandbox import PREPARED, WORKSPACE, Limits, RunSpec, Sandbox, unreadable_toolchain

_PROBE = (
    "import socket\n"
    "for host in ('1.1.1.1', '127.0.0.1'):\n"
    "    try:\n"
    "        socket.create_connection((host, 80), timeout=3).close()\n"
    "        print(f'{host}:80 CONNECTED')\n"
    "    except OSError as exc:\n"
    "        print(f'{host}:80 refused: {exc}')\n"
)


def require_completed(result: CheckResult) -> CheckResult:
    """A baseline that did not run properly is the environment's problem, never a model's: a
    check whose command or tool is missing, whose output cannot be read, that collected no
    tests or did not complete. Each is named, with what it said."""
    if result["status"] in COMPLETED:
        return result
    runs = [run for run in result.get("checks", []) if run["status"] not in COMPLETED]
    if not runs:  # a record from before per-check results: the one test command
        return _legacy(result)
    tail = result["log_tail"][-800:]
    run = runs[0]
    name, status = run["name"], run["status"]
    if status == "infra_error":
        message = (
            f"the command of the check {name} was not found in the sandbox: {run['command']}"
            f"{_not_found_why()}"
        )
    elif status == "no_tests_collected":
        message = (
            f"the baseline collected no tests: check the command of {name} in .fixbot.yml "
            f"(exit code {run['exit_code']})"
        )
    elif status == "error":
        message = f"the check {name} could not run at baseline: {run['summary']}"
    elif status == "tampered":
        message = _tampered(name, result)
    elif status == "timeout" and result.get("running"):
        message = (
            f"the baseline's check {name} did not complete (timeout while {result['running']} "
            "was running); last output:"
        )
    else:
        message = f"the baseline's check {name} did not complete ({status}); last output:"
    others = [f"the check {r['name']} too: {r['status']}: {r['summary']}" for r in runs[1:]]
    raise EnvironmentProblem("\n".join([message, *others, tail]).rstrip())


def _not_found_why() -> str:
    closed = unreadable_toolchain()
    if closed:
        return f"; the sandbox's users cannot enter {', '.join(closed)}: chmod o+rx each"
    return "; `fixbot doctor` says whether fixbot's Python is visible in the sandbox"


def _legacy(result: CheckResult) -> CheckResult:
    tail = result["log_tail"][-800:]
    status = result["status"]
    if status == "infra_error":
        command = " ".join(result["commands"][-1:])
        raise EnvironmentProblem(
            f"the test command was not found in the sandbox: {command}{_not_found_why()}\n{tail}"
        )
    if status == "no_tests_collected":
        raise EnvironmentProblem(
            "the baseline collected no tests: check test_command in .fixbot.yml "
            f"(exit code {result['exit_code']})\n{tail}"
        )
    if status == "tampered":
        raise EnvironmentProblem(_tampered("tests", result))
    if status == "timeout" and result.get("running"):
        raise EnvironmentProblem(
            f"the baseline test run did not complete (timeout while {result['running']} was "
            f"running); last output:\n{tail}"
        )
    if status not in COMPLETED:
        raise EnvironmentProblem(
            f"the baseline test run did not complete ({status}); last output:\n{tail}"
        )
    return result


def _tampered(name: str, result: CheckResult) -> str:
    """The untouched commit's own code, conftest or plugins disagree with what pytest itself
    counted: no model can fix that, and no verdict can be trusted."""
    reasons = "\n".join(f"- {reason}" for reason in result.get("tampering", [])[:10])
    return (
        f"the baseline test run's report was inconsistent with pytest's own (the check {name}, "
        f"on the untouched commit: the repository's own code or plugins do this):\n{reasons}"
    )


def imports_checked(result: CheckResult, files: Sequence[str]) -> CheckResult:
    """The baseline with the modules its tests imported from outside the project's
    environment and the repository named (`environment.shadowed`, for the evidence);
    EnvironmentProblem when the tests imported the project's own package from anywhere but the
    repository: every check would test that copy, never the attempt's code."""
    own = own_packages(files)
    elsewhere, shadowed = [], []
    for module, path in sorted(result.get("imports", {}).items()):
        if path.startswith(WORKSPACE + "/"):
            continue
        if module in own:
            elsewhere.append(f"{module!r} from {path} (the repository has {own[module]})")
        elif not path.startswith(PREPARED + "/"):
            shadowed.append(f"{module}: {path}")
    if elsewhere:
        raise EnvironmentProblem(
            "the tests import the project's own package from outside the repository, so no "
            f"change to it would be tested: {'; '.join(elsewhere)}. Install the project "
            "editable in setup_command (python -m pip install -e .), or set its import path "
            "(pytest's pythonpath)"
        )
    if not shadowed or "environment" not in result:
        return result
    return {**result, "environment": {**result["environment"], "shadowed": shadowed}}


def own_packages(files: Sequence[str]) -> dict[str, str]:
    """The repository's own packages (a folder with __init__.py at its root or under src/) and
    src/ modules: name -> path. A module file at the root is left out: it may be a script or a
    vendored copy, which the tests need not import from there."""
    found: dict[str, str] = {}
    for path in files:
        parts = path.removeprefix("src/").split("/")
        if len(parts) == 2 and parts[1] == "__init__.py" and parts[0].isidentifier():
            found.setdefault(parts[0], path.rsplit("/", 1)[0])
        elif path.startswith("src/") and len(parts) == 1 and parts[0].endswith(".py"):
            name = parts[0].removesuffix(".py")
            if name.isidentifier():
                found.setdefault(name, path)
    return found


def network_probe(sandbox: Sandbox) -> str:
    """Evidence that the sandbox has no network: what a connection attempt from inside got."""
    scratch = Path(tempfile.mkdtemp(prefix="fixbot-probe-"))
    try:
        (scratch / "ws").mkdir()
        (scratch / "out").mkdir()
        spec = RunSpec(scratch / "ws", scratch / "out", limits=Limits(timeout_seconds=30))
        result = sandbox.run(
            [sys.executable if sandbox.host_toolchain else "python", "-I", "-c", _PROBE], spec
        )
        return result.output.strip()[:500]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
