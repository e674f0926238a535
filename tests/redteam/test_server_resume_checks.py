"""Found by the red team (87cf58c): the LangGraph server's resume builds its checks from the
config read at resume time, not from the checks its baseline ran; a check the baseline ran and
the attempt did not (a gate turned off since) makes no attempt a pass."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from fixbot.server import RunSettings, server_graph
from tests.conftest import API_KEY, git, make_repo
from tests.fake_openai import SCRIPTED_MODEL, ScriptedOpenAI
from tests.fakes import reply, wrong

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

STRICT = "gates: {lint: false, types: true}\nverification: {minimize: false}\n"
LOOSE = "gates: {lint: false, types: false}\nverification: {minimize: false}\n"
# Fixes the tests, and adds a type error the baseline's mypy gate would call new.
TYPED_WRONG = reply(
    """--- a/calc.py
+++ b/calc.py
@@ -10,7 +10,7 @@
 def mean(values: list[float]) -> float:
     \"\"\"The arithmetic mean of a non-empty list.\"\"\"
-    return sum(values) / (len(values) + 1)
+    return sum(values) / len(values)
\x20
\x20
-def clamp(value: int, low: int, high: int) -> int:
+def clamp(value: int, low: int, high: int) -> str:
     return max(low, min(value, high))
"""
)


def test_a_served_resume_is_judged_by_the_checks_its_baseline_ran(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": STRICT})
    with ScriptedOpenAI([wrong(1), wrong(2), TYPED_WRONG]) as model:
        environ = {"OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": model.base_url}
        graph = server_graph(environ)
        graph.checkpointer = InMemorySaver()
        settings = RunSettings(repo=str(repo), model=SCRIPTED_MODEL, max_iterations=2,
                               sandbox="bwrap")  # fmt: skip
        run = {"configurable": {"thread_id": "t1"}, "recursion_limit": 200}
        graph.invoke({"hint": ""}, run, context=settings)
        assert graph.get_state(run).next == ("fix",)  # paused: escalated after 2 attempts
        # The checkout moves on before the answer (a later commit turns the types gate off).
        (repo / ".fixbot.yml").write_text(LOOSE)
        git(repo, "-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-qam", "loose")
        answer = {"action": "continue", "hint": "", "extra_iterations": 1}
        done = graph.invoke(Command(resume=answer), run, context=settings)
    # The served resume builds its checks from the configuration it reads then (the types
    # gate off); the baseline ran that gate, so no attempt without it is a pass (verdict.not_run).
    [pause] = done["__interrupt__"]
    last = pause.value["attempts"][-1]
    assert (last["number"], last["verdict"]) == (3, "fail")
    assert last["problems"] == ["the check types did not run (it ran at baseline)"]
