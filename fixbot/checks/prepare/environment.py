"""The prepare step: the repository's dependencies (and the project), installed by fixbot with the
network, into an environment of the project's own that no commit can poison for another.

The checks run in an environment built only from what the project installs: a virtualenv of
its own (no system site-packages, nothing of fixbot's on its `sys.path`), never fixbot's. It
starts as a copy of a shared one (base.py: the virtualenv, with a pytest from the package index
when a check is pytest, the version the project's files ask for or fixbot's pin), so that a
project whose setup_command installs no pytest has one, and one that installs its own gets that
one instead. A project with no setup_command runs its checks in the shared one as it is; one
whose checks run no code (ruff, mypy only) gets none.

`setup_command` (from the trusted config; one command or a list, each split into words by
commands.setup_words, its leading VAR=value words that command's own environment, never run by a
shell) runs over a copy of the snapshot, never over a candidate's code, in the sandbox with the
network and the host's package-index settings (index.py), a git-metadata project's version set
from the pinned commit (scm.py): the environment at PREPARED is the one place it may install
into. The step runs with PYTHONSAFEPATH set, so `python -m pip` imports the environment's own
pip, never a `pip/` the repository carries. What the install writes into the tree is kept for
the checks (generated.py).

The environment is cached under the repository's `.fixbot/envs/`, keyed by the setup commands,
the sandbox, the Python, the package-index settings, the shared environment it started from and
every file of the snapshot: the install can run any of them (a `setup.py` that execs
`_version.py`), so an environment is reused only for the very tree that built it, and what one
commit's code left in it never reaches another's run. Once built it is sealed and mounted
read-only for every check (cache.py).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shlex
import stat
import sys
import tempfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from fixbot.checks.prepare.base import run_step, shared_environment
from fixbot.checks.prepare.cache import cached, copy_into, prune, record_of, remove
from fixbot.checks.prepare.generated import TREE, keep_generated
from fixbot.checks.prepare.index import IndexSettings
from fixbot.checks.prepare.pins import Wanted, wanted_pytest
from fixbot.checks.prepare.plugins import plugins
from fixbot.checks.prepare.scm import scm_env
from fixbot.checks.prepare.site import INSTALLED_BY_FIXBOT, distribution, version
from fixbot.commands import CheckSpec, setup_words
from fixbot.paths import StateDir
from fixbot.records import EnvironmentRecord
from fixbot.sandbox import Limits, Sandbox
from fixbot.snapshot import Snapshot, fresh_copy

FORMAT = "fixbot-env-4"  # what a cached environment is; a new format never reuses an old one
CODE_KINDS = frozenset({"pytest", "unittest", "command"})  # the checks that run the code

Step = tuple[dict[str, str], list[str]]  # (that command's own environment, its argv)


def setup_steps(commands: Sequence[str]) -> list[Step]:
    """The setup commands as the prepare step runs them (commands.setup_words checked them)."""
    return [setup_words(command) for command in commands]


def checks_environment(
    sandbox: Sandbox,
    snapshot: Snapshot,
    setup: str | Sequence[str] | None,
    checks: Sequence[CheckSpec],
    limits: Limits,
    index: IndexSettings | None = None,
) -> Path | None:
    """The environment these checks run in (built now if need be): the project's own when it
    has a setup_command, else the shared one; None when none of them runs code and there is no
    setup_command (ruff and mypy run from fixbot's own environment)."""
    index = index or IndexSettings()
    pytest = wanted_pytest(snapshot.tree) if any(c.kind == "pytest" for c in checks) else None
    if _commands(setup):
        return prepared_environment(sandbox, snapshot, setup, limits, index, pytest=pytest)
    if not any(c.kind in CODE_KINDS for c in checks):
        return None
    return shared_environment(sandbox, limits, index, pytest)


def cache_key(
    snapshot: Snapshot,
    setup: str | Sequence[str],
    sandbox: Sandbox,
    index: IndexSettings | None = None,
    pytest: Wanted | None = None,
) -> str:
    """The setup commands, the sandbox, the Python that makes the virtualenv, the package-index
    settings, the pytest it starts with and every file of the snapshot: an environment is
    reused only where all agree."""
    settings = (index or IndexSettings()).digest()
    wanted = pytest.requirement if pytest else ""
    return _key(snapshot.tree, _commands(setup), sandbox.describe(), settings, wanted)


def _commands(setup: str | Sequence[str] | None) -> tuple[str, ...]:
    return (setup,) if isinstance(setup, str) else tuple(setup or ())


@lru_cache(maxsize=16)
def _key(tree: Path, commands: tuple[str, ...], sandbox: str, settings: str, pytest: str) -> str:
    # Once per snapshot (its tree is this run's own folder): not a walk per attempt.
    digest = hashlib.sha256()
    parts = (FORMAT, json.dumps(commands), sandbox, sys.version, sys.executable, settings, pytest)
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
    *,
    pytest: Wanted | None = None,
) -> Path | None:
    """The project's sealed environment for this snapshot (built now if need be), or None when
    there is no setup command; it starts with `pytest` installed (when one is wanted).
    SetupFailed, with the output's tail, when a step fails."""
    commands = _commands(setup)
    if not commands:
        return None
    steps = setup_steps(commands)
    index = index or IndexSettings()
    key = cache_key(snapshot, commands, sandbox, index, pytest)

    def build(staging: Path) -> dict[str, Any]:
        base = shared_environment(sandbox, limits, index, pytest)
        copy_into(base, staging)
        _install(sandbox, snapshot, steps, limits, staging, index)
        return {
            "kind": "project",
            "setup": [shlex.join(argv) for _, argv in steps],
            "sandbox": sandbox.describe(),
            "base": base.name,
        }

    return cached(StateDir(snapshot.repo).envs, key, build)


