"""The graph's state: plain, serialisable data, with one agreed initial value per routing field.

`initial_state` is the only way a run's state comes into being; `validate` runs at graph entry
(and on resume) and fails loudly on a missing or ill-typed field instead of letting a router
fall back to a default that disagrees with the initial state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, TypedDict, get_args

from fixbot.commands import CheckSpec
from fixbot.records import (
    ESCALATION_KINDS,
    RUN_STATUSES,
    VERDICTS,
    Attempt,
    CheckResult,
    EscalationKind,
    FailedJob,
    Review,
    RunStatus,
    Verdict,
)

Classification = Literal["", "code", "flaky", "environment"]
CLASSIFICATIONS: frozenset[str] = frozenset(get_args(Classification))
# What the loop itself records; "error" is a result's only, never a state's.
STATUSES: frozenset[str] = RUN_STATUSES - {"error"}


class StateError(RuntimeError):
    """The graph state is missing a field or holds one of the wrong type: a bug, never data."""


class Candidate(TypedDict):
    """One of a round's parallel candidates, as its branch left it for `pick`."""

    slot: int  # its place in the round: it asked at parallel.temperatures[slot % len]
    attempt: Attempt | None  # None: its call was refused (the deadline or a budget)
    refused: str  # why, when it was
    finished: float  # epoch seconds when its checks ended: the first pass wins


def pool(gathered: list[Candidate], update: list[Candidate]) -> list[Candidate]:
    """The reducer of FixState.candidates: parallel branches add theirs; [] empties the pool."""
    return [*gathered, *update] if update else []


class FixState(TypedDict):
    thread_id: str
    commit: str
    manifest: dict[str, str]
    # The run's checks (CheckSpec fields), fixed when it starts: a resumed run is judged by the
    # checks its baseline ran, whatever the config says then (runs/session.py).
    checks: list[dict[str, Any]]
    # The protected globs it started with: a resume protects these too (runs/session.py).
    protected_globs: list[str]
    baseline: CheckResult | None
    # Routing fields: the router reads exactly these.
    attempt: int  # generate calls so far
    max_iterations: int
    tokens_used: int
    token_budget: int
    cost_used: float  # US dollars, from the price table (0 when the models have no price)
    cost_budget: float  # US dollars; 0: no money cap
    deadline: float  # epoch seconds
    verdict: Verdict  # of the attempt in flight
    status: RunStatus
    escalation: EscalationKind  # why it escalated, as data; "" until it does
    classification: Classification  # of the baseline failure; "" until the baseline ran
    # Records.
    current: Attempt | None
    attempts: list[Attempt]
    feedback: str
    reason: str
    final_diff: str
    verification: CheckResult | None
    labels: list[str]  # e.g. "pre-existing": the failure also fails on the base
    flaky_tests: list[str]
    dropped_hunks: list[str]  # hunks of the passing diff that the pass did not need
    reviews: list[Review]  # the reviewer's verdicts on verified diffs, in order (config.review)
    network_probe: str  # what a connection attempt from inside the sandbox got
    hint: str  # a human's hint, shown in every prompt from then on
    allowed_protected: list[str]  # protected files a human explicitly opened to edits
    resumes: int  # answers to escalations so far
    strikes: int  # consecutive stuck attempts (repeats, no change, stagnation)
    variation: int  # the step of sampling.temperatures the next attempt asks at (stuck.py)
    slots: int  # candidates the next round asks for at once (parallel); 1: one at a time
    stuck_reason: str
    ci_jobs: list[FailedJob]  # the failed CI run's jobs and log tails: untrusted context
    escalated_at: list[int]  # the attempt count at each escalation (0: after the baseline)
    candidates: Annotated[list[Candidate], pool]  # the round in flight, gathered for `pick`


