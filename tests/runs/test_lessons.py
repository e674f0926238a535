"""Lessons in a real LangGraph store (SQLite, and PostgreSQL where CI provides it), and
retention of old threads and lessons."""

from __future__ import annotations

import json
import shutil
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.store.base import BaseStore

from fixbot import cli
from fixbot.loop import lessons
from fixbot.loop.lessons import Lesson, lesson_key, signature
from fixbot.paths import StateDir
from fixbot.runs import checkpointer_for, prune_threads, store_for
from tests.conftest import RunFixbot, database_url, git, make_repo
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import GOOD, wrong


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseStore]:
    url = database_url() if request.param == "postgres" else None
    with store_for(StateDir(tmp_path), url) as opened:
        yield opened


def _lesson(failure: dict[str, str], fix: str, created_at: float, thread: str = "t") -> Lesson:
    sig = signature(failure)
    return Lesson(lesson_key(sig), sig, fix, ("calc.py",), created_at, thread)


def test_signatures_blank_numbers_and_sort() -> None:
    a = signature({"tests/t.py::test_b": "assert 3 == 2\nmore", "tests/t.py::test_a": ""})
    b = signature({"tests/t.py::test_a": "", "tests/t.py::test_b": "assert 4 == 1"})
    assert a == b == ("tests/t.py::test_a", "tests/t.py::test_b assert N == N")
    assert lesson_key(a) == lesson_key(b)


def test_record_list_rank_and_remove(store: BaseStore) -> None:
    repo = f"repo-{uuid.uuid4().hex}"
    now = time.time()
    mean = _lesson({"tests/test_calc.py::test_mean": "ZeroDivisionError"}, "divide by len", now)
    clamp = _lesson({"tests/test_calc.py::test_clamp": "assert 15 == 10"}, "min/max", now + 1)
    lessons.record(store, repo, mean)
    lessons.record(store, repo, clamp)
    lessons.record(store, repo, mean)  # a rerun rewrites, never duplicates
    assert [item.key for item in lessons.listing(store, repo)] == [clamp.key, mean.key]
    shown = lessons.relevant(store, repo, ("tests/test_calc.py::test_mean ZeroDivisionError",))
    assert shown[0] == mean
    assert lessons.relevant(store, repo, ("nothing shared at all",)) == []
    assert lessons.relevant(store, f"other-{repo}", mean.failure) == []  # per repository
    assert lessons.remove(store, repo, mean.key)
    assert not lessons.remove(store, repo, mean.key)
    assert [item.key for item in lessons.listing(store, repo)] == [clamp.key]


def test_the_namespace_is_capped_oldest_first(store: BaseStore) -> None:
    repo = f"repo-{uuid.uuid4().hex}"
    for n in range(lessons.CAP + 5):
        lessons.record(store, repo, _lesson({f"t::test_{n}": ""}, f"fix {n}", 1000.0 + n))
    kept = lessons.listing(store, repo)
    assert len(kept) == lessons.CAP
    assert kept[-1].fix == "fix 5" and kept[0].fix == f"fix {lessons.CAP + 4}"


def test_old_lessons_are_pruned(store: BaseStore) -> None:
    repo = f"repo-{uuid.uuid4().hex}"
    now = time.time()
    lessons.record(store, repo, _lesson({"t::old": ""}, "old", now - 40 * 86400))
    lessons.record(store, repo, _lesson({"t::new": ""}, "new", now))
    assert lessons.prune(store, older_than=30 * 86400, now=now) >= 1
    assert [item.fix for item in lessons.listing(store, repo)] == ["new"]


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_threads_idle_past_retention_are_deleted(kind: str, tmp_path: Path) -> None:
    url = database_url() if kind == "postgres" else None
    old, new = f"fix-old-{uuid.uuid4().hex[:8]}", f"fix-new-{uuid.uuid4().hex[:8]}"
    now = time.time()
    with checkpointer_for(StateDir(tmp_path), url) as saver:
        for thread, age in ((old, 40 * 86400), (new, 60)):
            checkpoint = empty_checkpoint()
            checkpoint["ts"] = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(now - age))
            config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
            saver.put(config, checkpoint, {"source": "input", "step": -1}, {})
        gone = prune_threads(saver, older_than=30 * 86400, now=now)
        assert old in gone and new not in gone
        assert saver.get_tuple({"configurable": {"thread_id": old}}) is None
        assert saver.get_tuple({"configurable": {"thread_id": new}}) is not None


# --- end to end: fixbot fix writes a lesson after a verified pass; the next run shows it ---

QUICK = {".fixbot.yml": "gates: {lint: false, types: false}\nverification: {final_runs: 1}\n"}


def _prompt(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in body["messages"])


def _lessons_json(repo: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    capsys.readouterr()
    assert cli.main(["lessons", "list", str(repo), "--json", "--log-format", "json"], {}) == 0
    found: list[dict[str, Any]] = json.loads(capsys.readouterr().out)
    return found


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_a_verified_fix_teaches_the_next_run(
    tmp_path: Path, run_fixbot: RunFixbot, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo", QUICK)
    with ScriptedOpenAI([GOOD]) as server:
        first = run_fixbot(repo, base_url=server.base_url)
    assert first.code == 0, first.stderr
    assert "What fixed similar failures" not in _prompt(server.requests[0])
    learned = _lessons_json(repo, capsys)
    assert len(learned) == 1
    assert any("test_mean" in line for line in learned[0]["failure"])
    assert "divides by the wrong count" in learned[0]["fix"] and "calc.py" in learned[0]["fix"]
    assert learned[0]["thread"] == first.evidence["thread_id"]
    # Another commit with the same failure: its first prompt carries the lesson.
    (repo / "README.md").write_text("touched\n")
    git(repo, "commit", "-qam", "docs")
    with ScriptedOpenAI([GOOD]) as server:
        second = run_fixbot(repo, base_url=server.base_url)
    assert second.code == 0, second.stderr
    prompt = _prompt(server.requests[0])
    assert "What fixed similar failures" in prompt and "divides by the wrong count" in prompt
    assert len(_lessons_json(repo, capsys)) == 1  # the same failure: the same lesson, rewritten
    key = learned[0]["key"]
    assert cli.main(["lessons", "rm", key, str(repo), "--log-format", "json"], {}) == 0
    assert cli.main(["lessons", "rm", key, str(repo), "--log-format", "json"], {}) == 2
    assert _lessons_json(repo, capsys) == []


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_an_unverified_run_teaches_nothing(
    tmp_path: Path, run_fixbot: RunFixbot, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo", QUICK)
    with ScriptedOpenAI([wrong(1)]) as server:
        run = run_fixbot(repo, "--max-iterations", "1", base_url=server.base_url)
    assert run.code == 1 and run.evidence["status"] == "escalated"
    assert _lessons_json(repo, capsys) == []


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_prune_keeps_what_is_recent(
    tmp_path: Path, run_fixbot: RunFixbot, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo", QUICK)
    with ScriptedOpenAI([GOOD]) as server:
        assert run_fixbot(repo, base_url=server.base_url).code == 0
    capsys.readouterr()
    assert cli.main(["prune", str(repo), "--json", "--log-format", "json"], {}) == 0
    assert json.loads(capsys.readouterr().out) == {
        "environments": [],
        "lessons": 0,
        "older_than_days": 30,
        "threads": [],
    }
    assert cli.main(["prune", str(repo), "--older-than-days", "0", "--log-format", "json"], {}) == 2
