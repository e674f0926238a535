"""A `python -m unittest` check, read per test from its verbose output.

fixbot adds `-v` (one line per test: `test_x (pkg.mod.Class.test_x) ... ok`) and `-b` (a test's
own output is held back, so it cannot interleave with those lines), reads each test's outcome,
and takes each failure's message and traceback from the report's FAIL/ERROR blocks. Test ids are
JUnit-style, as pytest's: `pkg.mod.Class::test_x` (a module that failed to import: its dotted
name). The output must agree with unittest's own tally (`Ran N tests`, then OK or FAILED):
anything else (a crash, a run cut short, a count that differs) is `no_report`, never a pass.
"""

from __future__ import annotations

import re

from fixbot.checks.part import Part, record
from fixbot.commands import CheckSpec
from fixbot.proc import Completed
from fixbot.records import (
    DETAIL_CAP,
    FAILING,
    LOG_CAP,
    MESSAGE_CAP,
    CaseResult,
    CheckStatus,
    TestOutcome,
)
from fixbot.sandbox import hit_process_cap

_HEAD = re.compile(
    r"^\s*(?P<name>\S+) \((?P<dotted>[\w.]+)\)(?: \((?P<params>[^)]*)\))?(?P<rest>.*)$"
)
_RESULT = re.compile(
    r" \.\.\. (?P<result>ok|FAIL|ERROR|skipped.*|expected failure|unexpected success)$"
)
_BLOCK = re.compile(
    r"^={70}\n(?P<kind>FAIL|ERROR): (?P<name>\S+) \((?P<dotted>[\w.]+)\)[^\n]*\n"
    r"(?:[^\n]*\n)??-{70}\n(?P<body>.*?)(?=^={70}$|^-{70}\nRan |\Z)",
    re.MULTILINE | re.DOTALL,
)
_FRAME = re.compile(r'^  File "[^"\n]*", line \d+')
_GROUP_BORDER = re.compile(r"^  ?\| ")
_GROUP_RULE = re.compile(r"^\s*\+[-+ 0-9.]*$")
_RAN = re.compile(r"^Ran (?P<count>\d+) tests? in [\d.]+s\n\n(?P<end>OK|FAILED|NO TESTS RAN)", re.M)
_OUTCOMES: dict[str, TestOutcome] = {
    "ok": "passed",
    "FAIL": "failed",
    "ERROR": "error",
    "expected failure": "xfailed",
    "unexpected success": "failed",
}
_QUIET = {"-q", "--quiet", "-v", "--verbose", "-b", "--buffer"}
_FAILED_IMPORT = "unittest.loader._FailedTest."
# A class or module fixture that failed: reported like a test, never counted as one.
_FIXTURES = ("setUpClass", "tearDownClass", "setUpModule", "tearDownModule")


def unittest_argv(argv: tuple[str, ...]) -> list[str]:
    """The check's command with `-v -b` where unittest reads them: after `discover` when it is
    there (it must come first), else right after `unittest`."""
    words = [w for w in argv if w not in _QUIET]
    at = words.index("unittest") + 1 if "unittest" in words else len(words)
    if words[at : at + 1] == ["discover"]:
        at += 1
    return [*words[:at], "-v", "-b", *words[at:]]


def test_id(name: str, dotted: str) -> str:
    if dotted.startswith(_FAILED_IMPORT):
        return dotted.removeprefix(_FAILED_IMPORT)
    classname = dotted[: -len(name) - 1] if dotted.endswith("." + name) else dotted
    return f"{classname}::{name}"


def read_unittest(spec: CheckSpec, run: Completed, command: str, output_cap: int) -> Part:
    status, tests, why = _read(run, output_cap)
    if status in ("passed", "tests_failed"):
        failing = sum(case["outcome"] in FAILING for case in tests.values())
        why = f"{failing} of {len(tests)} tests failed" if failing else f"{len(tests)} tests passed"
    checked = record(spec, status, run, why, command)
    checked["failing"] = sorted(t for t, case in tests.items() if case["outcome"] in FAILING)
    return Part(checked, tests, [], run.tail(LOG_CAP))


