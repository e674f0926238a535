"""Parallel candidates (`parallel.candidates`): after the first failed attempt, a round of K
candidates at once through LangGraph's Send, each at its own temperature, each checked in its
own sandbox; the first pass wins and is verified; every candidate counts.

End to end through the real CLI, bubblewrap, and the openai SDK talking to a scripted server
that answers by the temperature it is asked at. A barrier in the server proves the round's
calls are in flight at the same time, without timing anything."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from fixbot import cli
from fixbot.report import FixResult
from fixbot.report.markdown import run_path
from tests.conftest import API_KEY, RunFixbot, docker_or_skip, make_repo
from tests.fake_openai import Fail, ScriptedOpenAI
from tests.fakes import GOOD, wrong

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

GATES_OFF = "gates: {lint: false, types: false}\nverification: {final_runs: 1}\n"
ROUND = "parallel: {candidates: 3, temperatures: [0.1, 0.5, 0.9]}\n"


def by_temperature(replies: dict[float | None, str], together: int = 0) -> Any:
    """A script entry answering by the request's temperature; with `together`, the candidates'
    calls (those with a temperature) wait until that many are in flight at once."""
    barrier = threading.Barrier(together) if together else None

    def answer(body: dict[str, Any]) -> str | Fail:
        temperature = body.get("temperature")
        if barrier is not None and temperature not in (None, 0.0):  # a round's candidate
            try:
                barrier.wait(timeout=60)
            except threading.BrokenBarrierError:
                return Fail(500, "the round's calls were not in flight together")
        return replies[temperature]

    return answer


@pytest.mark.parametrize("backend", ["bwrap", "docker"])
def test_a_round_runs_at_once_and_the_pass_wins(
    tmp_path: Path, run_fixbot: RunFixbot, backend: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if backend == "docker":
        docker_or_skip()
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": GATES_OFF + ROUND})
    answer = by_temperature({0.0: wrong(1), 0.1: wrong(2), 0.5: GOOD, 0.9: wrong(3)}, 3)
    with ScriptedOpenAI([answer] * 4) as server:
        run = run_fixbot(repo, "--json", "--sandbox", backend, base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert run.evidence["sandbox"].startswith({"bwrap": "bubblewrap"}.get(backend, backend))
    # One call alone first, then the round: three calls, each at its own temperature.
    assert server.requests[0].get("temperature") == 0.0  # sampling.temperatures[0]
    assert sorted(r["temperature"] for r in server.requests[1:]) == [0.1, 0.5, 0.9]
    evidence = run.evidence
    assert evidence["status"] == "fixed"
    attempts = evidence["attempts"]
    assert [a["number"] for a in attempts] == [1, 2, 3, 4]
    assert [a["round_size"] for a in attempts] == [1, 3, 3, 3]
    assert [a["verdict"] for a in attempts] == ["fail", "fail", "fail", "pass"]
    assert attempts[-1]["temperature"] == 0.5  # the winner is listed last, and verified
    assert evidence["reason"] == "attempt 4 passed and was verified on a clean copy"
    assert "return sum(values) / len(values)" in evidence["diff"]
    # Every candidate counts: each call's tokens are in its attempt, and in the total.
    assert all(a["prompt_tokens"] > 0 and a["completion_tokens"] > 0 for a in attempts)
    assert evidence["tokens"]["total"] == sum(
        a["prompt_tokens"] + a["completion_tokens"] for a in attempts
    )
    assert "(temperature 0.5)" in (run.out / "report.md").read_text()
    # `fixbot show` and `fixbot history` tell a candidate from an attempt asked alone.
    thread = evidence["thread_id"]
    capsys.readouterr()
    assert cli.main(["show", thread, str(repo), "--attempt", "4", "--log-format", "json"], {}) == 0
    shown = capsys.readouterr().out
    assert "attempt 4: pass by scripted-model at temperature 0.5, one of a round of 3" in shown
    assert cli.main(["history", thread, str(repo), "--json", "--log-format", "json"], {}) == 0
    rows = json.loads(capsys.readouterr().out)["attempts"]
    assert [(r["temperature"], r["round_size"]) for r in rows] == [
        (0.0, 1),
        (0.1, 3),
        (0.9, 3),
        (0.5, 3),
    ]
    # Live progress: each candidate as it finished, then the round's winner.
    lines = [json.loads(line) for line in run.stderr.splitlines() if line.startswith("{")]
    assert lines, run.stderr
    steps = [line for line in lines if line.get("node") in ("candidate", "pick")]
    assert sorted(line["slot"] for line in steps if line["node"] == "candidate") == [0, 1, 2]
    assert {line["outcome"] for line in steps if line["node"] == "candidate"} == {"applied"}
    assert [(line["attempt"], line["outcome"]) for line in steps if line["node"] == "pick"] == [
        (4, "pass")
    ]


def test_a_round_that_does_not_pass_counts_every_candidate(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    config = GATES_OFF + ROUND + "stuck: {similarity: 1.0, stagnation_attempts: 50}\n"
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": config})
    answer = by_temperature({0.0: wrong(1), 0.1: wrong(2), 0.5: wrong(3), 0.9: wrong(4)})
    with ScriptedOpenAI([answer] * 4) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 1, run.stderr
    assert len(server.requests) == 4  # max_iterations is 4: the round used the last three
    evidence = run.evidence
    assert evidence["reason"] == "iterations: 4 of 4 attempts used"
    assert [a["verdict"] for a in evidence["attempts"]] == ["fail"] * 4
    # The older attempts' full checks went to the log folder, one file each.
    logs = repo / ".fixbot" / "logs" / evidence["thread_id"]
    assert sorted(p.name for p in logs.iterdir()) == [f"attempt-{n}.json" for n in (1, 2, 3)]


def test_the_round_shrinks_to_the_attempts_left(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    config = GATES_OFF + ROUND + "max_iterations: 3\n"
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": config})
    answer = by_temperature({0.0: wrong(1), 0.1: wrong(2), 0.5: GOOD}, 2)
    with ScriptedOpenAI([answer] * 3) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert sorted(r.get("temperature", -1) for r in server.requests) == [0.0, 0.1, 0.5]
    assert [a["round_size"] for a in run.evidence["attempts"]] == [1, 2, 2]


def test_a_money_cap_that_pays_for_one_call_keeps_one_at_a_time(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    # Only replies cost, $100 per million tokens: a call's worst case (a 2,048-token reply) is
    # $0.2048. $0.35 pays for the first call and the worst case of one more, not of two.
    config = (
        GATES_OFF
        + ROUND
        + "budget: {cost_usd: 0.35}\nprices:\n  scripted-model: {prompt: 0, completion: 100}\n"
        + "sampling: {rewrite: false}\n"  # the retry at the second temperature
    )
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": config})
    with ScriptedOpenAI([wrong(1), GOOD]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert [r.get("temperature") for r in server.requests] == [0.0, 0.5]  # one at a time
    assert [a["round_size"] for a in run.evidence["attempts"]] == [1, 1]
    assert run.evidence["cost_usd"] <= 0.35


def test_the_path_draws_a_round_as_one_step() -> None:
    def attempt(number: int, verdict: str, size: int) -> dict[str, Any]:
        return {"number": number, "verdict": verdict, "round_size": size}

    rounds = [attempt(1, "fail", 1)]
    rounds += [attempt(n, "fail", 3) for n in (2, 3, 4)]
    rounds += [attempt(5, "rejected", 3), attempt(6, "fail", 3), attempt(7, "pass", 3)]
    result = FixResult(
        status="fixed",
        reason="",
        thread_id="t",
        attempts=rounds,  # type: ignore[arg-type]
    )
    assert [text for _, text in run_path(result)] == [
        "baseline",
        "generate 1",
        "check 1: fail",
        "reflect",
        "candidates 2-4 at once",
        "check 2: fail",
        "check 3: fail",
        "check 4: fail",
        "reflect",
        "candidates 5-7 at once",
        "apply 5: rejected",
        "check 6: fail",
        "check 7: pass",
        "verify: pass",
        "finalize: fixed",
    ]


def test_a_fork_starts_from_a_rounds_end_not_its_middle(
    tmp_path: Path, run_fixbot: RunFixbot, capsys: pytest.CaptureFixture[str]
) -> None:
    config = GATES_OFF + ROUND + "stuck: {similarity: 1.0, stagnation_attempts: 50}\n"
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": config})
    answer = by_temperature({0.0: wrong(1), 0.1: wrong(2), 0.5: wrong(3), 0.9: wrong(4)})
    with ScriptedOpenAI([answer] * 4) as server:
        first = run_fixbot(repo, base_url=server.base_url)
    assert first.code == 1
    thread = first.evidence["thread_id"]
    env = {"OPENAI_API_KEY": API_KEY, "FIXBOT_MODEL": "scripted-model"}
    argv = ["fork", thread, str(repo), "--sandbox", "bwrap", "--log-format", "json", "--json"]
    with ScriptedOpenAI([]) as server:
        env["OPENAI_BASE_URL"] = server.base_url
        capsys.readouterr()
        assert cli.main([*argv, "--from-attempt", "3"], env) == 2
        assert "fork from the round's end, attempt 4" in capsys.readouterr().err
        assert server.requests == []
    # From the round's end, with 2 more attempts: the next round has 2 candidates.
    answer = by_temperature({0.1: wrong(5), 0.5: GOOD}, 2)
    with ScriptedOpenAI([answer] * 2) as server:
        env["OPENAI_BASE_URL"] = server.base_url
        code = cli.main([*argv, "--from-attempt", "4", "--hint", "use len"], env)
        summary = json.loads(capsys.readouterr().out)
        assert sorted(r["temperature"] for r in server.requests) == [0.1, 0.5]
    assert code == 0, summary
    assert summary["status"] == "fixed"


def test_the_next_round_hears_how_every_candidate_failed(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    config = GATES_OFF + ROUND + "max_iterations: 7\n"
    config += "stuck: {similarity: 1.0, stagnation_attempts: 50}\n"
    config += "sampling: {rewrite: false}\n"  # every candidate a repair, with the feedback
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": config})
    first = by_temperature({0.0: wrong(1), 0.1: wrong(2), 0.5: wrong(3), 0.9: wrong(4)})
    second = by_temperature({0.1: wrong(5), 0.5: GOOD, 0.9: wrong(6)})
    with ScriptedOpenAI([first] * 4 + [second] * 3) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert [a["round_size"] for a in run.evidence["attempts"]] == [1, 3, 3, 3, 3, 3, 3]
    for request in server.requests[4:]:
        feedback = request["messages"][-1]["content"]
        assert "The other candidates asked at the same time failed too:" in feedback
        assert "- attempt 2: tests.test_calc::test_mean still failed" in feedback
        assert "- attempt 3: tests.test_calc::test_mean still failed" in feedback
        # calc.py is asked for whole, afresh: the feedback follows the task.
        assert "## The last attempt\n\nAttempt 4 did not pass" in feedback
