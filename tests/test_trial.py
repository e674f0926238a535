"""A trial retries a sandbox that failed (not the code in it) a bounded number of times."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from fixbot.checks.trial import INFRA_ATTEMPTS, run_trial
from fixbot.config import Config, Gates
from fixbot.errors import SandboxFailed
from fixbot.proc import Completed
from fixbot.sandbox import DEFAULT_LIMITS, Limits
from fixbot.sandbox.bwrap import BwrapSandbox
from fixbot.snapshot.protected import take_snapshot
from tests.conftest import make_repo

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


class BrokenSandbox:
    """The real sandbox behind a fault: its first `failures` runs die as a sandbox would."""

    name = "broken"

    def __init__(self, failures: int) -> None:
        self.inner = BwrapSandbox()
        self.failures = failures
        self.calls = 0

    def close(self) -> None:
        pass

    def describe(self) -> str:
        return "broken"

    @property
    def layered(self) -> bool:
        return self.inner.layered

    def run(
        self,
        argv: Sequence[str],
        *,
        workspace: Path,
        outputs: Path,
        lower: Path | None = None,
        prepared: Path | None = None,
        readonly: Sequence[str] = (),
        limits: Limits = DEFAULT_LIMITS,
        env: Mapping[str, str] | None = None,
    ) -> Completed:
        self.calls += 1
        if self.calls <= self.failures:
            raise SandboxFailed("bubblewrap failed: setting up uid map: Permission denied")
        return self.inner.run(
            argv,
            workspace=workspace,
            outputs=outputs,
            lower=lower,
            prepared=prepared,
            readonly=readonly,
            limits=limits,
            env=env,
        )


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
