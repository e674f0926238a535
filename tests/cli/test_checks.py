"""Every check the CI runs, end to end through `fixbot fix` (real CLI, git, bubblewrap, the openai
SDK over a socket to a scripted server): builds red on ruff only, mypy only, ruff-fixable
findings (zero tokens), two checks at once; a unittest and a src-layout repository; gates that
see through a prepared environment and a hostile workspace."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunFixbot, make_repo, read_example
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import GOOD, reply

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

RUFF_F = '[tool.ruff.lint]\nselect = ["F"]\n'
APP = "def version():\n    return sys.version\n\n\ndef double(x):\n    return 2 * x\n"
APP_TESTS = "from app import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
IMPORT_SYS = reply(
    "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,5 @@\n+import sys\n+\n+\n"
    " def version():\n     return sys.version\n",
    "sys is used but never imported.",
)


def repo_of(tmp_path: Path, files: dict[str, str]) -> Path:
    """A committed repository holding exactly these files."""
    empty = tmp_path / "empty"
    empty.mkdir()
    return make_repo(tmp_path / "repo", files, source=empty)


def statuses(result: dict[str, Any]) -> dict[str, str]:
    return {run["name"]: run["status"] for run in result["checks"]}


def test_a_build_red_only_on_ruff_is_fixed(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    config = (
        "checks:\n  - {name: lint, run: ruff check .}\n  - {name: tests, run: python -m pytest}\n"
    )
    repo = repo_of(
        tmp_path,
        {
            ".fixbot.yml": config,
            "pyproject.toml": RUFF_F,
            "app.py": APP,
            "tests/test_app.py": APP_TESTS,
        },
    )
    with ScriptedOpenAI([IMPORT_SYS]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 0, run.stderr
    evidence = run.evidence
    assert evidence["status"] == "fixed"
    assert statuses(evidence["baseline"]) == {"lint": "failed", "tests": "passed"}
    assert "F821" in evidence["baseline"]["tests"]["check: lint"]["message"]
    assert statuses(evidence["verification"]) == {"lint": "passed", "tests": "passed"}
    assert len(server.requests) == 1  # ruff's own fixes had nothing for F821
    # The first ask names the check and shows its finding: the evidence, not a guess.
    task = server.requests[0]["messages"][-1]["content"]
    assert task.startswith("`app.py` has a bug: the check below fails because of it.")
    assert "check: lint\n    ruff: 1 finding: app.py:2 F821 Undefined name `sys`\n" in task
    assert "    app.py:2: F821 Undefined name `sys`\n" in task
    report = (run.out / "report.md").read_text()
    assert "### Checks" in report and "| `lint` | ruff | failed: 1 finding" in report


def test_a_build_red_only_on_mypy_is_fixed(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    config = "checks:\n  - {name: types, run: mypy .}\n  - {name: tests, run: python -m pytest}\n"
    typed = "def label(n: int) -> str:\n    return n\n"
    tests = "from typed import label\n\n\ndef test_label():\n    assert str(label(3)) == '3'\n"
    repo = repo_of(
        tmp_path, {".fixbot.yml": config, "typed.py": typed, "tests/test_typed.py": tests}
    )
    fix = reply(
        "--- a/typed.py\n+++ b/typed.py\n@@ -1,2 +1,2 @@\n def label(n: int) -> str:\n"
        "-    return n\n+    return str(n)\n"
    )
    with ScriptedOpenAI([fix]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert statuses(run.evidence["baseline"]) == {"types": "failed", "tests": "passed"}
    assert statuses(run.evidence["verification"]) == {"types": "passed", "tests": "passed"}
    assert [f["code"] for f in run.evidence["baseline"]["findings"]] == ["return-value"]
    task = server.requests[0]["messages"][-1]["content"]
    found = 'typed.py:2: return-value Incompatible return value type (got "int", expected "str")'
    assert found in task


# A command check that prints a long log, then fails: the tail of its output says why.
SMOKE = (
    "from app import double\n\n"
    "for step in range(2000):\n    print(f'warming up {step}')\n"
    "assert double(3) == 6, 'smoke: double(3) must be 6 (smoke-41d2)'\n"
)


def test_a_failing_command_check_is_asked_with_its_output_tail(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    config = (
        "checks:\n  - {name: smoke, run: python smoke.py}\n"
        "  - {name: tests, run: python -m pytest}\nprotected_paths: [smoke.py]\n"
    )
    app = APP.replace("2 * x", "2 + x")  # double(2) is still 4: only the smoke check fails
    files = {".fixbot.yml": config, "app.py": app, "smoke.py": SMOKE}
    repo = repo_of(tmp_path, {**files, "tests/test_app.py": APP_TESTS})
    fix = reply(
        "--- a/app.py\n+++ b/app.py\n@@ -5,2 +5,2 @@\n def double(x):\n"
        "-    return 2 + x\n+    return 2 * x\n"
    )
    with ScriptedOpenAI([fix]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert statuses(run.evidence["baseline"]) == {"smoke": "failed", "tests": "passed"}
    task = server.requests[0]["messages"][-1]["content"]
    # Where it failed (the innermost frame of the repository's code in its traceback), then
    # what it said.
    assert (
        "command: python smoke.py\n    failed at smoke.py:5: assert double(3) == 6, "
        "'smoke: double(3) must be 6 (smoke-41d2)'\n    exit code 1\n"
    ) in task
    assert "AssertionError: smoke: double(3) must be 6 (smoke-41d2)" in task  # the tail
    assert "warming up 1000" not in task  # the middle of its log elided


def test_a_ruff_fixable_build_is_fixed_with_zero_tokens(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    config = (
        "checks:\n  - {name: lint, run: ruff check .}\n"
        "  - {name: format, run: ruff format --check .}\n  - {name: tests, run: python -m pytest}\n"
    )
    tidy = "import os\ndef shout(text):\n    return text.upper( )\n"
    tests = 'from tidy import shout\n\n\ndef test_shout():\n    assert shout("a") == "A"\n'
    files = {".fixbot.yml": config, "pyproject.toml": RUFF_F, "tidy.py": tidy}
    repo = repo_of(tmp_path, {**files, "tests/test_tidy.py": tests})
    with ScriptedOpenAI([]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert server.requests == []
    evidence = run.evidence
    assert evidence["status"] == "fixed" and evidence["tokens"]["total"] == 0
    assert statuses(evidence["baseline"]) == {
        "lint": "failed",
        "format": "failed",
        "tests": "passed",
    }
    assert set(statuses(evidence["verification"]).values()) == {"passed"}
    assert [a["number"] for a in evidence["attempts"]] == [0]
    assert "-import os\n" in evidence["diff"] and "+    return text.upper()\n" in evidence["diff"]


def test_a_build_red_on_two_checks_at_once_needs_both_green(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    config = (
        "checks:\n  - {name: lint, run: ruff check .}\n  - {name: tests, run: python -m pytest}\n"
    )
    app = APP.replace("2 * x", "2 + x")
    files = {".fixbot.yml": config, "pyproject.toml": RUFF_F, "app.py": app}
    repo = repo_of(
        tmp_path, {**files, "tests/test_app.py": APP_TESTS.replace("(2) == 4", "(3) == 6")}
    )
    tests_only = reply(
        "--- a/app.py\n+++ b/app.py\n@@ -5,2 +5,2 @@\n def double(x):\n"
        "-    return 2 + x\n+    return 2 * x\n"
    )
    both = reply(
        "--- a/app.py\n+++ b/app.py\n@@ -1,6 +1,9 @@\n+import sys\n+\n+\n def version():\n"
        "     return sys.version\n \n \n def double(x):\n-    return 2 + x\n+    return 2 * x\n"
    )
    with ScriptedOpenAI([tests_only, both]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 0, run.stderr
    evidence = run.evidence
    assert statuses(evidence["baseline"]) == {"lint": "failed", "tests": "tests_failed"}
    first, second = evidence["attempts"]
    assert first["verdict"] == "fail"
    assert "check: lint still failed (it must pass)" in first["problems"]
    assert second["verdict"] == "pass"
    assert statuses(evidence["verification"]) == {"lint": "passed", "tests": "passed"}


def test_a_unittest_repository_is_fixed(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    config = "checks:\n  - {name: tests, run: python -m unittest discover -s tests -t .}\n"
    tests = (
        "import unittest\n\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n"
        "    def test_zero(self):\n        self.assertEqual(add(0, 0), 0)\n"
    )
    files = {".fixbot.yml": config, "calc.py": "def add(a, b):\n    return a - b\n"}
    repo = repo_of(tmp_path, {**files, "tests/__init__.py": "", "tests/test_calc.py": tests})
    fix = reply(
        "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n"
        "+    return a + b\n"
    )
    with ScriptedOpenAI([fix]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 0, run.stderr
    evidence = run.evidence
    before = {t: r["outcome"] for t, r in evidence["baseline"]["tests"].items()}
    assert before == {
        "tests.test_calc.TestAdd::test_add": "failed",
        "tests.test_calc.TestAdd::test_zero": "passed",
    }
    assert (
        "AssertionError: -1 != 5"
        in evidence["baseline"]["tests"]["tests.test_calc.TestAdd::test_add"]["message"]
    )
    assert statuses(evidence["verification"]) == {"tests": "passed"}
    assert {r["outcome"] for r in evidence["verification"]["tests"].values()} == {"passed"}


def test_a_src_layout_repository_is_fixed(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    config = (
        "checks:\n  - {name: lint, run: ruff check src tests}\n  - {name: types, run: mypy src}\n"
        "  - {name: tests, run: python -m pytest}\n"
    )
    pyproject = (
        '[tool.pytest.ini_options]\npythonpath = ["src"]\n\n[tool.mypy]\nmypy_path = "src"\n'
    )
    files = {
        ".fixbot.yml": config,
        "pyproject.toml": pyproject,
        "src/shapes/__init__.py": "",
        "src/shapes/area.py": "def square(side: float) -> float:\n    return side * 2\n",
        "tests/test_area.py": (
            "from shapes.area import square\n\n\ndef test_square() -> None:\n"
            "    assert square(3) == 9\n"
        ),
    }
    repo = repo_of(tmp_path, files)
    fix = reply(
        "--- a/src/shapes/area.py\n+++ b/src/shapes/area.py\n@@ -1,2 +1,2 @@\n"
        " def square(side: float) -> float:\n-    return side * 2\n+    return side * side\n"
    )
    with ScriptedOpenAI([fix]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 0, run.stderr
    evidence = run.evidence
    assert statuses(evidence["baseline"]) == {"lint": "passed", "types": "passed",
                                              "tests": "tests_failed"}  # fmt: skip
    assert list(evidence["baseline"]["tests"]) == [
        "check: lint", "check: types", "tests.test_area::test_square",
    ]  # fmt: skip
    assert set(statuses(evidence["verification"]).values()) == {"passed"}


# ---- the gates see, whatever environment the tests run in and whatever the workspace holds

SHADOW_TOOLS = """\
import os
import site

