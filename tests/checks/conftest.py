"""For the harness tests: a throwaway test suite, and pytest run over it with fixbot's plugin and
report channel directly (no sandbox: the reference behaviour), through bubblewrap, through
Docker."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from fixbot.checks.pytest import harness
from fixbot.checks.pytest.channel import Staged, Transport, stage_plugin
from fixbot.proc import Completed
from fixbot.proc import run as run_command
from fixbot.sandbox import BwrapSandbox, DockerSandbox, Limits, RunSpec, Sandbox
from tests.conftest import ENGINE_PROBLEM

WHOLE_COMMAND = 60.0  # the whole-command timeout in these tests; hangs must end well before
OUTPUT_CAP = 512 * 1024  # fixbot's Limits.output_bytes
PYTEST = ("-m", "pytest", "-p", "no:cacheprovider", "--color=no", "-q")


@dataclass
class Suite:
    root: Path

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path


@pytest.fixture
def suite(tmp_path: Path) -> Suite:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pytest.ini").write_text("[pytest]\n")
    return Suite(root)


@dataclass
class DirectLauncher:
    """No sandbox: for tests of the channel itself, and the reference behaviour."""

    workspace: Path
    timeout: float = 300.0
    output_cap: int = OUTPUT_CAP
    transport: Transport = "fd"

    def harness_path(self, staged: Staged) -> str:
        return str(staged.folder)

    @property
    def command_timeout(self) -> float:
        return self.timeout

    def launch(
        self, argv: Sequence[str], *, env: Mapping[str, str], staged: Staged, fds: Sequence[int]
    ) -> Completed:
        base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONDONTWRITEBYTECODE": "1"}
        return run_command(
            argv,
            cwd=self.workspace,
            env={**base, **env},
            timeout=self.timeout,
            output_cap=self.output_cap,
            pass_fds=fds,
        )


def run_direct(
    suite: Suite,
    *args: str,
    timeout: float = 1.0,
    grace: float = 1.0,
    whole: float = WHOLE_COMMAND,
    python: str = sys.executable,
) -> harness.TestRun:
    launcher = DirectLauncher(suite.root, timeout=whole)
    argv = [python, *PYTEST, *args]
    return harness.run_pytest(launcher, argv, test_timeout=timeout, grace=grace)


def one_run(suite: Suite, *args: str) -> harness.OneRun:
    """A single pytest process over the suite, directly, and what its channel said."""
    staged = stage_plugin()
    try:
        launcher = DirectLauncher(suite.root)
        argv = [sys.executable, *PYTEST, *args]
        return harness.run_once(launcher, argv, staged, test_timeout=5, grace=1)
    finally:
        staged.cleanup()


def run_boxed(
    box: Sandbox,
    suite: Suite,
    *args: str,
    timeout: float = 1.0,
    grace: float = 1.0,
    whole: float = WHOLE_COMMAND,
) -> tuple[harness.TestRun, Path]:
    """The run through a sandbox, and its outputs folder (kept for inspection)."""
    outputs = Path(tempfile.mkdtemp(prefix="fixbot-out-", dir=suite.root.parent))
    limits = Limits(timeout_seconds=whole, output_bytes=OUTPUT_CAP)
    env = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    launcher = harness.SandboxLauncher(box, RunSpec(suite.root, outputs, limits=limits, env=env))
    argv = ["python", *PYTEST, *args]
    return harness.run_pytest(launcher, argv, test_timeout=timeout, grace=grace), outputs


@pytest.fixture(scope="session")
def bwrap_box() -> BwrapSandbox:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed here; CI installs it and runs these")
    return BwrapSandbox()


@pytest.fixture(scope="session")
def docker_box() -> Iterator[DockerSandbox]:
    if ENGINE_PROBLEM is not None:
        pytest.skip(f"{ENGINE_PROBLEM}; CI starts one with .ci/docker-setup.sh")
    with DockerSandbox() as box:
        yield box


HarnessRun = Callable[..., harness.TestRun]


@pytest.fixture(params=["direct", "bwrap"])
def harness_run(request: pytest.FixtureRequest, suite: Suite) -> HarnessRun:
    """harness_run(*args, **kw) -> TestRun, directly or through fixbot's bubblewrap sandbox."""
    if request.param == "direct":
        return lambda *a, **kw: run_direct(suite, *a, **kw)
    box = request.getfixturevalue("bwrap_box")
    return lambda *a, **kw: run_boxed(box, suite, *a, **kw)[0]
