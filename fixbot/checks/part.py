"""One check's share of a run (a Part), and the whole run as one CheckResult.

Every kind of check ends as a Part: its record (CheckRun), its tests, its findings, its log. A
test run (pytest, unittest) brings its tests; any other check that is not a legacy gate is one
entry of its own in the run's tests, `check: NAME` (or `command: ARGV` for a command, as a
non-pytest test command always was), passed or failed, its findings or output as the message.
So the pass definition reads every check as it reads tests: a check that failed at baseline
must pass, one that passed must still pass. A legacy gate has no entry: only findings new since
the baseline block (verdict.py).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fixbot.commands import CheckSpec
from fixbot.proc import Completed
from fixbot.records import (
    COMPLETED,
    DETAIL_CAP,
    LOG_CAP,
    MESSAGE_CAP,
    CaseResult,
    CheckResult,
    CheckRun,
    CheckStatus,
    Finding,
)

TEST_KINDS = frozenset({"pytest", "unittest"})


@dataclass(frozen=True)
class Part:
    run: CheckRun
    tests: dict[str, CaseResult] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    log_tail: str = ""
    whole: bool = True  # False: a failing-first run restricted to some of its tests
    # A pytest run's report-channel facts (gates.HARNESS_KEYS): tampering, running, hung,
    # canaries; the whole run's result carries them (aggregate).
    harness: Mapping[str, Any] = field(default_factory=dict)


def entry_id(spec: CheckSpec) -> str:
    """The id of a check that is not a test run, among the run's tests."""
    if spec.kind == "command":
        return f"command: {shlex.join(spec.argv)}"
    return f"check: {spec.name}"


def entry_of(run: CheckRun) -> str:
    """The same id, from the check's record (a command's record names the command it ran)."""
    return f"command: {run['command']}" if run["kind"] == "command" else f"check: {run['name']}"


def record(
    spec: CheckSpec, status: CheckStatus, run: Completed | None, summary: str, command: str
) -> CheckRun:
    return CheckRun(
        name=spec.name,
        kind=spec.kind,
        gate=spec.gate,
        status=status,
        exit_code=run.returncode if run is not None else 0,
        seconds=round(run.seconds, 3) if run is not None else 0.0,
        summary=summary[:MESSAGE_CAP],
        command=command,
    )


def finding_part(
    spec: CheckSpec,
    status: CheckStatus,
    run: Completed,
    findings: list[Finding],
    summary: str,
    command: str,
) -> Part:
    """A ruff/mypy check's part: its findings (tagged with it), and for a check that is not a
    gate one entry, passed or failed, listing them."""
    tagged = [Finding(**f, check=spec.name) for f in findings]
    tests: dict[str, CaseResult] = {}
    if status in ("passed", "failed") and not spec.gate:
        lines = [f"{f['path']}:{f['line']}: {f['code']} {f['message']}" for f in findings]
        detail = "\n".join(lines)
        tests[entry_id(spec)] = CaseResult(
            outcome="passed" if status == "passed" else "failed",
            message=f"{spec.kind}: {summary}"[:MESSAGE_CAP],
            detail=detail if len(detail) <= DETAIL_CAP else detail[: DETAIL_CAP - 4] + "\n...",
        )
    return Part(record(spec, status, run, summary, command), tests, tagged, run.tail(LOG_CAP))


def summary_of(findings: Sequence[Finding]) -> str:
    if not findings:
        return "no findings"
    shown = "; ".join(f"{f['path']}:{f['line']} {f['code']} {f['message']}" for f in findings[:3])
    more = f"; and {len(findings) - 3} more" if len(findings) > 3 else ""
    return f"{len(findings)} finding{'s' if len(findings) != 1 else ''}: {shown}{more}"


