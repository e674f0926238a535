"""The cross-check: what the channel says, against pytest's exit status, its own tallies, the
terminal summary it printed, and fixbot's canaries. Each disagreement is named; any one of them
makes the run `tampered` (pure functions of the parsed report and the finished command)."""

from __future__ import annotations

import re
from typing import Any

from fixbot.checks.pytest.events import CATEGORIES, ChannelReport, number
from fixbot.proc import Completed
from fixbot.records import FAILING

_WORDS = r"[a-z]+(?: [a-z]+)*"
_SUMMARY = re.compile(
    rf"^=*\s*(?P<body>(?:\d+ {_WORDS})(?:, \d+ {_WORDS})*|no tests ran) in [\d.]+s"
    r"(?: \([\d:]+\))?\s*=*\s*$",
    re.MULTILINE,
)
# The words pytest's summary line pluralizes (terminal.pluralize): back to their stats keys.
_PLURALS = {"errors": "error", "warning": "warnings", "tests": "test"}
# The tallies the channel counts, report by report; pytest's stats hold others that no report
# makes (warnings, deselected), and plugins may add their own words.
_NOT_REPORTS = frozenset({"", "warnings", "deselected"})


def summary_counts(output: str) -> dict[str, int] | None:
    """The counts on pytest's last summary line (`1 failed, 2 passed, 1 warning, 3 subtests
    passed in 0.10s`), by pytest's stats key; None without one."""
    found = None
    for found in _SUMMARY.finditer(output):  # noqa: B007 - the last one is pytest's
        pass
    if found is None:
        return None
    counts: dict[str, int] = {}
    if found["body"] == "no tests ran":
        return counts
    for part in found["body"].split(", "):
        amount, _, words = part.partition(" ")
        key = _PLURALS.get(words, words)
        counts[key] = counts.get(key, 0) + int(amount)
    return counts


def canary_problems(report: ChannelReport, *, stopped: bool) -> list[str]:
    """fixbot's own checks, whose outcomes are known: a wrong one means the reporting lies."""
    problems = []
    ids = report.canaries
    if not ids:
        return ["the plugin never named its canaries"]
    repo_failed = any(
        r["outcome"] in FAILING for t, r in report.results.items() if t not in ids.values()
    )
    tag = ids["must_pass"].split("::")[0].removeprefix("fixbot_canary_")
    for role, nodeid in ids.items():
        if nodeid not in report.collected:
            problems.append(f"fixbot's canary {role} was not collected (it was removed)")
            continue
        result = report.results.get(nodeid)
        if result is None:
            if not (stopped and repo_failed):  # `-x` after a real failure never reaches them
                problems.append(f"fixbot's canary {role} never ran")
            continue
        want = report.must_fail if role == "must_fail" else "passed"
        if result["outcome"] != want:
            problems.append(
                f"fixbot's canary {role} was reported {result['outcome']} (it must be {want}): "
                f"{result['message'][:300]}"
            )
        elif role == "must_fail" and f"fixbot canary {tag}" not in result["message"]:
            problems.append(
                f"fixbot's canary must_fail ended with another message: {result['message'][:200]!r}"
            )
    return problems


def cross_check(report: ChannelReport, run: Completed) -> list[str]:
    """Every way the channel, the exit status, pytest's tallies and its terminal summary can
    disagree; each entry names what disagrees with what."""
    problems = list(report.problems)
    finish = report.finish
    if report.hung is not None or finish is None:
        return problems  # a cut-short run: what it said up to the cut was checked line by line
    stopped = (
        bool(finish.get("shouldstop") or finish.get("shouldfail")) or finish.get("exitstatus") == 2
    )
    missing = [t for t in report.collected if t not in report.results]
    if missing and not stopped:
        problems.append(
            f"{len(missing)} collected tests have no result, though the session ran to its "
            f"end: {', '.join(missing[:5])}"
        )
    stats = _counts(finish.get("stats"))
    for category in sorted((set(CATEGORIES) | set(report.categories)) - _NOT_REPORTS):
        said, counted = number(stats.get(category, 0)), report.categories.get(category, 0)
        if said != counted:
            problems.append(
                f"pytest's own tally says {said} {category} where the per-test results have "
                f"{counted}"
            )
    if not run.timed_out:  # killed by the whole command's timeout: its exit status says nothing
        problems += _exit_problems(report, finish, run)
    problems += _summary_problems(report, _counts(finish.get("shown", stats)), run.output)
    if report.integrity is None:
        problems.append("the plugin's check of pytest's machinery never reported")
    elif report.integrity:
        problems.append(
            "pytest's reporting machinery was modified during the run: "
            + "; ".join(report.integrity[:10])
        )
    problems += canary_problems(report, stopped=stopped)
    return problems


def _exit_problems(report: ChannelReport, finish: dict[str, Any], run: Completed) -> list[str]:
    problems = []
    status = finish.get("exitstatus")
    if run.returncode != status:
        problems.append(
            f"the test report disagrees with pytest's exit status: the session finished with "
            f"{status!r} and the process exited with {run.returncode}"
        )
    failing = any(r["outcome"] in FAILING for r in report.results.values())
    if status == 0 and failing:
        problems.append("the test report disagrees with pytest's exit status: 0, with failures")
    if status == 1 and not failing:
        problems.append("the test report disagrees with pytest's exit status: 1, no failure")
    if status not in (0, 1, 2):
        problems.append(f"pytest ended with exit status {status!r}")
    return problems


def _counts(found: object) -> dict[str, int]:
    """A tally the plugin sent (untrusted): key -> count, anything else dropped."""
    if not isinstance(found, dict):
        return {}
    return {str(k): number(v, 0) for k, v in found.items() if k}


def _summary_problems(report: ChannelReport, shown: dict[str, int], output: str) -> list[str]:
    hello = report.hello or {}
    if not hello.get("terminal") or number(hello.get("verbosity"), 0) < -1:
        return []  # -qq or no terminal reporter: pytest prints no summary line
    counts = summary_counts(output)
    if counts is None:
        return ["pytest's terminal summary line is missing from the output"]
    problems = []
    for key in sorted({*counts, *(k for k, v in shown.items() if v)}):
        printed, said = counts.get(key, 0), shown.get(key, 0)
        if printed != said:
            problems.append(
                f"the terminal summary says {printed} {key} where the report channel says {said}"
            )
    return problems
