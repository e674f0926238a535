"""What the report channel's lines say, read in order as untrusted input.

Every line is one JSON object carrying the run's token and the next sequence number; the kinds
are those plugin.py writes (hello, collected, collection, start, result, collect, hung,
integrity, finish, exit, compiled). Anything out of place (a foreign or out-of-order line, a
result twice, a result for a test that is not the one running) is a named problem, never
silently dropped.
The constants below repeat the plugin's (it imports nothing of fixbot); a test keeps them equal.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from fixbot.checks.pytest.channel import ChannelReader
from fixbot.records import DETAIL_CAP, MESSAGE_CAP, CaseResult, TestOutcome

HUNG_EXIT = 86  # the plugin ended its process: a test would not stop
CANARY_ROLES = ("integrity", "must_pass", "must_fail")  # must_fail last: `-x` stops there
CATEGORIES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
_OUTCOMES: dict[str, TestOutcome] = {
    "passed": "passed",
    "failed": "failed",
    "error": "error",
    "skipped": "skipped",
    "xfailed": "xfailed",
}


def canary_ids(run: str) -> dict[str, str]:
    """role -> the node id of fixbot's canary in the run with this token."""
    return {role: f"fixbot_canary_{run}::{role}" for role in CANARY_ROLES}


@dataclass
class ChannelReport:
    run: str
    hello: dict[str, Any] | None = None
    collected: list[str] = field(default_factory=list)
    collection_count: int | None = None
    started: list[str] = field(default_factory=list)
    results: dict[str, CaseResult] = field(default_factory=dict)
    categories: Counter[str] = field(default_factory=Counter)
    timeouts: list[str] = field(default_factory=list)
    hung: dict[str, Any] | None = None
    integrity: list[str] | None = None
    finish: dict[str, Any] | None = None
    exit: dict[str, Any] | None = None
    raw: str = ""
    channel_bytes: int = 0
    problems: list[str] = field(default_factory=list)
    imports: dict[str, str] = field(default_factory=dict)  # finish's: module -> its file
    compiled: list[str] = field(default_factory=list)  # "path sha256": code the run wrote

    @property
    def canaries(self) -> dict[str, str]:
        """role -> the node id of each of fixbot's canaries in this run (their names are the
        plugin's own random tag, which it said in its hello)."""
        tag = (self.hello or {}).get("canary")
        if not isinstance(tag, str) or not tag.isalnum():
            return {}
        return canary_ids(tag)

    @property
    def must_fail(self) -> str:
        """How the must-fail canary must end: `xfailed` (a strict xfail, where pytest's xfail is
        in force) or `failed`."""
        said = (self.hello or {}).get("must_fail")
        return said if said in ("xfailed", "failed") else "xfailed"

    @property
    def running(self) -> str | None:
        """The test that started and has no result: where the process was when it stopped."""
        if self.started and self.started[-1] not in self.results:
            return self.started[-1]
        if self.hello is not None and self.collection_count is None:
            return "collection"
        if self.finish is not None:
            return "after the session finished"
        return None


def parse_lines(reader: ChannelReader, run: str) -> ChannelReport:
    """Every line, in order; anything out of place is a problem, never silently dropped."""
    report = ChannelReport(
        run=run, raw=reader.raw.decode("utf-8", "replace"), channel_bytes=reader.total
    )
    problems = report.problems
    if reader.dropped_lines or reader.long_lines:
        problems.append(
            f"the report channel overflowed ({reader.total} bytes, {reader.dropped_lines} lines "
            f"dropped, {reader.long_lines} over {reader.max_line} bytes)"
        )
    if reader.connections > 1:
        problems.append("the report socket was connected to more than once")
    seq = 0
    collected: set[str] = set()
    for raw in reader.lines:
        line = _object(raw, problems)
        if line is None:
            continue
        if line.get("run") != run or line.get("seq") != seq:
            problems.append(
                f"a report line was not written by fixbot's plugin (run {line.get('run')!r}, "
                f"sequence {line.get('seq')!r} where {seq} was due): {raw[:200]!r}"
            )
            continue
        seq += 1
        collected = _read(report, line, collected)
    return report


def _object(raw: bytes, problems: list[str]) -> dict[str, Any] | None:
    try:
        line = json.loads(raw)
    except (ValueError, RecursionError):
        problems.append(f"a report line is not JSON: {raw[:120]!r}")
        return None
    if not isinstance(line, dict):
        problems.append(f"a report line is not an object: {raw[:120]!r}")
        return None
    return line


