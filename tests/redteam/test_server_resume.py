"""A resume is judged by what its run started with, whatever the configuration says by then:
attacks of three red-team rounds on the LangGraph server's resume (87cf58c, 18e967b, 05e0f44),
through the real served graph. `pin` records the checks and the protected globs when it pins
the commit; the files of the run's manifest are refused path by path on every resume."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from fixbot import server
from fixbot.runs import recorded_at
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
    tmp_path: Path,
    later: str,
    *,
    files: dict[str, str] | None = None,
    answer_reply: str = TYPED_WRONG,
    pinned: Callable[..., dict[str, Any]] | None = None,
) -> Any:
    """The served run (`files`: by default STRICT as its .fixbot.yml) escalated after two wrong
    attempts; the checkout moves on (a later commit writes `later` as .fixbot.yml) before the
    answer, whose attempt is `answer_reply` (by default: fixes the tests and adds a type error).
    `pinned`: what the first run's pin records in place of recorded_at (an older server's).
    What the resumed graph returns."""
    repo = make_repo(tmp_path / "repo", files or {".fixbot.yml": STRICT})
    with ScriptedOpenAI([wrong(1), wrong(2), answer_reply]) as model:
        environ = {"OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": model.base_url}
        graph = server_graph(environ)
        graph.checkpointer = InMemorySaver()
        settings = RunSettings(repo=str(repo), model=SCRIPTED_MODEL, max_iterations=2,
                               sandbox="bwrap")  # fmt: skip
        run = {"configurable": {"thread_id": "t1"}, "recursion_limit": 200}
        real = server.recorded_at
        server.recorded_at = pinned or real
        try:
            graph.invoke({"hint": ""}, run, context=settings)
        finally:
            server.recorded_at = real  # the server upgraded before the answer
        assert graph.get_state(run).next == ("fix",)  # paused: escalated after 2 attempts
        (repo / ".fixbot.yml").write_text(later)
        git(repo, "-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-qam", "later")
        answer = {"action": "continue", "hint": "", "extra_iterations": 1}
        return graph.invoke(Command(resume=answer), run, context=settings)


def last_attempt(done: Any) -> Any:
    pauses = done.get("__interrupt__")
    return pauses[0].value["attempts"][-1] if pauses else done["attempts"][-1]


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
    protected (its manifest, and the report, still said so). The globs a run started with stay
    on every resume (the CLI's, the Action's, a fork and the server's)."""
    files = {".fixbot.yml": LOOSE + "protected_paths: [calc.py]\n"}
    done = answered_after(tmp_path, LOOSE, files=files, answer_reply=GOOD)
    assert "calc.py" in done["manifest"]
    last = last_attempt(done)
    assert last["number"] == 3 and last["verdict"] != "pass", last
    assert done.get("status") != "fixed", done.get("final_diff")


def test_a_thread_pinned_before_the_record_keeps_its_files(tmp_path: Path) -> None:
    """Found by the second red team (05e0f44): a thread whose pin recorded no globs (an older
    server's) resumed under the config of its time. The files of the run's manifest, in the
    loop's own state whatever the root, are refused path by path (attempts.screened)."""
    files = {".fixbot.yml": LOOSE + "protected_paths: [calc.py]\n"}

    def older(repo: Path, commit: str, config: Any) -> dict[str, Any]:
        return {"checks": recorded_at(repo, commit, config)["checks"]}

    done = answered_after(tmp_path, LOOSE, files=files, answer_reply=GOOD, pinned=older)
    last = last_attempt(done)
    assert last["number"] == 3 and last["verdict"] != "pass", last
    assert done.get("status") != "fixed", done.get("final_diff")


GOLDEN_TEST = """from pathlib import Path

from calc import add, mean

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def test_add() -> None:
    assert add(2, 3) == 5


def test_mean_golden() -> None:
    values, expected = sorted(GOLDEN.glob("v*.txt"))[-1].read_text().split("=")
    assert mean([float(v) for v in values.split(",")]) == float(expected)
"""
# Adds a file under the run's protected glob that the protected test reads instead of v1.
NEW_GOLDEN = reply(
    """--- /dev/null
+++ b/golden/v2.txt
@@ -0,0 +1 @@
+1,2,3=1.5
""",
    prose="The golden data is out of date; add the current version.",
)


def test_a_served_resume_keeps_the_globs_its_run_protected(tmp_path: Path) -> None:
    """Found by the second red team (05e0f44): keeping the manifest's files alone let the
    answer's attempt add a new file under a glob the run protected (`golden/**`, dropped by a
    later commit), which a protected test reads: fixed without touching the code."""
    files = {
        ".fixbot.yml": LOOSE + "protected_paths: ['golden/**']\n",
        "golden/v1.txt": "1,2,3=2.0\n",
        "tests/test_calc.py": GOLDEN_TEST,
    }
    done = answered_after(tmp_path, LOOSE, files=files, answer_reply=NEW_GOLDEN)
    assert "golden/v1.txt" in done["manifest"]
    last = last_attempt(done)
    assert last["number"] == 3 and last["verdict"] != "pass", last
    assert done.get("status") != "fixed", done.get("final_diff")
