"""pytest's configuration is pinned to what it found on the untouched commit: a file a candidate
adds under a name pytest reads first (a pytest.ini before the pyproject.toml) is never read."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from fixbot.checks import run_trial
from fixbot.checks.gates import config_pin
from fixbot.commands import CheckSpec
from fixbot.config import Config
from fixbot.sandbox import BwrapSandbox
from fixbot.snapshot import take_snapshot
from tests.conftest import make_repo

TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
PYPROJECT = '[tool.pytest.ini_options]\npythonpath = ["."]\naddopts = "-r a"\n'
SHADOW = (
    "--- /dev/null\n+++ b/pytest.ini\n@@ -0,0 +1,2 @@\n+[pytest]\n+addopts = -k nothing_at_all\n"
)


def test_the_pin_is_the_baselines_configuration() -> None:
    assert config_pin(["python", "-m", "pytest"], ["/workspace", "/workspace/pyproject.toml"]) == [
        "-c",
        "/workspace/pyproject.toml",
        "--rootdir=/workspace",
    ]
    assert config_pin(["pytest"], ["/workspace", ""]) == ["-c", "/dev/null", "--rootdir=/workspace"]


@pytest.mark.parametrize(
    "own", [["-c", "ci.ini"], ["--config-file=ci.ini"], ["--rootdir", "src"], ["-cci.ini"]]
)
def test_a_command_that_names_its_own_configuration_is_left_alone(own: list[str]) -> None:
    assert config_pin(["pytest", *own], ["/workspace", "/workspace/pytest.ini"]) == []


def test_nothing_recorded_pins_nothing() -> None:
    assert config_pin(["pytest"], None) == []


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_a_pytest_ini_the_candidate_adds_is_never_read(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    files = {
        "calc.py": "def add(a, b):\n    return a - b\n",
        "tests/test_calc.py": TESTS,
        "pyproject.toml": PYPROJECT,
    }
    repo = make_repo(tmp_path / "repo", files, source=empty)
    config = Config(checks=(CheckSpec(name="tests", run="python -m pytest", kind="pytest"),))
    (tmp_path / "work").mkdir()
    snapshot = take_snapshot(repo, config.protected_paths, tmp_path / "work", "HEAD")
    sandbox = BwrapSandbox()
    baseline, _ = run_trial(sandbox, snapshot, config, "")
    (run,) = baseline["checks"]
    assert run["configured"] == ["/workspace", "/workspace/pyproject.toml"]
    attempt, _ = run_trial(sandbox, snapshot, config, SHADOW, baseline=baseline, mode="full")
    assert attempt["tests"]["tests.test_calc::test_add"]["outcome"] == "failed"  # it ran
    # pinned where the run sees the tree (the host's path for the repository: persona.py)
    pinned = re.search(r"-c (\S+)/pyproject\.toml --rootdir=(\S+)", attempt["commands"][-1])
    assert pinned is not None and pinned.group(1) == pinned.group(2), attempt["commands"]
    assert "deselected" not in attempt["log_tail"]
