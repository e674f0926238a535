"""A flood of output is cut (head and tail kept), never a reason to drop a report: the per-test
results come over the channel, and pytest's summary line survives in the kept tail."""

from __future__ import annotations

from fixbot.records import DETAIL_CAP
from tests.checks.conftest import OUTPUT_CAP, HarnessRun, Suite

FLOOD = """
def test_before():
    pass

def test_flood():
    line = "y" * 1023
    for _ in range(10 * 1024):  # 10 MiB, captured by pytest and printed back with the failure
        print(line)
    assert 1 == 2, "the real failure"

def test_after():
    pass
"""


def test_ten_megabytes_of_output_leave_the_per_test_results_intact(
    suite: Suite, harness_run: HarnessRun
) -> None:
    suite.write("test_flood.py", FLOOD)
    result = harness_run()
    completed = result.runs[-1]

    assert completed.output_bytes > 10 * 1024 * 1024  # pytest finished and printed it all back
    assert completed.output_truncated and len(completed.output) < 2 * OUTPUT_CAP
    assert result.status == "tests_failed", result.problems  # not output_exceeded
    assert result.problems == []  # the summary line survived in the kept tail, and agrees
    flood = result.tests["test_flood.py::test_flood"]
    assert flood["outcome"] == "failed"
    assert "the real failure" in flood["message"]
    assert len(flood["detail"]) <= DETAIL_CAP + 100
    assert result.tests["test_flood.py::test_after"]["outcome"] == "passed"
    assert result.tests["test_flood.py::test_before"]["outcome"] == "passed"
    # The plugin sent capped messages, not the captured output.
    assert result.channel_bytes < 64 * 1024


CASES = "".join(f"        ({'x' * 40!r}, {i}),\n" for i in range(150))
LONG_TRACEBACK = f"""
import pytest


def helper(value):
    raise ValueError("the innermost error " + str(value))


@pytest.mark.parametrize(  # pytest prints the test's source, this list whole, in its traceback
    "text, number",
    [
        ("long", 0),
{CASES}    ],
)
def test_long(text, number):
    helper(number)
"""


def test_a_traceback_past_the_cap_keeps_its_end_the_place_and_the_error(
    suite: Suite, harness_run: HarnessRun
) -> None:
    suite.write("test_long.py", LONG_TRACEBACK)
    result = harness_run()
    case = result.tests["test_long.py::test_long[long-0]"]
    assert case["outcome"] == "failed"
    detail = case["detail"]
    assert "characters elided" in detail  # it was longer than the cap: head and tail kept
    assert len(detail) <= DETAIL_CAP
    assert detail.rstrip().endswith("test_long.py:6: ValueError")
    assert "the innermost error 0" in detail
