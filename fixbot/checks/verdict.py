"""The pass definition, as a pure function of the baseline and one attempt's results.

A pass means all of: every test that failed at baseline now passes (not skipped, not xfailed);
no test that passed at baseline fails or disappears; the collected test set did not shrink; no
ruff or mypy finding that was not already there at baseline. Findings are compared without line
numbers, as a multiset, so an edit that moves a pre-existing error does not make it new.

A baseline's quarantined tests (`baseline["quarantined"]`: flaky across the baseline runs, or
broken by the environment; checks/classify.py) are outside all of it: whatever they do in an
attempt (pass, fail, vanish) neither makes nor breaks a pass, so a candidate earns nothing by
them. Quarantine is decided only from runs of the untouched commit. A test that passed in every
baseline run and fails after a candidate is a regression of that candidate, even if it is
nondeterministic: the candidate's code ran, and a re-run that passes would not show that it did
not cause the failure (it may have made the test flaky). No re-run, no quarantine on sight.
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


def problems(baseline: CheckResult, attempt: CheckResult) -> list[str]:
    """Why the attempt is not a pass; an empty list is a pass."""
    if attempt["status"] not in COMPLETED:
        return [f"the test run did not complete: {attempt['status']}"]
    found: list[str] = []
    quarantined = baseline.get("quarantined", {})
    tests = {t: r for t, r in attempt["tests"].items() if t not in quarantined}
    for test in failing_tests(baseline):
        outcome = tests[test]["outcome"] if test in tests else "missing"
        if outcome != "passed":
            found.append(f"{test} still {outcome} (it must pass)")
    before = {t: r for t, r in baseline["tests"].items() if t not in quarantined}
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
