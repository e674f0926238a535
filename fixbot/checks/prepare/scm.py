"""The version a project that takes it from git metadata gets in the prepare step.

The snapshot has no `.git`, so setuptools-scm and hatch-vcs cannot read the version there;
fixbot pretends the pinned commit's: `0.0.0+g<first 12 hex digits of the commit>`, in
SETUPTOOLS_SCM_PRETEND_VERSION_FOR_<DIST> (the distribution named in pyproject.toml or
setup.cfg) and, for a project whose build configuration names setuptools-scm or hatch-vcs,
also in SETUPTOOLS_SCM_PRETEND_VERSION (hatch-vcs asks without the distribution's name). A
setup command's own VAR=value words override either.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from fixbot.snapshot import Snapshot, read_inside

_SCM = re.compile(r"setuptools[-_]scm|hatch[-_]vcs|vcs[-_]versioning")


def scm_version(commit: str) -> str:
    """The version a git-metadata project gets for this commit (PEP 440, a local label)."""
    return f"0.0.0+g{commit[:12]}"


def scm_env(snapshot: Snapshot) -> dict[str, str]:
    """SETUPTOOLS_SCM_PRETEND_VERSION(_FOR_<DIST>) for the pinned commit: the snapshot has no
    .git for setuptools-scm or hatch-vcs to read it from."""
    version = scm_version(snapshot.commit)
    env: dict[str, str] = {}
    name = _dist_name(snapshot.tree)
    if name:
        env[f"SETUPTOOLS_SCM_PRETEND_VERSION_FOR_{re.sub(r'[^A-Z0-9]+', '_', name.upper())}"] = (
            version
        )
    build = "".join(read_inside(snapshot.tree, f) or "" for f in ("pyproject.toml", "setup.cfg"))
    if _SCM.search(build + (read_inside(snapshot.tree, "setup.py") or "")):
        # hatch-vcs asks setuptools-scm without the distribution's name: only this one works.
        env["SETUPTOOLS_SCM_PRETEND_VERSION"] = version
    return env


def _dist_name(tree: Path) -> str:
    try:
        project = tomllib.loads(read_inside(tree, "pyproject.toml") or "").get("project", {})
    except tomllib.TOMLDecodeError:
        project = {}
    name = project.get("name") if isinstance(project, dict) else None
    if isinstance(name, str):
        return name
    found = re.search(r"^\s*name\s*=\s*(\S+)", read_inside(tree, "setup.cfg") or "", re.M)
    return found.group(1) if found else ""