def set_aside(parts: Sequence[Part]) -> tuple[list[Part], list[CheckRun]]:
    """A baseline's parts without its gates that did not complete, and those gates' records.
    A gate only guards against new findings: one whose tool cannot run on the untouched commit
    (mypy given no target, a configuration the tool refuses, a timeout) guards nothing, and is
    never a reason to stop before the model is asked. It is left out of the run (named in the
    report); a gate that completed at baseline must complete in every attempt."""
    kept = [p for p in parts if not p.run["gate"] or p.run["status"] in COMPLETED]
    return kept, [p.run for p in parts if p not in kept]


def without_set_aside(checks: Sequence[CheckSpec], baseline: CheckResult) -> list[CheckSpec]:
    """The run's checks less the gates its baseline set aside."""
    aside = {run["name"] for run in baseline.get("set_aside", [])}
    return [check for check in checks if not (check.gate and check.name in aside)]


def aggregate(parts: Sequence[Part], *, partial: bool = False) -> CheckResult:
    """The run as one result: every part's tests and findings together, the checks' records
    in order. Its status: the first check's that did not complete, else tests_failed when any
    check failed, else passed. The log tail: of that check, else of the last test run."""
    tests: dict[str, CaseResult] = {}
    for part in parts:
        for test, case in part.tests.items():
            if test not in tests or tests[test]["outcome"] == "passed":  # a clash keeps a failure
                tests[test] = case
    unfinished = [p for p in parts if p.run["status"] not in COMPLETED]
    failed = any(p.run["status"] in ("failed", "tests_failed") for p in parts)
    status: CheckStatus = (
        unfinished[0].run["status"] if unfinished else "tests_failed" if failed else "passed"
    )
    main = _told(parts, unfinished)
    result = CheckResult(
        status=status,
        exit_code=main.run["exit_code"] if main else 0,
        seconds=round(sum(p.run["seconds"] for p in parts), 3),
        tests=tests,
        findings=[f for p in parts for f in p.findings],
        log_tail=main.log_tail if main else "",
        commands=[p.run["command"] for p in parts],
        checks=[p.run for p in parts],
    )
    if partial:
        result["partial"] = True
    _carry_harness(result, parts)
    return result


def _carry_harness(result: CheckResult, parts: Sequence[Part]) -> None:
    """What the pytest runs said beyond their tests, on the whole result: every named
    disagreement, the test a timeout caught running (the first), the tests that hung, the
    canaries' outcomes (by role; by check and role when more than one pytest check ran), and
    where their modules came from."""
    tested = [p for p in parts if p.harness]
    tampering = [t for p in tested for t in p.harness.get("tampering", [])]
    if tampering:
        result["tampering"] = tampering
    running = [p.harness["running"] for p in tested if p.harness.get("running")]
    if running:
        result["running"] = running[0]
    hung = [t for p in tested for t in p.harness.get("hung", [])]
    if hung:
        result["hung"] = hung
    cut = [p.harness["cut_short"] for p in tested if p.harness.get("cut_short")]
    if cut:
        result["cut_short"] = "; ".join(cut)
    canaries: dict[str, str] = {}
    for part in tested:
        for role, outcome in part.harness.get("canaries", {}).items():
            key = role if len(tested) == 1 else f"{part.run['name']}:{role}"
            canaries[key] = outcome
    if canaries:
        result["canaries"] = canaries
    imports = {k: v for p in tested for k, v in p.harness.get("imports", {}).items()}
    if imports:
        result["imports"] = imports
    compiled = sorted({e for p in tested for e in p.harness.get("compiled", [])})
    if compiled:
        result["compiled"] = compiled


def _told(parts: Sequence[Part], unfinished: Sequence[Part]) -> Part | None:
    """The check whose exit status and log tail the run shows: the first that did not
    complete, else the last test run (the legacy test command), else the last check."""
    if unfinished:
        return unfinished[0]
    runs = [p for p in parts if p.run["kind"] in TEST_KINDS] or list(parts)
    return runs[-1] if runs else None
