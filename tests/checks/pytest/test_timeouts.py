"""A hanging test is a failure with its stack, and the rest of the suite still runs.

Each test runs directly and through fixbot's bubblewrap sandbox, with a 1 s per-test timeout and
a 60 s whole-command timeout: without the plugin's timeout every one of them would end in
`timeout` at the whole-command limit with no per-test result at all. That the whole command did
not time out (`timed_out` is False on every run) is what shows the per-test timeout did the work.
"""

from __future__ import annotations

import pytest

from tests.checks.conftest import HarnessRun, Suite, run_direct

SURROUNDINGS = """
def test_before():
    pass

def test_fails():
    assert 1 == 2

def test_after():
    pass
"""

# name -> (the module's code, a line of the stack where it hangs, the outcome)
IN_PROCESS = {
    "busy_loop": (
        "def test_hang():\n    n = 0\n    while True:\n        n += 1\n",
        "while True:",  # the alarm is taken on the loop's back edge
        "failed",
    ),
    "sleep": (
        "import time\n\ndef test_hang():\n    time.sleep(1e9)\n",
        "time.sleep(1e9)",
        "failed",
    ),
    "blocking_recv": (
        "import socket\n\ndef test_hang():\n    a, b = socket.socketpair()\n    a.recv(1)\n",
        "a.recv(1)",
        "failed",
    ),
    "queue_get": ("import queue\n\ndef test_hang():\n    queue.Queue().get()\n", "get()", "failed"),
    # The thread sleeps on after the test failed: the interpreter's exit would wait for it.
    "thread_join": (
        "import threading, time\n\ndef test_hang():\n"
        "    t = threading.Thread(target=time.sleep, args=(1e9,))\n    t.start()\n    t.join()\n",
        "t.join()",
        "failed",
    ),
    # A thread left running (not joined): the interpreter's exit would wait for it forever.
    "leaks_a_thread": (
        "import threading, time\n\ndef test_hang():\n"
        "    threading.Thread(target=time.sleep, args=(1e9,)).start()\n    time.sleep(1e9)\n",
        "time.sleep(1e9)",
        "failed",
    ),
    "fixture_setup": (
        "import time, pytest\n\n@pytest.fixture\ndef slow():\n    time.sleep(1e9)\n\n"
        "def test_hang(slow):\n    pass\n",
        "time.sleep(1e9)",
        "error",
    ),
    "fixture_teardown": (
        "import time, pytest\n\n@pytest.fixture\ndef slow():\n    yield\n    time.sleep(1e9)\n\n"
        "def test_hang(slow):\n    pass\n",
        "time.sleep(1e9)",
        "error",
    ),
}


@pytest.mark.parametrize("kind", sorted(IN_PROCESS))
def test_a_hanging_test_fails_with_its_stack_and_the_suite_goes_on(
    kind: str, suite: Suite, harness_run: HarnessRun
) -> None:
    code, line, outcome = IN_PROCESS[kind]
    suite.write("test_hang.py", code + SURROUNDINGS)
    result = harness_run()

    assert result.status == "tests_failed", result.problems
    assert result.problems == []
    hung = result.tests["test_hang.py::test_hang"]
    assert hung["outcome"] == outcome
    assert hung["message"].startswith("timed out after 1 s"), hung["message"]
    assert line in hung["detail"] and "test_hang.py" in hung["detail"], hung["detail"]
    assert "_pytest" not in hung["detail"].split("\n\n")[0]  # the test's frames, not pytest's
    assert result.tests["test_hang.py::test_fails"]["outcome"] == "failed"
    assert result.tests["test_hang.py::test_after"]["outcome"] == "passed"
    assert result.tests["test_hang.py::test_before"]["outcome"] == "passed"
    assert result.hung == [] and len(result.runs) == 1  # interrupted in-process: one run
    assert not result.runs[0].timed_out


# name -> (the module's code, a line its stack must show, what the message says)
UNSTOPPABLE = {
    # Catches the timeout (BaseException and all) and keeps spinning.
    "swallows_the_timeout": (
        "def test_hang():\n    n = 0\n    while True:\n        try:\n            while True:\n"
        "                n += 1\n        except BaseException:\n            pass\n",
        "while True:",
        "it caught the timeout",
    ),
    # A loop in C that never returns to the interpreter, so no Python signal handler runs.
    "c_loop": (
        "import collections, itertools\n\ndef test_hang():\n"
        "    collections.deque(itertools.count(), maxlen=0)\n",
        "in test_hang",
        "could not be interrupted",
    ),
    # Throws the alarm away, then spins.
    "ignores_the_alarm": (
        "import signal\n\ndef test_hang():\n    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
        "    n = 0\n    while True:\n        n += 1\n",
        "in test_hang",
        "could not be interrupted",
    ),
}


