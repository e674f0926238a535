"""The JSON-shaped records kept in checkpoints and evidence.json: pure types, no behaviour.

This is the persistence schema shared by the checks, the loop, the report and the publisher: a
change here is a checkpoint-compatibility change. Results are plain dicts (TypedDicts), so the
graph state stays serialisable and evidence.json is the same data.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NotRequired, TypedDict, get_args

# --- one check run ------------------------------------------------------------------------

TestOutcome = Literal["passed", "failed", "error", "skipped", "xfailed"]
FAILING: frozenset[str] = frozenset({"failed", "error"})
MESSAGE_CAP = 600
DETAIL_CAP = 4000
LOG_CAP = 4000
FINDINGS_KEPT = 50


class CaseResult(TypedDict):
    outcome: TestOutcome
    message: str  # the assertion or error message, capped
    detail: str  # head and tail of the traceback, capped


class Finding(TypedDict):
    tool: str  # "ruff" | "mypy"
    path: str
    line: int
    code: str
    message: str


CheckStatus = Literal[
    "passed",
    "tests_failed",
    "no_tests_collected",
    "no_report",  # pytest wrote no readable report (it crashed, or was made to exit early)
    "timeout",
    "memory_exceeded",
    "output_exceeded",
    "infra_error",  # the test command is missing: the environment, not the code
]
# The statuses under which per-test outcomes can be trusted and compared.
COMPLETED: frozenset[str] = frozenset({"passed", "tests_failed"})


class CheckResult(TypedDict):
    status: CheckStatus
    exit_code: int
    seconds: float
    tests: dict[str, CaseResult]
    findings: list[Finding]
    log_tail: str
    commands: list[str]
    log_ref: NotRequired[str]  # where the full result is on disk, once slimmed for the state


def failing_tests(result: CheckResult) -> list[str]:
    return sorted(t for t, r in result["tests"].items() if r["outcome"] in FAILING)


def slim(result: CheckResult, log_ref: str) -> CheckResult:
    """The result as an older attempt keeps it in the state: every failing test with its
    message (what stuck detection compares), no traceback, no passing test, no log tail; the
    full result is on disk at log_ref. Checkpoints then grow by a bounded amount per attempt."""
    return CheckResult(
        status=result["status"],
        exit_code=result["exit_code"],
        seconds=result["seconds"],
        tests={
            t: CaseResult(outcome=r["outcome"], message=r["message"], detail="")
            for t, r in result["tests"].items()
            if r["outcome"] != "passed"
        },
        findings=result["findings"][:FINDINGS_KEPT],
        log_tail="",
        commands=result["commands"],
        log_ref=log_ref,
    )


# --- one attempt ---------------------------------------------------------------------------

Verdict = Literal["none", "applied", "rejected", "pass", "fail", "over_budget"]
VERDICTS: frozenset[str] = frozenset(get_args(Verdict))
REPLY_CAP = 20_000


class Attempt(TypedDict):
    number: int
    model: str
    temperature: float | None  # what it was asked at; None: the provider's default
    round_size: int  # attempts asked at once with this one (parallel candidates); 1: alone
    reply: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float  # from the price table; 0 when the model has no price
    diff: str  # canonical diff of what was applied; "" when nothing applied
    verdict: Verdict
    problems: list[str]
    check: CheckResult | None
    # How it was asked ("whole_file": the complete file named; "diff"), and what became of
    # parts of its reply (a dropped edit of a protected test): both absent before fixbot 0.2.
    shape: NotRequired[str]
    notes: NotRequired[list[str]]


def round_firsts(attempts: Sequence[Attempt]) -> list[int]:
    """For each attempt, the number of the first attempt of its round (parallel candidates
    are recorded one after another, each with the round's size; alone, a round of one)."""
    firsts: list[int] = []
    first, left = 0, 0
    for attempt in attempts:
        if left <= 0:
            first, left = attempt["number"], int(attempt.get("round_size", 1))
        firsts.append(first)
        left -= 1
    return firsts


# --- one run -------------------------------------------------------------------------------

# Every status a run can end with (and "running" while it runs): the state, the result, the
# evidence, the exit code, the PR texts and the bench all use these words and no others.
RunStatus = Literal["running", "fixed", "already_passing", "escalated", "aborted", "error"]
RUN_STATUSES: frozenset[str] = frozenset(get_args(RunStatus))

# Why a run escalated, as data (the reason sentence is for humans; nothing parses it).
EscalationKind = Literal[
    "",  # not escalated
    "flaky",
    "environment",
    "stuck",
    "verification",
    "iterations",
    "budget",
]
ESCALATION_KINDS: frozenset[str] = frozenset(get_args(EscalationKind))


class StepNotRun(TypedDict):
    """A failed CI step (or a command in it) the Action did not run as a check, and why."""

    job: str
    step: str
    command: str  # "" when the step itself was not found or is not a command
    why: str


class FailedJob(TypedDict):
    """One failed CI job as the model is shown it (graph state: plain data)."""

    name: str
    conclusion: str
    failed_steps: list[str]
    log_tail: str  # "" when the log could not be read