ROUTING_FIELDS: Mapping[str, type | tuple[type, ...]] = {
    "attempt": int,
    "max_iterations": int,
    "tokens_used": int,
    "token_budget": int,
    "cost_used": (int, float),
    "cost_budget": (int, float),
    "deadline": (int, float),
    "verdict": str,
    "status": str,
    "escalation": str,
    "classification": str,
    "strikes": int,
    "slots": int,
}


def initial_state(
    *,
    thread_id: str,
    commit: str,
    manifest: Mapping[str, str],
    max_iterations: int,
    token_budget: int,
    deadline: float,
    cost_budget: float = 0.0,
    hint: str = "",
    ci_jobs: Sequence[FailedJob] = (),
    checks: Sequence[Mapping[str, Any]] = (),
    protected_globs: Sequence[str] = (),
) -> FixState:
    return FixState(
        thread_id=thread_id,
        commit=commit,
        manifest=dict(manifest),
        checks=[dict(check) for check in checks],
        protected_globs=list(protected_globs),
        baseline=None,
        attempt=0,
        max_iterations=max_iterations,
        tokens_used=0,
        token_budget=token_budget,
        cost_used=0.0,
        cost_budget=cost_budget,
        deadline=deadline,
        verdict="none",
        status="running",
        escalation="",
        current=None,
        attempts=[],
        feedback="",
        reason="",
        final_diff="",
        verification=None,
        classification="",
        labels=[],
        flaky_tests=[],
        dropped_hunks=[],
        reviews=[],
        network_probe="",
        hint=hint,
        allowed_protected=[],
        resumes=0,
        strikes=0,
        variation=0,
        slots=1,
        stuck_reason="",
        ci_jobs=list(ci_jobs),
        escalated_at=[],
        candidates=[],
    )


# Fields a state checkpointed by an earlier fixbot may lack (its run can still be resumed).
ADDED_SINCE = frozenset({"checks", "protected_globs"})


def validate(state: Mapping[str, Any]) -> None:
    """Raise StateError unless every field exists and every routing field is well-typed."""
    missing = sorted(set(FixState.__annotations__) - set(state) - ADDED_SINCE)
    if missing:
        raise StateError(f"graph state is missing {', '.join(missing)}")
    for name, kind in ROUTING_FIELDS.items():
        value = state[name]
        if isinstance(value, bool) or not isinstance(value, kind):
            raise StateError(f"graph state field {name!r} is {value!r}, not {kind}")
    if state["verdict"] not in VERDICTS:
        raise StateError(f"graph state field 'verdict' is {state['verdict']!r}")
    if state["status"] not in STATUSES:
        raise StateError(f"graph state field 'status' is {state['status']!r}")
    if state["escalation"] not in ESCALATION_KINDS:
        raise StateError(f"graph state field 'escalation' is {state['escalation']!r}")
    if state["classification"] not in CLASSIFICATIONS:
        raise StateError(f"graph state field 'classification' is {state['classification']!r}")
    variation = state["variation"]
    if isinstance(variation, bool) or not isinstance(variation, int) or variation < 0:
        raise StateError(f"graph state field 'variation' is {variation!r}, not an int >= 0")
    if state["max_iterations"] < 1 or state["attempt"] < 0 or state["slots"] < 1:
        raise StateError("graph state needs max_iterations >= 1, attempt >= 0 and slots >= 1")


def recorded_checks(state: Mapping[str, Any]) -> tuple[CheckSpec, ...]:
    """The checks the run started with (its `checks` field); () where none were recorded (a
    state checkpointed before fixbot recorded them: the config's apply)."""
    try:
        return tuple(CheckSpec(**check) for check in state.get("checks", []))
    except (TypeError, ValueError) as exc:
        raise StateError(f"graph state field 'checks' is not a list of checks: {exc}") from None


def baseline_of(state: Mapping[str, Any]) -> CheckResult:
    """The baseline, for a node that needs it: a StateError before the baseline ran."""
    found: CheckResult | None = state["baseline"]
    if found is None:
        raise StateError("a node that needs the baseline ran before it")
    return found
