"""The pass definition, as a pure function of the baseline and one attempt's results.

The failing build is the set of checks that fail at baseline. A pass means all of: every check
ran to its end; every test that failed at baseline now passes (not skipped, not xfailed); no
test that passed at baseline fails or disappears; the collected test set did not shrink; no
legacy gate finding that was not already there at baseline. A check that is not a test run is
one entry among the tests (checks/part.py), so the same rules say: every check that failed now
passes, every check that passed still passes. A finding of a check that is not a gate counts
only through its check's entry: pre-existing findings never block a check green at baseline,
and a red check must end green. Gate findings are compared without line numbers, as a
multiset, so an edit that moves a pre-existing error does not make it new.

A failing-first result (`partial`: only the baseline's failing checks and tests ran) is never a
pass: it says why the attempt failed early. `reproduced` judges a re-run of the failing checks
and tests alone (a baseline's reproduction, a fix's further verification runs).

Code a run wrote and then ran (`compiled`: a module copied out of a data file at import, a
bytecode or extension file) was never screened: a pass needs none that the baseline's run did not
write the same (its tests' own generated code).

A run whose report disagreed with pytest's own (`tampered`) is never a pass, whatever its tests
say. The model is told only that, in one named line (TAMPERED): the disagreements themselves
stay in the evidence (`check.tampering`), so that the feedback does not teach what to avoid.

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
from collections.abc import Collection

from fixbot.checks.part import TEST_KINDS, entry_of
from fixbot.records import (
    COMPLETED,
    FAILING,
    CaseResult,
    CheckResult,
    CheckRun,
    Finding,
    failing_tests,
)


def _key(finding: Finding) -> tuple[str, str, str, str]:
    return (finding["tool"], finding["path"], finding["code"], finding["message"])


NOT_IN_FULL = "only the failing checks and tests ran (failing first); the rest did not"
WROTE_CODE = (
    "the run wrote code and then ran it (the diff must contain the code that runs: what is "
    "written while the tests run was never screened)"
)


def _gated(result: CheckResult, gates: set[str] | None) -> list[Finding]:
    """The findings of legacy gates (every finding, in a record older than per-check ones)."""
    if gates is None:
        return list(result["findings"])
    return [f for f in result["findings"] if f.get("check", "") in gates]


def _gates(baseline: CheckResult) -> set[str] | None:
    if "checks" not in baseline:
        return None
    return {run["name"] for run in baseline["checks"] if run["gate"]}


def new_findings(baseline: CheckResult, attempt: CheckResult) -> list[Finding]:
    """Gate findings of the attempt that were not there at baseline (as a multiset)."""
    gates = _gates(baseline)
    budget = Counter(_key(f) for f in _gated(baseline, gates))
    new = []
    for finding in _gated(attempt, gates):
        key = _key(finding)
        if budget[key] > 0:
            budget[key] -= 1
        else:
            new.append(finding)
    return new


TAMPERED = "the run's report was inconsistent with pytest's own; the attempt is refused"


def problems(baseline: CheckResult, attempt: CheckResult) -> list[str]:
    """Why the attempt is not a pass; an empty list is a pass."""
    if attempt["status"] not in COMPLETED:
        return unfinished(attempt)
    if attempt.get("partial"):
        return reproduced(baseline, attempt) or [NOT_IN_FULL]
    found: list[str] = not_run(baseline, attempt)
    tests = counted(baseline, attempt)
    for test in failing_tests(baseline):
        outcome = tests[test]["outcome"] if test in tests else "missing"
        if outcome != "passed":
            found.append(f"{test} still {outcome} (it must pass)")
    before = counted(baseline, baseline)
    gone = [t for t in sorted(set(before) - set(tests)) if before[t]["outcome"] not in FAILING]
    if gone and attempt.get("cut_short"):
        found.append(f"{len(gone)} tests that passed before did not run: {attempt['cut_short']}")
    else:
        found += [f"{test} is no longer collected (the test set must not shrink)" for test in gone]
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
    return found + written_code(baseline, attempt)


def written_code(baseline: CheckResult, result: CheckResult) -> list[str]:
    """Code a run wrote and then ran that the baseline's run did not write the same (a module,
    bytecode or extension file the diff does not contain: no screen read it), in one line."""
    new = sorted(set(result.get("compiled", [])) - set(baseline.get("compiled", [])))
    if not new:
        return []
    files = ", ".join(entry.rsplit(" ", 1)[0] for entry in new[:5])
    return [f"{WROTE_CODE}: {files}{' ...' if len(new) > 5 else ''}"]


def not_run(baseline: CheckResult, attempt: CheckResult) -> list[str]:
    """A full run runs every check its baseline ran. One missing is named: a gate above all,
    which has no test entry whose absence would show (a run that set it aside, or a root
    that judged with other checks than the baseline's)."""
    if "checks" not in baseline or "checks" not in attempt:
        return []  # records from before per-check results
    ran = {_same(run) for run in attempt["checks"]}
    missing = [run["name"] for run in baseline["checks"] if _same(run) not in ran]
    return [f"the check {name} did not run (it ran at baseline)" for name in missing]


def _same(run: CheckRun) -> tuple[str, str, bool]:
    """What makes a check the baseline's: its name, its kind, and whether it is a gate (not its
    command, which fixbot pins or rewrites between runs)."""
    return (run["name"], run["kind"], run["gate"])


def unfinished(result: CheckResult) -> list[str]:
    """Why a run did not complete: each check that did not, by name (a timeout naming the test
    that was running); a tampered run only in the one TAMPERED line."""
    runs = [run for run in result.get("checks", []) if run["status"] not in COMPLETED]
    if result["status"] == "tampered" or any(r["status"] == "tampered" for r in runs):
        return [TAMPERED]
    running = f" while {result['running']} was running" if result.get("running") else ""
    if not runs:
        status = result["status"]
        return [f"the test run did not complete: {status}{running if status == 'timeout' else ''}"]
    return [
        f"the check {r['name']} did not complete: {r['status']}"
        + (running if r["status"] == "timeout" else "")
        + f": {r['summary']}"
        for r in runs
    ]


def counted(baseline: CheckResult, result: CheckResult) -> dict[str, CaseResult]:
    """`result`'s tests that the pass definition counts: never the baseline's quarantine."""
    quarantined = baseline.get("quarantined", {})
    return {t: r for t, r in result["tests"].items() if t not in quarantined}


def reproduced(baseline: CheckResult, rerun: CheckResult) -> list[str]:
    """Why a re-run of the baseline's failing checks and tests does not show them passing: each
    check it ran must have run to its end, each of their baseline failures now passes, and
    nothing it ran that passed at baseline fails; the quarantine is left aside, as in problems."""
    if rerun["status"] not in COMPLETED:
        return unfinished(rerun)
    tests = counted(baseline, rerun)
    before = baseline["tests"]
    ran = {run["name"] for run in rerun["checks"]} if "checks" in rerun else None
    found = []
    for test in sorted(owned(baseline, ran)):
        outcome = tests[test]["outcome"] if test in tests else "missing"
        if outcome != "passed":
            found.append(f"{test} still {outcome} (it must pass)")
    for test, now in sorted(tests.items()):
        was = before[test]["outcome"] if test in before else "not collected"
        if now["outcome"] in FAILING and was not in FAILING:
            found.append(f"{test} was {was} before and now {now['outcome']}: {now['message']}")
    return found + written_code(baseline, rerun)


def owned(baseline: CheckResult, names: Collection[str] | None) -> set[str]:
    """The baseline's failing tests that belong to the checks named (None: every check)."""
    failing = set(failing_tests(baseline))
    if names is None or "checks" not in baseline:
        return failing
    ids: set[str] = set()
    for run in baseline["checks"]:
        if run["name"] in names:
            ids |= set(run.get("failing", [])) if run["kind"] in TEST_KINDS else {entry_of(run)}
    return ids & failing
