"""A run killed mid-way and rerun resumes from its checkpoint and repeats no finished attempt."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from fixbot.sandbox.host import NOBODY, SANDBOX_GID
from tests.conftest import API_KEY, make_repo
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import GOOD, wrong
from tests.fakes import reply as reply_with

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="needs bubblewrap (apt-get install bubblewrap)"
)


def fixbot(repo: Path, base_url: str) -> subprocess.Popen[str]:
    env = {
        "PATH": os.environ["PATH"],
        "OPENAI_API_KEY": API_KEY,
        "OPENAI_BASE_URL": base_url,
        "FIXBOT_MODEL": "scripted-model",
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
            "--sandbox",
            "bwrap",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def nodes_run(stderr: str) -> list[str]:
    events = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    return [e["node"] for e in events if e.get("event") == "node"]


def test_killed_during_the_second_model_call_resumes_without_redoing_work(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    in_flight = threading.Event()
    release = threading.Event()

    def hang(body: dict[str, Any]) -> str:
        in_flight.set()
        release.wait(60)
        return "too late"

    with ScriptedOpenAI([wrong(1), hang, GOOD]) as server:
        first = fixbot(repo, server.base_url)
        try:
            assert in_flight.wait(120), "the second model call never came"
        finally:
            os.killpg(first.pid, signal.SIGKILL)
            _, first_err = first.communicate(timeout=30)
        assert first.returncode == -signal.SIGKILL
        assert nodes_run(first_err) == [
            "baseline",
            "autofix",
            "generate",
            "apply",
            "check",
            "judge",
            "reflect",
        ]

        second = fixbot(repo, server.base_url)
        _, err = second.communicate(timeout=300)
        release.set()
    assert second.returncode == 0, err
    # Baseline and attempt 1 were not redone: the rerun starts at the interrupted model call.
    assert nodes_run(err) == [
        "generate",
        "apply",
        "check",
        "judge",
        "verify",
        "minimize",
        "review",
        "finalize",
    ]
    assert len(server.requests) == 3
    evidence = json.loads((repo / ".fixbot" / "out" / "evidence.json").read_text())
    assert [a["verdict"] for a in evidence["attempts"]] == ["fail", "pass"]
    assert evidence["attempts"][0]["reply"] == wrong(1)

    # A third run of the same command reports the finished result and calls nobody.
    with ScriptedOpenAI([]) as idle:
        third = fixbot(repo, idle.base_url)
        third.communicate(timeout=120)
    assert third.returncode == 0
    assert idle.requests == []


REVIEWED = "VERDICT: legitimate\nREASON: mean divides by the count."
BOUNDARIES = [
    "baseline",
    "autofix",
    "generate",
    "apply",
    "check",
    "judge",
    "reflect",
    "verify",
    "minimize",
    "review",
]


def _driver(repo: Path, base_url: str, crash_after: str | None) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ["PATH"],
        "OPENAI_API_KEY": API_KEY,
        "OPENAI_BASE_URL": base_url,
        "FIXBOT_MODEL": "scripted-model",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    module = "fixbot"
    if crash_after:
        env["FIXBOT_CRASH_AFTER"] = crash_after
        module = "tests.runs.crash_driver"
    argv = [
        sys.executable,
        "-m",
        module,
        "fix",
        str(repo),
        "--log-format",
        "json",
        "--json",
        "--sandbox",
        "bwrap",
    ]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("boundary", BOUNDARIES)
def test_a_crash_at_each_node_boundary_then_rerun_gives_the_same_result(
    tmp_path: Path, boundary: str
) -> None:
    # With a reviewer: its verdict, the last model call, is a recorded reply like the others.
    quick = {".fixbot.yml": "gates: {lint: false, types: false}\nreview: {model: reviewer}\n"}
    repo = make_repo(tmp_path / "repo", quick)
    with ScriptedOpenAI([wrong(1), GOOD, REVIEWED]) as server:
        crashed = _driver(repo, server.base_url, boundary)
        assert crashed.returncode == 9, crashed.stderr
        rerun = _driver(repo, server.base_url, None)
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads(rerun.stdout)["status"] == "fixed"
    assert len(server.requests) == 3  # no recorded model reply was asked for again
    evidence = json.loads((repo / ".fixbot" / "out" / "evidence.json").read_text())
    assert [a["verdict"] for a in evidence["attempts"]] == ["fail", "pass"]
    assert [r["verdict"] for r in evidence["reviews"]] == ["legitimate"]
    assert "return sum(values) / len(values)" in evidence["diff"]
    before = nodes_run(crashed.stderr)
    after = nodes_run(rerun.stderr)
    assert before[-1] == boundary and boundary not in after[:1]  # the finished node is not redone


SLOW_WRONG = reply_with(
    """--- a/calc.py
+++ b/calc.py
@@ -10,3 +10,4 @@
 def mean(values: list[float]) -> float:
     \"\"\"The arithmetic mean of a non-empty list.\"\"\"