# Into the prepared environment: a ruff that reports nothing, a mypy that checks nothing.
root = site.getsitepackages()[0]
for tool, main in (("ruff", "print('[]')\\n"), ("mypy", "")):
    os.makedirs(os.path.join(root, tool), exist_ok=True)
    open(os.path.join(root, tool, "__init__.py"), "w").close()
    with open(os.path.join(root, tool, "__main__.py"), "w") as handle:
        handle.write(main)
"""

# Fixes the mean, and adds a new lint error and a new type error: never a pass.
SLOPPY = reply(
    """--- a/calc.py
+++ b/calc.py
@@ -10,3 +10,7 @@
 def mean(values: list[float]) -> float:
     \"\"\"The arithmetic mean of a non-empty list.\"\"\"
-    return sum(values) / (len(values) + 1)
+    import sys
+    return sum(values) / count(values)
+
+
+def count(values: list[float]) -> str:
+    return len(values)
"""
)


def test_the_gates_see_with_a_prepared_environment(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    config = read_example(".fixbot.yml") + "setup_command: python shadow_tools.py\n"
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": config, "shadow_tools.py": SHADOW_TOOLS})
    with ScriptedOpenAI([SLOPPY, GOOD]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 0, run.stderr
    evidence = run.evidence
    first, second = evidence["attempts"]
    assert first["verdict"] == "fail"
    assert any(p.startswith("new ruff error calc.py:") for p in first["problems"]), first
    assert any("new mypy error calc.py:" in p for p in first["problems"]), first["problems"]
    assert second["verdict"] == "pass" and "import sys" not in evidence["diff"]
    assert any(f["code"] == "F401" for f in evidence["baseline"]["findings"])  # pre-existing


# The gates at their default, "auto": a project that configures neither ruff nor mypy is held to
# its tests; the same project with a root ruff.toml and mypy.ini to no new finding of either.
AUTO_CONFIG = "test_command: python -m pytest\nmax_iterations: 3\n"
CONFIGURED = {"ruff.toml": "[lint]\nselect = ['F']\n", "mypy.ini": "[mypy]\n"}


@pytest.mark.parametrize("configured", [False, True], ids=["no-config", "ruff-and-mypy-config"])
def test_auto_gates_follow_the_repositorys_configuration(
    tmp_path: Path, run_fixbot: RunFixbot, configured: bool
) -> None:
    files = {".fixbot.yml": AUTO_CONFIG, **(CONFIGURED if configured else {})}
    repo = make_repo(tmp_path / "repo", files)
    with ScriptedOpenAI([SLOPPY, GOOD]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 0, run.stderr
    evidence = run.evidence
    first = evidence["attempts"][0]
    report = (run.out / "report.md").read_text()
    for tool, key in (("ruff", "gates.lint"), ("mypy", "gates.types")):  # why, for the reader
        found = "configures" if configured else "configures no"
        why = f"`{key}` is `auto` and the repository {found} {tool} at its root"
        assert f"The {tool} gate {'ran' if configured else 'did not run'}: {why}" in report
    if not configured:  # the tests pass: nothing else the project runs stands in the way
        assert set(statuses(evidence["baseline"])) == {"tests"}
        assert first["verdict"] == "pass", first
        assert len(evidence["attempts"]) == 1
        return
    assert set(statuses(evidence["baseline"])) == {"lint", "types", "tests"}
    assert first["verdict"] == "fail"
    assert any(p.startswith("new ruff error calc.py:") for p in first["problems"]), first
    assert any("new mypy error calc.py:" in p for p in first["problems"]), first["problems"]
    assert evidence["attempts"][1]["verdict"] == "pass"


HIDES_FROM_THE_GATES = reply(
    """--- a/calc.py
