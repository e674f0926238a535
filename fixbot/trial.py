"""One trial: a fresh copy of a snapshot, a canonical diff applied, the checks run over it.

Protected files are put back from the snapshot before the checks and compared with the
manifest after them; the copy is removed whatever happens.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from fixbot import diff
from fixbot.checks import BadTestCommand, CheckResult, run_checks
from fixbot.config import Config
from fixbot.errors import SandboxFailed, UsageError
from fixbot.sandbox import Limits, Sandbox
from fixbot.snapshot import (
    Snapshot,
    fresh_copy,
    manifest_mismatches,
    read_inside,
    restore_protected,
)

INFRA_ATTEMPTS = 3


def limits_for(config: Config) -> Limits:
    s = config.sandbox
    return Limits(timeout_seconds=s.timeout_seconds, memory_mb=s.memory_mb, cpus=s.cpus)


def reader(root: Path) -> Callable[[str], str | None]:
    return lambda path: read_inside(root, path)


def run_trial(
    sandbox: Sandbox, snapshot: Snapshot, config: Config, patch_text: str
) -> tuple[CheckResult, list[str]]:
    """(the checks' result, protected files found modified afterwards)

    A failure of the sandbox itself (not of the code in it) is retried a bounded number of
    times on a fresh copy, then raised: it is the environment's problem and costs no budget.
    """
    failures: list[str] = []
    for _ in range(INFRA_ATTEMPTS):
        try:
            return _run_once(sandbox, snapshot, config, patch_text)
        except SandboxFailed as exc:
            failures.append(str(exc))
    raise SandboxFailed(f"the sandbox failed {INFRA_ATTEMPTS} times in a row; last: {failures[-1]}")


def _run_once(
    sandbox: Sandbox, snapshot: Snapshot, config: Config, patch_text: str
) -> tuple[CheckResult, list[str]]:
    scratch = Path(tempfile.mkdtemp(prefix="fixbot-attempt-"))
    try:
        workspace = fresh_copy(snapshot, scratch / "repo")
        if patch_text:
            diff.write_changes(diff.plan_patch(patch_text, reader(snapshot.tree)), workspace)
        restore_protected(snapshot, workspace)
        try:
            result = run_checks(
                sandbox,
                workspace,
                test_command=config.test_command,
                lint=config.gates.lint,
                types=config.gates.types,
                readonly=list(snapshot.protected),
                limits=limits_for(config),
            )
        except BadTestCommand as exc:
            raise UsageError(str(exc)) from exc
        return result, manifest_mismatches(snapshot, workspace)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
