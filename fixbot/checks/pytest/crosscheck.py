"""The cross-check: what the channel says, against pytest's exit status, its own tallies, the
terminal summary it printed, and fixbot's canaries. Each disagreement is named; any one of them
makes the run `tampered` (pure functions of the parsed report and the finished command)."""

from __future__ import annotations

import re
from typing import Any

from fixbot.checks.pytest.events import CATEGORIES, ChannelReport, canary_ids, number
from fixbot.proc import Completed
from fixbot.records import FAILING

_SUMMARY = re.compile(
    r"^=*\s*(?P<body>(?:\d+ [a-z]+)(?:, \d+ [a-z]+)*|no tests ran) in [\d.]+s"
    r"(?: \([\d:]+\))?\s*=*\s*$",
    re.MULTILINE,
)
_SUMMARY_WORDS = {"error": "error", "errors": "error", "deselected": "deselected"}


def summary_counts(output: str) -> dict[str, int] | None:
    """The counts on pytest's last `1 failed, 2 passed in 0.10s` line; None without one."""
    found = None
    for found in _SUMMARY.finditer(output):  # noqa: B007 - the last one is pytest's
        pass
    if found is None:
        return None
    counts: dict[str, int] = {}
    for amount, word in re.findall(r"(\d+) ([a-z]+)", found["body"]):
        key = _SUMMARY_WORDS.get(word, word)
        if key in CATEGORIES or key == "deselected":
            counts[key] = counts.get(key, 0) + int(amount)
    return counts


def canary_problems(report: ChannelReport, *, stopped: bool) -> list[str]:
    """fixbot's own checks, whose outcomes are known: a wrong one means the reporting lies."""
    problems = []
    ids = canary_ids(report.run)
    repo_failed = any(
        r["outcome"] in FAILING for t, r in report.results.items() if t not in ids.values()
    )
    for role, nodeid in ids.items():
        if nodeid not in report.collected:
            problems.append(f"fixbot's canary {role} was not collected (it was removed)")
            continue
        result = report.results.get(nodeid)
        if result is None:
            if not (stopped and repo_failed):  # `-x` after a real failure never reaches them
                problems.append(f"fixbot's canary {role} never ran")
            continue
        want = "failed" if role == "must_fail" else "passed"
        if result["outcome"] != want:
            problems.append(
                f"fixbot's canary {role} was reported {result['outcome']} (it must be {want}): "
                f"{result['message'][:300]}"
            )
        elif role == "must_fail" and f"fixbot canary {report.run}" not in result["message"]:
            problems.append(
                f"fixbot's canary must_fail failed with another message: "
                f"{result['message'][:200]!r}"
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
    found_stats = finish.get("stats")
    stats: dict[str, Any] = found_stats if isinstance(found_stats, dict) else {}
    for category in CATEGORIES:
        said, counted = number(stats.get(category, 0)), report.categories.get(category, 0)
        if said != counted:
            problems.append(
                f"pytest's own tally says {said} {category} where the per-test results have "
                f"{counted}"
            )
    failing_reports = report.categories["failed"] + report.categories["error"]
    if number(finish.get("testsfailed")) != failing_reports:
        problems.append(
            f"pytest counted {finish.get('testsfailed')!r} failures where the per-test results "
            f"have {failing_reports}"
        )
    problems += _exit_problems(report, finish, run)
    problems += _summary_problems(report, stats, run.output)
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


def _summary_problems(report: ChannelReport, stats: dict[str, Any], output: str) -> list[str]:
    hello = report.hello or {}
    if not hello.get("terminal") or number(hello.get("verbosity"), 0) < -1:
        return []  # -qq or no terminal reporter: pytest prints no summary line
    counts = summary_counts(output)
    if counts is None:
        return ["pytest's terminal summary line is missing from the output"]
    problems = []
    for key in (*CATEGORIES, "deselected"):
        printed, said = counts.get(key, 0), number(stats.get(key, 0))
        if printed != said:
            problems.append(
                f"the terminal summary says {printed} {key} where the report channel says {said}"
            )
    return problems
