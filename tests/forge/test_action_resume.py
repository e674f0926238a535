"""`fixbot action` end to end with everything real but GitHub and the model: the CLI, git with a
bare `origin`, the bubblewrap sandbox, PyGithub over HTTP to the fake GitHub, and the openai SDK
over a socket to the scripted model. A failed run escalates; a `/fix` comment answers it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fixbot import cli
from tests.conftest import API_KEY, EXAMPLE
from tests.fake_github import FakeGitHub, FakeJob, make_origin
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import GOOD, wrong
from tests.forge.conftest import HOSTILE_LOG, LEAKED, REPO, TOKEN, World, git, log_lines

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

CONFIG = "gates: {lint: false, types: false}\n"
HINT = "the divisor is wrong"
CI_FAILURE = "FAILED tests/test_calc.py::test_mean - assert 1.5 == 2.0"


@dataclass
class Action:
    code: int
    stdout: str
    logs: list[dict[str, Any]]
    evidence: dict[str, Any]


@contextmanager
def feature_pr(tmp_path: Path, extra: dict[str, str]) -> Iterator[World]:
    """The example with `extra` files on main; the failing commit on a feature branch with an
    open PR by a writer; main is the trusted checkout."""
    files = {str(p.relative_to(EXAMPLE)): p.read_text() for p in EXAMPLE.rglob("*") if p.is_file()}
    made = make_origin(tmp_path, {**files, **extra})
    work = made.workspace
    git(work, "checkout", "-q", "-b", "feature")
    (work / "NOTES.md").write_text("a change that leaves mean() broken\n")
    git(work, "add", "NOTES.md")
    git(work, "-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-qm", "notes")
    git(work, "push", "-q", "origin", "feature")
    failing = git(work, "rev-parse", "HEAD").strip()
    git(work, "checkout", "-q", "main")
    with FakeGitHub(made.bare, repository=REPO, token=TOKEN) as fake:
        fake.permissions.update(writer="write")
        source = fake.add_pull("feature", user="writer")
        yield World(tmp_path, fake, made.bare, work, failing, source)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with feature_pr(tmp_path, {".fixbot.yml": CONFIG}) as made:
        yield made


def act(
    world: World,
    capsys: pytest.CaptureFixture[str],
    server: ScriptedOpenAI,
    event_name: str,
    payload: Any,
    **extra: str,
) -> Action:
    environ = world.environ(event_name, world.event(event_name, payload))
    environ.update(
        OPENAI_API_KEY=API_KEY,
        OPENAI_BASE_URL=server.base_url,
        FIXBOT_MODEL="scripted-model",
        FIXBOT_SANDBOX="bwrap",
        **extra,
    )
    capsys.readouterr()
    code = cli.main(["action", "--log-format", "json"], environ)
    captured = capsys.readouterr()
    logs = [json.loads(line) for line in captured.err.splitlines() if line.startswith("{")]
    evidence = json.loads((world.tmp / "runner" / "fixbot-out" / "evidence.json").read_text())
    return Action(code, captured.out, logs, evidence)


def failed_run_with_logs(world: World) -> Any:
    payload = world.failed_run()
    run = payload["workflow_run"]
    test_log = log_lines(*(f"tests/test_calc.py::test_{i} PASSED" for i in range(300)))
    test_log += log_lines(*HOSTILE_LOG, CI_FAILURE)
    world.fake.add_run(
        run["id"],
        run["head_sha"],
        run["head_branch"],
        [FakeJob("pytest", "failure", [("Run pytest", "failure")], log=test_log)],
    )
    return payload


def prompt(request: dict[str, Any]) -> str:
    return "\n".join(str(m["content"]) for m in request["messages"])


def test_a_fix_comment_resumes_the_escalated_thread_to_one_fixed_pr(
    world: World, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(world.tmp)
    with ScriptedOpenAI([wrong(1), wrong(2), GOOD]) as server:
        first = act(
            world,
            capsys,
            server,
            "workflow_run",
            failed_run_with_logs(world),
            FIXBOT_MAX_ITERATIONS="2",
        )
        assert first.code == 1, first.logs
        assert first.evidence["status"] == "escalated"
        thread = first.evidence["thread_id"]
        [comment] = world.fake.comments_on(world.source_pr)
        assert f"<!-- fixbot:thread={thread} -->" in comment.body
        assert "/fix abort" in comment.body and "```mermaid" in comment.body

        # The failed job's log tail reached the model, as marked, untrusted data.
        seen = prompt(server.requests[0])
        assert "## The failed CI run (untrusted data)" in seen
        assert CI_FAILURE in seen and "Failed steps: Run pytest" in seen
        assert "::set-env name=NODE_OPTIONS" in seen  # shown as data ...
        assert LEAKED not in seen and TOKEN not in seen  # ... with credentials redacted
        assert "tests/test_calc.py::test_0 PASSED" not in seen  # only the tail
        assert list(world.tmp.rglob("pwned*")) == []
        assert not any(line.startswith("::set-env") for line in first.stdout.splitlines())

        answered = act(world, capsys, server, "issue_comment", world.comment(f"/fix {HINT}"))
    assert answered.code == 0, answered.logs
    done = answered.evidence
    assert (done["status"], done["thread_id"], done["resumes"]) == ("fixed", thread, 1)
    assert [a["verdict"] for a in done["attempts"]] == ["fail", "fail", "pass"]
    # No earlier model reply was asked for again: one more request, with the hint in it.
    assert len(server.requests) == 3
    assert HINT in prompt(server.requests[2]) and CI_FAILURE in prompt(server.requests[2])
    assert not any(e.get("event") == "fresh_fix" for e in answered.logs)
    [pr] = world.fake.fixbot_pulls()
    assert pr.base_ref == "feature" and pr.labels == ["fixbot"]
    assert '{{"await human: continue"}}' in pr.body and "finalize: fixed" in pr.body
    [comment] = world.fake.comments_on(world.source_pr)  # edited in place
    assert f"/pull/{pr.number}" in comment.body and "fixbot:thread=" not in comment.body


def test_fix_abort_ends_the_escalated_thread(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    with ScriptedOpenAI([wrong(1)]) as server:
        first = act(
            world, capsys, server, "workflow_run", world.failed_run(), FIXBOT_MAX_ITERATIONS="1"
        )
        assert first.evidence["status"] == "escalated"
        aborted = act(world, capsys, server, "issue_comment", world.comment("/fix abort"))
    assert aborted.code == 1, aborted.logs
    assert aborted.evidence["status"] == "aborted"
    assert aborted.evidence["thread_id"] == first.evidence["thread_id"]
    assert "by writer" in aborted.evidence["reason"]
    assert len(server.requests) == 1
    assert world.fake.fixbot_pulls() == []
    [comment] = world.fake.comments_on(world.source_pr)
    assert "aborted by a human" in comment.body and "fixbot:thread=" not in comment.body


def test_without_the_checkpoint_a_fix_comment_starts_afresh_with_the_hint(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    with ScriptedOpenAI([wrong(1), GOOD]) as server:
        first = act(
            world, capsys, server, "workflow_run", world.failed_run(), FIXBOT_MAX_ITERATIONS="1"
        )
        assert first.evidence["status"] == "escalated"
        shutil.rmtree(world.workspace / ".fixbot")  # the state was not kept between runs
        fresh = act(world, capsys, server, "issue_comment", world.comment(f"/fix {HINT}"))
        again = act(world, capsys, server, "issue_comment", world.comment("/fix abort"))
    assert fresh.code == 0, fresh.logs
    [note] = [e for e in fresh.logs if e.get("event") == "fresh_fix"]
    assert note["thread_id"] == first.evidence["thread_id"]
    assert "no checkpoint" in note["reason"] and "starting a fresh fix" in note["reason"]
    assert fresh.evidence["status"] == "fixed" and fresh.evidence["hint"] == HINT
    assert fresh.evidence["thread_id"] != first.evidence["thread_id"]
    assert HINT in prompt(server.requests[1])
    assert len(world.fake.fixbot_pulls()) == 1
    # Nothing is waiting any more: /fix abort says so (exit 2) and changes nothing.
    assert again.code == 2 and "nothing to abort" in again.evidence["reason"]
    assert len(world.fake.fixbot_pulls()) == 1


# The failed step is a command of the CI's own (no .fixbot.yml of checks): the run's check. A
# `/fix` comment carries no failed run; the resumed run must judge by the checks its baseline ran,
# not by the config's defaults (whose checks do not include the command: it could never pass).
CHECK_SCRIPT = """\
import sys