def _read(report: ChannelReport, line: dict[str, Any], collected: set[str]) -> set[str]:
    """One line of the plugin's, in sequence; returns the collected ids (set at `collection`)."""
    problems = report.problems
    kind = line.get("k")
    if kind == "compiled":  # at any time: a conftest.py may import before the hello
        if len(report.compiled) < COMPILED_CAP:
            report.compiled.append(compiled_entry(line))
        elif len(report.compiled) == COMPILED_CAP:
            report.compiled.append("(more)")
            problems.append(f"the run wrote and ran more than {COMPILED_CAP} code files")
    elif kind == "hello":
        if report.hello is not None:
            problems.append("the plugin said hello twice")
        report.hello = line
    elif report.hello is None:
        problems.append(f"a {kind!r} line came before the plugin's hello")
    elif kind == "collected":
        ids = line.get("ids")
        report.collected += [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []
    elif kind == "collection":
        report.collection_count = number(line.get("count"))
        collected = set(report.collected)
        if report.collection_count != len(report.collected):
            problems.append("the collected test ids do not add up to the collection's count")
        if len(collected) != len(report.collected):
            problems.append("a test id was collected twice")
    elif kind == "start":
        nodeid = str(line.get("nodeid"))
        if nodeid not in collected:
            problems.append(f"a test that was not collected started: {nodeid}")
        if nodeid in report.started:
            problems.append(f"{nodeid} started twice")
        report.started.append(nodeid)
    elif kind in ("result", "collect"):
        _result(report, line, collected)
    elif kind == "hung":
        report.hung = line
    elif kind == "integrity":
        found = line.get("problems")
        report.integrity = [str(p) for p in found] if isinstance(found, list) else ["?"]
    elif kind == "finish":
        if report.finish is not None:
            problems.append("the session finished twice")
        report.finish = line
        report.imports = imports(line.get("imports"))
    elif kind == "exit":
        report.exit = line
    else:
        problems.append(f"an unknown report line: {kind!r}")
    return collected


COMPILED_CAP = 2000  # the plugin's: findings read per process; more make the run tampered


def compiled_entry(line: dict[str, Any]) -> str:
    """A `compiled` line as one entry, "path sha256" (untrusted: strings only, capped)."""
    return f"{_text(line.get('path'), 300)} {_text(line.get('sha256'), 64)}"


def number(value: object, default: int = -1) -> int:
    """An integer the plugin sent, or `default` for anything else (the lines are untrusted)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _text(value: object, cap: int) -> str:
    return value[:cap] if isinstance(value, str) else ""


def _result(report: ChannelReport, line: dict[str, Any], collected: set[str]) -> None:
    nodeid = str(line.get("nodeid"))
    said = line.get("outcome")
    outcome = _OUTCOMES.get(said) if isinstance(said, str) else None
    if outcome is None:
        report.problems.append(f"{nodeid} has an unknown outcome {said!r}")
        return
    if nodeid in report.results:
        report.problems.append(f"{nodeid} was reported twice")
        return
    if line.get("k") == "result":
        if nodeid not in collected:
            report.problems.append(f"a result for a test that was not collected: {nodeid}")
        elif not report.started or report.started[-1] != nodeid:
            report.problems.append(f"a result for {nodeid}, which was not the test running")
    elif nodeid in collected:
        report.problems.append(f"{nodeid} is both a collected test and a failed collector")
    report.results[nodeid] = CaseResult(
        outcome=outcome,
        message=_text(line.get("message"), MESSAGE_CAP),
        detail=_text(line.get("detail"), DETAIL_CAP),
        nodeid=nodeid,
    )
    raised(report.results[nodeid], line)
    categories = line.get("categories", [line.get("category")])
    for category in categories if isinstance(categories, list) else []:
        if isinstance(category, str) and category:
            report.categories[category] += 1
    if line.get("timeout"):
        report.timeouts.append(nodeid)


# --- where the test process found its code (the plugin's block of the same name) ----------

IMPORTS_CAP = 400
FRAMES_CAP = 64
_PHASES = ("setup", "call", "teardown")


def imports(value: object) -> dict[str, str]:
    """finish's `imports`: top-level module -> file, strings only, capped."""
    if not isinstance(value, dict):
        return {}
    pairs = [(k, v) for k, v in value.items() if isinstance(k, str) and isinstance(v, str)]
    return {name[:100]: path[:300] for name, path in pairs[:IMPORTS_CAP]}


def raised(case: CaseResult, line: dict[str, Any]) -> None:
    """A failing result's phase, traceback files and verdict flag, when the line has them."""
    phase, frames = line.get("phase"), line.get("frames")
    if phase not in _PHASES or not isinstance(frames, list):
        return
    case["phase"] = str(phase)
    case["frames"] = [f[:300] for f in frames[:FRAMES_CAP] if isinstance(f, str)]
    case["assertion"] = line.get("assertion") is True
