"""Found by the red team (87cf58c): the LangGraph server's resume built its checks from the
config read at resume time, not from the checks its baseline ran. The verdict's not_run made a
weaker config refuse every attempt; now `pin` records the checks when it pins the commit, and a
served resume is judged by them, as the CLI's and the Action's are."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from fixbot.server import RunSettings, server_graph
from tests.conftest import API_KEY, git, make_repo
from tests.fake_openai import SCRIPTED_MODEL, ScriptedOpenAI
from tests.fakes import GOOD, reply, wrong

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


# Same check names as the baseline's legacy checks (types, tests); "types" is no mypy now.
RENAMED = "checks:\n  - {name: types, run: 'true'}\n  - {name: tests, run: python -m pytest}\n"


def answered_after(
    tmp_path: Path, later: str, first: str = STRICT, answer_reply: str = TYPED_WRONG
) -> Any:
    """The served run (`first` its .fixbot.yml) escalated after two wrong attempts; the checkout
    moves on (a later commit writes `later`) before the answer, whose attempt is `answer_reply`
    (by default: fixes the tests and adds a type error). What the resumed graph returns."""
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": first})
    with ScriptedOpenAI([wrong(1), wrong(2), answer_reply]) as model:
        environ = {"OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": model.base_url}
        graph = server_graph(environ)
        graph.checkpointer = InMemorySaver()
        settings = RunSettings(repo=str(repo), model=SCRIPTED_MODEL, max_iterations=2,
                               sandbox="bwrap")  # fmt: skip
        run = {"configurable": {"thread_id": "t1"}, "recursion_limit": 200}
        graph.invoke({"hint": ""}, run, context=settings)
        assert graph.get_state(run).next == ("fix",)  # paused: escalated after 2 attempts
        (repo / ".fixbot.yml").write_text(later)
        git(repo, "-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-qam", "later")
        answer = {"action": "continue", "hint": "", "extra_iterations": 1}
        return graph.invoke(Command(resume=answer), run, context=settings)


def test_a_served_resume_is_judged_by_the_checks_its_baseline_ran(tmp_path: Path) -> None:
    done = answered_after(tmp_path, LOOSE)  # a later commit turns the types gate off
    # The resume keeps the checks pinned with the commit (the types gate on): the answer's
    # attempt fixes the tests and is refused for the type error it adds.
    [pause] = done["__interrupt__"]
    last = pause.value["attempts"][-1]
    assert (last["number"], last["verdict"]) == (3, "fail")
    [problem] = last["problems"]
    assert problem.startswith("new mypy error calc.py:16: Incompatible return value type"), problem


def test_a_served_resume_cannot_swap_a_gate_for_a_namesake(tmp_path: Path) -> None:
    """Found by the second red team (3db6b55): a later `checks:` reusing the baseline's names
    ("types" now a harmless command) satisfied a by-name not_run; a check is the baseline's
    only by its name, kind and gate-ness."""
    done = answered_after(tmp_path, RENAMED)
    pauses = done.get("__interrupt__")
    last = pauses[0].value["attempts"][-1] if pauses else done["attempts"][-1]
    assert last["verdict"] != "pass", f"a new type error passed: {last['problems']}"


def test_a_served_resume_keeps_the_files_its_run_protected(tmp_path: Path) -> None:
    """Found by the red team (18e967b): a resume read the protected globs from the config of
    its time, so a later commit dropping a glob let the answer's attempt edit a file the run had
    protected (its manifest, and the report, still said so). Every file of the run's manifest
    stays protected on every resume (the CLI's, the Action's, a fork and the server's)."""
    gates = "gates: {lint: false, types: false}\nverification: {minimize: false}\n"
    first = gates + "protected_paths: [calc.py]\n"
    done = answered_after(tmp_path, gates, first=first, answer_reply=GOOD)
    assert "calc.py" in done["manifest"]
    assert not (done.get("status") == "fixed" and "calc.py" in done.get("final_diff", "")), done
    [pause] = done["__interrupt__"]
    last = pause.value["attempts"][-1]
    assert last["number"] == 3 and last["verdict"] != "pass", last
