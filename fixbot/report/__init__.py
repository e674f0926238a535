"""The run's result as data, files and text; the one owner of exit codes.

Exit codes:
    0  fixed, or already passing
    1  not fixed: escalated (attempts or budget spent, every candidate rejected, flaky,
       environment) or aborted by a human
    2  usage or configuration error
    3  environment error: no sandbox, model unreachable, not a git repository, dirty tree, ...
"""

from __future__ import annotations

from fixbot.report.files import load_result, write_outputs
from fixbot.report.markdown import render_markdown
from fixbot.report.result import (
    EXIT_ENVIRONMENT,
    EXIT_NOT_FIXED,
    EXIT_OK,
    EXIT_USAGE,
    FixResult,
    error_kind,
    error_result,
    exit_code,
)

__all__ = [
    "EXIT_ENVIRONMENT",
    "EXIT_NOT_FIXED",
    "EXIT_OK",
    "EXIT_USAGE",
    "FixResult",
    "error_kind",
    "error_result",
    "exit_code",
    "load_result",
    "render_markdown",
    "write_outputs",
]
