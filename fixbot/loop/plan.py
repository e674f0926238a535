"""How the next attempt is asked: the prompt's shape (the complete file, its definitions, or a
diff), the temperature its variation asks at, the reply reserve, and the conversation built
for the room the model's context window leaves.

A failure that names one small source file asks for that file whole ("reply with the complete
corrected `solution.py` in one ```python block"): the edit format a small model follows. One
too large to come back whole asks for its definitions that the failure names, each whole
(prompts/returned.py). Any other asks for a unified diff. Whatever was asked, every edit shape
is accepted (edits/). The first code prompt is short (the failing tests with their evidence,
and the code); a retry, or a failing check that is not a test run, shows what the tests check
(their assertions, as read-only text) too. Every second attempt on code is a rewrite ask
(prompts/rewrite.py): the failing functions shown without their bodies, to be written anew
from their specification, what the tests check listed with it; the first of them at the first
temperature (a new prompt's greedy answer), later ones at their variation's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from langgraph.runtime import Runtime

from fixbot import prompts
from fixbot.loop import lessons
from fixbot.loop.budget import Build, model_for
from fixbot.loop.deps import Deps
from fixbot.loop.state import FixState, baseline_of
from fixbot.loop.stuck import Stuck, asked_at
from fixbot.model import MAX_REPLY_TOKENS, Model, estimate_tokens
from fixbot.prompts import Ask, Message
from fixbot.records import failing_tests
from fixbot.snapshot import read_inside

WHOLE_FILE_PROSE = 400  # a whole-file reply's reserve beyond the file: a sentence, the fence


@dataclass(frozen=True)
class Plan:
    """How the next attempt is asked: its prompt shape, temperature and reply reserve."""

    ask: Ask
    temperature: float | None
    reply_tokens: int


def plan_for(
    state: FixState, deps: Deps, model: Model, number: int, temperature: float | None = None
) -> Plan:
    """The next attempt's plan: a whole-file reply when the failure names one small source
    file (its reply reserve sized to it), else a diff; the temperature and prompt shape its
    variation asks at (`stuck.asked_at`), unless given (a parallel candidate's)."""
    at = asked_at(Stuck(state["strikes"], state["variation"]), deps.config.sampling.temperatures)
    where = (baseline_of(state), deps.snapshot.tree, deps.files)
    protected, room = deps.snapshot.manifest, model.window.reply_tokens
    file = prompts.file_to_return(*where, protected=protected, reply_tokens=room)
    text = (read_inside(deps.snapshot.tree, file) or "") if file else ""
    definitions: tuple[str, ...] = ()
    if not file:
        found = prompts.definitions_to_return(*where, protected=protected, reply_tokens=room)
        file, definitions, text = found
    reply_tokens = MAX_REPLY_TOKENS
    if file:  # room for the code once and a half, and a sentence: not for rambling on
        reply_tokens = min(MAX_REPLY_TOKENS, estimate_tokens(text) * 3 // 2 + WHOLE_FILE_PROSE)
    # The first prompt is short: the failing tests, what they said, and the code; a retry
    # lists what the tests check too, as the read-only specification (another prompt shape,
    # another sample). A failing check that is not a test run (ruff, mypy, a command) is asked
    # about in full from the first: the short prompt's one sentence speaks of tests.
    failing = failing_tests(baseline_of(state))
    spec = number > 1 or not file or not all(prompts.names_a_test(t) for t in failing)
    # A whole file is always asked afresh: shown its last reply, a small model sends it again
    # (the feedback shows what that reply changed, as a diff).
    shape = Ask(
        ("definitions" if definitions else "whole_file") if file else "diff",
        file,
        at.history and not file,
        spec,
        definitions=definitions,
    )
    # Every second attempt on a whole file rewrites the failing functions' bodies from their
    # specification (every assertion of the failing tests listed: where no docstring or comment
    # says what the function does, they are all of it); the first rewrite is a new prompt, so
    # it asks for the greedy answer.
    # Not after a reply the screen refused: why it was refused is feedback the next ask carries.
    last = state["attempts"][-1]["problems"] if state["attempts"] else []
    refused = any(problem.startswith("policy ") for problem in last)
    even = bool(file) and number % 2 == 0 and deps.config.sampling.rewrite and not refused
    rewrite = prompts.rewritable(*where, file) if even else ()
    if definitions:  # only what the reply sends back is written anew
        rewrite = tuple(name for name in rewrite if name in definitions)
    if rewrite:
        shape = replace(shape, history=False, spec=True, rewrite=rewrite)
        if number == 2:
            at = replace(at, temperature=deps.config.sampling.temperatures[0])
    return Plan(shape, at.temperature if temperature is None else temperature, reply_tokens)


def builder(state: FixState, runtime: Runtime[Deps], shape: Ask) -> Build:
    """The conversation for the next attempt, for the room its model's window leaves: the
    task, then the last attempt and its feedback."""
    deps = runtime.context
    last = state["attempts"][-1:]
    shown = lessons.shown_for(runtime.store, deps.repository, baseline_of(state))

    def build(room: int) -> list[Message]:
        return prompts.task_messages(
            baseline_of(state),
            tree=deps.snapshot.tree,
            files=deps.files,
            manifest=deps.snapshot.manifest,
            protected_globs=deps.protected_globs,
            commit=state["commit"],
            hint=state["hint"],
            ci_jobs=state["ci_jobs"],
            lessons=shown,
            budget_tokens=deps.config.prompt_budget_tokens,
            room_tokens=room,
            ask=shape,
            previous=(last[0]["reply"], state["feedback"]) if last else None,
        )

    return build


def messages_for(state: FixState, runtime: Runtime[Deps]) -> list[Message]:
    """The next attempt's conversation as its plan and its model's window make it (for
    sizing a round of candidates)."""
    deps = runtime.context
    model = model_for(deps, state["attempt"])
    plan = plan_for(state, deps, model, state["attempt"] + 1)
    return builder(state, runtime, plan.ask)(model.window.room(plan.reply_tokens, messages=4))
