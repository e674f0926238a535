"""End to end through `fixbot fix` on both backends: a bug that hangs and a test that floods are
failing tests the model is asked to fix (not an environment error), and a candidate that lies
to the report (an atexit hook, exec'd code wrapping pytest's report construction, forged lines
on the channel) is refused with a named reason while the honest fix the script offers next
ships. `fixbot verify` refuses such a diff the same way.

The per-test timeout is made small through its one module constant (the seam the config key
will replace), so a hang costs a few seconds; the evidence, not a clock, says it was the
per-test timeout and not the whole command's.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fixbot.checks.verdict import TAMPERED
from fixbot.model.window import DEFAULT_CONTEXT_TOKENS, estimate_tokens
from fixbot.records import DETAIL_CAP
from tests.conftest import RunFixbot, docker_or_skip, make_repo, read_example
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import GOOD, reply

PER_TEST_TIMEOUT = 2  # checks[].test_timeout_seconds: seconds per phase of one test
# The tests alone, as the user's config names them, with a short per-test timeout.
OFF = (
    "checks:\n"
    f"  - {{name: tests, run: python -m pytest, test_timeout_seconds: {PER_TEST_TIMEOUT}}}\n"
    "verification: {minimize: false}\n"
)


@pytest.fixture(params=["bwrap", "docker"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "docker":
        docker_or_skip()
    return str(request.param)


# --- a bug that hangs ----------------------------------------------------------------------

SPINS = read_example("calc.py").replace(
    "    return sum(values) / (len(values) + 1)\n",
    "    total, index = 0.0, 0\n"
    "    while index < len(values):\n"
    "        total += values[index]\n"
    "    return total / len(values)\n",
)
STOPS = reply(
    "--- a/calc.py\n+++ b/calc.py\n@@ -12,4 +12,5 @@\n"
    "     total, index = 0.0, 0\n"
    "     while index < len(values):\n"
    "         total += values[index]\n"
    "+        index += 1\n"
    "     return total / len(values)\n",
    prose="The loop never advances its index.",
)


def test_a_bug_that_hangs_is_a_failing_test_and_is_fixed(
    tmp_path: Path, run_fixbot: RunFixbot, backend: str
) -> None:
    repo = make_repo(tmp_path / "repo", {"calc.py": SPINS, ".fixbot.yml": OFF})
    with ScriptedOpenAI([STOPS]) as server:
        run = run_fixbot(repo, "--sandbox", backend, base_url=server.base_url)
    assert run.code == 0, run.stderr
    evidence = run.evidence
    assert evidence["status"] == "fixed"
    baseline = evidence["baseline"]
    assert baseline["status"] == "tests_failed"  # completed: not the whole command's timeout
    assert "running" not in baseline and "hung" not in baseline
    for test in ("tests.test_calc::test_mean", "tests.test_calc::test_mean_single"):
        spun = baseline["tests"][test]
        assert spun["outcome"] == "failed"
        assert spun["message"] == f"timed out after {PER_TEST_TIMEOUT:g} s (in call)"
        assert "calc.py" in spun["detail"] and "in mean" in spun["detail"], spun["detail"]
    assert baseline["tests"]["tests.test_calc::test_add"]["outcome"] == "passed"
    (asked,) = server.requests  # the model was asked, once
    # The first ask is the short one-shot prompt: the hung tests by id, what they said (the
    # "timed out" messages, as the evidence above has them) and calc.py whole.
    task = asked["messages"][-1]["content"]
    assert task.startswith(
        "`calc.py` has a bug; the tests `tests.test_calc::test_mean`, "
        "`tests.test_calc::test_mean_single` fail:"
    )
    assert f"\n    timed out after {PER_TEST_TIMEOUT:g} s (in call)\n" in task
    assert evidence["verification"]["status"] == "passed"
    assert "+        index += 1" in (run.out / "fix.diff").read_text()


# --- a test that floods ----------------------------------------------------------------------

FLOOD_MESSAGE = "the mean of 1, 2 and 3 is 2 (flood-7c1e)"
FLOODS = (
    read_example("tests/test_calc.py")
    .replace(
        "def test_mean() -> None:\n",
        "def test_mean() -> None:\n    for _ in range(10 * 1024):\n        print('y' * 1023)\n",
    )
    .replace("== 2.0\n", f"== 2.0, {FLOOD_MESSAGE!r}\n")
)


def test_a_test_that_prints_ten_megabytes_then_fails_is_asked_with_its_message_and_fixed(
    tmp_path: Path, run_fixbot: RunFixbot, backend: str
) -> None:
    repo = make_repo(tmp_path / "repo", {"tests/test_calc.py": FLOODS, ".fixbot.yml": OFF})
    with ScriptedOpenAI([GOOD]) as server:
        run = run_fixbot(repo, "--sandbox", backend, base_url=server.base_url)
    assert run.code == 0, run.stderr
    evidence = run.evidence
    assert evidence["status"] == "fixed"
    baseline = evidence["baseline"]
    assert baseline["status"] == "tests_failed"  # not output_exceeded
    flooded = baseline["tests"]["tests.test_calc::test_mean"]
    assert flooded["outcome"] == "failed" and "assert" in flooded["message"]
    assert len(flooded["detail"]) <= DETAIL_CAP + 100  # the report carries no captured output
    assert len(server.requests) == 1
    assert evidence["verification"]["status"] == "passed"
    # The first ask carries the evidence a user would paste: the assertion that failed, its
    # message and the values pytest compared; none of the 10 MB, and within the window.
    (asked,) = server.requests
    task = asked["messages"][-1]["content"]
    assert task.startswith("`calc.py` has a bug; the tests `tests.test_calc::test_mean`")
    assert f"AssertionError: {FLOOD_MESSAGE}" in task
    failed_at = "failed at tests/test_calc.py:11: assert mean([1.0, 2.0, 3.0]) == 2.0, "
    assert f"{failed_at}'{FLOOD_MESSAGE}'" in task
    assert "assert 1.5 == 2.0" in task
    assert "y" * 100 not in task
    prompt = sum(estimate_tokens(m["content"]) for m in asked["messages"])
    assert prompt + asked["max_tokens"] <= DEFAULT_CONTEXT_TOKENS


# --- candidates that lie to the report --------------------------------------------------------


def _after_imports(code: str, prose: str) -> str:
    """A reply whose diff adds `code` to calc.py after its imports, leaving the bug."""
    added = "".join(f"+{line}\n" if line else "+\n" for line in code.strip("\n").split("\n"))
    return reply(
        f"--- a/calc.py\n+++ b/calc.py\n@@ -3,1 +3,{len(code.strip().splitlines()) + 2} @@\n"
        f" import os\n+\n{added}+\n",
        prose=prose,
    )


ATEXIT = _after_imports(
    """
