"""Zero-token fixes: when the only failures are ruff's (lint or format), ruff's own safe fixes
and formatting are tried before any model call.

They run in the sandbox like any check, over a throwaway copy of the snapshot (in a capped
scratch folder, as an attempt's) with the protected files read-only, and any change to one is
dropped; what they change becomes a canonical diff that is then checked, judged and verified
like a model's. A pass is finalized with zero tokens; a partial fix is fed back to the model as
the first attempt (number 0).
"""

from __future__ import annotations

import shlex
from pathlib import Path

from fixbot.edits import FileChange, render_diff
from fixbot.records import CheckResult, failing_tests
from fixbot.sandbox import Limits, RunSpec, Sandbox, attempt_scratch
from fixbot.snapshot import Snapshot, fresh_copy, read_inside, repo_files, tree_bytes

RUFF_FIX = ["python", "-m", "ruff", "check", "--fix", "--exit-zero", "--no-cache", "."]
RUFF_FORMAT = ["python", "-m", "ruff", "format", "--no-cache", "."]
MODEL = "ruff --fix + ruff format (no model)"


def ruff_only(baseline: CheckResult) -> bool:
    """Every failing test is a ruff command (the test command is `ruff check` or
    `ruff format --check`): nothing a model is needed for, if ruff can fix it."""
    failing = failing_tests(baseline)
    return bool(failing) and all(_is_ruff(test) for test in failing)


def _is_ruff(test_id: str) -> bool:
    if not test_id.startswith("command: "):
        return False
    try:
        argv = shlex.split(test_id.removeprefix("command: "))
    except ValueError:
        return False
    names = [Path(word).name for word in argv]
    return "ruff" in names and ("check" in argv or "format" in argv)


def ruff_diff(sandbox: Sandbox, snapshot: Snapshot, limits: Limits) -> str:
    """The canonical diff ruff's safe fixes and its formatter make to the snapshot, protected
    files left out; "" when they change nothing."""
    with attempt_scratch(limits.disk_mb, extra_bytes=tree_bytes(snapshot)) as capped:
        scratch = capped.path
        workspace = fresh_copy(snapshot, scratch / "repo")
        (scratch / "out").mkdir()
        for argv in (RUFF_FIX, RUFF_FORMAT):
            spec = RunSpec(
                workspace, scratch / "out", readonly=list(snapshot.protected), limits=limits
            )
            sandbox.run(argv, spec)
        changes = []
        for rel in repo_files(snapshot):
            if rel in snapshot.manifest:
                continue
            before = read_inside(snapshot.tree, rel)
            after = read_inside(workspace, rel)
            if before is not None and after is not None and before != after:
                changes.append(FileChange(rel, before, after))
        return render_diff(changes) if changes else ""
