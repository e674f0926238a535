"""Hangs are failing tests, end to end: a bug whose loop hangs most of the tests is fixed without
the whole command's timeout ever ending a run (the hang budget), and a run that does hit that
timeout keeps what ran and still asks the model."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import RunFixbot, make_repo, read_example
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import reply

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

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
HANGING = "".join(
    f"\n\ndef test_mean_{n}() -> None:\n    assert mean([{n}.0, {n}.0]) == {n}.0\n"
    for n in range(1, 6)
)
PER_TEST = 4
WHOLE = 20  # without the hang budget, five hanging tests at 4 s would take all of it


def config(per_test: int, whole: int) -> str:
    return (
        "checks:\n"
        f"  - {{name: tests, run: python -m pytest, test_timeout_seconds: {per_test}}}\n"
        f"sandbox: {{timeout_seconds: {whole}}}\n"
        "verification: {minimize: false}\n"
    )


def test_a_bug_that_hangs_most_tests_is_fixed_without_a_command_timeout(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    tests = read_example("tests/test_calc.py") + HANGING
    files = {"calc.py": SPINS, "tests/test_calc.py": tests, ".fixbot.yml": config(PER_TEST, WHOLE)}
    repo = make_repo(tmp_path / "repo", files)
    with ScriptedOpenAI([STOPS]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr
    evidence = run.evidence
    assert evidence["status"] == "fixed"
    baseline = evidence["baseline"]
    assert baseline["status"] == "tests_failed" and "cut_short" not in baseline
    hung = {t: r["message"] for t, r in baseline["tests"].items() if "timed out" in r["message"]}
    assert len(hung) == 7  # test_mean, test_mean_single and the five above
    assert sum("the limit was shortened" in m for m in hung.values()) >= 3
    assert all(r["status"] != "timeout" for r in baseline["checks"])
    assert len(server.requests) == 1


UNSTOPPABLE = SPINS.replace(
    "    total, index = 0.0, 0\n",
    "    import faulthandler, signal\n"
    "    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
    "    faulthandler.cancel_dump_traceback_later()\n"
    "    total, index = 0.0, 0\n",
)
STOPS_UNSTOPPABLE = reply(
    "--- a/calc.py\n+++ b/calc.py\n@@ -15,4 +15,5 @@\n"
    "     total, index = 0.0, 0\n"
    "     while index < len(values):\n"
    "         total += values[index]\n"
    "+        index += 1\n"
    "     return total / len(values)\n",
    prose="The loop never advances its index.",
)


def test_a_run_the_command_timeout_cuts_short_still_asks_the_model(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    files = {"calc.py": UNSTOPPABLE, ".fixbot.yml": config(2, 8)}
    repo = make_repo(tmp_path / "repo", files)
    with ScriptedOpenAI([STOPS_UNSTOPPABLE]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr
    evidence = run.evidence
    assert evidence["status"] == "fixed", evidence["reason"]
    baseline = evidence["baseline"]
    assert baseline["status"] == "tests_failed"
    assert baseline["cut_short"].startswith("cut short while tests/test_calc.py::test_mean")
    running = baseline["tests"]["tests.test_calc::test_mean"]
    assert running["outcome"] == "failed"
    assert running["message"] == "the whole test run hit its 8 s timeout while this test ran"
    assert len(server.requests) == 1  # the model was asked
