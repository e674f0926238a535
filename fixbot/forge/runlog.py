"""A failed workflow run as context for the model: its failed jobs, their failed steps, and the
tail of each failed job's log, bounded, redacted, and inert.

Pure: fetching the jobs and the logs is the Publisher's (forge/github/client.py). A log is
whatever the failing build printed (the repository's code, its dependencies, anyone who can
push), so it is data the model may read to diagnose, and nothing more: never an instruction, never a
command (the test command comes only from the config), never a workflow command (fixbot does
not print it). The prompt shows it in a fence it cannot close, under a notice that it is
untrusted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from fixbot.records import FailedJob
from fixbot.secrets import redact

MAX_JOBS = 3  # failed jobs shown to the model; more add little but tokens
LINES_PER_JOB = 200
CHARS_PER_JOB = 16_000
DOWNLOAD_BYTES = 256_000  # what is read of a log's end before the tail is cut from it
NAME_CAP = 200

# "2024-01-01T00:00:00.0000000Z " before every line GitHub stores.
_TIMESTAMP = re.compile(r"^\ufeff?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ", re.MULTILINE)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
_FENCE = re.compile(r"`{3,}|~{3,}")


@dataclass(frozen=True)
class JobSummary:
    """What the jobs API says about one job of the run."""

    id: int
    name: str
    conclusion: str
    failed_steps: tuple[str, ...]


def failed(jobs: Sequence[JobSummary]) -> list[JobSummary]:
    """The jobs worth showing: failed or timed out (not cancelled, skipped or passed)."""
    return [job for job in jobs if job.conclusion in ("failure", "timed_out")]


def tail(
    raw: str,
    *,
    lines: int = LINES_PER_JOB,
    chars: int = CHARS_PER_JOB,
    secrets: Sequence[str] = (),
) -> str:
    """The end of a job log: timestamps and terminal escapes dropped, at most `lines` lines
    and `chars` characters, credentials redacted, and no run of backticks that could close
    the prompt's fence."""
    text = _ANSI.sub("", _TIMESTAMP.sub("", raw.replace("\r\n", "\n")))
    kept = text.rstrip("\n").split("\n")[-lines:]
    text = "\n".join(kept)
    if len(text) > chars:
        text = text[-chars:]
        text = text.split("\n", 1)[1] if "\n" in text else text  # start at a whole line
    text = "".join(ch if ch.isprintable() or ch in "\n\t" else " " for ch in text)
    return _FENCE.sub(lambda m: "'" * len(m.group()), redact(text, known=secrets))


def failed_job(summary: JobSummary, raw_log: str, *, secrets: Sequence[str] = ()) -> FailedJob:
    return FailedJob(
        name=_line(summary.name, secrets),
        conclusion=summary.conclusion,
        failed_steps=[_line(step, secrets) for step in summary.failed_steps],
        log_tail=tail(raw_log, secrets=secrets) if raw_log else "",
    )


def _line(text: str, secrets: Sequence[str]) -> str:
    one = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return _FENCE.sub(lambda m: "'" * len(m.group()), redact(one, known=secrets))[:NAME_CAP]
