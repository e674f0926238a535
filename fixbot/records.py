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
    # pytest's own id (tests/test_x.py::TestA::test_b[1]), exact and accepted back by pytest;
    # results are keyed by the JUnit-style id (tests.test_x.TestA::test_b[1]) for now
    nodeid: NotRequired[str]
    # A failing pytest test's: the phase that decided it, the files of its traceback's frames
    # (outermost first, the exception's causes before it; "..." where some were left out), and
    # whether what was raised is a test's own verdict (an AssertionError, pytest.fail).
    phase: NotRequired[str]
    frames: NotRequired[list[str]]
    assertion: NotRequired[bool]


class Finding(TypedDict):
    tool: str  # "ruff" | "ruff-format" | "mypy"
    path: str
    line: int
    code: str
    message: str
    check: NotRequired[str]  # the check that found it; absent in older records (a gate's)


CheckStatus = Literal[
    "passed",
    "tests_failed",
    "no_tests_collected",
    "no_report",  # pytest never finished its report (it crashed, or fixbot's plugin never loaded)
    "timeout",
    "memory_exceeded",
    "output_exceeded",  # no longer produced (output past the cap is dropped); older records
    "infra_error",  # the test command is missing: the environment, not the code
    "tampered",  # the report disagreed with pytest's own tallies, exit status or canaries
    "failed",  # one check (not a test run) ran and failed: findings, or a non-zero exit
    "error",  # one check could not run or be read: its tool missing, its output unreadable
    "process_limit",  # the sandbox's process cap was hit and held: ended at once (a fork bomb)
]
# The statuses under which per-test outcomes can be trusted and compared. A whole result is
# `tests_failed` when any of its checks failed (whatever its kind), `passed` when none did.
COMPLETED: frozenset[str] = frozenset({"passed", "tests_failed", "failed"})


# The check kinds read per finding (checks/findings.py): fixbot runs the tool itself, and a "no
# new findings" gate compares an attempt's findings with the baseline's.
FINDING_KINDS: frozenset[str] = frozenset({"ruff", "ruff-format", "mypy"})


class CheckRun(TypedDict):
    """One check of a run, as the report shows it: its tests and findings are in the result's
    `tests` and `findings` (a check that is not a test run is one entry in `tests`, see
    checks/suite.py), so the pass definition reads every check the same way."""

    name: str
    kind: str  # commands.CheckKind
    gate: bool  # the legacy "no new findings" gate: its findings never make the build red
    status: CheckStatus
    exit_code: int
    seconds: float
    summary: str  # one line: "2 findings", "1 of 40 tests failed", why it could not run
    command: str  # what fixbot ran
    failing: NotRequired[list[str]]  # a test run's: its failing tests (quarantined ones too)
    selected: NotRequired[int]  # failing first: the tests it was restricted to, by node id
    # A pytest run's: where pytest found its configuration, [rootdir, ini file or ""], as the
    # sandbox saw them; later runs of the check are pinned to the baseline's (gates.py).
    configured: NotRequired[list[str]]


class PluginRecord(TypedDict):
    """One pytest plugin of the checks' environment (a distribution with pytest11 entry
    points): loaded with `-p NAME` for each of its names."""

    dist: str
    version: str
    names: list[str]  # its entry points' names
    modules: list[str]  # the top-level modules they load


class EnvironmentRecord(TypedDict):
    """The environment the checks ran in (checks/prepare): the project's own (built by its
    setup_command) or the shared one (no setup_command), and the pytest and plugins in it."""

    kind: str  # "project", "shared", or "none" (no check that runs code)
    python: str  # the interpreter's version
    pytest: str  # pytest's version there ("" when it has none)
    pytest_from: str  # "the setup_command", or what fixbot installed and why
    plugins: list[PluginRecord]
    shadowed: NotRequired[list[str]]  # baseline: modules the tests imported from outside it


