"""`fixbot verify`: re-check a recorded fix from its evidence, trusting nothing in it but data.

The evidence names a commit and a diff. The check takes its own snapshot of that commit,
reads the configuration committed there, confirms the diff and the protected-file manifest
are the ones recorded, reproduces the baseline failure, and runs the pass definition again.
The checks run as in a fix (fixbot's pytest plugin, the report channel, the cross-check and the
canaries): a diff whose code lies to pytest is refused here too, each disagreement named.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fixbot.checks import (
    IndexSettings,
    classify,
    generated_paths,
    reader,
    run_trial,
    tampered_problems,
    with_quarantine,
)
from fixbot.checks import problems as pass_problems
from fixbot.config import Config, load_config
from fixbot.edits import DiffRejected, plan_patch
from fixbot.errors import UsageError
from fixbot.records import COMPLETED, CheckResult, failing_tests
from fixbot.sandbox import Sandbox
from fixbot.screen import unread_sources
from fixbot.snapshot import (
    Snapshot,
    manifest_digest,
    protect,
    repo_files,
    resolve_commit,
    take_snapshot,
)


@dataclass(frozen=True)
class Reverification:
    holds: bool
    problems: list[str] = field(default_factory=list)
    failing_before: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {
            "holds": self.holds,
            "problems": self.problems,
            "failing_before": self.failing_before,
        }


def load_evidence(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path}: not a readable evidence.json ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("diff"), str):
        raise UsageError(f"{path}: not a fixbot evidence file (no diff)")
    if data.get("status") != "fixed" or not data["diff"]:
        raise UsageError(f"{path}: status is {data.get('status')!r}; only a fix can be verified")
    if not isinstance(data.get("commit"), str) or not data["commit"]:
        raise UsageError(f"{path}: names no commit")
    return data


def reverify(
    evidence: dict[str, Any], repo: Path, sandbox: Sandbox, *, index: IndexSettings | None = None
) -> Reverification:
    patch_text: str = evidence["diff"]
    if hashlib.sha256(patch_text.encode()).hexdigest() != evidence.get("diff_sha256"):
        return Reverification(False, ["the diff does not match the SHA-256 recorded with it"])
    problems = []
    commit = resolve_commit(repo, evidence["commit"])
    with tempfile.TemporaryDirectory(prefix="fixbot-verify-") as tmp:
        exported = take_snapshot(repo, (), Path(tmp), commit)
        config = load_config(exported.tree)  # the configuration committed at that commit
        snapshot = protect(exported, config.protected_paths)
        if manifest_digest(snapshot.manifest) != evidence.get("manifest_sha256"):
            problems.append("the protected files at this commit differ from the recorded manifest")
        before = _baseline(sandbox, snapshot, config, index)
        failing = failing_tests(before)
        if not failing:
            problems.append("the recorded failure no longer reproduces at this commit")
        try:
            # Judged against the baseline, as the fix run was (its set-aside gates left out).
            after, tampered = run_trial(
                sandbox, snapshot, config, patch_text, baseline=before, index=index
            )
        except DiffRejected as exc:
            return Reverification(False, [f"the diff does not apply: {exc}"], failing)
        problems += tampered_problems(tampered)
        problems += pass_problems(before, after)
        problems += [f"tampering: {reason}" for reason in after.get("tampering", [])]
        problems += unread_sources(plan_patch(patch_text, reader(snapshot.tree)))
    return Reverification(holds=not problems, problems=problems, failing_before=failing)


def _baseline(
    sandbox: Sandbox, snapshot: Snapshot, config: Config, index: IndexSettings | None
) -> CheckResult:
    """The failure reproduced as the fix run did: repeated, its flaky and environmental tests
    quarantined from these runs alone (never from the evidence, which could say anything)."""
    first, _ = run_trial(sandbox, snapshot, config, "", index=index)
    if first["status"] not in COMPLETED or not failing_tests(first):
        return first
    runs = [first]
    for _ in range(config.verification.baseline_runs - 1):
        again, _ = run_trial(sandbox, snapshot, config, "", index=index)
        if again["status"] not in COMPLETED:
            return first
        runs.append(again)
    found = classify(runs, repo_files(snapshot), generated_paths(reader(snapshot.tree)))
    return with_quarantine(first, found)