+++ b/calc.py
@@ -10,3 +10,7 @@
 def mean(values: list[float]) -> float:
     \"\"\"The arithmetic mean of a non-empty list.\"\"\"
-    return sum(values) / (len(values) + 1)
+    return sum(values) / count(values)
+
+
+def count(values: list[float]) -> str:
+    return len(values)
--- /dev/null
+++ b/psutil.py
@@ -0,0 +1,4 @@
+import io
+import sys
+
+sys.stdout = io.StringIO()
--- /dev/null
+++ b/extra/pyproject.toml
@@ -0,0 +1,2 @@
+[tool.ruff.lint]
+ignore = ["ALL"]
--- /dev/null
+++ b/extra/helper.py
@@ -0,0 +1,1 @@
+import json
"""
)


def test_nothing_in_the_workspace_silences_the_gates(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    """mypy imports psutil when it can, and ruff reads the nearest pyproject.toml: a top-level
    psutil.py and a nested config would have silenced both gates."""
    repo = make_repo(tmp_path / "repo")
    with ScriptedOpenAI([HIDES_FROM_THE_GATES, GOOD]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 0, run.stderr
    first, second = run.evidence["attempts"]
    assert first["verdict"] in ("fail", "rejected"), first
    if first["verdict"] == "fail":  # when the screening lets it through, the gates still see
        assert any("new mypy error calc.py:" in p for p in first["problems"]), first["problems"]
        assert any("new ruff error extra/helper.py:1" in p for p in first["problems"])
    assert second["verdict"] == "pass" and "psutil" not in run.evidence["diff"]