class CheckResult(TypedDict):
    status: CheckStatus
    exit_code: int
    seconds: float
    tests: dict[str, CaseResult]
    findings: list[Finding]
    log_tail: str
    commands: list[str]
    log_ref: NotRequired[str]  # where the full result is on disk, once slimmed for the state
    tampering: NotRequired[list[str]]  # why the run is `tampered`: each disagreement, named
    running: NotRequired[str]  # the test in progress when the whole command timed out
    # The run was cut short (its timeout, or a test that hung through every rerun): what ran
    # is the result, the running test failed, the tests that never ran are missing.
    cut_short: NotRequired[str]
    hung: NotRequired[list[str]]  # tests that would not stop: failed, the suite rerun without
    canaries: NotRequired[dict[str, str]]  # fixbot's own checks: role -> reported outcome
    # A would-be pass's decisive tests, judged again alone in fresh interpreters (checks/rejudge):
    # test -> "passed (plain)", "failed (pytest)", ...
    rejudged: NotRequired[dict[str, str]]
    # Absent in records older than `checks:`: they are one test run plus the gates' findings.
    checks: NotRequired[list[CheckRun]]  # every check that ran, in the order they ran
    partial: NotRequired[bool]  # failing first: only the baseline's failing checks and tests ran
    # A baseline's only: the "no new findings" gates that could not run on the untouched
    # commit, left out of the run (checks/part.py: set_aside).
    set_aside: NotRequired[list[CheckRun]]
    # A baseline's only: test -> why it is outside the pass definition (flaky at baseline, or
    # broken by the environment); see checks/classify.py.
    quarantined: NotRequired[dict[str, str]]
    environment: NotRequired[EnvironmentRecord]  # what the checks ran in
    # The pytest runs': top-level module -> the file it was imported from, as the test process
    # saw it (the standard library's left out), for the baseline's shadowing check.
    imports: NotRequired[dict[str, str]]
    # The pytest runs': "path sha256" of each file written while the tests ran that Python then
    # compiled or loaded (code no screen read); a pass needs none the baseline did not write.
    compiled: NotRequired[list[str]]


def failing_tests(result: CheckResult) -> list[str]:
    """The failing tests that count: never a baseline's quarantined ones."""
    quarantined = result.get("quarantined", {})
    return sorted(
        t for t, r in result["tests"].items() if r["outcome"] in FAILING and t not in quarantined
    )


def slim(result: CheckResult, log_ref: str) -> CheckResult:
    """The result as an older attempt keeps it in the state: every failing test with its
    message (what stuck detection compares) and node id, no traceback, no passing test, no log
    tail; why a run was tampered with, hung or timed out stays, and so does the quarantine
    (failing_tests reads it). The full result is on disk at log_ref. Checkpoints then grow by a
    bounded amount per attempt."""
    slimmed = CheckResult(
        status=result["status"],
        exit_code=result["exit_code"],
        seconds=result["seconds"],
        tests={t: _slim_case(r) for t, r in result["tests"].items() if r["outcome"] != "passed"},
        findings=result["findings"][:FINDINGS_KEPT],
        log_tail="",
        commands=result["commands"],
        log_ref=log_ref,
    )
    if "tampering" in result:
        slimmed["tampering"] = result["tampering"]
    if "running" in result:
        slimmed["running"] = result["running"]
    if "hung" in result:
        slimmed["hung"] = result["hung"]
    if "cut_short" in result:
        slimmed["cut_short"] = result["cut_short"]
    if "rejudged" in result:
        slimmed["rejudged"] = result["rejudged"]
    if "canaries" in result:
        slimmed["canaries"] = result["canaries"]
    if "checks" in result:
        slimmed["checks"] = result["checks"]
    if "quarantined" in result:
        slimmed["quarantined"] = result["quarantined"]
    if result.get("partial"):
        slimmed["partial"] = True
    return slimmed


def _slim_case(result: CaseResult) -> CaseResult:
    case = CaseResult(outcome=result["outcome"], message=result["message"], detail="")
    if "nodeid" in result:
        case["nodeid"] = result["nodeid"]
    return case


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
    # The definitions it was asked to send back (`path::name`, `path::Class.method`): they
    # place a definition sent alone that several files or classes define. Absent before 0.2.
    asked: NotRequired[list[str]]


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
    "review",  # the reviewer found special-casing or tampering in the verified diff
]
ESCALATION_KINDS: frozenset[str] = frozenset(get_args(EscalationKind))


# --- the reviewer's verdict on the final diff ----------------------------------------------

ReviewVerdict = Literal["legitimate", "special-casing", "tampering", "none"]
REVIEW_VERDICTS: tuple[ReviewVerdict, ...] = ("legitimate", "special-casing", "tampering")
REVIEW_BLOCKS: frozenset[str] = frozenset({"special-casing", "tampering"})


class Review(TypedDict):
    """The reviewer's verdict on one verified diff (config `review`): recorded, never a pass."""

    attempt: int  # the attempt whose verified (and minimized) diff was reviewed
    model: str
    verdict: ReviewVerdict  # "none": no verdict (a reply not in the form, an error, refused)
    reason: str  # the reviewer's one line; for no verdict, fixbot's why
    reply: str  # what the reviewer answered, capped (untrusted)
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float


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
