"""Found by the red team (75e2bf6): `fixbot verify` judged a candidate's run with the
baseline's set-aside rule, so a diff that made a gate unable to run (two modules of one name
stop mypy) dropped that gate instead of failing. Only a run of the untouched commit sets a gate
aside, and a full run must run every check its baseline ran."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from fixbot.checks import problems, run_trial
from fixbot.config import load_config
from fixbot.runs.reverify import reverify
from fixbot.sandbox import BwrapSandbox
from fixbot.snapshot import manifest_digest, protect, take_snapshot
from tests.conftest import git, make_repo

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

CONFIG = "test_command: python -m pytest\ngates:\n  lint: false\n  types: true\n"
# Fixes the failing tests, and adds two modules mypy maps to one name: mypy stops at a
# blocking error without a `path:line:` line ("Duplicate module named"), the gate errors.
DIFF = """\
--- a/calc.py
+++ b/calc.py
@@ -11,3 +11,3 @@ def mean(values: list[float]) -> float:
     \"\"\"The arithmetic mean of a non-empty list.\"\"\"
-    return sum(values) / (len(values) + 1)
+    return sum(values) / len(values)
\x20
--- /dev/null
+++ b/a/dup.py
@@ -0,0 +1 @@
+x: int = "not an int"
--- /dev/null
+++ b/b/dup.py
@@ -0,0 +1 @@
+y: int = "not an int"
"""


def test_verify_refuses_a_diff_that_stops_a_gate_that_ran_at_baseline(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": CONFIG})
    commit = git(repo, "rev-parse", "HEAD").strip()
    (tmp_path / "w").mkdir()
    config = load_config(repo)
    snapshot = protect(take_snapshot(repo, (), tmp_path / "w", commit), config.protected_paths)
    sandbox = BwrapSandbox()

    # The fix run's own judgement refuses it: the mypy gate ran at baseline and errors now.
    before, _ = run_trial(sandbox, snapshot, config, "")
    assert [r["name"] for r in before["checks"]] == ["types", "tests"]
    assert "set_aside" not in before
    after, _ = run_trial(sandbox, snapshot, config, DIFF, baseline=before)
    assert any("the check types did not complete" in p for p in problems(before, after))

    # `fixbot verify` of the same diff (evidence is data: anyone can write it).
    evidence = {
        "status": "fixed",
        "commit": commit,
        "diff": DIFF,
        "diff_sha256": hashlib.sha256(DIFF.encode()).hexdigest(),
        "manifest_sha256": manifest_digest(snapshot.manifest),
    }
    verdict = reverify(evidence, repo, sandbox)
    assert not verdict.holds, "verify says the fix holds, though the types gate never ran"
