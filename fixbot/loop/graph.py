"""The fix loop as a LangGraph StateGraph, the pure routers, and build_graph().

START -> baseline --(code)--> autofix --(nothing for ruff)--> generate -> apply -> check -> judge
           |                      +--(ruff's own diff, zero tokens)------------------^
           +--(already passing)--> END
           +--(flaky or environment: no model call)--> escalate
generate --(the call could overspend the money cap)--> escalate
apply --(rejected)--> judge
judge --(pass)--> verify --(pass)--> minimize -> review --(no block)--> finalize -> END
review --(special-casing or tampering)--> escalate
judge --(fail, budget left)--> reflect -> generate
                                   +--(parallel: K slots)--> candidate x K (Send) -> pick
pick --(the first pass)--> verify; otherwise it routes like judge
judge --(attempts or budget spent, or stuck)--> escalate -> await_human --(answer)--> ...
verify --(fails on a clean copy)--> escalate
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal, get_args

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore
from langgraph.types import Send

from fixbot.loop import candidates, escalation, nodes, review, verification
from fixbot.loop.budget import limit_reached
from fixbot.loop.deps import Deps
from fixbot.loop.state import FixState, StateError

Route = Literal["verify", "reflect", "escalate"]
ROUTES = list(get_args(Route))  # the path map of the two routers written as lambdas
STEPS_PER_ATTEMPT = 5  # generate, apply, check, judge, reflect


def route(state: FixState, now: float) -> Route:
    """After judging an attempt: a real pass is verified; otherwise retry while budget is left."""
    verdict = state["verdict"]
    if verdict == "pass":
        return "verify"
    if verdict not in ("fail", "rejected"):
        raise StateError(f"route() reached with verdict {verdict!r}")
    return "escalate" if limit_reached(state, now) else "reflect"


def after_generate(state: FixState) -> Literal["apply", "escalate"]:
    """generate refuses a call that could overspend the money cap: that escalates."""
    return "escalate" if state["verdict"] == "over_budget" else "apply"


def after_reflect(state: FixState) -> Literal["generate"] | list[Send]:
    """One attempt at a time, or a round of `slots` candidates at once, one Send per slot."""
    if state["slots"] < 2:
        return "generate"
    return [Send("candidate", {**state, "slot": slot}) for slot in range(state["slots"])]


def after_pick(state: FixState, now: float) -> Route:
    """A round whose every call was refused (deadline, budget) escalates; else as after judge."""
    return "escalate" if state["verdict"] == "over_budget" else route(state, now)


def after_baseline(state: FixState) -> Literal["autofix", "escalate", "__end__"]:
    """Only a failure that reproduces, and is the code's, is worth fixing (ruff first)."""
    if state["status"] == "already_passing":
        return "__end__"
    classification = state["classification"]
    if classification == "code":
        return "autofix"
    if classification in ("flaky", "environment"):
        return "escalate"
    raise StateError(f"after_baseline() reached with classification {classification!r}")


def after_autofix(state: FixState) -> Literal["check", "generate"]:
    """ruff's own fixes, when it had any, are checked like a candidate; else the model."""
    return "check" if state["verdict"] == "applied" else "generate"


def after_apply(state: FixState) -> Literal["check", "judge"]:
    return "check" if state["verdict"] == "applied" else "judge"


def after_verify(state: FixState) -> Literal["minimize", "escalate"]:
    return "minimize" if state["verdict"] == "pass" else "escalate"


def after_review(state: FixState) -> Literal["finalize", "escalate"]:
    """The reviewer's special-casing or tampering escalates; a legitimate verdict, no verdict
    or no reviewer finalizes the pass the sandbox decided."""
    return "escalate" if review.blocking(state) is not None else "finalize"


def recursion_limit(max_iterations: int) -> int:
    """Backstop only: the router ends the run long before this many steps."""
    return STEPS_PER_ATTEMPT * max_iterations + 10


def build_graph(
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    clock: Callable[[], float] = time.time,
    store: BaseStore | None = None,
) -> CompiledStateGraph[FixState, Deps, FixState, FixState]:
    graph = StateGraph(FixState, context_schema=Deps)
    graph.add_node("baseline", nodes.baseline)
    graph.add_node("autofix", nodes.autofix)
    graph.add_node("generate", nodes.generate)
    graph.add_node("apply", nodes.apply)
    graph.add_node("check", nodes.check)
    graph.add_node("judge", nodes.judge)
    graph.add_node("reflect", nodes.reflect)
    graph.add_node("candidate", candidates.candidate)
    graph.add_node("pick", candidates.pick)
    graph.add_node("verify", verification.verify)
    graph.add_node("minimize", verification.minimize)
    graph.add_node("review", review.review)
    graph.add_node("finalize", nodes.finalize)
    graph.add_node("escalate", escalation.escalate)
    graph.add_node("await_human", escalation.await_human)
    graph.add_edge(START, "baseline")
    graph.add_conditional_edges("baseline", after_baseline)
    graph.add_conditional_edges("autofix", after_autofix)
    graph.add_conditional_edges("generate", after_generate)
    graph.add_conditional_edges("apply", after_apply)
    graph.add_edge("check", "judge")
    graph.add_conditional_edges("judge", lambda state: route(state, clock()), ROUTES)
    graph.add_conditional_edges("reflect", after_reflect, ["generate", "candidate"])
    graph.add_edge("candidate", "pick")
    graph.add_conditional_edges("pick", lambda state: after_pick(state, clock()), ROUTES)
    graph.add_conditional_edges("verify", after_verify)
    graph.add_edge("minimize", "review")
    graph.add_conditional_edges("review", after_review)
    graph.add_edge("finalize", END)
    graph.add_edge("escalate", "await_human")
    graph.add_conditional_edges("await_human", escalation.after_human)
    return graph.compile(checkpointer=checkpointer, store=store)
