"""Zero-token fixes: when a failing check is a ruff check (lint or format; a legacy test command
that is ruff too), ruff's own safe fixes and formatting are tried before any model call.

Only the failing ruff checks are fixed, each with its own arguments and the root configuration
(tools.py: fixbot's own ruff, `python -I`), so a repository whose format check is green is
never reformatted.

They run in the sandbox like any check, over a throwaway copy of the snapshot (in a capped
scratch folder, as an attempt's) with the protected files read-only, and any change to one is
dropped; what they change becomes a canonical diff that is then checked, judged and verified
like a model's. A pass is finalized with zero tokens; a partial fix is fed back to the model as
the first attempt (number 0).
"""

from __future__ import annotations

from collections.abc import Sequence

from fixbot.checks.part import entry_id
from fixbot.checks.tools import interpreter, tool_argv
from fixbot.checks.trial import reader
from fixbot.commands import CheckSpec, is_ruff
from fixbot.edits import FileChange, render_diff
from fixbot.records import CheckResult, failing_tests
from fixbot.sandbox import Limits, RunSpec, Sandbox, attempt_scratch
from fixbot.snapshot import Snapshot, fresh_copy, read_inside, repo_files, tree_bytes

MODEL = "ruff --fix + ruff format (no model)"


def ruff_failing(baseline: CheckResult, checks: Sequence[CheckSpec]) -> list[CheckSpec]:
    """The ruff checks that failed at baseline (never a gate: its findings never fail), lint
    checks before format checks, as ruff's fixes come before its formatter."""
    failing = set(failing_tests(baseline))
    found = [c for c in checks if not c.gate and is_ruff(c) and entry_id(c) in failing]
    return sorted(found, key=lambda c: "format" in c.argv)


def ruff_diff(
    sandbox: Sandbox, snapshot: Snapshot, limits: Limits, checks: Sequence[CheckSpec]
) -> str:
    """The canonical diff ruff's safe fixes and its formatter make to the snapshot for these
    checks, protected files left out; "" when they change nothing."""
    with attempt_scratch(limits.disk_mb, extra_bytes=tree_bytes(snapshot)) as capped:
        scratch = capped.path
        workspace = fresh_copy(snapshot, scratch / "repo")
        (scratch / "out").mkdir()
        python = interpreter(sandbox.host_toolchain)
        read = reader(snapshot.tree)
        for argv in (tool_argv(c, python=python, read=read, fix=True) for c in checks):
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
