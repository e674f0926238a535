"""The path a run took, as a Mermaid diagram in report.md and the PR body: golden, deterministic."""

from __future__ import annotations

from typing import Any

import pytest

from fixbot.records import Attempt, Review
from fixbot.report import FixResult, render_markdown
from fixbot.report.markdown import mermaid, run_path


def attempt(number: int, verdict: Any) -> Attempt:
    return Attempt(
        number=number,
        model="scripted-model",
        reply="",
        prompt_tokens=10,
        completion_tokens=5,
        diff="",
        verdict=verdict,
        problems=[],
        check=None,
    )


def review(number: int, verdict: Any, reason: str = "it fixes the count") -> Review:
    return Review(
        attempt=number,
        model="scripted-reviewer",
        verdict=verdict,
        reason=reason,
        reply="",
        prompt_tokens=300,
        completion_tokens=20,
        cost_usd=0.0,
    )


def diagram(result: FixResult) -> str:
    return "\n".join(mermaid(run_path(result)))


def test_fail_reject_escalate_answer_pass() -> None:
    result = FixResult(
        status="fixed",
        reason="attempt 3 passed",
        attempts=[attempt(1, "fail"), attempt(2, "rejected"), attempt(3, "pass")],
        escalated_at=[2],
        resumes=1,
    )
    assert diagram(result) == (
        "```mermaid\n"
        "flowchart LR\n"
        '  n0(["baseline"]) --> n1["generate 1"]\n'
        '  n1 --> n2["check 1: fail"]\n'
        '  n2 --> n3["reflect"]\n'
        '  n3 --> n4["generate 2"]\n'
        '  n4 --> n5["apply 2: rejected"]\n'
        '  n5 --> n6["escalate"]\n'
        '  n6 --> n7{{"await human: continue"}}\n'
        '  n7 --> n8["generate 3"]\n'
        '  n8 --> n9["check 3: pass"]\n'
        '  n9 --> n10["verify: pass"]\n'
        '  n10 --> n11(["finalize: fixed"])\n'
        "```"
    )


@pytest.mark.parametrize(
    ("result", "path"),
    [
        (
            FixResult(status="already_passing", reason=""),
            ["baseline", "already passing"],
        ),
        (
            FixResult(status="escalated", reason="flaky", escalated_at=[0]),
            ["baseline", "escalate", "await human"],
        ),
        (
            FixResult(status="aborted", reason="", attempts=[attempt(1, "fail")], escalated_at=[1]),
            [
                "baseline",
                "generate 1",
                "check 1: fail",
                "escalate",
                "await human: abort",
                "aborted",
            ],
        ),
        (
            # A pass that failed its verification on a clean copy escalates.
            FixResult(
                status="escalated", reason="", attempts=[attempt(1, "pass")], escalated_at=[1]
            ),
            ["baseline", "generate 1", "check 1: pass", "verify: fail", "escalate", "await human"],
        ),
        (
            FixResult(
                status="fixed",
                reason="",
                attempts=[attempt(1, "pass")],
                dropped_hunks=["calc.py\n@@ ..."],
            ),
            [
                "baseline",
                "generate 1",
                "check 1: pass",
                "verify: pass",
                "minimize: 1 dropped",
                "finalize: fixed",
            ],
        ),
        (
            # The reviewer found it legitimate: finalized.
            FixResult(
                status="fixed",
                reason="",
                attempts=[attempt(1, "pass")],
                reviews=[review(1, "legitimate")],
            ),
            [
                "baseline",
                "generate 1",
                "check 1: pass",
                "verify: pass",
                "review: legitimate",
                "finalize: fixed",
            ],
        ),
        (
            # The reviewer blocked a verified pass; after an answer, attempt 2 passed and the
            # reviewer gave no verdict, which blocks nothing.
            FixResult(
                status="fixed",
                reason="",
                attempts=[attempt(1, "pass"), attempt(2, "pass")],
                reviews=[review(1, "tampering"), review(2, "none")],
                escalated_at=[1],
                resumes=1,
            ),
            [
                "baseline",
                "generate 1",
                "check 1: pass",
                "verify: pass",
                "review: tampering",
                "escalate",
                "await human: continue",
                "generate 2",
                "check 2: pass",
                "verify: pass",
                "review: no verdict",
                "finalize: fixed",
            ],
        ),
        (FixResult(status="error", reason="no sandbox"), []),
    ],
)
def test_each_ending_has_its_path(result: FixResult, path: list[str]) -> None:
    assert [label for _, label in run_path(result)] == path


def test_the_report_shows_the_diagram_and_renders_the_same_twice() -> None:
    result = FixResult(
        status="escalated",
        reason="iterations: 2 of 2 attempts used",
        thread_id="fix-0123",
        attempts=[attempt(1, "fail"), attempt(2, "fail")],
        escalated_at=[2],
    )
    text = render_markdown(result)
    assert "### The path this run took" in text
    assert diagram(result) in text
    assert render_markdown(result) == text
    assert "```mermaid" not in render_markdown(FixResult(status="error", reason="x"))


def test_the_result_round_trips_with_its_escalations() -> None:
    result = FixResult(status="escalated", reason="", escalated_at=[0, 3])
    assert FixResult.from_json(result.to_json()).escalated_at == [0, 3]


def test_the_review_is_in_the_report_as_inert_text() -> None:
    said = "[click](http://evil.example) @maintainer #12 | `rm -rf`"
    result = FixResult(
        status="escalated",
        escalation="review",
        reason=f"review: scripted-reviewer judged attempt 1's verified diff tampering: {said}",
        attempts=[attempt(1, "pass")],
        reviews=[review(1, "tampering", said)],
        escalated_at=[1],
    )
    text = render_markdown(result)
    (row,) = [line for line in text.splitlines() if line.startswith("| 1 | scripted-reviewer")]
    assert row.startswith("| 1 | scripted-reviewer | tampering | ")
    assert row.endswith(" | 320 | $0.0000 |")
    # No link, no mention, no issue reference: the reviewer's words are shown as text.
    assert "\\[click\\](http:\u200b//" in row
    assert "@maintainer" not in row and "#12" not in row
    assert row.count(" | ") == 5  # the reason's `|` does not split the row
    assert "### Review" in text and FixResult.from_json(result.to_json()).reviews == result.reviews


GATE_RUN = {"kind": "ruff", "gate": True, "status": "passed", "summary": "0 findings"}
TESTS_RUN = {"name": "tests", "kind": "pytest", "gate": False, "status": "failed", "summary": "1"}


@pytest.mark.parametrize(
    ("config", "said"),
    [
        (
            {"checks": [], "gates": {"lint": "auto", "types": "auto"}},
            ["ruff gate ran", "mypy gate did not run"],
        ),
        (
            {"checks": [], "gates": {"lint": True, "types": False}},
            [],
        ),  # a choice: nothing to explain
        ({"checks": [{"name": "tests"}], "gates": {"lint": "auto", "types": "auto"}}, []),
    ],
)
def test_the_report_says_why_an_auto_gate_ran_or_not(
    config: dict[str, Any], said: list[str]
) -> None:
    baseline = {"checks": [{"name": "lint", **GATE_RUN}, TESTS_RUN], "tests": {}, "findings": []}
    report = render_markdown(
        FixResult(status="escalated", reason="r", config=config, baseline=baseline)
    )
    assert [line for line in ("ruff gate ran", "mypy gate did not run") if line in report] == said
    assert ("gate did not run" in report) == ("mypy gate did not run" in said)
