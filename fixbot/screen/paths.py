"""The paths a patch may never touch, and the new modules that would stand in for a tool.

NEVER_EDITABLE is the one list of what no candidate, no human answer and no publish step may
change: CI, fixbot's own configuration and state, git's own files. Protected paths (tests and
their configuration, by glob) are refused too, unless a human opened one by name.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path, PurePosixPath

from fixbot.edits import Patch
from fixbot.paths import is_state_path
from fixbot.screen.lines import is_test_path
from fixbot.snapshot import is_protected

# Never edited, never opened to edits: CI, fixbot's config, fixbot's state, git's own files.
NEVER_EDITABLE = (
    *(".github/", ".fixbot.yml", ".fixbot/", ".circleci/", ".travis.yml", ".gitlab-ci.yml"),
    *("azure-pipelines.yml", "Jenkinsfile", ".buildkite/"),
)


def never_editable(path: str) -> bool:
    """Whether `path` is one no candidate, answer or publish may change, whatever is allowed.
    Case-insensitively (a checkout on macOS or Windows makes `.GitHub/` the CI folder), and
    any part named `.git*` (`.git/`, `.gitmodules`, `.gitattributes`, `.gitignore`): git's."""
    low = path.lower()
    if is_state_path(low) or any(p.startswith(".git") for p in PurePosixPath(low).parts):
        return True
    return any(low == p.rstrip("/").lower() or low.startswith(p.lower()) for p in NEVER_EDITABLE)


def is_refused(
    path: str, globs: Sequence[str], allowed: Sequence[str], files: Collection[str] = ()
) -> bool:
    """Whether no candidate may change `path`: protected (by a glob, one of the `files` the run
    protected when it started, or a test by its path at any depth, as the screen's rules and
    the publish step read it), unless a human allowed it, or never editable (whatever was
    allowed)."""
    protected = is_protected(path, globs) or path in files or is_test_path(path)
    return never_editable(path) or (protected and path not in allowed)


def refused_paths(
    paths: Iterable[str], globs: Sequence[str], allowed: Sequence[str], files: Collection[str] = ()
) -> list[str]:
    """Why each path may not be changed (see is_refused)."""
    return [
        f"the diff touches protected path {path}; tests, their configuration and the gates' "
        "(conftest.py, pyproject.toml, setup.cfg, ruff and mypy files, at any depth) are the "
        "specification and cannot be changed"
        for path in paths
        if is_refused(path, globs, allowed, files)
    ]


# Stood in for whether or not they are importable here: the runner, its plugin system, and
# what pytest and mypy import when it is there (psutil, orjson, lxml, ...): a workspace copy
# would be imported instead, installed or not.
RUNNER_MODULES = ("pytest", "_pytest", "pluggy", "fixbot_harness")
OPTIONAL_IMPORTS = (
    *("psutil", "orjson", "lxml", "tomli", "exceptiongroup", "argcomplete", "colorama"),
    *("pexpect", "pkg_resources", "annotationlib", "numpy", "twisted", "zope"),
)


def shadowing(patch: Patch, tree: Path) -> list[str]:
    """Paths the patch adds at the repository's top level whose module name is importable
    already (pytest, ruff, mypy, their dependencies, the standard library) or is the test
    runner's or fixbot's own plugin's: the checks run `python -m ...` in the workspace, where
    such a file would be imported instead."""
    found = []
    for change in patch.changes:
        if change.new is None or os.path.lexists(tree / change.path):
            continue
        top = change.path.split("/")[0]
        name = top.removesuffix(".py") if "/" not in change.path else top
        if (top.endswith(".py") or "/" in change.path) and _importable(name):
            found.append(change.path)
    return found


def _importable(name: str) -> bool:
    if name in OPTIONAL_IMPORTS or name.startswith(RUNNER_MODULES):
        return True
    if not name.isidentifier():
        return False
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
