"""Every reason to refuse a patch before anything runs (pure: nothing is executed here).

screen(patch, ...)   protected and never-editable paths, new modules that shadow a tool,
                     added secrets, and the cheat policy's findings: one problem each
salvage(patch, ...)  the patch without its changes to protected paths, and those paths: a
                     reply that fixes the code and also edits a test keeps its fix, the test
                     edit dropped (never applied) and named in the feedback
recorded_problems    a recorded diff read as data, for the publish step (recorded.py)
unread_sources       the changed Python files the screen could not parse: no pass needs one
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from fixbot.commands import gate_files
from fixbot.edits import Patch
from fixbot.screen.paths import is_refused, never_editable, refused_paths, shadowing
from fixbot.screen.policy import Strictness, review, unread_sources
from fixbot.screen.recorded import recorded_problems
from fixbot.screen.recorded import refused_paths as unpublishable
from fixbot.secrets import added_secrets
from fixbot.snapshot import read_inside

__all__ = [
    "never_editable",
    "recorded_problems",
    "salvage",
    "screen",
    "unpublishable",
    "unread_sources",
]


def screen(
    patch: Patch,
    *,
    tree: Path,
    protected: Sequence[str],
    allowed: Sequence[str],
    failing: Sequence[str],
    strictness: Strictness,
    files: Collection[str] = (),
) -> list[str]:
    """Every reason to refuse `patch` (a candidate for the snapshot at `tree`); [] when none.
    `protected`: the protected globs; `allowed`: protected files a human opened to edits;
    `files`: the files the run protected when it started (its manifest), each as itself."""
    named = gate_files(lambda rel: read_inside(tree, rel))  # ruff's extend, mypy's plugins
    problems = refused_paths(patch.paths, [*protected, *named], allowed, files)
    problems += [
        f"the diff adds {path}, which would stand in for the installed module of that name "
        "(the test runner, a gate or the standard library) when the checks run; name it otherwise"
        for path in shadowing(patch, tree)
    ]
    problems += [
        f"the diff adds a secret ({hit.kind}) to {change.path} line {hit.line}; "
        "credentials never go into a fix"
        for change in patch.changes
        for hit in added_secrets(change.old, change.new)
    ]
    findings = review(patch, tree=tree, failing_tests=list(failing), strictness=strictness)
    return problems + [str(finding) for finding in findings]


def salvage(
    patch: Patch, *, protected: Sequence[str], allowed: Sequence[str], files: Collection[str] = ()
) -> tuple[Patch | None, list[str]]:
    """The patch without its changes to paths no candidate may change (None when nothing else
    is left), and those paths. What is kept is screened like any patch."""
    dropped = [path for path in patch.paths if is_refused(path, protected, allowed, files)]
    return (patch.without(dropped) if dropped else patch), dropped