-    return sum(values) / (len(values) + 1)
+    __import__("time").sleep(4)
+    return sum(values) / (len(values) + 2)
"""
)


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _sandboxed_pytest(owner: int) -> list[int]:
    """The sandbox user's pytest processes that descend from `owner` (its check in flight)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            uid = os.stat(entry.path).st_uid
            argv = Path(entry.path, "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        sandbox_user = uid == NOBODY or SANDBOX_GID < uid < SANDBOX_GID + 0x10000  # a leased uid
        if not sandbox_user or b"pytest" not in argv:
            continue
        pid = int(entry.name)
        while pid > 1 and pid != owner:
            pid = _parent(pid)
        if pid == owner:
            found.append(int(entry.name))
    return found


def _alive(pids: list[int]) -> list[int]:
    return [pid for pid in pids if Path(f"/proc/{pid}").exists()]


def test_killed_in_the_middle_of_a_sandbox_check_leaves_nothing_and_resumes(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": "gates: {lint: false, types: false}\n"})
    with ScriptedOpenAI([SLOW_WRONG, GOOD]) as server:
        first = fixbot(repo, server.base_url)
        try:
            deadline = time.monotonic() + 120
            while not (server.requests and _sandboxed_pytest(first.pid)):
                assert time.monotonic() < deadline, "the check never started"
                assert first.poll() is None, first.communicate()
                time.sleep(0.05)
            time.sleep(1)  # well inside the 4 s the candidate's tests take
            in_flight = _sandboxed_pytest(first.pid)
        finally:
            os.killpg(first.pid, signal.SIGKILL)
            _, first_err = first.communicate(timeout=30)
        assert "judge" not in nodes_run(first_err)  # the check was cut, never judged
        deadline = time.monotonic() + 10
        while _alive(in_flight) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert in_flight and _alive(in_flight) == []  # the sandbox died with its owner
        second = fixbot(repo, server.base_url)
        _, err = second.communicate(timeout=300)
    assert second.returncode == 0, err
    assert len(server.requests) == 2  # the recorded reply was not asked for again
    assert nodes_run(err)[0] == "check"  # the cut check runs again, from its checkpoint
    evidence = json.loads((repo / ".fixbot" / "out" / "evidence.json").read_text())
    assert [a["verdict"] for a in evidence["attempts"]] == ["fail", "pass"]
    dead = f" fixbot-scratch-{first.pid}-"
    assert not [m for m in Path("/proc/self/mountinfo").read_text().splitlines() if dead in m]


def _saved_candidates(repo: Path) -> int:
    """How many of a round's candidates have their result saved as the checkpoint's pending
    writes (the SQLite checkpointer's `writes` table, read while the run goes on)."""
    db = repo / ".fixbot" / "state.db"
    if not db.exists():
        return 0
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as con:
        try:
            # The input and `pick` write an empty pool; a candidate writes its result.
            rows = con.execute(
                "SELECT COUNT(*) FROM writes WHERE channel = 'candidates' AND length(value) > 8"
            )
        except sqlite3.OperationalError:  # not created yet
            return 0
        count: int = rows.fetchone()[0]
        return count


def test_killed_in_a_parallel_round_asks_again_only_what_had_not_finished(
    tmp_path: Path,
) -> None:
    # The round's candidate at 0.1 answers at once; those at 0.5 and 0.9 hang. fixbot is killed
    # once the first candidate's result is saved: the rerun asks again only for the two whose
    # branches had not finished, never for the saved one.
    config = (
        "gates: {lint: false, types: false}\n"
        "parallel: {candidates: 3, temperatures: [0.1, 0.5, 0.9]}\n"
        "stuck: {similarity: 1.0, stagnation_attempts: 50}\n"
    )
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": config})
    release = threading.Event()
    replies = {0.1: wrong(2), 0.5: GOOD, 0.9: wrong(3)}

    def answer(body: dict[str, Any]) -> str:
        temperature = body["temperature"]
        if temperature != 0.1:
            release.wait(120)
        return replies[temperature]

    with ScriptedOpenAI([wrong(1), *[answer] * 5]) as server:
        first = fixbot(repo, server.base_url)
        try:
            deadline = time.monotonic() + 120
            while _saved_candidates(repo) < 1:
                assert time.monotonic() < deadline, "no candidate's result was saved"
                assert first.poll() is None, first.communicate()
                time.sleep(0.05)
        finally:
            os.killpg(first.pid, signal.SIGKILL)
            first.communicate(timeout=30)
            release.set()
        asked = sorted(r.get("temperature", -1) for r in server.requests)
        assert asked == [0.0, 0.1, 0.5, 0.9]  # attempt 1 at 0 (sampling.temperatures)
        assert _saved_candidates(repo) == 1
        second = fixbot(repo, server.base_url)
        _, err = second.communicate(timeout=300)
    assert second.returncode == 0, err
    again = [r["temperature"] for r in server.requests[4:]]
    assert sorted(again) == [0.5, 0.9]  # the saved candidate's reply was not asked for again
    evidence = json.loads((repo / ".fixbot" / "out" / "evidence.json").read_text())
    assert [a["verdict"] for a in evidence["attempts"]] == ["fail", "fail", "fail", "pass"]
    assert [a["temperature"] for a in evidence["attempts"]] == [0.0, 0.1, 0.9, 0.5]
