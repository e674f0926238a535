"""The conversations fixbot has with the model: the task (and the last attempt with its
feedback), the feedback on a failed attempt, a diagnosis request, an answer's resume note."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from fixbot.llm import estimate_tokens
from fixbot.prompts.excerpts import prompt_values
from fixbot.prompts.render import render
from fixbot.records import CheckResult, FailedJob

Message = dict[str, str]


class ShownLesson(Protocol):
    """What a lesson shows the model: the failure it fixed and how."""

    @property
    def failure(self) -> tuple[str, ...]: ...

    @property
    def fix(self) -> str: ...


def system_message(protected_globs: Sequence[str]) -> Message:
    return {"role": "system", "content": render("system.j2", protected=list(protected_globs))}


def fit_jobs(jobs: Sequence[FailedJob], tokens: int) -> list[FailedJob]:
    """The failed jobs with their log tails cut (from the front: the end is what failed) so
    that together they take at most `tokens`."""
    share = max(0, tokens * 4 // max(1, len(jobs)))  # characters per job, ~4 to a token
    return [{**job, "log_tail": job["log_tail"][-share:] if share else ""} for job in jobs]


def task_messages(
    baseline: CheckResult,
    *,
    tree: Path,
    files: Sequence[str],
    manifest: Mapping[str, str],
    protected_globs: Sequence[str],
    commit: str,
    hint: str,
    ci_jobs: Sequence[FailedJob],
    lessons: Sequence[ShownLesson],
    budget_tokens: int,
    previous: tuple[str, str] | None = None,
) -> list[Message]:
    """The conversation for the next attempt: the task, then (on a retry) the last attempt's
    reply and the feedback on it. The CI log tails, lessons and hint share the task prompt's
    budget: the log tails get at most a quarter of it (their ends kept), the repository's
    context what the three leave (at least half)."""
    jobs = fit_jobs(ci_jobs, budget_tokens // 4)
    around = "".join(
        [hint, *(j["log_tail"] + "".join(j["failed_steps"]) for j in jobs)]
        + [lesson.fix + "".join(lesson.failure) for lesson in lessons]
    )
    values = prompt_values(
        baseline,
        tree,
        files,
        protected=manifest,
        budget_tokens=max(budget_tokens // 2, budget_tokens - estimate_tokens(around)),
    )
    task = render("task.j2", commit=commit, hint=hint, ci_jobs=jobs, lessons=lessons, **values)
    messages = [system_message(protected_globs), {"role": "user", "content": task}]
    if previous is not None:
        reply, feedback = previous
        messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": feedback}]
    return messages


def feedback(
    facts: Mapping[str, Any], *, repeated: str, others: Sequence[Mapping[str, Any]]
) -> str:
    """What the model is told about its failed attempt (`facts`: number, diff, problems,
    failing)."""
    return render("feedback.j2", repeated=repeated, others=list(others), **facts)


def diagnosis_messages(protected_globs: Sequence[str], facts: Mapping[str, Any]) -> list[Message]:
    return [
        system_message(protected_globs),
        {"role": "user", "content": render("diagnose.j2", **facts)},
    ]


def resume_note(hint: str, allowed: Sequence[str], previous: str) -> str:
    """The feedback after a human's answer: their hint, what they opened, the last result."""
    return render("resume.j2", hint=hint, allowed=list(allowed), previous=previous)
