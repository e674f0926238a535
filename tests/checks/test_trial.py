"""A trial retries a sandbox that failed (not the code in it) a bounded number of times."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from fixbot.checks.trial import INFRA_ATTEMPTS, run_trial
from fixbot.config import Config, Gates
from fixbot.errors import SandboxFailed
from fixbot.proc import Completed
from fixbot.sandbox import BwrapSandbox, RunSpec
from fixbot.snapshot import take_snapshot
from tests.conftest import make_repo
from tests.fakes import DelegatingSandbox

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


class BrokenSandbox(DelegatingSandbox):
    """The real sandbox behind a fault: its first `failures` runs die as a sandbox would."""

    def __init__(self, failures: int) -> None:
        super().__init__(BwrapSandbox())
        self.name = "broken"
        self.failures = failures
        self.calls = 0

    def describe(self) -> str:
        return "broken"

    def run(self, argv: Sequence[str], spec: RunSpec) -> Completed:
        self.calls += 1
        if self.calls <= self.failures:
            raise SandboxFailed("bubblewrap failed: setting up uid map: Permission denied")
        return self.inner.run(argv, spec)


CONFIG = Config(gates=Gates(lint=False, types=False))


def test_a_sandbox_failure_is_retried_then_succeeds(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (tmp_path / "work").mkdir()
    snapshot = take_snapshot(repo, CONFIG.protected_paths, tmp_path / "work", "HEAD")
    sandbox = BrokenSandbox(failures=INFRA_ATTEMPTS - 1)
    result, tampered = run_trial(sandbox, snapshot, CONFIG, "")
    assert result["status"] == "tests_failed" and tampered == []
    assert sandbox.calls == INFRA_ATTEMPTS


def test_a_sandbox_that_keeps_failing_is_an_environment_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (tmp_path / "work").mkdir()
    snapshot = take_snapshot(repo, CONFIG.protected_paths, tmp_path / "work", "HEAD")
    sandbox = BrokenSandbox(failures=100)
    with pytest.raises(SandboxFailed, match=f"failed {INFRA_ATTEMPTS} times"):
        run_trial(sandbox, snapshot, CONFIG, "")
    assert sandbox.calls == INFRA_ATTEMPTS