def _read(run: Completed, output_cap: int) -> tuple[CheckStatus, dict[str, CaseResult], str]:
    if run.timed_out:
        return "timeout", {}, "timed out"
    if hit_process_cap(run.output):
        return "process_limit", {}, "ended: its process cap was hit and held (a fork bomb?)"
    if run.returncode in (137, -9):
        return "memory_exceeded", {}, "killed (memory)"
    if run.returncode == 127 or "No module named unittest" in run.output[:2000]:
        return "infra_error", {}, "the command was not found"
    if run.output_bytes > output_cap:
        return "output_exceeded", {}, "its output was over the cap"
    ran = list(_RAN.finditer(run.output))
    if not ran:
        return "no_report", {}, "unittest ended without its tally (Ran N tests)"
    count, end = int(ran[-1]["count"]), ran[-1]["end"]
    if count == 0 or end == "NO TESTS RAN":
        return "no_tests_collected", {}, "unittest ran no tests"
    tests = _outcomes(run.output)
    _add_failures(run.output, tests)
    failing = any(case["outcome"] in FAILING for case in tests.values())
    counted = sum(not test.endswith(_FIXTURES) for test in tests)
    agrees = counted == count and failing == (end == "FAILED") == (run.returncode != 0)
    if not agrees:
        return "no_report", {}, f"its output does not agree with its tally (Ran {count})"
    return ("tests_failed" if failing else "passed"), tests, ""


def _outcomes(output: str) -> dict[str, CaseResult]:
    """Each test's outcome from the verbose lines; a subtest's failure fails its test."""
    tests: dict[str, CaseResult] = {}
    pending = ""
    for line in output.splitlines():
        if line.startswith(("=" * 70, "-" * 70)):
            break  # the report's blocks follow
        head = _HEAD.match(line)
        result = _RESULT.search(line)
        if head and (result is None or result.start() >= head.start("rest")):
            pending = test_id(head["name"], head["dotted"])
        if result is None or not pending:
            continue
        outcome = _OUTCOMES.get(result["result"], "skipped")
        said = result["result"].removeprefix("skipped ").strip("'")
        message = said if outcome == "skipped" else ""
        was = tests.get(pending)
        if was is None or (outcome in FAILING and was["outcome"] not in FAILING):
            tests[pending] = CaseResult(outcome=outcome, message=message[:MESSAGE_CAP], detail="")
    return tests


def _add_failures(output: str, tests: dict[str, CaseResult]) -> None:
    """The message (the exception's text, `_raised`) and the traceback of each FAIL/ERROR
    block."""
    for block in _BLOCK.finditer(output):
        test = test_id(block["name"], block["dotted"])
        if test not in tests and block["name"] in _FIXTURES:  # reported in the blocks only
            outcome: TestOutcome = "failed" if block["kind"] == "FAIL" else "error"
            tests[test] = CaseResult(outcome=outcome, message="", detail="")
        case = tests.get(test)
        if case is None or case["outcome"] not in FAILING or case["detail"]:
            continue
        body = block["body"].strip("\n")
        case["message"] = _raised(body, block["kind"])[:MESSAGE_CAP]
        case["detail"] = body[-DETAIL_CAP:]


def _raised(body: str, kind: str) -> str:
    """What the traceback says was raised: the text after its last frame (the exception's
    line and what follows it: an `assertEqual`'s differences start on the next lines), else its
    last line."""
    # An exception group's tracebacks are drawn inside `| ` borders: read them without.
    lines = [_GROUP_BORDER.sub("", line) for line in body.splitlines()]
    lines = [line for line in lines if line.strip() and not _GROUP_RULE.match(line)]
    frames = [i for i, line in enumerate(lines) if _FRAME.match(line)]
    if not frames:
        return lines[-1] if lines else kind
    at = frames[-1] + 1
    while at < len(lines) and lines[at][:1].isspace():  # the frame's source line and marks
        at += 1
    return "\n".join(lines[at:]) or lines[-1]
