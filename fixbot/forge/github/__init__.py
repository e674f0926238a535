"""GitHub behind the forge: event payloads, the Actions environment, the Action's run, and
the PyGithub client (the only module that imports PyGithub).

    run_action   one Actions step: the event in, at most one fix PR out (run.py)
    connect      the Publisher for one repository (client.py)
    parse_workflow, derive
                 a workflow file's steps (workflows.py) -> the checks and the install they run,
                 and what fixbot cannot run (derive.py): for `fixbot init` and the Action
"""

from __future__ import annotations

from fixbot.forge.github.actions import PHASES, ActionEnv, FixJob, secrets_of
from fixbot.forge.github.client import connect
from fixbot.forge.github.derive import Derived, Left, derive, proposed_checks, proposed_setup
from fixbot.forge.github.run import run_action
from fixbot.forge.github.workflows import parse_workflow

__all__ = [
    "PHASES",
    "ActionEnv",
    "Derived",
    "FixJob",
    "Left",
    "connect",
    "derive",
    "parse_workflow",
    "proposed_checks",
    "proposed_setup",
    "run_action",
    "secrets_of",
]
