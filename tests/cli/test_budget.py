"""Money: a price table, per-attempt and total cost in the evidence, a cap never overspent;
and the strong model after N failed attempts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fixbot.config import Config, Price
from fixbot.loop import unpriced
from fixbot.loop.budget import dollars, price_for
from tests.conftest import RunFixbot, make_repo
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import GOOD, wrong

BWRAP = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
GATES_OFF = "gates: {lint: false, types: false}\nverification: {final_runs: 1}\n"


def test_prices_are_found_by_name_then_by_the_longest_prefix() -> None:
    prices = {"gpt-4o": Price(2.5, 10.0), "gpt-4o-mini": Price(0.15, 0.6)}
    assert price_for(prices, "gpt-4o-mini-2024-07-18") == Price(0.15, 0.6)
    assert price_for(prices, "unknown", "gpt-4o") == Price(2.5, 10.0)
    assert price_for(prices, "claude") is None
    assert dollars(Price(2.0, 8.0), 1_000_000, 500_000) == pytest.approx(6.0)
    assert dollars(None, 10, 10) == 0.0
    capped = Config(budget=Config().budget.__class__(cost_usd=1.0), prices=prices)
    assert unpriced(capped, ["gpt-4o-mini", "claude", None]) == ["claude"]
    assert unpriced(Config(), ["claude"]) == []  # no cap: no price needed


@BWRAP
def test_cost_per_attempt_and_in_total(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    config = GATES_OFF + "prices:\n  scripted-model: {prompt: 2.0, completion: 8.0}\n"
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": config})
    with ScriptedOpenAI([wrong(1), GOOD]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 0, run.stderr
    attempts = run.evidence["attempts"]
    for a in attempts:
        assert a["cost_usd"] == pytest.approx(
            (a["prompt_tokens"] * 2.0 + a["completion_tokens"] * 8.0) / 1e6
        )
    assert run.evidence["cost_usd"] == pytest.approx(sum(a["cost_usd"] for a in attempts))
    assert run.evidence["cost_usd"] > 0
    assert "estimated cost $" in (run.out / "report.md").read_text()


@BWRAP
def test_a_call_that_could_overspend_is_never_made(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    # $1 per thousand tokens: the reply calc.py whole may take (about 600 tokens) alone may
    # cost more than the $0.25 cap.
    config = (
        GATES_OFF
        + "budget: {cost_usd: 0.25}\nprices:\n  scripted-model: {prompt: 1000, completion: 1000}\n"
    )
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": config})
    with ScriptedOpenAI([GOOD]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 1, run.stderr
    assert server.requests == []
    assert run.evidence["status"] == "escalated"
    assert run.evidence["escalation"] == "budget"
    assert run.evidence["reason"].startswith("budget: the next call could cost up to $")


@BWRAP
def test_the_cap_stops_the_loop_before_it_is_exceeded(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    cap = 0.02  # at $10 per million tokens, a few calls fit, not ten
    config = (
        GATES_OFF
        + f"max_iterations: 10\nbudget: {{cost_usd: {cap}}}\n"
        + "stuck: {similarity: 1.0, stagnation_attempts: 50}\n"
        + "prices:\n  scripted-model: {prompt: 10.0, completion: 10.0}\n"
    )
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": config})
    with ScriptedOpenAI([wrong(n) for n in range(1, 11)]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 1
    assert run.evidence["escalation"] == "budget"
    assert 0 < len(server.requests) < 10
    assert run.evidence["cost_usd"] <= cap


@BWRAP
def test_a_cap_without_a_price_is_a_usage_error(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": GATES_OFF + "budget: {cost_usd: 5}\n"})
    with ScriptedOpenAI([GOOD]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 2
    assert server.requests == []
    assert "needs a price for scripted-model" in run.stderr


@BWRAP
def test_the_strong_model_takes_over_after_n_failures(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    config = GATES_OFF + "strong_model: strong-scripted\nstrong_after: 1\n"
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": config})
    with ScriptedOpenAI([wrong(1), GOOD]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert [r["model"] for r in server.requests] == ["scripted-model", "strong-scripted"]
    assert [a["model"] for a in run.evidence["attempts"]] == ["scripted-model", "strong-scripted"]


@BWRAP
def test_reflection_adds_a_diagnosis_call_that_is_counted(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    config = (
        GATES_OFF + "reflection: true\nprices:\n  scripted-model: {prompt: 1.0, completion: 1.0}\n"
    )
    config += "sampling: {rewrite: false}\n"  # the retry is a repair, with the diagnosis
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": config})
    diagnosis = "The mean divides by len(values) + 1; it must divide by len(values)."
    with ScriptedOpenAI([wrong(1), diagnosis, GOOD]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert len(server.requests) == 3
    assert "without any code or diff" in server.requests[1]["messages"][-1]["content"]
    retry = server.requests[2]["messages"][-1]["content"]
    assert "A diagnosis of why it failed" in retry and diagnosis in retry
    # The diagnosis is short prose (the feedback keeps 1,500 characters): it asks for less
    # than the attempts, which ask for calc.py whole (a reserve sized to the file).
    reserves = [body["max_tokens"] for body in server.requests]
    assert reserves[1] == 512 and reserves[0] == reserves[2] > 512
    evidence = run.evidence
    per_call = [
        sum(len(str(m["content"]).split()) for m in body["messages"]) for body in server.requests
    ]
    assert evidence["tokens"]["prompt"] == sum(per_call)  # the diagnosis call is counted
    assert evidence["attempts"][0]["prompt_tokens"] == per_call[0] + per_call[1]


@BWRAP
def test_without_reflection_there_is_no_diagnosis_call(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": GATES_OFF})
    with ScriptedOpenAI([wrong(1), GOOD]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0 and len(server.requests) == 2
    assert "A diagnosis of why it failed" not in server.requests[1]["messages"][-1]["content"]


@BWRAP
def test_an_answer_grows_the_money_cap_by_its_capped_amount(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    config = (
        GATES_OFF
        + "budget: {cost_usd: 0.25}\nresume: {extra_cost_usd: 20.0}\n"
        + "prices:\n  scripted-model: {prompt: 1000, completion: 1000}\n"
    )
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": config})
    with ScriptedOpenAI([GOOD]) as server:
        first = run_fixbot(repo, base_url=server.base_url)
        assert first.code == 1 and server.requests == []
        thread = first.evidence["thread_id"]
        answered = run_fixbot(
            repo,
            "--hint",
            "divide by len",
            base_url=server.base_url,
            command="resume",
            thread=thread,
        )
    assert answered.code == 0, answered.stderr
    assert len(server.requests) == 1 and answered.evidence["status"] == "fixed"


@BWRAP
def test_the_wall_clock_ends_a_hanging_model_call_with_an_escalation(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    import threading
    import time

    release = threading.Event()

    def hang(body: dict[str, object]) -> str:
        release.wait(60)
        return GOOD

    config = "gates: {lint: false, types: false}\nbudget: {wall_clock_seconds: 6}\n"
    config += "verification: {baseline_runs: 1, final_runs: 1}\n"
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": config})
    start = time.monotonic()
    with ScriptedOpenAI([hang, hang, hang, hang, hang]) as server:
        try:
            run = run_fixbot(repo, "--json", base_url=server.base_url)
        finally:
            release.set()
    assert time.monotonic() - start < 30
    assert run.code == 1, run.stderr
    assert run.evidence["status"] == "escalated"
    assert run.evidence["escalation"] == "budget"
    assert run.evidence["reason"].startswith("budget: the wall clock")
