"""The LangGraph fix loop: graph, state, nodes, budget, stuck detection, candidates, escalation.

build_graph(checkpointer, clock, store)   the compiled StateGraph (graph.py draws it)
initial_state / validate                  the one agreed initial value; checked at entry
recorded_checks                           the checks a run started with (a resume keeps them)
Deps                                      what the nodes run with (the runtime context)
"""

from __future__ import annotations

from fixbot.loop import lessons
from fixbot.loop.budget import unpriced
from fixbot.loop.deps import Deps, Update
from fixbot.loop.graph import build_graph, recursion_limit
from fixbot.loop.state import FixState, initial_state, recorded_checks, validate

__all__ = [
    "Deps",
    "FixState",
    "Update",
    "build_graph",
    "initial_state",
    "lessons",
    "recorded_checks",
    "recursion_limit",
    "unpriced",
    "validate",
]
