"""Shared by the containment tests below the suite: a hostile case run straight through a sandbox
(no checks), and fixbot itself as an ordinary user (as the Action's `runner` is), for the
user-namespace mode on a machine where the tests run as root."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from fixbot.sandbox import Limits, RunSpec, Sandbox

CASES = Path(__file__).resolve().parent / "containment"
ROOT = Path(__file__).resolve().parents[2]
NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


@cache
def ordinary_user_bwrap_problem() -> str:
    """Why bubblewrap does not start a sandbox for an ordinary user here ("" when it does): a
    user namespace refused by the kernel, a setuid-less bwrap, no setpriv to become one."""
    if shutil.which("setpriv") is None or shutil.which("bwrap") is None:
        return "no setpriv or no bwrap on PATH"
    probe = ["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/"]
    done = subprocess.run(
        [*AS_NOBODY, *probe, "--proc", "/proc", "--dev", "/dev", "true"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/",
    )
    return "" if done.returncode == 0 else (done.stderr.strip() or f"exit {done.returncode}")


def as_nobody_ran(done: subprocess.CompletedProcess[str]) -> None:
    """A script run as an ordinary user that exited nonzero skips its test only where bubblewrap
    itself does not run for an ordinary user here; any other exit is the test's failure."""
    if done.returncode == 0:
        return
    problem = ordinary_user_bwrap_problem()
    if problem:
        pytest.skip(f"bubblewrap does not run for an ordinary user here: {problem[-400:]}")
    pytest.fail(
        f"the script run as an ordinary user exited {done.returncode}, though bubblewrap runs "
        f"for one here:\n{done.stderr[-2000:]}\n{done.stdout[-500:]}"
    )


@contextmanager
def case_folder(case: str, **facts: Any) -> Iterator[Path]:
    """A folder holding `case` as hostile.py with the probe, readable and writable by anyone
    (the sandbox user may be nobody, a leased uid, or an ordinary user's namespace)."""
    root = Path(tempfile.mkdtemp(prefix="fixbot-confined-"))
    try:
        root.chmod(0o755)
        for name in ("ws", "out"):
            (root / name).mkdir()
            (root / name).chmod(0o777)
        shutil.copy(CASES / f"{case}.py", root / "ws" / "hostile.py")
        shutil.copy(CASES / "probe.py", root / "ws" / "probe.py")
        (root / "ws" / "case.json").write_text(json.dumps({"marker": "fbxconfined", **facts}))
        for path in (root / "ws").iterdir():
            path.chmod(0o644)
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


ATTACK = ["python3", "-c", "import hostile; hostile.attack()"]  # the system one, as nobody
LIMITS = Limits(timeout_seconds=60)


def attack(sandbox: Sandbox, root: Path, limits: Limits = LIMITS) -> tuple[dict[str, Any], str]:
    """Run the case's attack() in the sandbox; what probe.json recorded, and the output."""
    done = sandbox.run(ATTACK, RunSpec(root / "ws", root / "out", limits=limits))
    probe = root / "ws" / "probe.json"
    return (json.loads(probe.read_text()) if probe.is_file() else {}), done.output


# Run as nobody: makes a BwrapSandbox (keyword arguments from argv[2] as JSON), attacks with
# the case in argv[1], prints {"probe": ..., "output": ..., "describe": ...}.
AS_USER = f"""
import json, sys
from pathlib import Path
from fixbot.sandbox import BwrapSandbox, Limits, RunSpec
sandbox = BwrapSandbox(**json.loads(sys.argv[2]))
root = Path(sys.argv[1])
limits = Limits(timeout_seconds=60)
done = sandbox.run({ATTACK!r}, RunSpec(root / "ws", root / "out", limits=limits))
probe = root / "ws" / "probe.json"
found = json.loads(probe.read_text()) if probe.is_file() else {{}}
print(json.dumps({{"probe": found, "output": done.output, "describe": sandbox.describe()}}))
"""


def as_ordinary_user(root: Path, **options: Any) -> dict[str, Any]:
    """attack() through a BwrapSandbox made by fixbot running as nobody (skips where this host
    does not let an ordinary user make one)."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root, to become an ordinary user")
    done = subprocess.run(
        [*AS_NOBODY, sys.executable, "-c", AS_USER, str(root), json.dumps(options)],
        capture_output=True,
        text=True,
        timeout=180,
        env={"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT)},
        cwd=root,
    )
    as_nobody_ran(done)
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def command_output(sandbox: Sandbox, argv: Sequence[str], root: Path) -> str:
    return sandbox.run(argv, RunSpec(root / "ws", root / "out")).output
