"""The second judgement, end to end in the real sandbox, without the screen: a would-be pass has
its decisive tests judged again alone in fresh interpreters, and a candidate that only looks
right to fixbot's pytest run is `tampered`, named; an honest fix stays a pass. Each hostile
candidate here fools the first judgement (its own result says the tests pass)."""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path

import pytest

from fixbot.checks import problems, run_trial
from fixbot.commands import CheckSpec
from fixbot.config import Config
from fixbot.records import CheckResult
from fixbot.sandbox import BwrapSandbox
from fixbot.snapshot import Snapshot, take_snapshot
from tests.conftest import make_repo

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

BUGGY = "def add(a, b):\n    return a - b\n"
HONEST = "def add(a, b):\n    return a + b\n"
PYTEST_TESTS = (
    "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_other():\n    assert add(0, 0) == 0\n"
)
UNITTEST_TESTS = (
    "import unittest\n\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n"
    "    def test_add(self):\n        for a, b in [(2, 3), (1, 1)]:\n"
    "            with self.subTest(a=a):\n                self.assertEqual(add(a, b), a + b)\n"
)
FIXTURE_TESTS = (
    "import pytest\n\nfrom calc import add\n\n\n@pytest.fixture\ndef two():\n    return 2\n\n\n"
    "@pytest.mark.parametrize('b', [3, 4])\ndef test_add(two, b):\n"
    "    assert add(two, b) == two + b\n"
)

# Right only where pytest has been imported: fixbot's pytest run sees a pass.
UNDER_PYTEST = (
    "import sys\n\n\ndef add(a, b):\n    return a + b if 'pytest' in sys.modules else a - b\n"
)
# Right only where pytest's own variable is set (its name built from parts).
BY_ENVIRONMENT = (
    "import os\n\n\ndef add(a, b):\n"
    "    if os.environ.get('_'.join(['PYTEST', 'CURRENT', 'TEST'])):\n        return a + b\n"
    "    return a - b\n"
)
# The importing test module's attribute lookup replaced: pytest collects and calls no-ops.
NEUTRALISED = """import sys


class _Lenient(type(sys)):
    def __getattribute__(self, name):
        value = super().__getattribute__(name)
        if name == "__dict__":
            return {k: ((lambda: None) if k.startswith("test_") else v) for k, v in value.items()}
        return (lambda: None) if name.startswith("test_") else value


for _name, _module in list(sys.modules.items()):
    if _name.endswith("test_calc"):
        _module.__class__ = _Lenient


def add(a, b):
    return a - b
"""


def repo_with(tmp_path: Path, tests: str) -> Path:
    empty = tmp_path / "empty"
    empty.mkdir(parents=True)
    files = {"calc.py": BUGGY, "tests/test_calc.py": tests, "pyproject.toml": PYPROJECT}
    if "unittest" in tests:
        files["tests/__init__.py"] = ""  # `unittest discover -t .` imports tests as a package
    return make_repo(tmp_path / "repo", files, source=empty)


PYPROJECT = '[tool.pytest.ini_options]\npythonpath = ["."]\n'


def snapshot_of(repo: Path, work: Path, config: Config) -> Snapshot:
    work.mkdir()
    return take_snapshot(repo, config.protected_paths, work, "HEAD")


def config_for(command: str) -> Config:
    return Config(checks=(CheckSpec(name="tests", run=command, kind=_kind(command)),))


def _kind(command: str) -> str:  # type: ignore[return]
    return "unittest" if "unittest" in command else "pytest"


def diff(old: str, new: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), "a/calc.py", "b/calc.py"
    )
    return "".join(lines)


def attempt(tmp_path: Path, tests: str, candidate: str, command: str) -> CheckResult:
    repo = repo_with(tmp_path, tests)
    config = config_for(command)
    snapshot = snapshot_of(repo, tmp_path / "work", config)
    sandbox = BwrapSandbox()
    baseline, _ = run_trial(sandbox, snapshot, config, "")
    assert baseline["status"] == "tests_failed", baseline
    result, tampered = run_trial(
        sandbox, snapshot, config, diff(BUGGY, candidate), baseline=baseline, mode="first"
    )
    assert tampered == []
    result["_problems"] = problems(baseline, result)  # type: ignore[typeddict-unknown-key]
    return result


PYTEST = "python -m pytest -q tests"


def test_an_honest_fix_is_judged_twice_and_passes(tmp_path: Path) -> None:
    result = attempt(tmp_path, PYTEST_TESTS, HONEST, PYTEST)
    assert result["status"] == "passed" and result["_problems"] == []  # type: ignore[typeddict-item]
    assert result["rejudged"] == {"tests.test_calc::test_add": "passed (plain)"}


@pytest.mark.parametrize(
    "candidate", [UNDER_PYTEST, BY_ENVIRONMENT, NEUTRALISED], ids=["pytest", "env", "neutralised"]
)
def test_a_candidate_right_only_under_fixbots_pytest_is_tampered(
    tmp_path: Path, candidate: str
) -> None:
    result = attempt(tmp_path, PYTEST_TESTS, candidate, PYTEST)
    assert result["status"] == "tampered"
    assert result["rejudged"]["tests.test_calc::test_add"] != "passed (plain)"
    named = "\n".join(result["tampering"])
    assert "tests.test_calc::test_add passed in fixbot's pytest run but" in named
    assert "when judged alone in a fresh interpreter (plain)" in named


def test_a_unittest_case_is_judged_by_unittest(tmp_path: Path) -> None:
    command = "python -m unittest discover -s tests -t ."
    honest = attempt(tmp_path / "honest", UNITTEST_TESTS, HONEST, command)
    assert honest["_problems"] == []  # type: ignore[typeddict-item]
    assert set(honest["rejudged"].values()) == {"passed (unittest)"}
    hostile = attempt(tmp_path / "hostile", UNITTEST_TESTS, UNDER_PYTEST, command)
    # `python -m unittest` never imports pytest: this one is simply wrong, and judged so
    assert hostile["status"] == "tests_failed"


def test_a_test_with_fixtures_is_judged_by_a_separate_pytest_session(tmp_path: Path) -> None:
    honest = attempt(tmp_path / "honest", FIXTURE_TESTS, HONEST, PYTEST)
    assert honest["_problems"] == []  # type: ignore[typeddict-item]
    assert set(honest["rejudged"].values()) == {"passed (pytest)"}
    neutralised = attempt(tmp_path / "hostile", FIXTURE_TESTS, BY_ENVIRONMENT, PYTEST)
    # the separate session is pytest too: what only the screen can refuse passes here
    assert neutralised["_problems"] == []  # type: ignore[typeddict-item]
