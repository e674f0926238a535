"""A CI's commands as data, never run: the checks it runs (spec.py), the words of a command
(words.py, the one split rule), what only a shell reads (shell.py), one CI line read as a
check, an install, a script or nothing fixbot can run (ci.py), and the files its gates read
for configuration (configs.py).

Pure and in the foundation: config.py validates `checks:` and `setup_command` with it, and the
forge maps a workflow's `run:` lines with it, so it imports nothing that runs anything (the
publish path must not load the sandbox).
"""

from __future__ import annotations

from fixbot.commands.ci import Check, Ignored, Install, Script, map_command
from fixbot.commands.configs import gate_config, gate_files
from fixbot.commands.shell import Line, command_lines
from fixbot.commands.spec import (
    DEFAULT_TEST_TIMEOUT,
    PYTHON,
    CheckKind,
    CheckSpec,
    InvalidCheck,
    is_ruff,
    legacy_checks,
    resolve_checks,
    tool_arguments,
)
from fixbot.commands.words import setup_words, split_words

__all__ = [
    "DEFAULT_TEST_TIMEOUT",
    "PYTHON",
    "Check",
    "CheckKind",
    "CheckSpec",
    "Ignored",
    "Install",
    "InvalidCheck",
    "Line",
    "Script",
    "command_lines",
    "gate_config",
    "gate_files",
    "is_ruff",
    "legacy_checks",
    "map_command",
    "resolve_checks",
    "setup_words",
    "split_words",
    "tool_arguments",
]
