"""Which tests decide `fixed`, and what the second judgement does to a would-be pass."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from fixbot.checks.rejudge.judge import Judgement, disagreements, sample
from fixbot.checks.selection import node_id
from fixbot.commands import CheckSpec
from fixbot.records import CheckResult, failing_tests

TAMPERING_KEPT = 20
# (a check, its decisive tests as (result id, node id)) -> their second judgements
Judge = Callable[[CheckSpec, Sequence[tuple[str, str]]], list[Judgement]]


def rejudged(
    baseline: CheckResult,
    result: CheckResult,
    checks: Sequence[CheckSpec],
    exists: Callable[[str], bool],
    judge: Judge,
) -> CheckResult:
    """A would-be pass with its decisive tests (the baseline's failing pytest and unittest
    tests) judged again, each alone; a disagreement that holds on a second try makes it
    `tampered`, each named. `rejudged` records every verdict."""
    judged: dict[str, str] = {}
    disagreed: list[str] = []
    for spec, decisive in _decisive(baseline, result, checks, exists):
        found = judge(spec, decisive)
        nodeids = dict(decisive)
        again = [(j.test, nodeids[j.test]) for j in found if j.verdict != "passed"]
        if again:  # once more, before a disagreement counts
            retried = {j.test: j for j in judge(spec, again)}
            found = [retried.get(j.test, j) for j in found]
        judged.update({j.test: j.shown() for j in found})
        tests = result["tests"]
        first = {t: tests[t]["outcome"] if t in tests else "missing" for t, _ in decisive}
        disagreed += disagreements(first, found)
    if not judged:
        return result
    out = CheckResult(**result)
    out["rejudged"] = judged
    if disagreed:
        out["status"] = "tampered"
        out["tampering"] = [*result.get("tampering", []), *disagreed][:TAMPERING_KEPT]
    return out


def _decisive(
    baseline: CheckResult,
    result: CheckResult,
    checks: Sequence[CheckSpec],
    exists: Callable[[str], bool],
) -> Iterator[tuple[CheckSpec, list[tuple[str, str]]]]:
    """Per pytest or unittest check, its decisive tests as (result id, pytest node id): the
    baseline's failing ones (a random sample past judge.MAX_JUDGED), each by the node id the
    untouched commit's run recorded, never one the attempt's own report gave (a forged report
    could name another test, in a file of its own, under the same id)."""
    specs = {spec.name: spec for spec in checks if spec.kind in ("pytest", "unittest")}
    failing = set(failing_tests(baseline))
    for run in baseline.get("checks", []):
        spec = specs.get(run["name"])
        if spec is None:
            continue
        tests = [t for t in run.get("failing", []) if t in failing and t in baseline["tests"]]
        pairs = []
        for test in sample(tests):
            nodeid = node_id(test, baseline["tests"][test], exists)
            if nodeid is not None:
                pairs.append((test, nodeid))
        if pairs:
            yield spec, pairs


# A candidate's passed second judgements, by (the candidate, the check, its decisive tests): a
# later trial of the same diff (the verification's clean copies) takes them as they are.
_PASSED: dict[tuple[str, ...], list[Judgement]] = {}
_KEPT = 256


def once_passed(candidate: tuple[str, ...], judge: Judge) -> Judge:
    """`judge`, whose verdicts for one candidate are kept when every test passed: the same diff
    is judged a second time once per process, not once per trial; any other verdict (a
    disagreement, and its retry) is judged afresh each time."""

    def judged(spec: CheckSpec, decisive: Sequence[tuple[str, str]]) -> list[Judgement]:
        key = (*candidate, spec.name, *(f"{test}\0{node}" for test, node in decisive))
        if key in _PASSED:
            return _PASSED[key]
        found = judge(spec, decisive)
        if found and all(j.verdict == "passed" for j in found):
            if len(_PASSED) >= _KEPT:
                _PASSED.clear()
            _PASSED[key] = found
        return found

    return judged
