"""The environments built from nothing of a repository's, shared by every run on this host.

    the virtualenv   fixbot's Python (the sandbox's, for an image of its own) in a virtualenv
                     of its own, no system site-packages: pip (and setuptools, where the Python
                     bundles it) laid in from the Python's own bundled wheels and compiled, as
                     `python -m venv` would, without running pip to do it
    with pytest      that virtualenv and a pytest from the package index (the version the
                     project's files ask for, else fixbot's pin: pins.py), wheels only

Both are built in the sandbox, over an empty folder, by fixbot's own commands (the pytest one
with the network and the host's package-index settings), and cached under this host's cache
folder (`~/.cache/fixbot/envs/`, keyed by the Python and the requirement): once per machine,
not per repository or run. A project's own environment starts
as a copy of one of them (environment.py); a project with no setup_command runs its checks in
one as it is.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from fixbot.checks.prepare.cache import cached, complete, copy_into
from fixbot.checks.prepare.index import IndexSettings
from fixbot.checks.prepare.pins import Wanted
from fixbot.checks.prepare.site import INSTALLED_BY_FIXBOT, distribution
from fixbot.checks.tools import interpreter
from fixbot.errors import SetupFailed
from fixbot.proc import Completed
from fixbot.sandbox import PREPARED, Limits, Sandbox
from fixbot.secrets import redact

FORMAT = "fixbot-base-2"  # what a shared environment is; a new format never reuses an old one
# A virtualenv as `python -m venv` makes it, but with the bundled wheels unzipped (and compiled)
# instead of ensurepip's pip run; ensurepip itself where the Python bundles no wheels (Debian).
VENV_SCRIPT = """\
import compileall, configparser, ensurepip, glob, os, re, sys, sysconfig, venv, zipfile
target = sys.argv[1]
wheels = sorted(glob.glob(os.path.join(os.path.dirname(ensurepip.__file__), "_bundled", "*.whl")))
venv.EnvBuilder(with_pip=not wheels, symlinks=os.name != "nt").create(target)
scheme = "venv" if "venv" in sysconfig.get_scheme_names() else "posix_prefix"
site = sysconfig.get_path("purelib", scheme, vars={"base": target, "platbase": target})
short = f"{sys.version_info[0]}.{sys.version_info[1]}"
for wheel in wheels:
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
for points in glob.glob(os.path.join(site, "*.dist-info", "entry_points.txt")):
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(points)
    scripts = parser["console_scripts"] if parser.has_section("console_scripts") else {}
    for name, value in scripts.items():
        module, _, function = value.partition(":")
        name = re.sub(r"^(pip|easy_install)-?\\d+\\.\\d+$", rf"\\g<1>{short}", name)
        path = os.path.join(target, "bin", name)
        with open(path, "w") as script:
            script.write(
                f"#!{target}/bin/python\\nimport sys\\nfrom {module} import {function}\\n"
                f"if __name__ == '__main__':\\n    sys.exit({function}())\\n"
            )
        os.chmod(path, 0o755)
compileall.compile_dir(site, quiet=1, workers=0)
"""


def venv_argv(sandbox: Sandbox) -> list[str]:
    """The command that makes the virtualenv at PREPARED (isolated: no module of the working
    folder or a PYTHON* variable plays a part)."""
    return [interpreter(sandbox.host_toolchain), "-I", "-c", VENV_SCRIPT, PREPARED]


def pytest_argv(requirement: str) -> list[str]:
    """The command that installs pytest into the environment at PREPARED: wheels only, so no
    build of anything the index serves runs in fixbot's own step."""
    pip = [f"{PREPARED}/bin/python", "-m", "pip", "install", "--no-input"]
    return [*pip, "--disable-pip-version-check", "--only-binary=:all:", requirement]


def cache_folder(index: IndexSettings) -> Path:
    """Where this host keeps the shared environments."""
    return (Path(index.cache) if index.cache else Path.home() / ".cache" / "fixbot") / "envs"


