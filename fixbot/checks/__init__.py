"""The checks in the sandbox, and the pass definition.

run_trial         a fresh workspace over the snapshot, a diff applied, the checks run
problems          the pass definition: why an attempt is not a pass ([] when it is)
classify          flaky / environment / code, from the baseline's runs, and the quarantine
require_completed a baseline that did not run properly is the environment's problem
ruff_diff         zero-token fixes: ruff's own, for ruff-only failures
prepared_environment / index_settings / plugin_options
                  the prepare step, the host's package-index settings it inherits, and the
                  prepared environment's pytest plugins
"""

from __future__ import annotations

from fixbot.checks.autofix import MODEL as AUTOFIX_MODEL
from fixbot.checks.autofix import ruff_diff, ruff_only
from fixbot.checks.baseline import network_probe, require_completed
from fixbot.checks.classify import (
    Classification,
    classify,
    environment_cause,
    generated_paths,
    with_quarantine,
)
from fixbot.checks.gates import (
    TEST_ENV,
    BadTestCommand,
    command_argv,
    is_pytest,
    parse_mypy,
    parse_ruff,
    run_checks,
)
from fixbot.checks.index import IndexSettings, index_settings
from fixbot.checks.junit import parse_junit
from fixbot.checks.plugins import plugin_options
from fixbot.checks.prepare import (
    cache_key,
    prepared_environment,
    prune_environments,
    whole_tail,
)
from fixbot.checks.scm import scm_env, scm_version
from fixbot.checks.trial import limits_for, reader, run_trial, setup_limits, tampered_problems
from fixbot.checks.verdict import new_findings, problems

__all__ = [
    "AUTOFIX_MODEL",
    "TEST_ENV",
    "BadTestCommand",
    "Classification",
    "IndexSettings",
    "cache_key",
    "classify",
    "command_argv",
    "environment_cause",
    "generated_paths",
    "index_settings",
    "is_pytest",
    "limits_for",
    "network_probe",
    "new_findings",
    "parse_junit",
    "parse_mypy",
    "parse_ruff",
    "plugin_options",
    "prepared_environment",
    "problems",
    "prune_environments",
    "reader",
    "require_completed",
    "ruff_diff",
    "ruff_only",
    "run_checks",
    "run_trial",
    "scm_env",
    "scm_version",
    "setup_limits",
    "tampered_problems",
    "whole_tail",
    "with_quarantine",
]
