"""What a hang leaves behind: the test that ended its process (the plugin's `hung` line, or
faulthandler's dump), its result with the stack, and a run the whole command's timeout cut short
(what ran is the result)."""

from __future__ import annotations

import re

from fixbot.checks.pytest.events import HUNG_EXIT, ChannelReport
from fixbot.proc import Completed
from fixbot.records import DETAIL_CAP, CaseResult, CheckStatus


def hung_test(report: ChannelReport, run: Completed) -> str | None:
    """The test that the plugin (or faulthandler's watchdog) ended the process over."""
    if report.hung is not None and run.returncode == HUNG_EXIT:
        return str(report.hung.get("nodeid"))
    running = report.running
    if report.finish is None and "Timeout (" in report.raw and running in report.collected:
        return running
    return None


def hung_result(
    report: ChannelReport, nodeid: str, test_timeout: float, grace: float
) -> CaseResult:
    found = report.results.get(nodeid)
    if found is not None:
        return found
    # faulthandler writes every frame, most recent first: pytest's and pluggy's are noise.
    dump = "\n".join(
        line for line in report.raw.strip().splitlines() if not _RUNNER_FRAME.search(line)
    )
    return CaseResult(
        outcome="failed",
        message=(
            f"timed out after {test_timeout:g} s and could not be interrupted for "
            f"{2 * grace:g} s more (it runs code that never returns to Python, a C loop?)"
        ),
        detail=head_tail(f"faulthandler's dump of every thread:\n{dump}", DETAIL_CAP),
        nodeid=nodeid,
    )


_RUNNER_FRAME = re.compile(r'File "[^"]*/(_pytest|pluggy)/')


def head_tail(text: str, cap: int) -> str:
    if len(text) <= cap:
        return text
    half = cap // 2
    return f"{text[:half]}\n[... {len(text) - cap} characters elided ...]\n{text[-half:]}"


def cut_short(
    report: ChannelReport,
    hung: str | None,
    tests: dict[str, CaseResult],
    command: float,
    timeout: float,
    grace: float,
) -> tuple[CheckStatus, dict[str, CaseResult], str]:
    """A run the whole-command timeout (or a test that hung through every rerun) cut short:
    `tests_failed` with what ran and the running test failed, stack and all; `timeout` only
    when nothing ran at all (a hang while collecting)."""
    running = hung or report.running
    if running in report.collected and running not in tests:
        if hung is not None:
            tests[running] = hung_result(report, running, timeout, grace)
        else:
            tests[running] = CaseResult(
                outcome="failed",
                message=f"the whole test run hit its {command:g} s timeout while this test ran",
                detail=head_tail(report.raw.strip(), DETAIL_CAP),
                nodeid=running,
            )
    if not tests:
        return "timeout", {}, ""
    canaries = set(report.canaries.values())
    unrun = [t for t in report.collected if t not in tests and t not in canaries]
    cut = f"cut short while {running} ran: {len(unrun)} collected tests did not run"
    return "tests_failed", tests, cut