def shared_environment(
    sandbox: Sandbox, limits: Limits, index: IndexSettings, pytest: Wanted | None
) -> Path:
    """The shared virtualenv (with `pytest` installed, when one is wanted), built if need be;
    SetupFailed, with the output's tail, when a step fails."""
    folder = cache_folder(index)
    plain = _key(sandbox, "")
    venv = cached(
        folder, plain, lambda staging: _venv(sandbox, limits, index, staging), usable=_is_venv
    )
    if pytest is None:
        return venv
    return cached(
        folder,
        _key(sandbox, pytest.requirement),
        lambda staging: _with(venv, sandbox, limits, index, pytest, staging),
        usable=lambda env: _is_venv(env) and distribution(env, "pytest") is not None,
    )


def shared_built(sandbox: Sandbox, index: IndexSettings, pytest: Wanted) -> Path | None:
    """The shared environment with this pytest when it is built here, else None (nothing is
    built: `fixbot doctor` asks)."""
    env = cache_folder(index) / _key(sandbox, pytest.requirement)
    found = complete(env, env.name) and distribution(env, "pytest") is not None
    return env if found and _is_venv(env) else None


def _is_venv(env: Path) -> bool:
    """What a backend that runs nothing (a test's) leaves is no virtualenv: never reused."""
    return (env / "pyvenv.cfg").is_file() and os.path.lexists(env / "bin" / "python")


def _key(sandbox: Sandbox, requirement: str) -> str:
    """The Python that makes it (fixbot's own: the installation under any virtualenv it runs
    from; or a user-named image's) and the requirement: what goes into a shared environment.
    Not the backend, its containment, nor the index settings (the same wheels, however they
    were fetched): built once per machine."""
    base = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    python = f"{base} {sys.version}" if sandbox.host_toolchain else sandbox.describe()
    digest = hashlib.sha256()
    for part in (FORMAT, python, requirement):
        digest.update(part.encode() + b"\0")
    return f"shared-{digest.hexdigest()[:24]}"


def _venv(sandbox: Sandbox, limits: Limits, index: IndexSettings, staging: Path) -> dict[str, Any]:
    why = "make the checks' virtualenv"
    run_step(sandbox, venv_argv(sandbox), staging, limits, index, why, shown="(fixbot's own)")
    return {"kind": "shared", "python": sandbox.describe(), "pytest": ""}


def _with(
    venv: Path,
    sandbox: Sandbox,
    limits: Limits,
    index: IndexSettings,
    pytest: Wanted,
    staging: Path,
) -> dict[str, Any]:
    copy_into(venv, staging)
    why = f"install {pytest.requirement} ({pytest.says()}) from the package index"
    run_step(sandbox, pytest_argv(pytest.requirement), staging, limits, index, why)
    found = distribution(staging, "pytest")
    if found is not None:  # a setup_command that installs its own pytest removes it (RECORD)
        (found / INSTALLED_BY_FIXBOT).write_text(f"{pytest.requirement}\n{pytest.says()}\n")
        with open(found / "RECORD", "a") as record:
            record.write(f"{found.name}/{INSTALLED_BY_FIXBOT},,\n")
    return {"kind": "shared", "pytest": pytest.requirement, "asked": pytest.says()}


def run_step(
    sandbox: Sandbox,
    argv: list[str],
    env_dir: Path,
    limits: Limits,
    index: IndexSettings,
    why: str,
    *,
    workspace: Path | None = None,
    env: dict[str, str] | None = None,
    shown: str = "",
) -> Completed:
    """One command of the prepare step (over an empty folder unless `workspace`), with the
    network and the index settings; SetupFailed, naming it and its output's tail, unless it
    exits 0."""
    scratch = Path(tempfile.mkdtemp(prefix="fixbot-prepare-"))
    try:
        mounts = index.stage(scratch / "index")
        if workspace is None:
            workspace = scratch / "empty"
            workspace.mkdir()
        done = sandbox.prepare(
            argv,
            workspace=workspace,
            env_dir=env_dir,
            limits=limits,
            env={**index.env, **(env or {})},
            mounts=mounts,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if done.timed_out or done.returncode != 0:
        how = "timed out" if done.timed_out else f"exit code {done.returncode}"
        purpose = f" to {why}" if why else ""
        text = f"the prepare step failed ({how}){purpose}: {shown or shlex.join(argv)}\n"
        text += whole_tail(done.output)
        raise SetupFailed(redact(text, known=index.secrets))
    return done


FAILURE_TAIL = 3000  # characters of a failed step's output kept, from a line's start


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