def prune_environments(envs: Path, older_than: float, now: float) -> list[str]:
    """Remove the prepared environments (and leftovers of builds that never finished) unused
    for `older_than` seconds: a record's time is set when it is built and at each use."""
    return prune(envs, older_than, now)


def _install(
    sandbox: Sandbox,
    snapshot: Snapshot,
    steps: Sequence[Step],
    limits: Limits,
    staging: Path,
    index: IndexSettings,
) -> None:
    """The setup commands over a fresh copy of the snapshot, into the environment at staging;
    what they wrote into the tree is kept with it."""
    scratch = Path(tempfile.mkdtemp(prefix="fixbot-prepare-"))
    try:
        workspace = fresh_copy(snapshot, scratch / "repo")
        pretended = scm_env(snapshot)
        for own_env, argv in steps:
            env = {**pretended, **own_env}
            run_step(sandbox, argv, staging, limits, index, "", workspace=workspace, env=env)
        keep_generated(workspace, snapshot.tree, staging / TREE)
    finally:
        remove(scratch)


def environment_record(prepared: Path | None) -> EnvironmentRecord:
    """What the checks ran in, for the evidence: the environment's kind, its Python, its pytest
    (and who put it there), its plugins."""
    return copy.deepcopy(_record(prepared))


@lru_cache(maxsize=32)
def _record(prepared: Path | None) -> EnvironmentRecord:
    # A sealed environment never changes: read once per process.
    if prepared is None:
        return EnvironmentRecord(kind="none", python="", pytest="", pytest_from="", plugins=[])
    found = distribution(prepared, "pytest")
    marker = found / INSTALLED_BY_FIXBOT if found is not None else None
    if marker is not None and marker.is_file() and not marker.is_symlink():
        requirement, _, asked = marker.read_text().strip().partition("\n")
        origin = f"fixbot installed {requirement} from the package index ({asked})"
    else:
        origin = "the setup_command" if found is not None else ""
    return EnvironmentRecord(
        kind=str(record_of(prepared).get("kind", "project")),
        python=_python_version(prepared),
        pytest=version(prepared, "pytest"),
        pytest_from=origin,
        plugins=plugins(prepared),
    )


def _python_version(env: Path) -> str:
    """The version pyvenv.cfg names ("" when it names none)."""
    config = env / "pyvenv.cfg"
    if config.is_symlink() or not config.is_file():
        return ""
    for line in config.read_text(errors="replace").splitlines():
        key, _, value = line.partition("=")
        if key.strip() in ("version", "version_info"):
            return value.strip()
    return ""
