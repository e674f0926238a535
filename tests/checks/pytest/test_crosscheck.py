"""The cross-check, line by line: a recorded honest run, altered the ways a forger would."""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fixbot.checks.pytest import harness
from fixbot.checks.pytest.channel import RAW_CAP, ChannelReader
from fixbot.checks.pytest.crosscheck import cross_check, summary_counts
from fixbot.checks.pytest.events import canary_ids, parse_lines
from fixbot.records import CheckStatus
from tests.checks.conftest import Suite, one_run

SUITE = """
import pytest

def test_passes():
    pass

def test_fails():
    assert 1 == 2

@pytest.mark.skip(reason="not today")
def test_skipped():
    pass

@pytest.mark.xfail
def test_xfails():
    assert 0
"""


@dataclasses.dataclass
class Recorded:
    one: harness.OneRun
    lines: list[dict[str, Any]]

    @property
    def run(self) -> str:
        return self.one.report.run


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    root = tmp_path_factory.mktemp("recorded")
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "test_suite.py").write_text(SUITE)
    one = one_run(Suite(root))
    assert one.problems == [], one.problems
    return Recorded(one, [json.loads(line) for line in one.lines])


def feed(data: bytes, **caps: int) -> ChannelReader:
    """Through a real pipe and the real reader."""
    read_end, write_end = os.pipe()
    reader = ChannelReader(read_end, **caps).start()

    def write() -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(write_end, view) :]
        os.close(write_end)

    writer = threading.Thread(target=write)
    writer.start()
    writer.join(10)
    reader.finish(grace=5)
    os.close(read_end)
    return reader


def encode(lines: list[dict[str, Any]], *, resequence: bool = True) -> bytes:
    if resequence:  # a forger who keeps the sequence numbers right
        lines = [{**line, "seq": index} for index, line in enumerate(lines)]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def check(
    recorded: Recorded,
    alter: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] = lambda lines: lines,
    *,
    resequence: bool = True,
    **changes: Any,
) -> tuple[CheckStatus, list[str]]:
    lines = alter([dict(line) for line in recorded.lines])
    report = parse_lines(feed(encode(lines, resequence=resequence)), recorded.run)
    completed = dataclasses.replace(recorded.one.completed, **changes)
    one = harness.OneRun(completed, report, cross_check(report, completed), None)
    return harness.decide(one, {})


def where(lines: list[dict[str, Any]], kind: str, nodeid: str | None = None) -> int:
    return next(
        i
        for i, line in enumerate(lines)
        if line["k"] == kind and (nodeid is None or line.get("nodeid") == nodeid)
    )


FAILS = "test_suite.py::test_fails"


def test_the_honest_run_agrees_with_itself(recorded: Recorded) -> None:
    status, problems = check(recorded)
    assert (status, problems) == ("tests_failed", [])


