"""`fixbot fix` end to end: the real CLI, real git, the real bwrap sandbox, the real openai SDK
talking over a socket to a scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import API_KEY, RunFixbot, docker_or_skip, git, make_repo, read_example
from tests.fake_openai import Fail, ScriptedOpenAI, unused_local_url
from tests.fakes import GOOD, reply, wrong

# The feedback loop's own tests: every retry a repair with the feedback (no rewrite ask).
REPAIRS = {".fixbot.yml": read_example(".fixbot.yml") + "sampling: {rewrite: false}\n"}

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="needs bubblewrap (apt-get install bubblewrap)"
)


# Right change, wrong numbers and counts, no a/ b/ prefixes: located by its context.
GOOD_WRONG_NUMBERS = reply(
    """--- calc.py
+++ calc.py
@@ -40,7 +41,9 @@
     \"\"\"The arithmetic mean of a non-empty list.\"\"\"
-    return sum(values) / (len(values) + 1)
+    return sum(values) / len(values)
"""
)


BREAKS_ADD = reply(
    """--- a/calc.py
+++ b/calc.py
@@ -6,8 +6,8 @@
 def add(a: int, b: int) -> int:
-    return a + b
+    return a - b


 def mean(values: list[float]) -> float:
     \"\"\"The arithmetic mean of a non-empty list.\"\"\"
-    return sum(values) / (len(values) + 1)
+    return sum(values) / len(values)
"""
)

EDITS_TEST = reply(
    """--- a/tests/test_calc.py
+++ b/tests/test_calc.py
@@ -8,2 +8,2 @@
 def test_mean() -> None:
-    assert mean([1.0, 2.0, 3.0]) == 2.0
+    assert True or open("/tmp/fixbot-protected-executed", "w")
"""
)

DOES_NOT_APPLY = reply(
    """--- a/calc.py
+++ b/calc.py
@@ -1,3 +1,3 @@
 def median(values):
