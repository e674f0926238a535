"""The channel through the real sandboxes: a pipe for bubblewrap, a once-accepted unix socket
for Docker (a container cannot inherit fixbot's descriptor), the plugin's folder read-only."""

from __future__ import annotations

import pytest

from fixbot.checks.pytest.channel import HARNESS_MOUNT
from fixbot.proc import Completed
from fixbot.sandbox import BwrapSandbox, DockerSandbox, RunSpec
from tests.checks.conftest import Suite, run_boxed
from tests.checks.pytest.test_timeouts import SURROUNDINGS, UNSTOPPABLE
from tests.checks.test_tampering import NAIVE_FORGER, assert_tampered, plant

SANDBOX_VIEW = """
import glob, os, socket, pytest

def test_the_plugin_folder_is_read_only():
    (plugin,) = glob.glob("/fixbot-harness/fixbot_harness_*.py")
    with pytest.raises(OSError):
        open(plugin, "a")
    with pytest.raises(OSError):
        open("/fixbot-harness/fixbot_harness_0.py", "w")

def test_the_socket_takes_no_second_connection():
    path = "/fixbot-harness/channel.sock"
    if not os.path.exists(path):
        pytest.skip("a pipe, not a socket, in this sandbox")
    with pytest.raises(OSError):
        socket.socket(socket.AF_UNIX).connect(path)
"""


def test_bwrap_shows_the_plugin_read_only(suite: Suite, bwrap_box: BwrapSandbox) -> None:
    suite.write("test_view.py", SANDBOX_VIEW)
    result, _ = run_boxed(bwrap_box, suite)
    assert result.status == "passed", (result.problems, result.runs[-1].tail(2000))
    assert result.tests["test_view.py::test_the_plugin_folder_is_read_only"]["outcome"] == "passed"


def test_docker_results_arrive_over_the_socket(suite: Suite, docker_box: DockerSandbox) -> None:
    code = UNSTOPPABLE["swallows_the_timeout"][0]
    suite.write("test_hang.py", code + SURROUNDINGS + "\nimport time\n\ndef test_sleeps():\n"
                "    time.sleep(1e9)\n")  # fmt: skip
    suite.write("test_view.py", SANDBOX_VIEW)
    result, _ = run_boxed(docker_box, suite)
    assert result.status == "tests_failed", (result.problems, result.runs[-1].tail(2000))
    assert result.problems == []
    assert result.hung == ["test_hang.py::test_hang"]
    assert "caught the timeout" in result.tests["test_hang.py::test_hang"]["message"]
    sleeps = result.tests["test_hang.py::test_sleeps"]
    assert sleeps["message"].startswith("timed out after 1 s") and "time.sleep" in sleeps["detail"]
    assert result.tests["test_hang.py::test_after"]["outcome"] == "passed"
    view = "test_view.py::test_the_socket_takes_no_second_connection"
    assert result.tests[view]["outcome"] == "passed"  # refused, not skipped
    assert result.tests["test_view.py::test_the_plugin_folder_is_read_only"]["outcome"] == "passed"


def test_docker_forged_lines_are_caught(suite: Suite, docker_box: DockerSandbox) -> None:
    plant(suite, NAIVE_FORGER)
    result, _ = run_boxed(docker_box, suite)
    assert_tampered(result, "a report line was not written by fixbot's plugin")


def test_docker_refuses_descriptors_it_cannot_pass(suite: Suite, docker_box: DockerSandbox) -> None:
    assert not docker_box.passes_fds
    spec = RunSpec(suite.root, suite.root, fds=(5,))
    with pytest.raises(ValueError, match="cannot inherit descriptors"):
        docker_box.run(["true"], spec)


def test_a_mounted_folder_is_read_only_in_bwrap(suite: Suite, bwrap_box: BwrapSandbox) -> None:
    (suite.root.parent / "mine").mkdir()
    (suite.root.parent / "mine" / "seen").write_text("fixbot's\n")
    outputs = suite.root.parent / "out"
    outputs.mkdir()
    spec = RunSpec(suite.root, outputs, mounts=((suite.root.parent / "mine", HARNESS_MOUNT),))
    done: Completed = bwrap_box.run(
        ["sh", "-c", f"cat {HARNESS_MOUNT}/seen; echo x > {HARNESS_MOUNT}/seen || echo refused"],
        spec,
    )
    lines = done.output.splitlines()
    assert lines[0] == "fixbot's" and lines[-1] == "refused", lines
    assert (suite.root.parent / "mine" / "seen").read_text() == "fixbot's\n"
