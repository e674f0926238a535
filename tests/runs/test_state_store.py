"""Durable state: history from checkpoints, one active run per thread, and PostgreSQL."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from fixbot import cli
from tests.conftest import API_KEY, RunFixbot, database_url, make_repo
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import GOOD, wrong

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
QUICK = {".fixbot.yml": "gates: {lint: false, types: false}\n"}


def test_history_and_show_read_the_checkpoints(
    tmp_path: Path, run_fixbot: RunFixbot, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo", QUICK)
    with ScriptedOpenAI([wrong(1), GOOD]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    thread = run.evidence["thread_id"]
    assert cli.main(["history", thread, str(repo), "--log-format", "json"], {}) == 0
    text = capsys.readouterr().out
    assert f"thread {thread}: fixed" in text
    assert "calc.py (+1 -1)" in text and "fail" in text and "pass" in text
    assert cli.main(["history", thread, str(repo), "--json", "--log-format", "json"], {}) == 0
    rows = json.loads(capsys.readouterr().out)["attempts"]
    assert [r["verdict"] for r in rows] == ["fail", "pass"]
    assert cli.main(["show", thread, str(repo), "--attempt", "2", "--log-format", "json"], {}) == 0
    shown = capsys.readouterr().out
    assert "attempt 2: pass" in shown and "return sum(values) / len(values)" in shown
    assert cli.main(["show", thread, str(repo), "--attempt", "9", "--log-format", "json"], {}) == 2
    assert cli.main(["history", "fix-unknown", str(repo), "--log-format", "json"], {}) == 2


def _fixbot(repo: Path, base_url: str, extra_env: dict[str, str] | None = None) -> Any:
    env = {
        "PATH": os.environ["PATH"],
        "OPENAI_API_KEY": API_KEY,
        "OPENAI_BASE_URL": base_url,
        "FIXBOT_MODEL": "scripted-model",
        **(extra_env or {}),
    }
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fixbot",
            "fix",
            str(repo),
            "--log-format",
            "json",
            "--json",
            "--sandbox",
            "bwrap",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def test_one_active_run_per_thread_and_the_lock_dies_with_its_process(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", QUICK)
    in_flight, release = threading.Event(), threading.Event()

    def hang(body: dict[str, Any]) -> str:
        in_flight.set()
        release.wait(60)
        return "too late"

    with ScriptedOpenAI([hang, GOOD]) as server:
        first = _fixbot(repo, server.base_url)
        try:
            assert in_flight.wait(120)
            second = _fixbot(repo, server.base_url)
            out, err = second.communicate(timeout=120)
            assert second.returncode == 3, err
            assert "already running" in json.loads(out)["reason"]
        finally:
            os.killpg(first.pid, signal.SIGKILL)
            first.communicate(timeout=30)
        third = _fixbot(repo, server.base_url)  # the crashed holder's lock is gone
        out, err = third.communicate(timeout=300)
        release.set()
    assert third.returncode == 0, err
    assert json.loads(out)["status"] == "fixed"


def test_postgres_holds_the_checkpoints_escalation_and_resume(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    url = database_url()
    repo = make_repo(tmp_path / "repo", {**QUICK, "NOTES.md": f"{uuid.uuid4()}\n"})
    env = {"FIXBOT_DATABASE_URL": url}
    with ScriptedOpenAI([wrong(1), GOOD]) as server:
        first = run_fixbot(repo, "--max-iterations", "1", base_url=server.base_url, env=env)
        assert first.code == 1
        thread = first.evidence["thread_id"]
        assert not (repo / ".fixbot" / "state.db").exists()  # the state went to PostgreSQL
        resumed = run_fixbot(
            repo,
            base_url=server.base_url,
            env=env,
            command="resume",
            thread=thread,
            extra=["--hint", "divide by the count"],
        )
    assert resumed.code == 0, resumed.stderr
    assert resumed.evidence["status"] == "fixed"
    assert url not in resumed.stderr and url not in (resumed.out / "evidence.json").read_text()
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread,)
        ).fetchone()
    assert row is not None and row[0] > 5


def test_an_unreachable_database_is_an_environment_error(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(tmp_path / "repo", QUICK)
    url = "postgresql://fixbot:secret-pw@127.0.0.1:1/none"
    with ScriptedOpenAI([]) as server:
        run = run_fixbot(repo, base_url=server.base_url, env={"FIXBOT_DATABASE_URL": url})
    assert run.code == 3
    assert "secret-pw" not in run.stderr and "secret-pw" not in json.dumps(run.evidence)
