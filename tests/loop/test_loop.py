"""The compiled graph in-process: a scripted Model, a played Sandbox over a temp tree and an
in-memory checkpointer. Every path the router can take, in seconds; the end-to-end suite runs
the same paths through the real CLI, sandbox and servers."""

from __future__ import annotations

import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from fixbot.config import Budget, Config, Gates, Verification
from fixbot.loop import Deps, build_graph, initial_state, recursion_limit
from fixbot.snapshot import Snapshot, protect, repo_files
from tests.conftest import EXAMPLE
from tests.fakes import GOOD, Outcomes, PlayedSandbox, ScriptedModel, reply, wrong

TESTS = ("tests.test_calc::test_add", "tests.test_calc::test_mean", "tests.test_calc::test_clamp")
CONFIG = Config(
    gates=Gates(lint=False, types=False),
    max_iterations=4,
    verification=Verification(baseline_runs=2, final_runs=2),
)


def outcomes(tree: Path) -> dict[str, str]:
    """test_mean passes once calc.mean divides by the count; the others always pass."""
    fixed = "return sum(values) / len(values)\n" in (tree / "calc.py").read_text()
    return {t: "passed" if fixed or not t.endswith("test_mean") else "failed" for t in TESTS}


def run(
    tmp_path: Path,
    replies: list[str],
    config: Config = CONFIG,
    *,
    played: Outcomes = outcomes,
    seconds_left: float | None = None,
) -> tuple[Any, Any, Any]:
    """(final state, the scripted model, the played sandbox) of one run to its end or pause;
    `seconds_left`: the wall clock the run starts with (default: the config's)."""
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLE, repo / "tree")
    snapshot = protect(
        Snapshot(repo=repo, commit="c" * 40, tree=repo / "tree", manifest={}),
        config.protected_paths,
    )
    model, sandbox = ScriptedModel(list(replies)), PlayedSandbox(played)
    deps = Deps(
        model=model,
        sandbox=sandbox,
        snapshot=snapshot,
        config=config,
        files=tuple(repo_files(snapshot)),
    )
    state = initial_state(
        thread_id="t",
        commit=snapshot.commit,
        manifest=snapshot.manifest,
        max_iterations=config.max_iterations,
        token_budget=config.budget.tokens,
        deadline=time.time()
        + (config.budget.wall_clock_seconds if seconds_left is None else seconds_left),
    )
    graph = build_graph(InMemorySaver())
    settings = {
        "configurable": {"thread_id": "t"},
        "recursion_limit": recursion_limit(config.max_iterations),
    }
    graph.invoke(state, settings, context=deps)
    return graph.get_state(settings).values, model, sandbox


def test_pass_at_the_first_attempt(tmp_path: Path) -> None:
    final, model, sandbox = run(tmp_path, [GOOD])
    assert final["status"] == "fixed" and final["escalation"] == ""
    assert [a["verdict"] for a in final["attempts"]] == ["pass"]
    assert len(model.asked) == 1
    assert "return sum(values) / len(values)" in final["final_diff"]
    # two baseline runs, the attempt, two verification runs: five test runs
    assert sum("pytest" in argv for argv in sandbox.runs) == 5
    assert final["verification"]["tests"]["tests.test_calc::test_mean"]["outcome"] == "passed"


def test_fail_then_pass_feeds_the_failure_back(tmp_path: Path) -> None:
    final, model, _ = run(tmp_path, [wrong(1), GOOD])
    assert final["status"] == "fixed"
    assert [a["verdict"] for a in final["attempts"]] == ["fail", "pass"]
    retry = model.asked[1]
    assert retry[-2] == {"role": "assistant", "content": wrong(1)}
    assert "tests.test_calc::test_mean still failed" in retry[-1]["content"]


def test_always_failing_escalates_after_exactly_max_iterations(tmp_path: Path) -> None:
    final, model, _ = run(tmp_path, [wrong(n) for n in range(1, 5)])
    assert final["status"] == "escalated" and final["escalation"] == "iterations"
    assert final["reason"] == "iterations: 4 of 4 attempts used"
    assert len(model.asked) == 4 and final["attempt"] == 4


def test_a_malformed_reply_is_rejected_and_the_next_one_runs(tmp_path: Path) -> None:
    final, model, sandbox = run(tmp_path, ["I would change the mean.", GOOD])
    first, second = final["attempts"]
    assert first["verdict"] == "rejected" and first["check"] is None
    assert "the reply contains no edit" in first["problems"][0]
    assert second["verdict"] == "pass" and final["status"] == "fixed"
    assert "the reply contains no edit" in model.asked[1][-1]["content"]
    assert sum("pytest" in argv for argv in sandbox.runs) == 5  # the rejected one never ran


def test_a_protected_path_is_refused_and_never_run(tmp_path: Path) -> None:
    edits_test = reply(
        "--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -8,2 +8,2 @@\n"
        " def test_mean() -> None:\n-    assert mean([1.0, 2.0, 3.0]) == 2.0\n+    assert True\n"
    )
    final, _, sandbox = run(tmp_path, [edits_test, GOOD])
    refused = final["attempts"][0]
    assert refused["verdict"] == "rejected"
    assert "protected path tests/test_calc.py" in refused["problems"][0]
    assert final["status"] == "fixed"
    assert sum("pytest" in argv for argv in sandbox.runs) == 5


def test_a_model_that_repeats_itself_escalates_as_stuck(tmp_path: Path) -> None:
    final, model, _ = run(tmp_path, [wrong(1)] * 4)
    assert final["status"] == "escalated" and final["escalation"] == "stuck"
    assert final["reason"].startswith("stuck: attempt 3 repeats attempt 2")
    assert len(model.asked) == 3  # before max_iterations


def test_a_model_that_gives_up_escalates_at_once(tmp_path: Path) -> None:
    final, model, _ = run(tmp_path, ["I cannot fix this without changing the tests."])
    assert final["escalation"] == "stuck" and len(model.asked) == 1


@pytest.mark.parametrize("tokens", [149, 150])
def test_the_token_budget_escalates_before_the_next_call(tmp_path: Path, tokens: int) -> None:
    # Each scripted call counts 150 tokens: a budget of 150 is spent by the first.
    config = replace(CONFIG, budget=Budget(tokens=tokens))
    final, model, _ = run(tmp_path, [wrong(1), GOOD], config)
    assert final["status"] == "escalated" and final["escalation"] == "budget"
    assert final["reason"] == f"budget: 150 of {tokens} tokens used"
    assert len(model.asked) == 1


def test_the_wall_clock_escalates_before_the_next_call(tmp_path: Path) -> None:
    final, model, _ = run(tmp_path, [GOOD], seconds_left=-1)
    assert final["status"] == "escalated" and final["escalation"] == "budget"
    assert final["reason"].startswith("budget: the wall clock")
    assert model.asked == [] and final["attempts"] == []


def test_a_passing_baseline_makes_no_call(tmp_path: Path) -> None:
    final, model, sandbox = run(tmp_path, [], played=lambda tree: dict.fromkeys(TESTS, "passed"))
    assert final["status"] == "already_passing" and model.asked == []
    assert sum("pytest" in argv for argv in sandbox.runs) == 1
