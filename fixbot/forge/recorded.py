"""The recorded result as data: the publish step trusts nothing it did not decide itself.

The publish job reads evidence.json and fix.diff from the fix job's artifact. Before anything
is pushed or commented, `check_recorded` refuses (UsageError, exit 2) a fix whose diff

    * does not hash to the SHA-256 the fix job reported through its own step output
      (`diff-sha256`, passed to this job by the workflow, never read from the artifact), or
    * fails the screen's rules for a recorded diff (fixbot.screen.recorded_problems): a shape
      fixbot never renders (modes, symlinks, submodules, renames, binary patches) or a path no
      fix may change (CI, git's files, fixbot's, tests and test or gate configuration under the
      trusted checkout's protected globs, case-insensitively).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from fixbot.errors import UsageError
from fixbot.report import FixResult
from fixbot.screen import recorded_problems

SHOWN = 5  # problems named in the refusal


def check_recorded(
    result: FixResult, *, expected_sha256: str | None, protected: Sequence[str]
) -> None:
    """Refuse a recorded fix the publish step cannot trust; None: it may be published.
    `expected_sha256` None: the result was decided in this process (phase all)."""
    if result.status != "fixed" or not result.diff:
        return
    if expected_sha256 is not None:
        if not expected_sha256:
            raise UsageError(
                "refusing to publish: the publish step got no diff-sha256 from the fix job "
                "(pass `diff-sha256: ${{ needs.fix.outputs.diff-sha256 }}` to the action)"
            )
        actual = hashlib.sha256(result.diff.encode()).hexdigest()
        if actual != expected_sha256.strip().lower():
            raise UsageError(
                f"refusing to publish: fix.diff hashes to {actual[:16]}..., but the fix job "
                f"reported {expected_sha256.strip()[:16]}...: the artifact was changed"
            )
    problems = recorded_problems(result.diff, protected)
    if problems:
        more = f" (and {len(problems) - SHOWN} more)" if len(problems) > SHOWN else ""
        raise UsageError(
            "refusing to publish the recorded diff: " + "; ".join(problems[:SHOWN]) + more
        )
