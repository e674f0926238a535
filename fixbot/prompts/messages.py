"""The conversations fixbot has with the model: the task (and the last attempt with its
feedback), the feedback on a failed attempt, a diagnosis request, an answer's resume note.

Every conversation fits the room it is given (`room_tokens`: what the model's window leaves
once the reply is reserved, as `estimate_tokens` counts): the system prompt whole, then the
last attempt's reply and its feedback (their heads and tails, at most half the room), then
the task in what is left (at most `budget_tokens`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, cast

from fixbot.model import CHARS_PER_TOKEN, estimate_tokens
from fixbot.prompts.excerpts import prompt_values
from fixbot.prompts.failures import head_tail
from fixbot.prompts.render import render
from fixbot.prompts.rewrite import elided
from fixbot.prompts.sources import Excerpt, fence
from fixbot.records import CheckResult, FailedJob

Message = dict[str, str]
Shape = Literal["whole_file", "definitions", "diff"]
HISTORY_SHARE = 0.5  # of the room, the most the last reply and its feedback take together
FEEDBACK_SHARE = 0.6  # of that, the most the feedback takes (the rest for the reply)


@dataclass(frozen=True)
class Ask:
    """How an attempt is asked: the edit's shape (the complete `file`, the complete
    `definitions` of it, or a unified diff), whether the last attempt's reply stays in the
    conversation (`history`) or the task is asked afresh with the feedback under it, and
    whether the tests' source is shown."""

    shape: Shape = "diff"
    file: str = ""
    history: bool = True
    spec: bool = True  # the tests' source shown (else their ids, assertions and messages)
    # functions of `file` shown without their bodies, to be written anew from their specification
    rewrite: tuple[str, ...] = ()
    # shape "definitions": what of `file` the reply sends back, each whole (`name`, `Class.name`)
    definitions: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        """What the attempt records as its shape: `rewrite`, `whole_file`, `definitions` or
        `diff`."""
        return "rewrite" if self.rewrite else self.shape

    @property
    def asked(self) -> tuple[str, ...]:
        """The definitions asked for, as the reply's reader takes them: `path::name`."""
        return tuple(f"{self.file}::{name}" for name in self.definitions)

    @property
    def code(self) -> bool:
        """Whether the reply is code to send back (the file, or its definitions), not a diff."""
        return self.shape != "diff"

    @property
    def short(self) -> bool:
        """Whether the ask says what to reply before the code, as a one-shot prompt does (a
        first whole-file ask, and every rewrite: a task of its own)."""
        return self.code and (not self.spec or bool(self.rewrite))


class ShownLesson(Protocol):
    """What a lesson shows the model: the failure it fixed and how."""

    @property
    def failure(self) -> tuple[str, ...]: ...

    @property
    def fix(self) -> str: ...


def system_message(protected_globs: Sequence[str], ask: Ask = Ask()) -> Message:
    return {
        "role": "system",
        "content": render("system.j2", protected=list(protected_globs), code=ask.code),
    }


def fit_jobs(jobs: Sequence[FailedJob], tokens: int) -> list[FailedJob]:
    """The failed jobs with their log tails cut (from the front: the end is what failed) so
    that together they take at most `tokens`."""
    share = max(0, int(tokens * CHARS_PER_TOKEN) // max(1, len(jobs)))  # characters per job
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
    room_tokens: int,
    ask: Ask = Ask(),
    previous: tuple[str, str] | None = None,
) -> list[Message]:
    """The conversation for the next attempt: the task, then (on a retry) the last attempt's
    reply and the feedback on it, each closed by what to reply, within `room_tokens` in all.
    The CI log tails, lessons and hint share the task prompt's budget: the log tails get at
    most a quarter of it (their ends kept), the repository's context what the three leave (at
    least half). A conversation that still overflows the room is built again with a shorter
    task, down to its floor (every failing test id and the hint), then a shorter last reply
    and feedback."""
    system = system_message(protected_globs, ask)
    closing = render("reply.j2", code=ask.code, file=ask.file, definitions=list(ask.definitions))
    reply, note = _history(previous, ask, room_tokens)
    fixed = estimate_tokens(system["content"] + reply + note) + 2 * estimate_tokens(closing)
    budget = max(0, min(budget_tokens, room_tokens - fixed))
    for _ in range(FIT_TRIES):
        task = _task(baseline, tree, files, manifest, commit, hint, ci_jobs, lessons, budget, ask)
        messages = _conversation(system, task, reply, note, closing, ask, previous is not None)
        over = sum(estimate_tokens(m["content"]) for m in messages) - room_tokens
        if over <= 0:
            break
        if budget > 0:  # the task gives way first, down to its floor
            budget = max(0, min(budget, estimate_tokens(task)) - over)
        elif reply:  # then the last reply, then its feedback
            reply = _within(reply, estimate_tokens(reply) - over)
        elif note:
            note = _within(note, estimate_tokens(note) - over)
        else:
            break
    return messages