def test_a_duplicate_result_is_tampering(recorded: Recorded) -> None:
    def duplicate(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        index = where(lines, "result", FAILS)
        return [*lines[:index], {**lines[index], "outcome": "passed"}, *lines[index:]]

    status, problems = check(recorded, duplicate)
    assert status == "tampered"
    assert f"{FAILS} was reported twice" in problems


def test_a_result_for_a_test_that_was_not_collected_is_tampering(recorded: Recorded) -> None:
    def invent(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        index = where(lines, "result", FAILS) + 1
        extra = {**lines[index - 1], "nodeid": "test_suite.py::test_invented", "outcome": "passed"}
        return [*lines[:index], extra, *lines[index:]]

    status, problems = check(recorded, invent)
    assert status == "tampered"
    assert "a result for a test that was not collected: test_suite.py::test_invented" in problems


def test_a_flipped_outcome_disagrees_with_pytests_own_tally(recorded: Recorded) -> None:
    def flip(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        index = where(lines, "result", FAILS)
        lines[index] = {**lines[index], "outcome": "passed", "categories": ["passed"]}
        return lines

    status, problems = check(recorded, flip)
    assert status == "tampered"
    assert "pytest's own tally says 1 failed where the per-test results have 0" in problems
    # the must-fail canary is a strict xfail: pytest's exit status carries the real failure
    assert "the test report disagrees with pytest's exit status: 1, no failure" in problems


def test_counts_that_disagree_are_tampering(recorded: Recorded) -> None:
    def recount(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        index = where(lines, "finish")
        stats = {**lines[index]["stats"], "failed": 0}
        lines[index] = {**lines[index], "stats": stats, "testsfailed": 0}
        return lines

    status, problems = check(recorded, recount)
    assert status == "tampered"
    assert "pytest's own tally says 0 failed where the per-test results have 1" in problems


def test_an_exit_status_that_disagrees_is_tampering(recorded: Recorded) -> None:
    status, problems = check(recorded, returncode=0)
    assert status == "tampered"
    assert (
        "the test report disagrees with pytest's exit status: the session finished with 1 and "
        "the process exited with 0" in problems
    )

    def zero(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        index = where(lines, "finish")
        lines[index] = {**lines[index], "exitstatus": 0}
        return lines

    status, problems = check(recorded, zero, returncode=0)
    assert "the test report disagrees with pytest's exit status: 0, with failures" in problems


def test_a_terminal_summary_that_disagrees_is_tampering(recorded: Recorded) -> None:
    output = recorded.one.completed.output
    lying = output.replace("1 failed", "0 failed").replace("3 passed", "4 passed")
    assert lying != output
    status, problems = check(recorded, output=lying)
    assert status == "tampered"
    assert "the terminal summary says 0 failed where the report channel says 1" in problems


def test_a_missing_terminal_summary_is_tampering(recorded: Recorded) -> None:
    status, problems = check(recorded, output="nothing to see\n")
    assert status == "tampered"
    assert "pytest's terminal summary line is missing from the output" in problems


def test_lines_without_the_runs_token_or_out_of_sequence_are_not_the_plugins(
    recorded: Recorded,
) -> None:
    def foreign(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        index = where(lines, "result", FAILS)
        lines[index] = {**lines[index], "run": "0" * 16}
        return lines

    status, problems = check(recorded, foreign)
    assert status == "tampered"
    assert any(p.startswith("a report line was not written by fixbot's plugin") for p in problems)

    def insert(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        index = where(lines, "result", FAILS)
        return [*lines[:index], {**lines[index], "outcome": "passed"}, *lines[index:]]

    status, problems = check(recorded, insert, resequence=False)  # a forger without the counter
    assert any("sequence" in p for p in problems)


def test_a_missing_session_finish_is_never_a_verdict(recorded: Recorded) -> None:
    def cut(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return lines[: where(lines, "integrity")]

    assert check(recorded, cut)[0] == "no_report"  # exit 1 without a finish: a crash
    status, problems = check(recorded, cut, returncode=0)
    assert status == "tampered"
    assert any("the process exited 0 but pytest never finished" in p for p in problems)


def test_a_reported_machinery_change_is_tampering(recorded: Recorded) -> None:
    def changed(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        index = where(lines, "integrity")
        lines[index] = {**lines[index], "problems": ["_pytest.runner.call_and_report was replaced"]}
        return lines

    status, problems = check(recorded, changed)
    assert status == "tampered"
    assert any("call_and_report was replaced" in p for p in problems)


def test_a_canary_with_the_wrong_outcome_is_tampering(recorded: Recorded) -> None:
    hello = next(line for line in recorded.lines if line["k"] == "hello")
    must_fail = canary_ids(hello["canary"])["must_fail"]

    def passes(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        index = where(lines, "result", must_fail)
        lines[index] = {**lines[index], "outcome": "passed", "message": ""}
        return lines

    status, problems = check(recorded, passes)
    assert status == "tampered"
    assert any("fixbot's canary must_fail was reported passed" in p for p in problems)

    def dropped(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        index = where(lines, "collected")
        ids = [i for i in lines[index]["ids"] if "fixbot_canary" not in i]
        lines[index] = {**lines[index], "ids": ids}
        return [line for line in lines if "fixbot_canary" not in str(line.get("nodeid"))]

    status, problems = check(recorded, dropped)
    assert any("canary integrity was not collected" in p for p in problems)


def test_the_channel_is_bounded(recorded: Recorded) -> None:
    data = encode(recorded.lines) + b"{" + b"x" * 5000 + b"}\n"
    reader = feed(data * 2, max_line=4096, max_lines=len(recorded.lines) + 3)
    assert reader.long_lines == 2 and reader.dropped_lines > 0
    report = parse_lines(reader, recorded.run)
    assert any(p.startswith("the report channel overflowed") for p in report.problems)
    big = feed(b"y" * (3 * 1024 * 1024))  # not JSON: kept as raw text, capped
    assert len(big.raw) <= RAW_CAP and big.total == 3 * 1024 * 1024


def test_a_line_cut_by_the_process_end_is_not_a_forgery(recorded: Recorded) -> None:
    reader = feed(encode(recorded.lines[:5]) + b'{"k":"start","run"')
    report = parse_lines(reader, recorded.run)
    assert report.problems == [] and reader.cut.startswith(b'{"k":"start"')


def test_the_summary_line_parser() -> None:
    assert summary_counts("x\n1 failed, 2 passed, 1 xfailed, 3 errors in 0.10s\n") == {
        "failed": 1,
        "passed": 2,
        "xfailed": 1,
        "error": 3,
    }
    assert summary_counts("==== 5 passed, 1 warning in 65.00s (0:01:05) ====") == {
        "passed": 5,
        "warnings": 1,
    }
    assert summary_counts("2 failed, 731 passed, 2 warnings, 19938 subtests passed in 3.1s") == {
        "failed": 2,
        "passed": 731,
        "warnings": 2,
        "subtests passed": 19938,
    }
    assert summary_counts("=== 1 passed, 2 rerun, 3 deselected in 0.5s ===") == {
        "passed": 1,
        "rerun": 2,
        "deselected": 3,
    }
    assert summary_counts("== no tests ran in 0.01s ==") == {}
    assert summary_counts("no summary here") is None


def test_node_ids_map_to_todays_junit_ids() -> None:
    assert harness.junit_id("tests/test_a.py::TestG::test_x[1-a/b::c]") == (
        "tests.test_a.TestG::test_x[1-a/b::c]"
    )
    assert harness.junit_id("test_a.py::test_y") == "test_a::test_y"
    assert harness.junit_id("tests/test_broken.py") == "tests.test_broken"


def test_garbage_in_lines_with_the_right_token_is_named_never_a_crash(
    recorded: Recorded,
) -> None:
    """An informed forger's lines are data: wrong types are disagreements, not exceptions."""

    def garbage(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        index = where(lines, "finish")
        lines[index] = {
            **lines[index],
            "stats": {"failed": "many", "passed": [1]},
            "testsfailed": {"n": 1},
            "exitstatus": [0],
        }
        index = where(lines, "result", FAILS)
        lines[index] = {**lines[index], "outcome": ["passed"], "categories": "passed"}
        return lines

    status, problems = check(recorded, garbage)
    assert status == "tampered"
    assert f"{FAILS} has an unknown outcome ['passed']" in problems
    assert any("pytest ended with exit status [0]" in p for p in problems)


PLUGIN = Path(harness.__file__).with_name("plugin.py")


def _plugin_constant(name: str) -> object:
    tree = ast.parse(PLUGIN.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{name} is not a constant of the plugin")


def test_the_plugins_constants_are_the_ones_fixbot_reads() -> None:
    """The plugin imports nothing of fixbot, so its side of the protocol is written twice."""
    from fixbot.checks.pytest import events as lines
    from fixbot.records import DETAIL_CAP, MESSAGE_CAP

    assert _plugin_constant("HUNG_EXIT") == lines.HUNG_EXIT
    assert _plugin_constant("CANARY_ROLES") == lines.CANARY_ROLES
    assert _plugin_constant("CATEGORIES") == lines.CATEGORIES
    assert _plugin_constant("COMPILED_CAP") == lines.COMPILED_CAP
    assert _plugin_constant("MESSAGE_CAP") == MESSAGE_CAP
    assert _plugin_constant("DETAIL_CAP") == DETAIL_CAP
