"""The checks in the sandbox, and the pass definition.

The parts:

    pytest/     pytest as fixbot runs it: the staged plugin, the report channel, the cross-check
    prepare/    the project's own environment, built from its setup_command
    running     trial.py (a fresh workspace, a diff, the checks: full, failing first, rerun),
                suite.py (each check by its kind), gates.py, unittests.py, tools.py,
                findings.py, part.py, selection.py, autofix.py (ruff's own fixes)
    judgement   verdict.py (the pass definition), classify.py (flaky / environment / code, and
                the quarantine), baseline.py (a baseline that did not run properly)

The face, what the loop, the runs and the roots use:

run_trial / Mode  a fresh workspace over the snapshot, a diff applied, the checks run
limits_for        a check's limits from the config
problems          the pass definition: why an attempt is not a pass ([] when it is)
reproduced        why a re-run of the failing checks and tests does not show them passing
classify          flaky / environment / code, from the baseline's runs, and the quarantine
require_completed a baseline that did not run properly is the environment's problem
imports_checked   the tests import the project from the repository, the rest from its environment
ruff_diff         zero-token fixes: ruff's own, when a failing check is a ruff check
index_settings    the host's package-index settings the prepare step inherits
"""

from __future__ import annotations

from fixbot.checks.autofix import MODEL as AUTOFIX_MODEL
from fixbot.checks.autofix import ruff_diff, ruff_failing
from fixbot.checks.baseline import imports_checked, network_probe, require_completed
from fixbot.checks.classify import classify, generated_paths, with_quarantine
from fixbot.checks.prepare import IndexSettings, index_settings, prune_environments
from fixbot.checks.selection import as_rerun
from fixbot.checks.trial import Mode, limits_for, reader, run_trial, tampered_problems
from fixbot.checks.verdict import problems, reproduced

__all__ = [
    "AUTOFIX_MODEL",
    "IndexSettings",
    "Mode",
    "as_rerun",
    "classify",
    "generated_paths",
    "imports_checked",
    "index_settings",
    "limits_for",
    "network_probe",
    "problems",
    "prune_environments",
    "reader",
    "reproduced",
    "require_completed",
    "ruff_diff",
    "ruff_failing",
    "run_trial",
    "tampered_problems",
    "with_quarantine",
]
