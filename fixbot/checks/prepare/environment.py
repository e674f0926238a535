"""The prepare step: the repository's dependencies (and the project), installed by fixbot with the
network, into an environment no commit can poison for another.

`setup_command` (from the trusted config; one command or a list, each split into words by
commands.setup_words, its leading VAR=value words that command's own environment, never run by a
shell) runs over a copy of the snapshot, never over a candidate's code, in the sandbox with the
network and the host's package-index settings (index.py), a git-metadata project's version set
from the pinned commit (scm.py): a virtualenv at PREPARED (made first, seeing the toolchain's own
packages) is the one place it may install into. The step runs with PYTHONSAFEPATH set, so
`python -m venv` and `python -m pip` import the toolchain's modules, never a `venv.py` or `pip/`
the repository carries. What the install writes into the tree is kept for the checks
(generated.py).

The environment is cached under the repository's `.fixbot/envs/`, keyed by the setup commands,
the sandbox, the Python, the package-index settings and every file of the snapshot: the install
can run any of them (a `setup.py` that execs `_version.py`), so an environment is reused only
for the very tree that built it, and what one commit's code left in it never reaches another's
run. Once built it is sealed: owned by fixbot's user, writable by no one else (the sandbox's
user, which built it, included), and mounted read-only for every check. A cached environment is
complete or absent: built under a temporary name and renamed into place; a lock keeps two runs
from building the same one.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shlex
import shutil
import stat
import sys
import tempfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from fixbot.checks.prepare.generated import TREE, keep_generated
from fixbot.checks.prepare.index import IndexSettings
from fixbot.checks.prepare.scm import scm_env
from fixbot.commands import setup_words
from fixbot.errors import SetupFailed
from fixbot.paths import StateDir
from fixbot.sandbox import PREPARED, Limits, Sandbox
from fixbot.secrets import redact
from fixbot.snapshot import Snapshot, fresh_copy

DONE = ".fixbot-prepared"
FORMAT = "fixbot-env-3"  # what a cached environment is; a new format never reuses an old one
FAILURE_TAIL = 3000  # characters of a failed step's output kept, from a line's start
TOOLCHAIN_PTH = "fixbot-toolchain.pth"
_VENV = ["python", "-m", "venv", "--system-site-packages", PREPARED]

Step = tuple[dict[str, str], list[str]]  # (that command's own environment, its argv)


def setup_steps(commands: Sequence[str]) -> list[Step]:
    """The setup commands as the prepare step runs them (commands.setup_words checked them)."""
    return [setup_words(command) for command in commands]


def cache_key(
    snapshot: Snapshot,
    setup: str | Sequence[str],
    sandbox: Sandbox,
    index: IndexSettings | None = None,
) -> str:
    """The setup commands, the sandbox, the Python that makes the virtualenv, the package-index
    settings and every file of the snapshot: an environment is reused only where all agree."""
    settings = (index or IndexSettings()).digest()
    return _key(snapshot.tree, _commands(setup), sandbox.describe(), settings)


def _commands(setup: str | Sequence[str] | None) -> tuple[str, ...]:
    return (setup,) if isinstance(setup, str) else tuple(setup or ())


@lru_cache(maxsize=16)
def _key(tree: Path, commands: tuple[str, ...], sandbox: str, settings: str) -> str:
    # Once per snapshot (its tree is this run's own folder): not a walk per attempt.
    digest = hashlib.sha256()
    parts = (FORMAT, json.dumps(commands), sandbox, sys.version, sys.executable, settings)
    for part in parts:
        digest.update(part.encode() + b"\0")
    for path in sorted(tree.rglob("*")):
        rel = path.relative_to(tree).as_posix().encode()
        if path.is_symlink():
            digest.update(b"L" + rel + b"\0" + os.readlink(path).encode() + b"\0")
        elif path.is_file():
            content = hashlib.sha256(path.read_bytes()).hexdigest().encode()
            mode = b"x" if path.stat().st_mode & stat.S_IXUSR else b"f"
            digest.update(mode + rel + b"\0" + content + b"\0")
    return digest.hexdigest()[:32]


def prepared_environment(
    sandbox: Sandbox,
    snapshot: Snapshot,
    setup: str | Sequence[str] | None,
    limits: Limits,
    index: IndexSettings | None = None,
) -> Path | None:
    """The sealed environment for this snapshot (built now if need be), or None when there is
    no setup command. SetupFailed, with the output's tail, when a step fails."""
    commands = _commands(setup)
    if not commands:
        return None
    steps = setup_steps(commands)
    index = index or IndexSettings()
    envs = StateDir(snapshot.repo).envs
    envs.mkdir(parents=True, exist_ok=True)
    key = cache_key(snapshot, commands, sandbox, index)
    final = envs / key
    if _complete(final, key):
        _used(final)
        return final
    with open(envs / f"{final.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _complete(final, key):
            return final  # another run built it while this one waited
        _remove(final)
        _build(sandbox, snapshot, steps, limits, final, index)
    return final


def prune_environments(envs: Path, older_than: float, now: float) -> list[str]:
    """Remove the prepared environments (and leftovers of builds that never finished) unused
    for `older_than` seconds: a record's time is set when it is built and at each use."""
    gone = []
    for env in sorted(envs.iterdir()) if envs.is_dir() else []:
        if env.is_symlink() or not env.is_dir():
            continue
        marker = env / DONE
        used = (marker if marker.is_file() and not marker.is_symlink() else env).stat().st_mtime
        if now - used > older_than:
            _remove(env)
            gone.append(env.name)
    return gone


def _used(env: Path) -> None:
    with contextlib.suppress(OSError):
        os.utime(env / DONE)


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
    sandbox: Sandbox,
    snapshot: Snapshot,
    steps: Sequence[Step],
    limits: Limits,
    final: Path,
    index: IndexSettings,
) -> None:
    staging = Path(tempfile.mkdtemp(prefix=f"{final.name}.partial-", dir=final.parent))
    scratch = Path(tempfile.mkdtemp(prefix="fixbot-prepare-"))
    try:
        workspace = fresh_copy(snapshot, scratch / "repo")
        mounts = index.stage(scratch / "index")
        base = {**index.env, **scm_env(snapshot)}
        _run(sandbox, _VENV, workspace, staging, limits, base, mounts, index)
        _see_the_toolchain(staging)
        for own_env, argv in steps:
            _run(sandbox, argv, workspace, staging, limits, {**base, **own_env}, mounts, index)
        keep_generated(workspace, snapshot.tree, staging / TREE)
        record = {
            "key": final.name,
            "setup": [shlex.join(argv) for _, argv in steps],
            "sandbox": sandbox.describe(),
        }
        (staging / DONE).write_text(json.dumps(record) + "\n")
        _seal(staging)
        os.rename(staging, final)
    finally:
        _remove(staging)
        _remove(scratch)