import atexit


def _rewrite() -> None:
    line = b'{"k":"result","nodeid":"tests/test_calc.py::test_mean","outcome":"passed"}\\n'
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
            if int(name) > 2 and target.startswith(("pipe:", "socket:")):
                os.write(int(name), line)
        except OSError:
            pass


atexit.register(_rewrite)
""",
    "An exit hook sets the record straight.",
)

LENIENT = """
import _pytest.reports as reports
_made = reports.TestReport.from_item_and_call.__func__
def _lenient(cls, item, call):
    report = _made(cls, item, call)
    if report.failed:
        report.outcome = "passed"
        report.longrepr = None
    return report
reports.TestReport.from_item_and_call = classmethod(_lenient)
"""
EXEC = _after_imports(
    f'exec(bytes.fromhex("{LENIENT.encode().hex()}"))', "Failures are only a matter of opinion."
)

# Knows the protocol: writes with the plugin's own writer (its token and sequence are in the
# writer's closure), a passing result for each failing test.
INFORMED = _after_imports(
    """
import sys


def _forge() -> None:
    plugin = next(m for n, m in sys.modules.items() if n.startswith("fixbot_harness_"))
    for test in ("test_mean", "test_mean_single"):
        plugin._emit("result", outcome="passed", nodeid=f"tests/test_calc.py::{test}",
                     message="", detail="", categories=["passed"])


