"""The pass definition, as a pure function of the baseline and one attempt's results.

A pass means all of: every test that failed at baseline now passes (not skipped, not xfailed);
no test that passed at baseline fails or disappears; the collected test set did not shrink; no
ruff or mypy finding that was not already there at baseline. Findings are compared without line
numbers, as a multiset, so an edit that moves a pre-existing error does not make it new.

A run whose report disagreed with pytest's own (`tampered`) is never a pass, whatever its tests
say. The model is told only that, in one named line (TAMPERED): the disagreements themselves
stay in the evidence (`check.tampering`), so that the feedback does not teach what to avoid.
"""

from __future__ import annotations

from collections import Counter

from fixbot.records import COMPLETED, FAILING, CheckResult, Finding, failing_tests


def _key(finding: Finding) -> tuple[str, str, str, str]:
    return (finding["tool"], finding["path"], finding["code"], finding["message"])


def new_findings(baseline: CheckResult, attempt: CheckResult) -> list[Finding]:
    budget = Counter(_key(f) for f in baseline["findings"])
    new = []
    for finding in attempt["findings"]:
        key = _key(finding)
        if budget[key] > 0:
            budget[key] -= 1
        else:
            new.append(finding)
    return new


TAMPERED = "the run's report was inconsistent with pytest's own; the attempt is refused"


def problems(baseline: CheckResult, attempt: CheckResult) -> list[str]:
    """Why the attempt is not a pass; an empty list is a pass."""
    status = attempt["status"]
    if status == "tampered":
        return [TAMPERED]
    if status == "timeout" and attempt.get("running"):
        return [f"the test run did not complete: timeout while {attempt['running']} was running"]
    if status not in COMPLETED:
        return [f"the test run did not complete: {status}"]
    found: list[str] = []
    tests = attempt["tests"]
    for test in failing_tests(baseline):
        outcome = tests[test]["outcome"] if test in tests else "missing"
        if outcome != "passed":
            found.append(f"{test} still {outcome} (it must pass)")
    before = baseline["tests"]
    for test in sorted(set(before) - set(tests)):
        if before[test]["outcome"] not in FAILING:
            found.append(f"{test} is no longer collected (the test set must not shrink)")
    for test, now in sorted(tests.items()):
        was = before[test]["outcome"] if test in before else "not collected"
        if now["outcome"] in FAILING and was not in FAILING:
            found.append(f"{test} was {was} before and now {now['outcome']}: {now['message']}")
        elif was == "passed" and now["outcome"] in ("skipped", "xfailed"):
            found.append(f"{test} passed before and is now {now['outcome']} (skips hide failures)")
    for finding in new_findings(baseline, attempt):
        found.append(
            f"new {finding['tool']} error {finding['path']}:{finding['line']}: "
            f"{finding['message']} [{finding['code']}]"
        )
    return found
