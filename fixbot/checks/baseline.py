"""The baseline's own rules: a run that did not complete is the environment's problem, and a
probe shows what the sandbox's network gives (nothing)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from fixbot.errors import EnvironmentProblem
from fixbot.records import COMPLETED, CheckResult
from fixbot.sandbox import Limits, RunSpec, Sandbox, unreadable_toolchain

_PROBE = (
    "import socket\n"
    "for host in ('1.1.1.1', '127.0.0.1'):\n"
    "    try:\n"
    "        socket.create_connection((host, 80), timeout=3).close()\n"
    "        print(f'{host}:80 CONNECTED')\n"
    "    except OSError as exc:\n"
    "        print(f'{host}:80 refused: {exc}')\n"
)


def require_completed(result: CheckResult, test_command: str) -> CheckResult:
    """A baseline that did not run properly is the environment's problem, never a model's."""
    tail = result["log_tail"][-800:]
    status = result["status"]
    if status == "infra_error":
        closed = unreadable_toolchain()
        why = (
            f"; the sandbox's users cannot enter {', '.join(closed)}: chmod o+rx each"
            if closed
            else "; `fixbot doctor` says whether fixbot's Python is visible in the sandbox"
        )
        raise EnvironmentProblem(
            f"the test command was not found in the sandbox: {test_command}{why}\n{tail}"
        )
    if status == "no_tests_collected":
        raise EnvironmentProblem(
            "the baseline collected no tests: check test_command in .fixbot.yml "
            f"(exit code {result['exit_code']})\n{tail}"
        )
    if status not in COMPLETED:
        raise EnvironmentProblem(
            f"the baseline test run did not complete ({status}); last output:\n{tail}"
        )
    return result


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
