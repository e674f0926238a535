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

from fixbot.checks import problems as pass_problems
from fixbot.checks import run_trial, tampered_problems
from fixbot.config import load_config
from fixbot.edits import DiffRejected
from fixbot.errors import UsageError
from fixbot.records import failing_tests
from fixbot.sandbox import Sandbox
from fixbot.snapshot import manifest_digest, protect, resolve_commit, take_snapshot


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


def reverify(evidence: dict[str, Any], repo: Path, sandbox: Sandbox) -> Reverification:
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
        before, _ = run_trial(sandbox, snapshot, config, "")
        failing = failing_tests(before)
        if not failing:
            problems.append("the recorded failure no longer reproduces at this commit")
        try:
            after, tampered = run_trial(sandbox, snapshot, config, patch_text)
        except DiffRejected as exc:
            return Reverification(False, [f"the diff does not apply: {exc}"], failing)
        problems += tampered_problems(tampered)
        problems += pass_problems(before, after)
        problems += [f"tampering: {reason}" for reason in after.get("tampering", [])]
    return Reverification(holds=not problems, problems=problems, failing_before=failing)
