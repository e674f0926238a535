"""The checks in the sandbox, and the pass definition.

run_trial         a fresh workspace over the snapshot, a diff applied, the checks run (in full,
                  failing first, or only the failing ones again)
run_suite         the configured checks over one workspace, each by its kind; pytest with
                  fixbot's plugin, its report channel cross-checked (harness.py), a per-test
                  timeout (checks[].test_timeout_seconds, 60 s)
problems          the pass definition: why an attempt is not a pass ([] when it is)
reproduced        why a re-run of the failing checks and tests does not show them passing
classify          flaky / environment / code, from the baseline's runs
require_completed a baseline that did not run properly is the environment's problem
ruff_diff         zero-token fixes: ruff's own, when a failing check is a ruff check
"""

from __future__ import annotations

from fixbot.checks.autofix import MODEL as AUTOFIX_MODEL
from fixbot.checks.autofix import ruff_diff, ruff_failing
from fixbot.checks.baseline import network_probe, require_completed
from fixbot.checks.classify import Classification, classify, environment_cause
from fixbot.checks.findings import parse_mypy, parse_ruff, parse_ruff_format
from fixbot.checks.gates import TEST_ENV, BadTestCommand, command_argv, is_pytest
from fixbot.checks.harness import junit_id
from fixbot.checks.prepare import cache_key, dependency_files, prepared_environment
from fixbot.checks.selection import as_rerun
from fixbot.checks.suite import run_checks, run_suite
from fixbot.checks.trial import (
    Mode,
    limits_for,
    reader,
    run_trial,
    setup_limits,
    tampered_problems,
)
from fixbot.checks.verdict import new_findings, problems, reproduced

__all__ = [
    "AUTOFIX_MODEL",
    "TEST_ENV",
    "BadTestCommand",
    "Classification",
    "Mode",
    "as_rerun",
    "cache_key",
    "classify",
    "command_argv",
    "dependency_files",
    "environment_cause",
    "is_pytest",
    "junit_id",
    "limits_for",
    "network_probe",
    "new_findings",
    "parse_mypy",
    "parse_ruff",
    "parse_ruff_format",
    "prepared_environment",
    "problems",
    "reader",
    "reproduced",
    "require_completed",
    "ruff_diff",
    "ruff_failing",
    "run_checks",
    "run_suite",
    "run_trial",
    "setup_limits",
    "tampered_problems",
]