-    return values[len(values) // 2 + 1]
+    return sorted(values)[len(values) // 2]
"""
)

NEW_TYPE_ERROR = reply(
    """--- a/calc.py
+++ b/calc.py
@@ -10,3 +10,7 @@
 def mean(values: list[float]) -> float:
     \"\"\"The arithmetic mean of a non-empty list.\"\"\"
-    return sum(values) / (len(values) + 1)
+    return sum(values) / count(values)
+
+
+def count(values: list[float]) -> str:
+    return len(values)  # a new mypy error, tests still pass
"""
)

LEGACY = '\n\ndef legacy() -> int:\n    return "pre-existing mypy error"\n'


def assert_untouched(repo: Path) -> None:
    """Nothing but fixbot's own .fixbot/ folder appeared; no tracked file changed."""
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""
    assert not list(repo.rglob("__pycache__"))
    assert not list(repo.rglob(".pytest_cache")) and not list(repo.rglob(".mypy_cache"))
    assert git(repo, "status", "--porcelain", "--ignored") == "?? .fixbot/\n"


def test_fixed_at_first_attempt(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    repo = make_repo(tmp_path / "repo")
    with ScriptedOpenAI([GOOD]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 0, run.stderr
    evidence = run.evidence
    assert evidence["status"] == "fixed"
    assert json.loads(run.stdout) == {**json.loads(run.stdout), "status": "fixed"}
    assert len(run.stdout.strip().splitlines()) == 1
    assert len(server.requests) == 1
    assert [a["verdict"] for a in evidence["attempts"]] == ["pass"]
    assert evidence["commit"] == git(repo, "rev-parse", "HEAD").strip()
    failing_before = {
        t for t, r in evidence["baseline"]["tests"].items() if r["outcome"] == "failed"
    }
    assert failing_before == {"tests.test_calc::test_mean", "tests.test_calc::test_mean_single"}
    assert all(r["outcome"] == "passed" for r in evidence["verification"]["tests"].values())
    # The pre-existing ruff F401 did not block.
    assert any(f["code"] == "F401" for f in evidence["baseline"]["findings"])
    diff = (run.out / "fix.diff").read_text()
    assert diff == evidence["diff"]
    subprocess.run(
        ["git", "-C", str(repo), "apply", "--check", "-"], input=diff.encode(), check=True
    )
    assert "fixbot fixed" in (run.out / "report.md").read_text()
    assert_untouched(repo)
    for text in (run.stderr, run.stdout, (run.out / "evidence.json").read_text()):
        assert API_KEY not in text
    assert API_KEY not in (repo / ".fixbot" / "state.db").read_bytes().decode("latin-1")


def test_a_placeholder_key_leaves_the_outputs_intact_and_says_so(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    """The README's local setup (OPENAI_API_KEY=local, model fixbot-local): the key is no
    secret, so neither the model's name nor any other `local` is redacted, and the evidence
    names the variable that was not treated as one."""
    repo = make_repo(tmp_path / "repo")
    env = {"OPENAI_API_KEY": "local", "FIXBOT_MODEL": "fixbot-local"}
    with ScriptedOpenAI([GOOD]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url, env=env)
    assert run.code == 0, run.stderr
    assert run.evidence["not_secrets"] == ["OPENAI_API_KEY"]
    report = (run.out / "report.md").read_text()
    assert "fixbot-local" in report and "[redacted" not in report
    assert "Not redacted: `OPENAI_API_KEY` holds a placeholder" in report
    assert all(a["model"] == "fixbot-local" for a in run.evidence["attempts"])
    assert "[redacted" not in (run.out / "evidence.json").read_text()


def test_wrong_then_right_feeds_back_the_failure(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    repo = make_repo(tmp_path / "repo", REPAIRS)  # the retry is a repair, with the feedback
    with ScriptedOpenAI([wrong(1), GOOD]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert [a["verdict"] for a in run.evidence["attempts"]] == ["fail", "pass"]
    feedback = server.requests[1]["messages"][-1]["content"]
    assert "tests.test_calc::test_mean" in feedback
    assert "assert" in feedback and "Attempt 1 did not pass" in feedback


def test_a_whole_file_reply_that_also_rewrites_the_test_is_fixed_without_the_test_edit(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    # What small models send: the test file first (weakened), then the file under repair,
    # whole, in blocks that name no file. The source change is kept, the test edit dropped.
    repo = make_repo(tmp_path / "repo")
    weakened = read_example("tests/test_calc.py").replace("== 2.0", "!= 2.0")
    fixed = read_example("calc.py").replace("(len(values) + 1)", "len(values)")
    both = f"The test:\n```python\n{weakened}```\nThe code:\n```python\n{fixed}```\n"
    with ScriptedOpenAI([both]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr
    evidence = run.evidence
    assert evidence["status"] == "fixed" and "tests/" not in evidence["diff"]
    assert evidence["attempts"][0]["shape"] == "whole_file"
    assert "tests/test_calc.py was dropped" in evidence["attempts"][0]["notes"][0]
    prompt = server.requests[0]["messages"][-1]["content"]
    assert prompt.startswith(
        "`calc.py` has a bug; the tests `tests.test_calc::test_mean`, "
        "`tests.test_calc::test_mean_single` fail:\n\n```text\ntests.test_calc::test_mean\n"
        "    failed at tests/test_calc.py:9: assert mean([1.0, 2.0, 3.0]) == 2.0\n"
        "    assert 1.5 == 2.0\n"
    )
    assert prompt.index("Reply with the complete corrected `calc.py` in one ```python block.\n")
    assert server.requests[0]["temperature"] == 0.0
    assert_untouched(repo)


# A calc.py too large to ask for whole, its `mean` too large to ask for alone (a string of
# 7,000 characters in its body: a diff is asked for), and 300 more modules: a repository map
# and a file list that take room in a prompt.
_BUGGY = "    return sum(values) / (len(values) + 1)\n"
LARGER = {
    "calc.py": read_example("calc.py").replace(_BUGGY, _BUGGY + f"    _unused = '{'x' * 7000}'\n")
    + "".join(f"\n\ndef pad_{i}(x: int) -> int:\n    return x + {i}\n" for i in range(200)),
    **{f"pkg/mod{i}.py": f"def helper_{i}(x):\n    return x + {i}\n" for i in range(300)},
}


@pytest.mark.parametrize("refusal", ["openai", "llama.cpp"])
def test_a_small_window_refuses_once_then_every_request_fits_and_the_run_goes_on(
    tmp_path: Path, run_fixbot: RunFixbot, refusal: str
) -> None:
    # The server's window is 2,000 tokens and its tokenizer counts two characters a token;
    # it says nothing of its window before refusing. The first request, built for the
    # default 8,192 at three characters a token, is refused with the real HTTP 400; the
    # rebuilt one fits, and so does every later one, feedback and all.
    repo = make_repo(tmp_path / "repo", LARGER)
    with ScriptedOpenAI([wrong(1), GOOD], window=2000, refusal=refusal) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert run.evidence["status"] == "fixed"
    assert len(server.refused) == 1 and len(server.requests) == 2
    for request in server.requests:
        assert server.prompt_tokens(request) + request["max_tokens"] <= 2000
    assert "context_refused" in run.stderr


def test_the_window_the_endpoint_states_is_fitted_from_the_first_request(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(tmp_path / "repo", LARGER)
    card = {"max_model_len": 2000}  # vLLM's /v1/models; a tokenizer like fixbot's estimate
    with ScriptedOpenAI([GOOD], window=2000, chars_per_token=3.0, model_card=card) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert server.refused == [] and len(server.requests) == 1  # told, never refused
    assert server.requests[0]["max_tokens"] == 500  # a quarter of the window


def test_always_wrong_escalates_after_exactly_max_iterations(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(tmp_path / "repo")
    with ScriptedOpenAI([wrong(n) for n in range(10)]) as server:
        run = run_fixbot(repo, "--max-iterations", "3", base_url=server.base_url)
    assert run.code == 1
    assert len(server.requests) == 3
    evidence = run.evidence
    assert evidence["status"] == "escalated"
    assert evidence["escalation"] == "iterations"
    assert evidence["reason"].startswith("iterations: 3 of 3")
    assert [a["verdict"] for a in evidence["attempts"]] == ["fail"] * 3
    assert not (run.out / "fix.diff").exists()
    assert "could not fix" in (run.out / "report.md").read_text()
    assert_untouched(repo)


def test_reply_without_diff_then_right(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    repo = make_repo(tmp_path / "repo", REPAIRS)
    with ScriptedOpenAI(["I think the mean is wrong, but here is no diff.", GOOD]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr
    first = run.evidence["attempts"][0]
    assert first["verdict"] == "rejected" and first["check"] is None
    assert "the reply contains no edit" in first["problems"][0]
    assert "the reply contains no edit" in server.requests[1]["messages"][-1]["content"]


def test_diff_that_does_not_apply_is_refused_with_the_hunk_named(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(tmp_path / "repo")
    with ScriptedOpenAI([DOES_NOT_APPLY, GOOD]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr
    first = run.evidence["attempts"][0]
    assert first["verdict"] == "rejected" and first["check"] is None
    assert "calc.py" in first["problems"][0] and "hunk" in first["problems"][0]


def test_wrong_line_numbers_and_counts_are_located_by_context(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(tmp_path / "repo")
    with ScriptedOpenAI([GOOD_WRONG_NUMBERS]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr
    diff = (run.out / "fix.diff").read_text()
    assert "@@ -9,7 +9,7 @@" in diff  # the real place with canonical context, not the model's
    subprocess.run(
        ["git", "-C", str(repo), "apply", "--check", "-"], input=diff.encode(), check=True
    )


def test_diff_touching_a_protected_file_is_refused_and_never_run(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(tmp_path / "repo")
    with ScriptedOpenAI([EDITS_TEST, GOOD]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr
    first = run.evidence["attempts"][0]
    assert first["verdict"] == "rejected" and first["check"] is None
    assert "protected path tests/test_calc.py" in first["problems"][0]
    assert not Path("/tmp/fixbot-protected-executed").exists()
    assert "tests/test_calc.py" not in run.evidence["diff"]


def test_fixing_one_test_but_breaking_another_is_not_a_pass(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(tmp_path / "repo")
    with ScriptedOpenAI([BREAKS_ADD]) as server:
        run = run_fixbot(repo, "--max-iterations", "1", base_url=server.base_url)
    assert run.code == 1
    (attempt,) = run.evidence["attempts"]
    assert attempt["verdict"] == "fail"
    assert any("test_add was passed before and now failed" in p for p in attempt["problems"])


def test_new_type_error_blocks_but_a_pre_existing_one_does_not(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(tmp_path / "repo", {"calc.py": read_example("calc.py") + LEGACY})
    with ScriptedOpenAI([NEW_TYPE_ERROR, GOOD]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr
    first, second = run.evidence["attempts"]
    assert first["verdict"] == "fail"
    assert all(r["outcome"] == "passed" for r in first["check"]["tests"].values())
    assert any("new mypy error" in p and "return-value" in p for p in first["problems"])
    assert second["verdict"] == "pass"
    baseline_mypy = [f for f in run.evidence["baseline"]["findings"] if f["tool"] == "mypy"]
    assert len(baseline_mypy) == 1  # legacy() is still wrong, and did not block


def test_already_passing_makes_no_model_call(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    fixed = read_example("calc.py").replace("(len(values) + 1)", "len(values)")
    repo = make_repo(tmp_path / "repo", {"calc.py": fixed})
    with ScriptedOpenAI([]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert server.requests == []
    assert run.evidence["status"] == "already_passing"
    assert json.loads(run.stdout)["status"] == "already_passing"


def test_model_429_and_500_are_retried(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    repo = make_repo(tmp_path / "repo")
    script = [Fail(429, retry_after=0), Fail(500, retry_after=0), GOOD]
    with ScriptedOpenAI(script) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert len(server.requests) == 3 and server.completions == 1
    assert len(run.evidence["attempts"]) == 1


def test_model_unreachable_exits_3(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    repo = make_repo(tmp_path / "repo")
    run = run_fixbot(repo, "--json", base_url=unused_local_url())
    assert run.code == 3
    assert run.evidence["status"] == "error"
    assert "failed after" in run.evidence["reason"]
    assert json.loads(run.stdout)["exit_code"] == 3
    assert API_KEY not in run.stderr


def test_malformed_config_exits_2_naming_the_key(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    repo = make_repo(
        tmp_path / "repo", {".fixbot.yml": "max_iterations: 3\nsandbox:\n  tiemout: 5\n"}
    )
    with ScriptedOpenAI([]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 2
    assert "sandbox.tiemout" in run.evidence["reason"]
    assert ".fixbot.yml" in run.evidence["reason"]
    assert server.requests == []


def test_apply_writes_the_verified_fix_into_the_working_tree(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(tmp_path / "repo")
    with ScriptedOpenAI([GOOD]) as server:
        run = run_fixbot(repo, "--apply", base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert "return sum(values) / len(values)" in (repo / "calc.py").read_text()
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == " M calc.py\n"


def test_dirty_tree_is_refused(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "calc.py").write_text("# local edit\n")
    run = run_fixbot(repo, base_url=unused_local_url())
    assert run.code == 3
    assert "uncommitted changes (calc.py)" in run.evidence["reason"]
    assert (repo / "calc.py").read_text() == "# local edit\n"


def test_not_a_git_repo_exits_3_and_writes_nothing(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    run = run_fixbot(plain, "--json", base_url=unused_local_url())
    assert run.code == 3
    assert "not a git repository" in json.loads(run.stdout)["reason"]
    assert list(plain.iterdir()) == []


def test_fixed_end_to_end_in_the_docker_sandbox(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    """The whole run on the Docker backend, when an engine answers (CI starts one)."""
    docker_or_skip()
    repo = make_repo(tmp_path / "repo")
    with ScriptedOpenAI([GOOD]) as server:
        run = run_fixbot(repo, "--sandbox", "docker", base_url=server.base_url)
    assert run.code == 0, run.stderr
    evidence = run.evidence
    assert evidence["status"] == "fixed"
    assert evidence["sandbox"].startswith("docker")
    assert "1.1.1.1:80 refused" in evidence["network_probe"]