@pytest.mark.parametrize("kind", sorted(UNSTOPPABLE))
def test_a_test_that_cannot_be_stopped_is_failed_and_the_rest_runs_again(
    kind: str, suite: Suite, harness_run: HarnessRun
) -> None:
    code, line, says = UNSTOPPABLE[kind]
    suite.write("test_hang.py", code + SURROUNDINGS)
    result = harness_run()

    assert result.status == "tests_failed", result.problems
    assert result.problems == []
    assert result.hung == ["test_hang.py::test_hang"]
    assert len(result.runs) == 2  # the process that hung, then the suite without the test
    assert not any(run.timed_out for run in result.runs)
    assert result.runs[0].returncode == (86 if kind == "swallows_the_timeout" else 1)
    hung = result.tests["test_hang.py::test_hang"]
    assert hung["outcome"] == "failed"
    assert hung["message"].startswith("timed out after 1 s") and says in hung["message"]
    assert line in hung["detail"] and "test_hang.py" in hung["detail"], hung["detail"]
    assert result.tests["test_hang.py::test_after"]["outcome"] == "passed"
    assert result.tests["test_hang.py::test_fails"]["outcome"] == "failed"
    assert result.canaries == {"integrity": "passed", "must_pass": "passed", "must_fail": "xfailed"}


def test_the_whole_command_timeout_still_names_the_running_test(suite: Suite) -> None:
    """A test that disarms every in-process watchdog is left to the whole-command timeout, and
    the run says which test was running (the plugin wrote `start` before it)."""
    suite.write(
        "test_hang.py",
        "import faulthandler, signal\n\ndef test_hang():\n"
        "    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
        "    faulthandler.cancel_dump_traceback_later()\n    n = 0\n    while True:\n"
        "        n += 1\n" + SURROUNDINGS,
    )
    result = run_direct(suite, whole=6)
    assert result.runs[-1].timed_out
    assert result.running == "test_hang.py::test_hang"
    # What ran is the result: the running test failed, the rest never ran (and are missing).
    assert result.status == "tests_failed", result.problems
    hung = result.tests["test_hang.py::test_hang"]
    assert hung["outcome"] == "failed"
    assert hung["message"] == "the whole test run hit its 6 s timeout while this test ran"
    assert list(result.tests) == ["test_hang.py::test_hang"]
    assert result.cut_short == (
        "cut short while test_hang.py::test_hang ran: 3 collected tests did not run"
    )


def test_a_hang_while_collecting_is_still_a_timeout(suite: Suite) -> None:
    suite.write(
        "test_stuck.py",
        "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass\n",
    )
    result = run_direct(suite, whole=5)
    assert result.status == "timeout" and result.tests == {}
    assert result.running == "collection"


MANY_HANGS = (
    "".join(
        f"def test_hang_{n}():\n    import time\n    while True:\n        time.sleep(0.05)\n\n\n"
        for n in range(6)
    )
    + "def test_quick():\n    pass\n"
)


def test_many_hanging_tests_end_within_the_whole_commands_timeout(suite: Suite) -> None:
    """The tests that hang share half of the command's timeout: once it is spent, each further
    one gets the shortest limit, so the run ends by itself and every test has its outcome."""
    suite.write("test_many.py", MANY_HANGS)
    result = run_direct(suite, timeout=3, grace=1, whole=24)
    assert not result.runs[-1].timed_out, "the whole command's timeout ended the run"
    assert result.status == "tests_failed" and result.problems == []
    outcomes = {t.split("::")[1]: r["outcome"] for t, r in result.tests.items()}
    assert outcomes == {**{f"test_hang_{n}": "failed" for n in range(6)}, "test_quick": "passed"}
    messages = [result.tests[f"test_many.py::test_hang_{n}"]["message"] for n in range(6)]
    assert messages[0] == "timed out after 3 s (in call)"
    assert messages[-1].startswith(
        "timed out after 1 s (in call): the limit was shortened from 3 s"
    )
    assert result.runs[-1].seconds < 24


def test_a_test_within_its_time_is_not_touched(suite: Suite) -> None:
    suite.write("test_quick.py", "import time\n\ndef test_quick():\n    time.sleep(0.3)\n")
    result = run_direct(suite, timeout=2)
    assert result.status == "passed", result.problems
    assert result.tests == {
        "test_quick.py::test_quick": {
            "outcome": "passed",
            "message": "",
            "detail": "",
            "nodeid": "test_quick.py::test_quick",
        }
    }


def test_a_zero_timeout_turns_the_per_test_timeout_off(suite: Suite) -> None:
    suite.write("test_slow.py", "import time\n\ndef test_slow():\n    time.sleep(1.5)\n")
    result = run_direct(suite, timeout=0)
    assert result.status == "passed", result.problems