FIT_TRIES = 8


def _task(
    baseline: CheckResult,
    tree: Path,
    files: Sequence[str],
    manifest: Mapping[str, str],
    commit: str,
    hint: str,
    ci_jobs: Sequence[FailedJob],
    lessons: Sequence[ShownLesson],
    budget: int,
    ask: Ask,
) -> str:
    jobs = fit_jobs(ci_jobs, budget // 4)
    around = "".join(
        [hint, *(j["log_tail"] + "".join(j["failed_steps"]) for j in jobs)]
        + [lesson.fix + "".join(lesson.failure) for lesson in lessons]
    )
    values = prompt_values(
        baseline,
        tree,
        files,
        protected=manifest,
        budget_tokens=max(budget // 2, budget - estimate_tokens(around)),
        compact=ask.code,
        spec=ask.spec,
    )
    if ask.code:
        if ask.rewrite:
            frames = cast(list[Excerpt], values["frames"])
            values["frames"] = [_left_out(frame, ask) for frame in frames]
        text = render(
            "task_file.j2",
            file=ask.file,
            definitions=list(ask.definitions),
            short=ask.short,
            rewrite=list(ask.rewrite),
            hint=hint,
            ci_jobs=jobs,
            lessons=lessons,
            **values,
        )
        return text.rstrip() + "\n"
    return render("task.j2", commit=commit, hint=hint, ci_jobs=jobs, lessons=lessons, **values)


def _left_out(frame: Excerpt, ask: Ask) -> Excerpt:
    """The file under repair with the bodies to write left out (the other frames as they are)."""
    if frame["path"] != ask.file:
        return frame
    text = elided(frame["text"], ask.rewrite)
    return {**frame, "text": text, "fence": fence([text])}


def _conversation(
    system: Message, task: str, reply: str, note: str, closing: str, ask: Ask, retry: bool
) -> list[Message]:
    if not retry or ask.rewrite:  # a rewrite is a task of its own: no last attempt under it
        return [system, {"role": "user", "content": task if ask.short else f"{task}\n{closing}"}]
    if not ask.history or not reply:
        fresh = f"{task}\n## The last attempt\n\n{note}\n{closing}"
        return [system, {"role": "user", "content": fresh}]
    return [
        system,
        {"role": "user", "content": task},
        {"role": "assistant", "content": reply},
        {"role": "user", "content": f"{note}\n{closing}"},
    ]


def _history(previous: tuple[str, str] | None, ask: Ask, room_tokens: int) -> tuple[str, str]:
    """The last reply (when the conversation keeps it) and its feedback, their heads and
    tails within their shares of the room."""
    if previous is None:
        return "", ""
    reply, note = previous
    share = int(room_tokens * HISTORY_SHARE)
    note = _within(note, int(share * FEEDBACK_SHARE) if ask.history else share)
    reply = _within(reply, share - estimate_tokens(note)) if ask.history else ""
    return reply, note


def _within(text: str, tokens: int) -> str:
    return head_tail(text, max(0, int(tokens * CHARS_PER_TOKEN)))


def feedback(
    facts: Mapping[str, Any],
    *,
    repeated: str,
    others: Sequence[Mapping[str, Any]],
    notes: Sequence[str] = (),
    detailed: bool = True,
) -> str:
    """What the model is told about its failed attempt (`facts`: number, diff, problems,
    failing; `notes`: what became of parts of its reply, e.g. a dropped test edit;
    `detailed`: the failing tests' tracebacks too, not only their assertions)."""
    return render(
        "feedback.j2",
        repeated=repeated,
        others=list(others),
        notes=list(notes),
        detailed=detailed,
        **facts,
    )


def diagnosis_messages(
    protected_globs: Sequence[str], facts: Mapping[str, Any], room_tokens: int
) -> list[Message]:
    system = system_message(protected_globs)
    room = room_tokens - estimate_tokens(system["content"])
    return [system, {"role": "user", "content": _within(render("diagnose.j2", **facts), room)}]


def resume_note(hint: str, allowed: Sequence[str], previous: str) -> str:
    """The feedback after a human's answer: their hint, what they opened, the last result."""
    return render("resume.j2", hint=hint, allowed=list(allowed), previous=previous)
