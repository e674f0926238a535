"""The baseline's own rules: a run that did not complete is the environment's problem, and a
probe shows what the sandbox's network gives (nothing)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from fixbot.errors import EnvironmentProblem
from fixbot.records import COMPLETED, CheckResult
from fixbot.sandbox import Limits, RunSpec, Sandbox

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
        message = f"the command of the check {name} was not found in the sandbox: {run['command']}"
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


def _legacy(result: CheckResult) -> CheckResult:
    tail = result["log_tail"][-800:]
    status = result["status"]
    if status == "infra_error":
        raise EnvironmentProblem(f"the test command was not found in the sandbox\n{tail}")
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


def network_probe(sandbox: Sandbox) -> str:
    """Evidence that the sandbox has no network: what a connection attempt from inside got."""
    scratch = Path(tempfile.mkdtemp(prefix="fixbot-probe-"))
    try:
        (scratch / "ws").mkdir()
        (scratch / "out").mkdir()
        spec = RunSpec(scratch / "ws", scratch / "out", limits=Limits(timeout_seconds=30))
        result = sandbox.run(["python", "-c", _PROBE], spec)
        return result.output.strip()[:500]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
