"""One trial: a fresh workspace over a snapshot, a canonical diff applied, the checks run over it.

The workspace is a layer over the snapshot where the sandbox can merge one (overlayfs), else a
full copy; either way it lives in the attempt's scratch folder, capped in size when fixbot is
root. Protected files are put back from the snapshot before the checks and compared with the
manifest after them; the scratch folder is removed whatever happens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from fixbot.checks.gates import BadTestCommand, run_checks
from fixbot.checks.generated import lay_generated
from fixbot.checks.index import IndexSettings
from fixbot.checks.plugins import plugin_options
from fixbot.checks.prepare import prepared_environment
from fixbot.config import Config
from fixbot.edits import plan_patch
from fixbot.errors import SandboxFailed, UsageError
from fixbot.records import CheckResult
from fixbot.sandbox import Limits, Sandbox, attempt_scratch
from fixbot.snapshot import (
    Snapshot,
    mismatches,
    prepare,
    put_back_protected,
    read_inside,
    tree_bytes,
)

INFRA_ATTEMPTS = 3


def limits_for(config: Config) -> Limits:
    s = config.sandbox
    return Limits(
        timeout_seconds=s.timeout_seconds, memory_mb=s.memory_mb, cpus=s.cpus, disk_mb=s.disk_mb
    )


def setup_limits(config: Config) -> Limits:
    """The prepare step's limits: more time and /tmp than a check (it builds and downloads)."""
    s = config.sandbox
    return Limits(
        timeout_seconds=max(s.timeout_seconds, 900),
        memory_mb=s.memory_mb,
        cpus=s.cpus,
        tmp_size_mb=1024,
        file_size_mb=1024,
    )


def reader(root: Path) -> Callable[[str], str | None]:
    return lambda path: read_inside(root, path)


def tampered_problems(paths: Sequence[str]) -> list[str]:
    """The one wording of a protected file found changed after a check ran."""
    return [f"protected file {path} was modified while the checks ran" for path in paths]


def run_trial(
    sandbox: Sandbox,
    snapshot: Snapshot,
    config: Config,
    patch_text: str,
    *,
    index: IndexSettings | None = None,
) -> tuple[CheckResult, list[str]]:
    """(the checks' result, protected files found modified afterwards)

    A failure of the sandbox itself (not of the code in it) is retried a bounded number of
    times on a fresh copy, then raised: it is the environment's problem and costs no budget.
    `index`: the host's package-index settings, for the prepare step.
    """
    setup, limits = config.setup_commands, setup_limits(config)
    prepared = prepared_environment(sandbox, snapshot, setup, limits, index)
    failures: list[str] = []
    for _ in range(INFRA_ATTEMPTS):
        try:
            return _run_once(sandbox, snapshot, config, patch_text, prepared)
        except SandboxFailed as exc:
            failures.append(str(exc))
    raise SandboxFailed(f"the sandbox failed {INFRA_ATTEMPTS} times in a row; last: {failures[-1]}")


def _run_once(
    sandbox: Sandbox, snapshot: Snapshot, config: Config, patch_text: str, prepared: Path | None
) -> tuple[CheckResult, list[str]]:
    patch = plan_patch(patch_text, reader(snapshot.tree)) if patch_text else None
    limits = limits_for(config)
    # A full copy needs room for the tree itself on top of what the attempt may write.
    extra = 0 if sandbox.layered else tree_bytes(snapshot)
    with attempt_scratch(limits.disk_mb, extra_bytes=extra) as scratch:
        tree = prepare(snapshot, scratch.path / "repo", layered=sandbox.layered, patch=patch)
        lay_generated(prepared, tree.root)  # what the install wrote into the tree
        put_back_protected(snapshot, tree)
        try:
            result = run_checks(
                sandbox,
                tree.root,
                lower=tree.lower,
                prepared=prepared,
                test_command=config.test_command,
                lint=config.gates.lint,
                types=config.gates.types,
                readonly=list(snapshot.protected),
                limits=limits,
                scratch=scratch.path,
                pytest_options=plugin_options(prepared),
            )
        except BadTestCommand as exc:
            raise UsageError(str(exc)) from exc
        return result, mismatches(snapshot, tree)
