"""The prepare step: the repository's dependencies, installed once, with the network, by fixbot.

`setup_command` (from the trusted config, split like a shell command, never run by a shell)
runs over a throwaway copy of the snapshot, never over a candidate's code, in the sandbox with
the network and nothing else: a virtualenv at PREPARED (made first, seeing the toolchain's own
packages) is the one place it may install into. The result is cached under the repository's
`.fixbot/envs/`, keyed by the hash of the setup command, the sandbox and the dependency files
(lockfiles, pyproject, requirements...): later attempts and later runs reuse it. Every check
then mounts it read-only, with no network at all.

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
import tempfile
from pathlib import Path

from fixbot.errors import SetupFailed
from fixbot.sandbox import PREPARED, Limits, Sandbox
from fixbot.snapshot import Snapshot, fresh_copy, is_protected, repo_files

ENVS = Path(".fixbot") / "envs"
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


def cache_key(snapshot: Snapshot, setup_command: str, sandbox: Sandbox) -> str:
    digest = hashlib.sha256()
    for part in (setup_command, sandbox.describe()):
        digest.update(part.encode() + b"\0")
    for rel in dependency_files(snapshot):
        digest.update(rel.encode() + b"\0" + (snapshot.tree / rel).read_bytes() + b"\0")
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
    envs = snapshot.repo / ENVS
    envs.mkdir(parents=True, exist_ok=True)
    final = envs / cache_key(snapshot, setup_command, sandbox)
    if (final / DONE).is_file():
        return final
    with open(envs / f"{final.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (final / DONE).is_file():
            return final  # another run built it while this one waited
        shutil.rmtree(final, ignore_errors=True)
        _build(sandbox, snapshot, argv, limits, final)
    return final


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
        record = {"setup": shlex.join(argv), "sandbox": sandbox.describe()}
        (staging / DONE).write_text(json.dumps(record) + "\n")
        os.rename(staging, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