from calc import mean

sys.exit(0 if (mean([1.0, 2.0]), mean([2.0, 4.0, 9.0])) == (1.5, 5.0) else 1)
"""
COMMAND_WORKFLOW = """\
name: test
on: pull_request
jobs:
  check:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: python check_mean.py
"""


def test_a_resumed_run_judges_by_the_checks_its_baseline_ran(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    extra = {".github/workflows/test.yml": COMMAND_WORKFLOW, "check_mean.py": CHECK_SCRIPT}
    with feature_pr(tmp_path, extra) as world:
        payload = world.failed_run()
        run = payload["workflow_run"]
        steps = [("Run python check_mean.py", "failure")]
        jobs = [FakeJob("check", "failure", steps)]
        world.fake.add_run(run["id"], world.failing_sha, "feature", jobs)
        with ScriptedOpenAI([wrong(1), GOOD]) as server:
            first = act(world, capsys, server, "workflow_run", payload, FIXBOT_MAX_ITERATIONS="1")
            assert first.evidence["status"] == "escalated", first.logs
            answered = act(world, capsys, server, "issue_comment", world.comment(f"/fix {HINT}"))
    ran = [(c["name"], c["run"]) for c in first.evidence["config"]["checks"]]
    assert ran == [("check_mean", "python check_mean.py")]
    done = answered.evidence
    assert answered.code == 0, (done["reason"], done["status"])
    assert (done["status"], done["resumes"]) == ("fixed", 1), done["attempts"]
    assert [(c["name"], c["run"]) for c in done["config"]["checks"]] == ran
    assert [a["verdict"] for a in done["attempts"]] == ["fail", "pass"]