def _run(
    sandbox: Sandbox,
    argv: list[str],
    workspace: Path,
    staging: Path,
    limits: Limits,
    env: dict[str, str],
    mounts: Sequence[tuple[Path, str]],
    index: IndexSettings,
) -> None:
    done = sandbox.prepare(
        argv, workspace=workspace, env_dir=staging, limits=limits, env=env, mounts=mounts
    )
    if done.timed_out or done.returncode != 0:
        why = "timed out" if done.timed_out else f"exit code {done.returncode}"
        text = f"the prepare step failed ({why}): {shlex.join(argv)}\n{whole_tail(done.output)}"
        raise SetupFailed(redact(text, known=index.secrets))


def whole_tail(text: str, limit: int = FAILURE_TAIL) -> str:
    """The end of `text` within `limit` characters, from the start of a line (or, for one
    line longer than that, of a word), saying how much came before."""
    text = text.rstrip()
    if len(text) <= limit:
        return text
    tail = text[-limit:]
    cut = tail.find("\n")
    if cut < 0 or cut == len(tail) - 1:
        cut = tail.find(" ")
    tail = tail[cut + 1 :] if cut >= 0 else tail
    return f"[... {len(text) - len(tail)} characters before ...]\n{tail}"


def _see_the_toolchain(env: Path) -> None:
    """A virtualenv sees its base Python's packages, not those of the virtualenv fixbot itself
    runs from (pytest, ruff and mypy may be there only): a .pth names fixbot's own."""
    own = [p for p in _site_packages(Path(sys.prefix)) if p.is_dir()]
    if sys.prefix == sys.base_prefix or not own:
        return
    for site in env.glob("lib/python*/site-packages"):
        (site / TOOLCHAIN_PTH).write_text("".join(f"{p}\n" for p in own))


def _site_packages(prefix: Path) -> list[Path]:
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return [prefix / "lib" / version / "site-packages"]


def _seal(env: Path) -> None:
    """The environment as every later run finds it: fixbot's user owns it; everyone may read
    it (the sandbox's user runs it), no one else may write it (that user wrote it while it was
    built)."""
    uid = os.getuid()
    for dirpath, dirnames, filenames in os.walk(env):
        for name in (".", *dirnames, *filenames):
            path = os.path.join(dirpath, name)
            if os.geteuid() == 0:
                os.chown(path, uid, -1, follow_symlinks=False)  # the group stays the sandboxes
            if os.path.islink(path):
                continue
            executable = os.path.isdir(path) or os.lstat(path).st_mode & stat.S_IXUSR
            os.chmod(path, 0o755 if executable else 0o644)


def _remove(path: Path) -> None:
    """Remove a folder fixbot made, whatever modes the build left on its folders."""
    if not os.path.lexists(path):
        return
    for dirpath, dirnames, _ in os.walk(path):
        for name in dirnames:
            folder = os.path.join(dirpath, name)
            if not os.path.islink(folder):
                with contextlib.suppress(OSError):
                    os.chmod(folder, 0o700)
    shutil.rmtree(path, ignore_errors=True)
