"""The LangGraph fix loop: graph, state, nodes, budget, stuck detection, candidates, escalation.

build_graph(checkpointer, clock, store)   the compiled StateGraph (graph.py draws it)
initial_state / validate                  the one agreed initial value; checked at entry
Deps                                      what the nodes run with (the runtime context)
"""

from __future__ import annotations

from fixbot.loop import lessons
from fixbot.loop.budget import dollars, limit_reached, price_for, unpriced
from fixbot.loop.deps import Deps, Update
from fixbot.loop.escalation import Answer, parse_answer
from fixbot.loop.graph import STEPS_PER_ATTEMPT, build_graph, recursion_limit, route
from fixbot.loop.lessons import Lesson
from fixbot.loop.state import FixState, StateError, initial_state, validate
from fixbot.loop.stuck import STRIKES_TO_ESCALATE

__all__ = [
    "STEPS_PER_ATTEMPT",
    "STRIKES_TO_ESCALATE",
    "Answer",
    "Deps",
    "FixState",
    "Lesson",
    "StateError",
    "Update",
    "build_graph",
    "dollars",
    "initial_state",
    "lessons",
    "limit_reached",
    "parse_answer",
    "price_for",
    "recursion_limit",
    "route",
    "unpriced",
    "validate",
]
