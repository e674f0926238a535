"""fixbot runs wherever pip put it: installed into a virtualenv under /tmp (which every sandbox
replaces with its own), it fixes the bundled example; and where the sandbox's user cannot read
that virtualenv, `fixbot doctor` says so instead of advising to install what is installed.

The virtualenv sees this Python's packages (--system-site-packages) and gets its own copy of
fixbot (pip install --no-deps of this checkout, built offline with the setuptools already here
where it can).
The fix runs in a subprocess of the virtualenv's own `fixbot`, against the scripted model.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import API_KEY, EXAMPLE, ROOT, docker_or_skip, make_repo
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import GOOD

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap"),
]


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    source = tmp_path_factory.mktemp("fixbot-source")
    for name in ("fixbot", "pyproject.toml", "README.md"):
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        copy(ROOT / name, source / name)
    # Made by `python -m venv` under /tmp, as a CI image's Dockerfile would (mode 0755).
    where = Path("/tmp") / f"fixbot-venv-{uuid.uuid4().hex[:8]}"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(where)],
        check=True,
    )
    where.chmod(0o755)
    install = [sys.executable, "-m", "pip", "--python", str(where / "bin" / "python")]
    install += ["install", "-q", "--no-deps", str(source)]
    # Offline with the setuptools already here when it can build a wheel (70.1 and later, or
    # with `wheel`); else pip fetches the build backend, as `pip install -e .` in CI does.
    offline = subprocess.run([*install, "--no-build-isolation"], env=_clean_env())
    if offline.returncode != 0:
        subprocess.run(install, check=True, env=_clean_env())
    yield where
    shutil.rmtree(where, ignore_errors=True)


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment a user's shell gives the virtualenv's fixbot: not this suite's
    PYTHONPATH (which would import the checkout instead of the installed copy)."""
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "DOCKER_HOST")
    return {**{k: v for k, v in os.environ.items() if k in keep}, **extra}


def fixbot(venv: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv / "bin" / "fixbot"), *args],
        capture_output=True,
        text=True,
        env=_clean_env(**env),
        timeout=600,
    )


@pytest.mark.parametrize("backend", ["bwrap", "docker"])
def test_fixbot_from_a_virtualenv_under_tmp_fixes_the_example(
    venv: Path, tmp_path: Path, backend: str
) -> None:
    if backend == "docker":
        docker_or_skip()
    repo = make_repo(tmp_path / "repo", source=EXAMPLE)
    where = fixbot(venv, "--version")
    assert where.returncode == 0, where.stderr
    with ScriptedOpenAI([GOOD]) as server:
        done = fixbot(
            venv,
            "fix",
            str(repo),
            "--sandbox",
            backend,
            "--json",
            OPENAI_API_KEY=API_KEY,
            OPENAI_BASE_URL=server.base_url,
            FIXBOT_MODEL="scripted-model",
        )
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    assert summary["status"] == "fixed", summary
    evidence = json.loads((repo / ".fixbot" / "out" / "evidence.json").read_text())
    assert evidence["sandbox"].startswith(backend if backend == "docker" else "bubblewrap")
    probe = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import fixbot, sys; print(sys.prefix)"],
        capture_output=True,
        text=True,
        env=_clean_env(),
        check=True,
    )
    assert probe.stdout.strip() == str(venv)  # the installed copy ran, from under /tmp


def test_doctor_names_a_virtualenv_the_sandbox_cannot_read(venv: Path) -> None:
    seen = fixbot(venv, "doctor", "--json")
    checks = {check["name"]: check for check in json.loads(seen.stdout)}
    assert checks["python"]["ok"] and checks["pytest"]["ok"], checks
    venv.chmod(0o700)  # a virtualenv in a private temporary folder
    try:
        hidden = fixbot(venv, "doctor", "--json")
    finally:
        venv.chmod(0o755)
    assert hidden.returncode == 3
    checks = {check["name"]: check for check in json.loads(hidden.stdout)}
    python = checks["python"]
    assert not python["ok"]
    assert "is not visible inside the" in python["detail"]
    assert f"cannot enter {venv} (mode 0700)" in python["detail"]
    assert "chmod o+rx" in python["detail"]
    assert not checks["pytest"]["ok"]
    assert "pip install" not in checks["pytest"]["detail"]  # pytest is installed
