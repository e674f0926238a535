"""Found by the second red team (3db6b55): the served resume reads the config again, and a
later `checks:` reusing the baseline's names ("types" now a harmless command) satisfied a
by-name not_run; a check is the baseline's only by its name, kind and gate-ness."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from fixbot.server import RunSettings, server_graph
from tests.conftest import API_KEY, git, make_repo
from tests.fake_openai import SCRIPTED_MODEL, ScriptedOpenAI
from tests.fakes import wrong
from tests.redteam.test_server_resume_checks import STRICT, TYPED_WRONG

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

# Same check names as the baseline's legacy checks (types, tests); "types" is no mypy now.
RENAMED = "checks:\n  - {name: types, run: 'true'}\n  - {name: tests, run: python -m pytest}\n"


def test_a_served_resume_cannot_swap_a_gate_for_a_namesake(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": STRICT})
    with ScriptedOpenAI([wrong(1), wrong(2), TYPED_WRONG]) as model:
        environ = {"OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": model.base_url}
        graph = server_graph(environ)
        graph.checkpointer = InMemorySaver()
        settings = RunSettings(repo=str(repo), model=SCRIPTED_MODEL, max_iterations=2,
                               sandbox="bwrap")  # fmt: skip
        run = {"configurable": {"thread_id": "t1"}, "recursion_limit": 200}
        graph.invoke({"hint": ""}, run, context=settings)
        assert graph.get_state(run).next == ("fix",)
        (repo / ".fixbot.yml").write_text(RENAMED)
        git(repo, "-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-qam", "swap")
        answer = {"action": "continue", "hint": "", "extra_iterations": 1}
        done = graph.invoke(Command(resume=answer), run, context=settings)
    pauses = done.get("__interrupt__")
    last = pauses[0].value["attempts"][-1] if pauses else done["attempts"][-1]
    assert last["verdict"] != "pass", f"a new type error passed: {last['problems']}"
