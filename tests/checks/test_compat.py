"""The plugin under the oldest and a middle pytest it supports (7.0 with pluggy 1.0, and 8.0),
each in a virtualenv this session makes from the package index (a few seconds each). Without
the index (offline) they skip, saying so; in CI (CI=true) they must run."""

from __future__ import annotations

import os
import sys

import pytest

from fixbot import proc
from tests.checks.conftest import Suite, run_direct
from tests.checks.test_tampering import PATCH_REPORTS, plant

PINS = {"pytest-7.0": ("pytest==7.0.1", "pluggy==1.0.0"), "pytest-8.0": ("pytest==8.0.2",)}


@pytest.fixture(scope="session", params=sorted(PINS))
def python(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    name: str = request.param
    venv = tmp_path_factory.mktemp(name)
    made = proc.run([sys.executable, "-m", "venv", str(venv)], timeout=120)
    python = venv / "bin" / "python"
    if made.returncode == 0:
        pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        made = proc.run([*pip, *PINS[name]], timeout=300, env=_pip_env())
    if made.returncode != 0:
        why = f"cannot make a {name} virtualenv here: {made.tail(300).strip()}"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    version = proc.run([str(python), "-m", "pytest", "--version"], cwd=venv, timeout=60).output
    assert PINS[name][0].replace("==", " ") in version, version  # the old pytest, not the host's
    return str(python)


def _pip_env() -> dict[str, str]:
    """The host's environment for pip (proxies, index settings), never for the tests."""
    return {k: v for k, v in os.environ.items() if k.startswith(("PIP_", "HTTP", "NO_PROXY"))} | {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
    }


def test_timeouts_and_results_on_older_pytest(suite: Suite, python: str) -> None:
    suite.write(
        "test_mix.py",
        "import time\n\ndef test_ok():\n    pass\n\ndef test_bad():\n    assert 0\n\n"
        "def test_hang():\n    time.sleep(1e9)\n\ndef test_after():\n    pass\n",
    )
    result = run_direct(suite, python=python)
    assert result.status == "tests_failed", result.problems
    assert result.tests["test_mix.py::test_hang"]["message"].startswith("timed out after 1 s")
    assert result.tests["test_mix.py::test_after"]["outcome"] == "passed"
    assert result.tests["test_mix.py::test_bad"]["outcome"] == "failed"


def test_patching_is_caught_on_older_pytest(suite: Suite, python: str) -> None:
    plant(suite, PATCH_REPORTS)
    result = run_direct(suite, python=python)
    assert result.status == "tampered"
    assert any("from_item_and_call was replaced" in p for p in result.problems)
