"""Live progress: a status line on a terminal, JSON lines otherwise; stdout untouched."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from fixbot.cli.progress import Progress
from tests.conftest import RunFixbot, make_repo
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import GOOD, wrong


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def info(self, event: str, **fields: Any) -> None:
        self.events.append((event, fields))


def test_json_lines_carry_node_attempt_outcome_elapsed_tokens() -> None:
    ticks = iter([100.0, 101.5, 103.0, 104.25])
    logger = Recorder()
    progress = Progress(logger, terminal=None, attempts=4, clock=lambda: next(ticks))
    progress("generate", {"attempt": 1, "tokens_used": 1234, "verdict": "none"})
    attempt = {"number": 1, "verdict": "fail", "problems": ["test_mean failed"]}
    progress("judge", {"attempts": [attempt], "verdict": "fail"})
    progress("paused", {"thread_id": "fix-1"})
    assert logger.events == [
        (
            "node",
            {"node": "generate", "attempt": 1, "outcome": "none", "elapsed": 1.5, "tokens": 1234},
        ),
        (
            "node",
            {
                "node": "judge",
                "attempt": 1,
                "outcome": "fail",
                "elapsed": 3.0,
                "tokens": 1234,
                "problems": ["test_mean failed"],
            },
        ),
        (
            "node",
            {
                "node": "paused",
                "attempt": 1,
                "outcome": "",
                "elapsed": 4.2,
                "tokens": 1234,
                "thread_id": "fix-1",
            },
        ),
    ]


def test_a_terminal_gets_one_line_rewritten_in_place() -> None:
    ticks = iter([0.0, 1.0, 2.0, 3.0])
    terminal = io.StringIO()
    progress = Progress(Recorder(), terminal=terminal, attempts=3, clock=lambda: next(ticks))
    progress("generate", {"attempt": 1, "tokens_used": 900})
    progress("check", {})
    progress("judge", {"attempts": [{"number": 1, "verdict": "pass", "problems": []}]})
    shown = terminal.getvalue()
    assert shown.count("\r\x1b[K") == 3
    assert "attempt 1/3  generate" in shown and "900 tokens" in shown
    assert shown.endswith("pass                900 tokens\n")  # an attempt's end is kept


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_a_run_reports_its_progress_on_stderr_only(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": "gates: {lint: false, types: false}\n"})
    with ScriptedOpenAI([wrong(1), GOOD]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 0, run.stderr
    json.loads(run.stdout)  # stdout: the one summary object
    steps = [e for e in run.events if e.get("event") == "node"]
    assert [e["node"] for e in steps][:4] == ["baseline", "autofix", "generate", "apply"]
    judged = [(e["attempt"], e["outcome"]) for e in steps if e["node"] == "judge"]
    assert judged == [(1, "fail"), (2, "pass")]
    assert all(isinstance(e["elapsed"], float) and e["tokens"] >= 0 for e in steps)
    assert steps[-1]["tokens"] > 0
