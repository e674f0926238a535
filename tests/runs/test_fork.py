"""fixbot fork: continue a thread from an earlier attempt in a new thread, the original kept."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from fixbot import cli
from tests.conftest import API_KEY, RunFixbot, make_repo
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import GOOD, wrong

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
QUICK = {".fixbot.yml": "gates: {lint: false, types: false}\nverification: {final_runs: 1}\n"}


def _history(repo: Path, thread: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    code = cli.main(["history", thread, str(repo), "--json", "--log-format", "json"], {})
    assert code == 0
    found: dict[str, Any] = json.loads(capsys.readouterr().out)
    return found


def _fork(repo: Path, base_url: str, *args: str) -> int:
    env = {"OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": base_url, "FIXBOT_MODEL": "scripted"}
    argv = ["fork", *args, "--sandbox", "bwrap", "--log-format", "json", "--json"]
    return cli.main([argv[0], argv[1], str(repo), *argv[2:]], env)


def test_fork_from_an_earlier_attempt_keeps_the_original(
    tmp_path: Path, run_fixbot: RunFixbot, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo", QUICK)
    with ScriptedOpenAI([wrong(1), wrong(2)]) as server:
        first = run_fixbot(repo, "--max-iterations", "2", base_url=server.base_url)
    assert first.code == 1 and first.evidence["status"] == "escalated"
    thread = first.evidence["thread_id"]
    before = _history(repo, thread, capsys)
    with ScriptedOpenAI([GOOD]) as server:
        code = _fork(repo, server.base_url, thread, "--from-attempt", "1", "--hint", "use len")
        summary = json.loads(capsys.readouterr().out)
        assert len(server.requests) == 1  # attempt 1 was not asked for again
        prompt = "\n".join(m["content"] for m in server.requests[0]["messages"])
        assert "use len" in prompt
    assert code == 0, summary
    forked = summary["thread_id"]
    assert forked.startswith(f"{thread}-fork-") and summary["status"] == "fixed"
    rows = _history(repo, forked, capsys)["attempts"]
    assert [(r["attempt"], r["verdict"]) for r in rows] == [(1, "fail"), (2, "pass")]
    assert _history(repo, thread, capsys) == before  # the original history is untouched
    # The same fork again: the same thread, reported, no model call.
    with ScriptedOpenAI([]) as server:
        again = _fork(repo, server.base_url, thread, "--from-attempt", "1", "--hint", "use len")
        assert server.requests == []
    assert again == 0 and json.loads(capsys.readouterr().out)["thread_id"] == forked


def test_fork_of_a_missing_attempt_is_a_usage_error(
    tmp_path: Path, run_fixbot: RunFixbot, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo", QUICK)
    with ScriptedOpenAI([wrong(1)]) as server:
        first = run_fixbot(repo, "--max-iterations", "1", base_url=server.base_url)
    thread = first.evidence["thread_id"]
    with ScriptedOpenAI([]) as server:
        assert _fork(repo, server.base_url, thread, "--from-attempt", "5") == 2
        assert _fork(repo, server.base_url, "fix-nothing", "--from-attempt", "1") == 2
        assert server.requests == []