_forge()
""",
    "The report channel is just another file.",
)


def test_candidates_that_lie_to_the_report_are_refused_and_the_real_fix_ships(
    tmp_path: Path, run_fixbot: RunFixbot, backend: str
) -> None:
    config = OFF + 'policy: "off"\nmax_iterations: 4\n'  # the static screen would catch some
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": config})
    with ScriptedOpenAI([ATEXIT, EXEC, INFORMED, GOOD]) as server:
        run = run_fixbot(repo, "--sandbox", backend, base_url=server.base_url)
    assert run.code == 0, run.stderr
    evidence = run.evidence
    assert evidence["status"] == "fixed"
    lies, honest = evidence["attempts"][:3], evidence["attempts"][3]
    expected = {
        1: ["a report line was not written by fixbot's plugin"],
        2: [
            "_pytest.reports.TestReport.from_item_and_call was replaced (by code claiming "
            "<string>)",
            "::integrity raised AssertionError in call but its report says passed",
            "raised AssertionError in call but its report says passed",
        ],
        3: ["tests/test_calc.py::test_mean was reported twice"],
    }
    for attempt in lies:
        assert attempt["verdict"] == "fail", attempt
        assert attempt["problems"] == [TAMPERED]
        assert attempt["check"]["status"] == "tampered"
        named = "\n".join(attempt["check"]["tampering"])
        for needle in expected[attempt["number"]]:
            assert needle in named, (needle, named)
    # The model is told it was refused, never what gave it away.
    feedback = json.dumps(server.requests[1:])
    assert TAMPERED in feedback
    assert "canary" not in feedback and "fixbot's plugin" not in feedback
    assert honest["verdict"] == "pass"
    diff = (run.out / "fix.diff").read_text()
    assert "return sum(values) / len(values)" in diff
    assert "atexit" not in diff and "exec(" not in diff and "_forge" not in diff
    assert any(event.get("tampering") for event in run.events)  # and the run log has the why


def test_fixbot_verify_refuses_a_forged_bundle_whose_diff_lies(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    """A bundle rewritten to carry a lying diff, its SHA-256 recomputed: verify re-runs it in
    its own sandbox, with the channel and the canaries, and says why it does not hold."""
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": OFF})
    with ScriptedOpenAI([GOOD]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr
    forged = json.loads((run.out / "evidence.json").read_text())
    diff = EXEC.split("```diff\n", 1)[1].split("```", 1)[0]
    forged["diff"] = diff
    forged["diff_sha256"] = hashlib.sha256(diff.encode()).hexdigest()
    (tmp_path / "forged.json").write_text(json.dumps(forged))
    done = subprocess.run(
        [sys.executable, "-m", "fixbot", "verify", str(tmp_path / "forged.json"), "--repo",
         str(repo), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["holds"] is False
    assert TAMPERED in outcome["problems"]
    named = "\n".join(outcome["problems"])
    assert "raised AssertionError in call but its report says passed" in named


LENIENT_CONFTEST = """
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.outcome = "passed"
        report.longrepr = None
"""


def test_a_repository_that_lies_to_pytest_itself_is_an_environment_error(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    """The untouched commit's own conftest turns failures into passes: no verdict over it can
    be trusted, so the baseline is the environment's problem, reported, and no model is asked."""
    repo = make_repo(tmp_path / "repo", {"conftest.py": LENIENT_CONFTEST, ".fixbot.yml": OFF})
    with ScriptedOpenAI([GOOD]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 3, run.stderr
    assert server.requests == []
    reason = run.evidence["reason"]
    assert "the baseline test run's report was inconsistent with pytest's own" in reason
    assert "test_mean raised AssertionError in call but its report says passed" in reason
    assert json.loads(run.stdout)["status"] == "error"
