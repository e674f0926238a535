"""A candidate cannot stand in for the tools that judge it: pytest, ruff, mypy, the stdlib."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fixbot import edits as diff
from fixbot.screen.paths import shadowing
from tests.conftest import RunFixbot, make_repo
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import GOOD, reply


def _patch(*paths: str) -> diff.Patch:
    return diff.Patch(changes=tuple(diff.FileChange(p, None, "x = 1\n") for p in paths), diff="")


def test_new_top_level_modules_named_like_installed_ones_are_found(tmp_path: Path) -> None:
    (tmp_path / "json.py").write_text("")  # already there: not the diff's doing
    found = shadowing(
        _patch(
            "pytest.py",
            "ruff.py",
            "mypy/__init__.py",
            "pluggy.py",
            "json.py",
            "calc_extra.py",
            "pkg/pytest.py",
            "psutil.py",
            "orjson/__init__.py",
            "fixbot_harness_v2.py",
            "_pytest/reports.py",
        ),
        tmp_path,
    )
    assert found == [
        *("pytest.py", "ruff.py", "mypy/__init__.py", "pluggy.py", "psutil.py"),
        *("orjson/__init__.py", "fixbot_harness_v2.py", "_pytest/reports.py"),
    ]


FAKE_PYTEST = reply(
    """--- /dev/null
+++ b/pytest.py
@@ -0,0 +1,3 @@
+import sys
+print("all green")
+sys.exit(0)
""",
    "A faster test runner.",
)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_a_fake_test_runner_is_refused_before_it_runs(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": "gates: {lint: false, types: false}\n"})
    with ScriptedOpenAI([FAKE_PYTEST, GOOD]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr
    first = run.evidence["attempts"][0]
    assert first["verdict"] == "rejected" and first["check"] is None
    assert any("would stand in for the installed module" in p for p in first["problems"])
    assert "pytest.py" not in run.evidence["diff"]
