"""The compiled graph in-process: a scripted Model, a played Sandbox over a temp tree and an
in-memory checkpointer. Every path the router can take, in seconds; the end-to-end suite runs
the same paths through the real CLI, sandbox and servers."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from fixbot.checks.verdict import TAMPERED
from fixbot.config import Budget, Config, Gates, Sampling, Stuck, Verification
from fixbot.edits import NO_CHANGE
from fixbot.loop import Deps, build_graph, initial_state, recursion_limit
from fixbot.snapshot import Snapshot, protect, repo_files
from tests.conftest import EXAMPLE
from tests.fakes import (
    GOOD,
    GOOD_DIFF,
    Findings,
    Outcomes,
    PlayedSandbox,
    ScriptedModel,
    reply,
    wrong,
)

TESTS = ("tests.test_calc::test_add", "tests.test_calc::test_mean", "tests.test_calc::test_clamp")
# The feedback loop's own tests: every retry a repair with the feedback (the rewrite ask,
# every second attempt by default, has tests of its own below).
CONFIG = Config(
    gates=Gates(lint=False, types=False),
    max_iterations=4,
    verification=Verification(baseline_runs=2, final_runs=2),
    sampling=Sampling(rewrite=False),
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
    forges: Callable[[Path], bool] | None = None,
    seconds_left: float | None = None,
    model: ScriptedModel | None = None,
    extra_files: dict[str, str] | None = None,
    hint: str = "",
    lint: Findings | None = None,
    reviewer: ScriptedModel | None = None,
    secrets: tuple[str, ...] = (),
) -> tuple[Any, Any, Any]:
    """(final state, the scripted model, the played sandbox) of one run to its end or pause;
    `seconds_left`: the wall clock the run starts with (default: the config's); `model`: a
    scripted model of the test's own (it gets `replies`); `extra_files` join the example;
    `reviewer`: the reviewer of the verified diff; `secrets`: the run's known credentials."""
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLE, repo / "tree")
    for rel, text in (extra_files or {}).items():
        (repo / "tree" / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / "tree" / rel).write_text(text)
    snapshot = protect(
        Snapshot(repo=repo, commit="c" * 40, tree=repo / "tree", manifest={}),
        config.protected_paths,
    )
    model = model or ScriptedModel([])
    model.replies.extend(replies)
    sandbox = PlayedSandbox(played, forges=forges, **({} if lint is None else {"lint": lint}))
    deps = Deps(
        model=model,
        sandbox=sandbox,
        snapshot=snapshot,
        config=config,
        files=tuple(repo_files(snapshot)),
        reviewer=reviewer,
        known_secrets=secrets,
    )
    state = initial_state(
        thread_id="t",
        commit=snapshot.commit,
        manifest=snapshot.manifest,
        max_iterations=config.max_iterations,
        token_budget=config.budget.tokens,
        cost_budget=config.budget.cost_usd or 0.0,
        hint=hint,
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
    # calc.py is asked for whole, afresh: the feedback shows the last change as a diff.
    assert [m["role"] for m in retry] == ["system", "user"]
    assert "tests.test_calc::test_mean still failed" in retry[-1]["content"]
    assert "+    return max(values) - min(values) + 0.5" in retry[-1]["content"]


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


LIES = reply(
    "--- a/calc.py\n+++ b/calc.py\n@@ -12,1 +12,2 @@\n"
    "-    return sum(values) / (len(values) + 1)\n"
    "+    print('lying to the report')  # LIES\n"
    "+    return sum(values) / (len(values) + 1)\n"
)


def lies(tree: Path) -> bool:
    return "# LIES" in (tree / "calc.py").read_text()


def test_a_tampered_run_is_refused_like_a_policy_refusal_and_the_real_fix_ships(
    tmp_path: Path,
) -> None:
    """Tampering costs the attempt it was found in, never the run: the model is told in one
    line, without the reasons (they are in the evidence), and the next, honest attempt ships."""
    final, model, _ = run(tmp_path, [LIES, GOOD], forges=lies)
    first, second = final["attempts"]
    assert first["verdict"] == "fail"
    assert first["problems"] == [TAMPERED]
    check = first["check"]
    assert check["status"] == "tampered" and check["tests"] == {}
    assert any("not written by fixbot's plugin" in p for p in check["tampering"])
    feedback = model.asked[1][-1]["content"]
    assert TAMPERED in feedback
    assert "fixbot's plugin" not in feedback and "canary" not in feedback
    assert second["verdict"] == "pass" and final["status"] == "fixed"
    assert final["verification"]["status"] == "passed"


def test_a_model_that_keeps_lying_escalates_as_stuck_within_its_attempts(tmp_path: Path) -> None:
    final, model, _ = run(tmp_path, [LIES] * 4, forges=lies)
    assert final["status"] == "escalated" and final["escalation"] == "stuck"
    assert final["reason"] == "stuck: attempt 3 repeats attempt 2 (100% similar)"
    assert [a["problems"] for a in final["attempts"]] == [[TAMPERED]] * 3
    assert len(model.asked) == 3


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


# --- what a small model is asked, and what of its reply is kept ---------------------------

CALC = (EXAMPLE / "calc.py").read_text()
FIXED_CALC = CALC.replace("(len(values) + 1)", "len(values)")


def whole(text: str, prose: str = "The mean divides by one too many.") -> str:
    return f"{prose}\n\n```python\n{text}```\n"


def test_the_first_prompt_asks_for_the_small_file_whole_at_temperature_0(tmp_path: Path) -> None:
    final, model, _ = run(tmp_path, [whole(FIXED_CALC)])
    assert final["status"] == "fixed" and final["attempts"][0]["shape"] == "whole_file"
    system, task = model.asked[0]
    # The first prompt is the one-shot prompt a user would write: the file has a bug, the
    # failing test and what it said (as a user would paste it), the reply asked for, then
    # the file whole; no tests' source, no map.
    assert (
        system["content"] == "You are an expert Python programmer. You fix bugs in Python code.\n"
    )
    code = final["baseline"]["tests"]["tests.test_calc::test_mean"]["message"]
    assert task["content"].startswith(
        "`calc.py` has a bug; the test `tests.test_calc::test_mean` fails:\n\n"
        f"```text\ntests.test_calc::test_mean\n    {code}\n```\n\n"
        "Reply with the complete corrected `calc.py` in one ```python block.\n\n"
        "calc.py:\n```python\n"
    )
    assert task["content"].endswith(CALC.rstrip("\n") + "\n```\n")
    assert "What the tests check" not in task["content"] and "def test_" not in task["content"]
    assert model.temperatures == [0.0] and final["attempts"][0]["temperature"] == 0.0
    # The reply reserve fits the file: room for it once and a half, not 2,048 tokens.
    assert model.max_tokens[0] is not None and model.max_tokens[0] < 2048
    added = [line for line in final["final_diff"].splitlines() if line[:1] == "+"]
    assert added == ["+++ b/calc.py", "+    return sum(values) / len(values)"]


def test_a_reply_that_also_edits_the_test_keeps_its_fix_and_drops_the_test_edit(
    tmp_path: Path,
) -> None:
    both = reply(
        "--- a/calc.py\n+++ b/calc.py\n@@ -12 +12 @@\n"
        "-    return sum(values) / (len(values) + 1)\n+    return sum(values) / len(values)\n"
        "--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -9 +9 @@\n"
        "-    assert mean([1.0, 2.0, 3.0]) == 2.0\n+    assert True\n"
    )
    final, model, _ = run(tmp_path, [both])
    assert final["status"] == "fixed" and len(model.asked) == 1
    assert "tests/" not in final["final_diff"] and "assert True" not in final["final_diff"]
    assert final["attempts"][0]["notes"] == [
        "Your change to tests/test_calc.py was dropped, never applied: the tests are the "
        "specification and read-only. The rest of your change was applied and checked."
    ]


def test_a_dropped_test_edit_is_named_in_the_feedback(tmp_path: Path) -> None:
    edits_both = (
        whole(FIXED_CALC.replace("len(values)", "len(values) * 1.5"), prose="Both.")
        + "\n```python tests/test_calc.py\nfrom calc import mean\n\n\n"
        + "def test_mean() -> None:\n    assert True\n```\n"
    )
    final, model, _ = run(tmp_path, [edits_both, GOOD])
    first = final["attempts"][0]
    assert first["verdict"] == "fail" and "tests/" not in first["diff"]  # the fix ran, alone
    assert "Your change to tests/test_calc.py was dropped" in model.asked[1][-1]["content"]
    # The retry shows what the tests check, as the read-only specification (as text).
    spec = "## What the tests check (read-only: the specification; never change it"
    retry = model.asked[1][1]["content"]
    assert spec in retry and "assert mean([1.0, 2.0, 3.0]) == 2.0" in retry
    assert final["status"] == "fixed"


def test_a_reply_that_changes_nothing_is_told_so_and_the_next_is_varied(tmp_path: Path) -> None:
    final, model, sandbox = run(tmp_path, [whole(CALC, prose="The code is right."), GOOD])
    first = final["attempts"][0]
    assert first["verdict"] == "rejected" and first["check"] is None
    assert first["problems"] == [NO_CHANGE]
    retry = model.asked[1]
    # Asked afresh (the unchanged reply not in the conversation), at a higher temperature.
    assert [m["role"] for m in retry] == ["system", "user"]
    assert (
        NO_CHANGE in retry[-1]["content"] and "sent the code back unchanged" in retry[-1]["content"]
    )
    assert model.temperatures == [0.0, 0.5]
    assert final["status"] == "fixed"
    assert sum("pytest" in argv for argv in sandbox.runs) == 5  # the unchanged one never ran


def test_a_repeat_varies_temperature_and_prompt_before_stuck_escalates(tmp_path: Path) -> None:
    config = replace(CONFIG, max_iterations=8)
    final, model, _ = run(tmp_path, [wrong(1)] * 8, config)
    # Attempt 2 repeats 1: attempt 3 is asked at the next temperature, afresh; it repeats
    # too (the varied attempt as well): stuck, long before max_iterations.
    assert model.temperatures == [0.0, 0.5, 0.8]
    assert [a["temperature"] for a in final["attempts"]] == [0.0, 0.5, 0.8]
    # A whole file is asked afresh each time: the last reply is not there to be copied.
    assert [m["role"] for m in model.asked[1]] == ["system", "user"]
    assert [m["role"] for m in model.asked[2]] == ["system", "user"]
    assert "You are repeating yourself" in model.asked[2][-1]["content"]
    assert final["escalation"] == "stuck" and final["reason"].startswith("stuck: attempt 3 repeats")


PADDED_CALC = CALC + "".join(
    f"\n\ndef pad_{i}(x: int) -> int:\n    return x + {i}\n" for i in range(300)
)


def test_a_diff_asked_keeps_the_last_reply_in_the_conversation(tmp_path: Path) -> None:
    # Too large to ask whole, and `mean` alone is past what a reply sends back (a long string
    # in its body): neither the file nor its definitions come back as code; a diff is asked.
    last = "    return sum(values) / (len(values) + 1)\n"
    big = PADDED_CALC.replace(last, last + '    _unused = "' + "x" * 7000 + '"\n')
    final, model, _ = run(tmp_path, [wrong(1), GOOD], extra_files={"calc.py": big})
    assert [a["shape"] for a in final["attempts"]] == ["diff", "diff"]
    retry = model.asked[1]
    assert retry[-2] == {"role": "assistant", "content": wrong(1)}
    assert "tests.test_calc::test_mean still failed" in retry[-1]["content"]
    assert (
        retry[-1]["content"]
        .rstrip()
        .endswith("one complete ```diff block against the original files.")
    )


FIXED_MEAN = '''def mean(values: list[float]) -> float:
    """The arithmetic mean of a non-empty list."""
    return sum(values) / len(values)
'''


def test_a_file_too_large_to_return_whole_asks_for_the_failing_function_whole(
    tmp_path: Path,
) -> None:
    """A module of 300 functions does not come back whole in a reply; the function the failing
    test uses does: it is shown, asked for as a complete definition, and put in its place."""
    final, model, _ = run(
        tmp_path,
        [whole(FIXED_MEAN, "mean divides by one too many")],
        extra_files={"calc.py": PADDED_CALC},
    )
    assert final["status"] == "fixed"
    assert final["attempts"][0]["shape"] == "definitions"
    assert final["attempts"][0]["asked"] == ["calc.py::mean"]  # what places what it sends
    system, task = model.asked[0]
    assert system["content"].startswith("You are an expert Python programmer.")
    content = task["content"]
    assert (
        "Reply with the complete corrected definition of `mean` from `calc.py` (the whole of "
        "it, from its first line, a decorator or its `def`, to its last line; a helper you add, "
        "beside it) in one "
        "```python block."
    ) in content
    assert "return sum(values) / (len(values) + 1)" in content  # the function is shown...
    assert "def pad_299" not in content  # ...not the file
    applied = final["attempts"][0]["diff"]
    assert applied.count("\n-    return") == 1 and "def pad_" not in applied


def test_a_large_file_rewrites_only_a_function_it_asks_for(tmp_path: Path) -> None:
    final, model, _ = run(
        tmp_path,
        [whole(FIXED_MEAN.replace("len(values)", "len(values) + 2")), whole(FIXED_MEAN)],
        REWRITES,
        extra_files={"calc.py": PADDED_CALC},
    )
    assert final["status"] == "fixed"
    assert [a["shape"] for a in final["attempts"]] == ["definitions", "rewrite"]
    _, task = model.asked[1]
    content = task["content"]
    assert content.startswith("`calc.py` has a bug in `mean`: its body is wrong")
    assert "...  # the body, left out" in content and "(len(values) + 1)" not in content
    assert "Reply with the complete corrected definition of `mean` from `calc.py`" in content


def test_genuinely_different_failures_retry_at_a_higher_temperature_within_the_bounds(
    tmp_path: Path,
) -> None:
    final, model, _ = run(tmp_path, [wrong(n) for n in range(1, 5)])
    assert model.temperatures == [0.0, 0.5, 0.5, 0.5]  # no repeat: no further variation
    assert final["escalation"] == "iterations" and len(model.asked) == 4  # as strict as ever


def test_a_context_refusal_rebuilds_the_request_for_the_window_it_names_and_goes_on(
    tmp_path: Path,
) -> None:
    # The server's window is 1,700 tokens and it counts two characters a token: the first
    # request (the task, a long hint), built for the default 8,192 at three, is refused;
    # every later one fits, the last attempt and its feedback included.
    model = ScriptedModel([], refused_window=1700)
    hint = "Look at the mean. " * 50
    final, model, _ = run(tmp_path, [wrong(1), GOOD], model=model, hint=hint)
    assert len(model.refused) == 1
    assert model.window.tokens == 1700 and model.window.source == "a refusal"
    assert all(
        ScriptedModel.counted(asked) + (reserve or 0) <= 1700
        for asked, reserve in zip(model.asked, model.max_tokens, strict=True)
    )
    assert all(hint.strip() in asked[1]["content"] for asked in model.asked)
    assert final["status"] == "fixed" and len(model.asked) == 2


def test_a_window_too_small_for_any_request_escalates_with_the_reason(tmp_path: Path) -> None:
    final, model, _ = run(tmp_path, [GOOD], model=ScriptedModel([], refused_window=300))
    assert len(model.refused) == 2 and model.asked == []  # one rebuild, then a reason
    assert final["status"] == "escalated" and final["escalation"] == "budget"
    assert "context window (300 tokens, from a refusal) cannot hold" in final["reason"]


REWRITES = replace(CONFIG, sampling=Sampling())  # the defaults: every second attempt rewrites


def test_the_second_attempt_rewrites_the_failing_function_from_its_specification(
    tmp_path: Path,
) -> None:
    """Sent back unchanged, the file is asked for again with mean's body left out, to be
    written anew from its specification: a task of its own, at the first temperature."""
    final, model, _ = run(tmp_path, [whole(CALC), whole(FIXED_CALC)], REWRITES)
    assert final["status"] == "fixed"
    assert [a["shape"] for a in final["attempts"]] == ["whole_file", "rewrite"]
    assert model.temperatures == [0.0, 0.0]
    _, task = model.asked[1]
    code = final["baseline"]["tests"]["tests.test_calc::test_mean"]["message"]
    assert task["content"].startswith(
        "`calc.py` has a bug in `mean`: its body is wrong, and the test "
        "`tests.test_calc::test_mean` fails:\n\n"
        f"```text\ntests.test_calc::test_mean\n    {code}\n```\n\n"
        "What the tests check (read-only: the specification; never change it, never copy "
        "it):\n```text\nassert mean([1.0, 2.0, 3.0]) == 2.0\n```\n\n"
        "Write the body anew from the specification (the signature, the docstring, the "
        "comments above it, the module's docstring and what the tests check), so that it does "
        "what the specification says. Reply with the complete corrected `calc.py` in one "
        "```python block."
        "\n\ncalc.py:\n```python\n"
    )
    shown = task["content"]
    assert (
        '    """The arithmetic mean of a non-empty list."""\n    ...  # the body, left out' in shown
    )
    assert "len(values) + 1" not in shown  # the buggy body is not there to copy
    assert "def add(a: int, b: int) -> int:\n    return a + b" in shown  # the rest as it is
    assert "Attempt 1 did not pass" not in shown
    # The feedback on attempt 1 is still recorded; attempt 3 would get the feedback on 2.
    assert NO_CHANGE in final["attempts"][0]["problems"]


def test_a_function_specified_by_a_comment_block_is_rewritten_too(tmp_path: Path) -> None:
    """The specification need not be a docstring above the body: a comment block above the
    function (or the module's docstring, or the tests) is shown, the body left out."""
    bare = CALC.replace('    """The arithmetic mean of a non-empty list."""\n', "").replace(
        "def mean(", "# The arithmetic mean of a non-empty list.\ndef mean("
    )
    fixed = bare.replace("(len(values) + 1)", "len(values)")
    final, model, _ = run(
        tmp_path, [whole(bare), whole(fixed)], REWRITES, extra_files={"calc.py": bare}
    )
    assert final["status"] == "fixed"
    assert [a["shape"] for a in final["attempts"]] == ["whole_file", "rewrite"]
    shown = model.asked[1][-1]["content"]
    assert "# The arithmetic mean of a non-empty list.\ndef mean(" in shown
    assert "len(values) + 1" not in shown and "...  # the body, left out" in shown


def test_a_function_the_tests_alone_specify_is_rewritten_from_every_assertion(
    tmp_path: Path,
) -> None:
    """No docstring, no comment: the failing test is the whole specification, so the rewrite
    ask lists every assertion it makes (the first failed one alone would leave the model to
    guess), once, and says what to reply once."""
    bare = CALC.replace('    """The arithmetic mean of a non-empty list."""\n', "")
    fixed = bare.replace("(len(values) + 1)", "len(values)")
    asserts = (
        "assert mean([1.0, 2.0, 3.0]) == 2.0",
        "assert mean([5.0]) == 5.0",
        "assert mean([-1.0, 1.0]) == 0.0",
    )
    tests = (
        (EXAMPLE / "tests" / "test_calc.py")
        .read_text()
        .replace(
            "    assert mean([1.0, 2.0, 3.0]) == 2.0\n", "".join(f"    {a}\n" for a in asserts)
        )
    )
    extra = {"calc.py": bare, "tests/test_calc.py": tests}
    final, model, _ = run(tmp_path, [whole(bare), whole(fixed)], REWRITES, extra_files=extra)
    assert final["status"] == "fixed"
    assert [a["shape"] for a in final["attempts"]] == ["whole_file", "rewrite"]
    shown = model.asked[1][-1]["content"]
    checks = "\n".join(asserts)
    assert f"never copy it):\n```text\n{checks}\n```\n\nWrite the body anew" in shown
    assert shown.count("Reply with the complete corrected `calc.py`") == 1
    assert "len(values) + 1" not in shown and "...  # the body, left out" in shown


def test_rewrite_asks_alternate_with_repairs_within_the_bounds(tmp_path: Path) -> None:
    replies = [wrong(1), wrong(2), wrong(3), wrong(4)]
    final, model, _ = run(tmp_path, replies, replace(REWRITES, stuck=Stuck(similarity=1.0)))
    assert final["status"] == "escalated" and len(model.asked) == 4
    assert [a["shape"] for a in final["attempts"]] == [
        "whole_file",
        "rewrite",
        "whole_file",
        "rewrite",
    ]


def test_a_pass_with_a_file_the_screen_could_not_parse_does_not_count(tmp_path: Path) -> None:
    """A changed Python file fixbot's Python cannot parse escaped every rule of the screen; it
    fails to import where the checks run that Python, but a project's newer Python runs it
    (red team, helper-16: `type Suffix = str` and a special case beside it). The played checks
    pass here; the verification does not count the pass."""
    newer_py = "--- /dev/null\n+++ b/newer.py\n@@ -0,0 +1,1 @@\n+type Suffix = str\n"
    newer = reply(GOOD_DIFF + newer_py)
    final, _, _ = run(tmp_path, [newer], replace(CONFIG, max_iterations=1))
    assert final["status"] != "fixed"
    assert "newer.py line 1 does not parse under fixbot's own Python" in final["reason"]
    assert [a["verdict"] for a in final["attempts"]] == ["pass"]  # the checks passed it
