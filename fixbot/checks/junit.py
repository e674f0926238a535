"""Per-test outcomes from a pytest JUnit report, read as untrusted input."""

from __future__ import annotations

import os
import stat
import xml.etree.ElementTree as ET
from pathlib import Path

from fixbot.records import DETAIL_CAP, MESSAGE_CAP, CaseResult, TestOutcome

REPORT_CAP = 8 * 1024 * 1024


def parse_junit(report: Path) -> dict[str, CaseResult] | None:
    """Per-test outcomes from a pytest JUnit report; None when it is missing or unreadable.

    The candidate could have left anything at that path: never follow a link, never block
    on a FIFO, never read more than REPORT_CAP.
    """
    try:
        fd = os.open(report, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > REPORT_CAP:
            return None
        data = handle.read(REPORT_CAP + 1)
    if len(data) > REPORT_CAP:
        return None
    try:
        root = ET.fromstring(data)  # noqa: S314 - bounded, and parsed without entity expansion
    except ET.ParseError:
        return None
    tests: dict[str, CaseResult] = {}
    for case in root.iter("testcase"):
        test_id = _test_id(case.get("classname", ""), case.get("name", ""))
        tests[test_id] = _case_result(case)
    return tests


def _test_id(classname: str, name: str) -> str:
    return f"{classname}::{name}" if classname else name


def _case_result(case: ET.Element) -> CaseResult:
    for tag, outcome in (("failure", "failed"), ("error", "error")):
        node = case.find(tag)
        if node is not None:
            return CaseResult(
                outcome=outcome,  # type: ignore[typeddict-item]
                message=(node.get("message") or "")[:MESSAGE_CAP],
                detail=_head_tail(node.text or "", DETAIL_CAP),
            )
    skipped = case.find("skipped")
    if skipped is not None:
        kind: TestOutcome = "xfailed" if skipped.get("type") == "pytest.xfail" else "skipped"
        return CaseResult(
            outcome=kind, message=(skipped.get("message") or "")[:MESSAGE_CAP], detail=""
        )
    return CaseResult(outcome="passed", message="", detail="")


def _head_tail(text: str, cap: int) -> str:
    if len(text) <= cap:
        return text
    half = cap // 2
    return f"{text[:half]}\n[... {len(text) - cap} characters elided ...]\n{text[-half:]}"
