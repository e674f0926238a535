"""structlog, set up once by cli.py: stderr only, human-readable on a terminal, JSON lines
otherwise; every value that equals or contains a registered secret is redacted."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable, MutableMapping
from typing import Any, Literal, TextIO

import structlog

LogFormat = Literal["auto", "human", "json"]
REDACTED = "[redacted]"
_HUMAN = [False]  # what configure() chose, for the progress display


class _Redactor:
    def __init__(self, secrets: Iterable[str]) -> None:
        self.secrets = [s for s in secrets if len(s) >= 4]

    def scrub(self, value: Any) -> Any:
        if isinstance(value, str):
            for secret in self.secrets:
                value = value.replace(secret, REDACTED)
            return value
        if isinstance(value, dict):
            return {k: self.scrub(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.scrub(v) for v in value]
        return value

    def __call__(
        self, logger: Any, method: str, event: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        return {key: self.scrub(value) for key, value in event.items()}


def configure(
    *, fmt: LogFormat = "auto", secrets: Iterable[str] = (), stream: TextIO | None = None
) -> None:
    human = fmt == "human" or (fmt == "auto" and (stream or sys.stderr).isatty())
    _HUMAN[0] = human
    renderer: Any = (
        structlog.dev.ConsoleRenderer(colors=False)
        if human
        else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            _Redactor(secrets),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
        # sys.stderr is looked up per logger, so a replaced stream (tests, redirection) is used.
        logger_factory=lambda *args: structlog.PrintLogger(file=stream or sys.stderr),
        cache_logger_on_first_use=False,
    )


def is_human() -> bool:
    """Whether the log is for a person (a terminal) rather than JSON lines."""
    return _HUMAN[0]


def get(name: str = "fixbot") -> Any:
    return structlog.get_logger(name)
