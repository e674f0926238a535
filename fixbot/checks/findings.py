"""Reading a ruff, ruff-format or mypy run: its findings, and whether the tool ran at all.

A gate that cannot run is an error of that check, never "no findings": the tool missing, its
report absent or unreadable, an exit status that disagrees with what it reported (non-zero
without findings, findings with zero), a timeout. Only a run whose exit status and findings
agree is read:

    ruff check       0 and an empty JSON report: passed; 1 and findings: failed
    ruff format      0: passed; 1 with files it would reformat, or 2 with files it could not
                     parse (a syntax error is the code's): failed
    mypy             0 and no error lines: passed; 1 or 2 with `path:line: error:` lines:
                     failed (2 is mypy stopping at a blocking error, a syntax error among them;
                     without a line, as "Duplicate module named", it checked nothing: error)
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

from fixbot.checks.part import Part, finding_part, summary_of
from fixbot.commands import CheckSpec
from fixbot.proc import Completed
from fixbot.records import MESSAGE_CAP, CheckStatus, Finding
from fixbot.sandbox import WORKSPACE

REPORT_CAP = 32 * 1024 * 1024
_MISSING = re.compile(r"No module named '?(ruff|mypy)'?")
_MYPY_LINE = re.compile(
    r"^(?P<path>[^:\n]+):(?P<line>\d+):(?:\d+:)? error: (?P<msg>.*?)"
    r"(?:  \[(?P<code>[a-z0-9-]+)\])?$"
)
# ruff format --check: "Would reformat: PATH" (older), or "unformatted: ..." then "--> PATH:L:C"
_WOULD_REFORMAT = re.compile(r"^Would reformat: (?P<path>.+?)\s*$", re.MULTILINE)
_DIAGNOSTIC = re.compile(
    r"^(?P<code>[\w-]+): (?P<msg>[^\n]*)\n\s*--> (?P<path>[^\n:]+):(?P<line>\d+):\d+", re.MULTILINE
)
_PARSE_ERROR = re.compile(
    r"^error: Failed to parse (?P<path>[^\n:]+):(?P<line>\d+):\d+: (?P<msg>.*)$", re.MULTILINE
)


def read_ruff(spec: CheckSpec, run: Completed, report: Path, command: str) -> Part:
    unfinished = _unfinished(spec, run, command)
    if unfinished is not None:
        return unfinished
    findings = parse_ruff(_read_report(report))
    if findings is None:
        return _error(spec, run, command, "ruff wrote no readable report")
    return _judged(spec, run, command, findings, passed=run.returncode == 0, failed=1)


def read_ruff_format(spec: CheckSpec, run: Completed, command: str) -> Part:
    unfinished = _unfinished(spec, run, command)
    if unfinished is not None:
        return unfinished
    findings = parse_ruff_format(run.output)
    if run.returncode == 2 and not any(f["code"] == "syntax" for f in findings):
        return _error(spec, run, command, "ruff format stopped with an error")
    return _judged(spec, run, command, findings, passed=run.returncode == 0, failed=(1, 2))


def read_mypy(spec: CheckSpec, run: Completed, command: str) -> Part:
    unfinished = _unfinished(spec, run, command)
    if unfinished is not None:
        return unfinished
    if run.output_truncated:
        return _error(spec, run, command, "mypy's output was over the cap and was cut")
    findings = parse_mypy(run.output)
    return _judged(spec, run, command, findings, passed=run.returncode == 0, failed=(1, 2))


def parse_ruff(report: str | None) -> list[Finding] | None:
    """ruff's JSON report as findings; None when it is not one."""
    if report is None:
        return None
    try:
        items = json.loads(report)
    except json.JSONDecodeError:
        return None
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        return None
    return [
        Finding(
            tool="ruff",
            path=_relative(str(item.get("filename", ""))),
            line=int((item.get("location") or {}).get("row", 0) or 0),
            code=str(item.get("code") or "syntax"),
            message=str(item.get("message", ""))[:MESSAGE_CAP],
        )
        for item in items
    ]


def parse_ruff_format(output: str) -> list[Finding]:
    """The files `ruff format --check` would reformat, and those it could not parse."""
    found: list[Finding] = []
    for match in _WOULD_REFORMAT.finditer(output):
        found.append(_format_finding(match["path"], 0, "unformatted", "would be reformatted"))
    for match in _DIAGNOSTIC.finditer(output):
        code = "unformatted" if match["code"] == "unformatted" else "syntax"
        message = "would be reformatted" if code == "unformatted" else match["msg"]
        found.append(_format_finding(match["path"], int(match["line"]), code, message))
    for match in _PARSE_ERROR.finditer(output):
        found.append(_format_finding(match["path"], int(match["line"]), "syntax", match["msg"]))
    return found


def parse_mypy(output: str) -> list[Finding]:
    """mypy's `path:line: error: message  [code]` lines (notes and summaries are not)."""
    findings = []
    for line in output.splitlines():
        match = _MYPY_LINE.match(line)
        if match:
            findings.append(
                Finding(
                    tool="mypy",
                    path=_relative(match["path"]),
                    line=int(match["line"]),
                    code=match["code"] or "error",
                    message=match["msg"][:MESSAGE_CAP],
                )
            )
    return findings


def _judged(
    spec: CheckSpec,
    run: Completed,
    command: str,
    findings: list[Finding],
    *,
    passed: bool,
    failed: int | tuple[int, ...],
) -> Part:
    """The exit status and the findings must agree; a gate that ran is passed whatever it found
    (only new findings block it)."""
    codes = failed if isinstance(failed, tuple) else (failed,)
    if passed and not findings:
        status: CheckStatus = "passed"
    elif findings and run.returncode in codes:
        status = "passed" if spec.gate else "failed"
    else:
        said = f"{len(findings)} finding(s)" if findings else "no findings"
        return _error(spec, run, command, f"exit code {run.returncode} with {said}")
    return finding_part(spec, status, run, findings, summary_of(findings), command)


def _unfinished(spec: CheckSpec, run: Completed, command: str) -> Part | None:
    if run.timed_out:
        return finding_part(spec, "timeout", run, [], "timed out", command)
    if run.returncode in (137, -9):
        return finding_part(spec, "memory_exceeded", run, [], "killed (memory)", command)
    missing = _MISSING.search(run.output[:4000])
    if run.returncode == 127 or missing:
        tool = missing.group(1) if missing else spec.kind.split("-")[0]
        why = (
            f"{tool} is not installed in fixbot's environment (install it there: "
            f"python -m pip install {tool})"
            if missing
            else "fixbot's interpreter was not found in the sandbox"
        )
        return _error(spec, run, command, why)
    return None


def _error(spec: CheckSpec, run: Completed, command: str, why: str) -> Part:
    tail = " ".join(run.tail(400).split())
    summary = f"could not run: {why}" + (f" ({tail})" if tail else "")
    return finding_part(spec, "error", run, [], summary, command)


def _read_report(report: Path) -> str | None:
    """The report ruff wrote, read as untrusted input: no link, no FIFO, bounded."""
    try:
        fd = os.open(report, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > REPORT_CAP:
            return None
        return handle.read(REPORT_CAP).decode("utf-8", "replace")


def _format_finding(path: str, line: int, code: str, message: str) -> Finding:
    return Finding(tool="ruff-format", path=_relative(path), line=line, code=code, message=message)


def _relative(path: str) -> str:
    return path.removeprefix(WORKSPACE + "/").removeprefix("./")
