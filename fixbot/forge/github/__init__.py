"""GitHub behind the forge: event payloads, the Actions environment, the Action's run, and
the PyGithub client (the only module that imports PyGithub).

    run_action   one Actions step: the event in, at most one fix PR out (run.py)
    connect      the Publisher for one repository (client.py)
    parse_workflow, derive
                 a workflow file's steps (workflows.py) -> the checks and the install they run,
                 and what fixbot cannot run (derive.py): for `fixbot init` and the Action
"""

from __future__ import annotations

from fixbot.forge.github.actions import (
    PHASES,
    ActionEnv,
    ActionOutcome,
    ActionStatus,
    FixJob,
    FixRunner,
    Phase,
    PublisherFactory,
    WorkflowCommands,
    escape_data,
    neutral,
    secrets_of,
)
from fixbot.forge.github.client import GitHubApiError, GitHubPublisher, connect, retry_policy
from fixbot.forge.github.derive import (
    Derived,
    Found,
    Left,
    derive,
    proposed_checks,
    proposed_setup,
)
from fixbot.forge.github.event import decide, is_bot, load_payload, parse_command, with_pull
from fixbot.forge.github.run import run_action
from fixbot.forge.github.workflows import (
    Step,
    Workflow,
    WorkflowError,
    parse_workflow,
    steps_named,
)

__all__ = [
    "PHASES",
    "ActionEnv",
    "ActionOutcome",
    "ActionStatus",
    "Derived",
    "FixJob",
    "FixRunner",
    "Found",
    "GitHubApiError",
    "GitHubPublisher",
    "Left",
    "Phase",
    "PublisherFactory",
    "Step",
    "Workflow",
    "WorkflowCommands",
    "WorkflowError",
    "connect",
    "decide",
    "derive",
    "escape_data",
    "is_bot",
    "load_payload",
    "neutral",
    "parse_command",
    "parse_workflow",
    "proposed_checks",
    "proposed_setup",
    "retry_policy",
    "run_action",
    "secrets_of",
    "steps_named",
    "with_pull",
]
