"""The prepare step: the repository's dependencies, installed once, with the network, by fixbot.

`setup_command` (from the trusted config, split like a shell command, never run by a shell)
runs over a throwaway copy of the snapshot, never over a candidate's code, in the sandbox with
the network and nothing else: a virtualenv at PREPARED (made first, seeing the toolchain's own
packages) is the one place it may install into. The result is cached under the repository's
`.fixbot/envs/`, keyed by the hash of the setup command, the sandbox, the Python and the
dependency files (lockfiles, pyproject, requirements...): later attempts and later runs reuse
it. Every check then mounts it read-only, with no network at all. The step runs with
PYTHONSAFEPATH set, so `python -m venv` and `python -m pip` import the toolchain's modules, never
a `venv.py` or `pip/` the repository carries.

A cached environment is complete or absent: it is built under a temporary name and renamed
into place; a lock keeps two runs from building the same one.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shlex
import shutil
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

from fixbot.errors import SetupFailed
from fixbot.paths import StateDir
from fixbot.sandbox import PREPARED, Limits, Sandbox
from fixbot.snapshot import Snapshot, fresh_copy, is_protected, read_inside, repo_files

DONE = ".fixbot-prepared"
DEPENDENCY_FILES = (
    "requirements*.txt",
    "**/requirements*.txt",
    "constraints*.txt",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "poetry.lock",
    "uv.lock",
    "pdm.lock",
    "Pipfile",
    "Pipfile.lock",
)
_VENV = ["python", "-m", "venv", "--system-site-packages", PREPARED]


def dependency_files(snapshot: Snapshot) -> list[str]:
    return [rel for rel in repo_files(snapshot) if is_protected(rel, DEPENDENCY_FILES)]


FORMAT = "fixbot-env-2"  # what a cached environment is; a new format never reuses an old one


def cache_key(snapshot: Snapshot, setup_command: str, sandbox: Sandbox) -> str:
    """The setup command, the sandbox, the Python that makes the virtualenv, and the contents
    of the dependency files: an environment is reused only where all of them are the same."""
    return _key(snapshot.tree, setup_command, sandbox.describe())


@lru_cache(maxsize=16)
def _key(tree: Path, setup_command: str, sandbox: str) -> str:
    # Once per snapshot (its tree is this run's own folder): not a walk per attempt.
    digest = hashlib.sha256()
    for part in (FORMAT, setup_command, sandbox, sys.version, sys.executable):
        digest.update(part.encode() + b"\0")
    snapshot_files = sorted(
        p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file() or p.is_symlink()
    )
    for rel in snapshot_files:
        if is_protected(rel, DEPENDENCY_FILES):
            text = read_inside(tree, rel)
            digest.update(rel.encode() + b"\0" + (text or "").encode() + b"\0")
    return digest.hexdigest()[:32]


def prepared_environment(
    sandbox: Sandbox, snapshot: Snapshot, setup_command: str | None, limits: Limits
) -> Path | None:
    """The cached environment for this snapshot's dependencies (built now if need be), or None
    when there is no setup_command. SetupFailed, with the output's tail, when it fails."""
    if not setup_command:
        return None
    argv = shlex.split(setup_command)
    if not argv:
        return None
    envs = StateDir(snapshot.repo).envs
    envs.mkdir(parents=True, exist_ok=True)
    key = cache_key(snapshot, setup_command, sandbox)
    final = envs / key
    if _complete(final, key):
        return final
    with open(envs / f"{final.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _complete(final, key):
            return final  # another run built it while this one waited
        shutil.rmtree(final, ignore_errors=True)
        _build(sandbox, snapshot, argv, limits, final)
    return final


def _complete(env: Path, key: str) -> bool:
    """A finished build of exactly this key (its record says so), never a bare marker."""
    marker = env / DONE
    if marker.is_symlink() or not marker.is_file():
        return False
    try:
        return bool(json.loads(marker.read_text()).get("key") == key)
    except (OSError, ValueError, AttributeError):
        return False


def _build(
    sandbox: Sandbox, snapshot: Snapshot, argv: list[str], limits: Limits, final: Path
) -> None:
    staging = Path(tempfile.mkdtemp(prefix=f"{final.name}.partial-", dir=final.parent))
    scratch = Path(tempfile.mkdtemp(prefix="fixbot-prepare-"))
    try:
        workspace = fresh_copy(snapshot, scratch / "repo")
        for step in (_VENV, argv):
            done = sandbox.prepare(step, workspace=workspace, env_dir=staging, limits=limits)
            if done.timed_out or done.returncode != 0:
                why = "timed out" if done.timed_out else f"exit code {done.returncode}"
                raise SetupFailed(
                    f"the prepare step failed ({why}): {shlex.join(step)}\n{done.tail(1500)}"
                )
        record = {"key": final.name, "setup": shlex.join(argv), "sandbox": sandbox.describe()}
        (staging / DONE).write_text(json.dumps(record) + "\n")
        os.rename(staging, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
