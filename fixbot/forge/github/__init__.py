"""GitHub behind the forge: event payloads, the Actions environment, the Action's run, and
the PyGithub client (the only module that imports PyGithub).

    run_action   one Actions step: the event in, at most one fix PR out (run.py)
    connect      the Publisher for one repository (client.py)
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
from fixbot.forge.github.event import decide, is_bot, load_payload, parse_command, with_pull
from fixbot.forge.github.run import run_action

__all__ = [
    "PHASES",
    "ActionEnv",
    "ActionOutcome",
    "ActionStatus",
    "FixJob",
    "FixRunner",
    "GitHubApiError",
    "GitHubPublisher",
    "Phase",
    "PublisherFactory",
    "WorkflowCommands",
    "connect",
    "decide",
    "escape_data",
    "is_bot",
    "load_payload",
    "neutral",
    "parse_command",
    "retry_policy",
    "run_action",
    "secrets_of",
    "with_pull",
]
