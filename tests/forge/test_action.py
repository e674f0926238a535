"""`fixbot action` end to end, without the sandbox: a real event file, real git with a bare
`origin`, PyGithub over HTTP to a local GitHub, and a canned fix runner (the FixRunner seam)."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from fixbot import log
from fixbot.edits import FileChange, render_diff
from fixbot.errors import UsageError
from fixbot.forge import REFUSAL_MARKER, Git, Publisher
from fixbot.forge.github import ActionEnv, run_action
from fixbot.forge.github.actions import escape_data, neutral
from fixbot.forge.runlog import CHARS_PER_JOB, LINES_PER_JOB
from fixbot.forge.texts import COMMENT_MARKER
from tests.fake_github import FakeJob
from tests.forge.conftest import (
    BROKEN,
    FAILING,
    FIXED,
    HOSTILE_LOG,
    LEAKED,
    TOKEN,
    Runner,
    World,
    canned,
    git,
    log_lines,
    parse_outputs,
)


def fix_prs(world: World) -> list[Any]:
    return world.fake.fixbot_pulls()


# --- a failed run -> one PR ----------------------------------------------------------------


def test_a_failed_run_opens_one_pr_with_the_evidence(world: World) -> None:
    runner = Runner()
    run = world.run("workflow_run", world.failed_run(), fix=runner)
    assert run.code == 0, run.logs
    [job] = runner.jobs
    assert (job.commit, job.repo, job.command) == (world.failing_sha, world.workspace, "fix")
    [pr] = fix_prs(world)
    assert re.fullmatch(r"fixbot/fix-[0-9a-f]{12}", pr.head_ref)
    assert (pr.base_ref, pr.draft, pr.state) == ("feature", True, "open")
    assert "fixbot fixed the failing checks" in pr.body
    assert FAILING in pr.body and "SHA-256 of the diff" in pr.body
    assert "GITHUB_TOKEN" in pr.body  # the note about CI on PRs opened with the default token
    # The branch holds exactly the verified diff on top of the failing commit.
    assert world.branch_file(pr.head_ref, "calc.py") == FIXED
    assert git(world.bare, "rev-parse", f"{pr.head_ref}^").strip() == world.failing_sha
    # The source PR got one comment linking the fix.
    [comment] = world.fake.comments_on(world.source_pr)
    assert COMMENT_MARKER in comment.body and f"/pull/{pr.number}" in comment.body
    # Outputs and the job summary.
    assert run.outputs["status"] == "fixed"
    assert run.outputs["pr-number"] == str(pr.number)
    assert run.outputs["pr-url"].endswith(f"/pull/{pr.number}")
    diff_path = Path(run.outputs["diff-path"])
    assert diff_path.read_text() == canned(job).diff
    assert "fixbot fixed the failing checks" in run.summary and run.outputs["pr-url"] in run.summary
    evidence = json.loads((diff_path.parent / "evidence.json").read_text())
    assert evidence["status"] == "fixed" and evidence["commit"] == world.failing_sha
    # Nothing was written into the checkout: not the working tree, not its index.
    assert git(world.workspace, "status", "--porcelain") == ""


def test_the_result_is_recorded_before_anything_is_published(world: World) -> None:
    seen: list[bool] = []

    def checking(env: ActionEnv) -> Publisher:
        publisher = world.connect(env)
        original = publisher.create_pr

        def create_pr(**kwargs: Any) -> Any:
            seen.append((env.out / "evidence.json").exists() and (env.out / "fix.diff").exists())
            return original(**kwargs)

        publisher.create_pr = create_pr  # type: ignore[method-assign]
        return publisher

    assert world.run("workflow_run", world.failed_run(), connect_to=checking).code == 0
    assert seen == [True]


def test_the_same_event_again_updates_the_one_pr_without_pushing(world: World) -> None:
    first = world.run("workflow_run", world.failed_run())
    [pr] = fix_prs(world)
    sha = world.fake.branch_sha(pr.head_ref)
    pushes = sum(1 for argv in world.argv_seen if "push" in argv)
    second = world.run("workflow_run", world.failed_run())
    assert (first.code, second.code) == (0, 0)
    assert len(fix_prs(world)) == 1
    assert world.fake.branch_sha(pr.head_ref) == sha
    assert sum(1 for argv in world.argv_seen if "push" in argv) == pushes  # diff unchanged
    assert second.outputs["pr-number"] == first.outputs["pr-number"]
    assert len(world.fake.comments_on(world.source_pr)) == 1


def test_a_changed_fix_is_pushed_with_a_lease_to_the_same_branch(world: World) -> None:
    world.run("workflow_run", world.failed_run())
    [pr] = fix_prs(world)
    better = "def add(a, b):\n    return b + a\n"
    runner = Runner(
        lambda job: canned(job, diff=render_diff([FileChange("calc.py", BROKEN, better)]))
    )
    run = world.run("workflow_run", world.failed_run(), fix=runner)
    assert run.code == 0
    assert [p.number for p in fix_prs(world)] == [pr.number]
    assert world.branch_file(pr.head_ref, "calc.py") == better
    [push] = [argv for argv in world.argv_seen if "push" in argv][-1:]
    assert any(a.startswith(f"--force-with-lease=refs/heads/{pr.head_ref}:") for a in push)


def test_a_crash_after_the_push_then_a_rerun_ends_with_one_pr(world: World) -> None:
    world.fake.inject("POST", r"/pulls$", 500, times=3)  # the retry budget, spent
    crashed = world.run("workflow_run", world.failed_run())
    assert crashed.code == 3 and crashed.outputs["status"] == "error"
    assert fix_prs(world) == []
    pushed = [b for b in git(world.bare, "branch", "--list", "fixbot/*").split()]
    assert len(pushed) == 1  # the push happened before the crash
    rerun = world.run("workflow_run", world.failed_run())
    assert rerun.code == 0
    [pr] = fix_prs(world)
    assert pr.head_ref == pushed[0]


def test_two_concurrent_runs_for_one_failure_end_with_one_pr(world: World) -> None:
    world.fake.create_delay = 0.3
    second_workspace = world.tmp / "workspace2"
    subprocess.run(["git", "clone", "-q", str(world.bare), str(second_workspace)], check=True)
    codes: list[int] = []
    payload = world.failed_run()

    def one(workspace: Path) -> None:
        path = world.event("workflow_run", payload)
        environ = world.environ("workflow_run", path, GITHUB_WORKSPACE=str(workspace))
        environ.update(GITHUB_OUTPUT="", GITHUB_STEP_SUMMARY="", FIXBOT_OUT=str(workspace / "o"))
        codes.append(run_action(environ, fix=Runner(), connect=world.connect, stdout=io.StringIO()))

    logs = io.StringIO()
    log.configure(fmt="json", stream=logs)
    threads = [threading.Thread(target=one, args=(w,)) for w in (world.workspace, second_workspace)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert codes == [0, 0], logs.getvalue()
    assert len(fix_prs(world)) == 1
    assert len(git(world.bare, "branch", "--list", "fixbot/*").split()) == 1


def test_a_green_run_closes_the_superseded_fix_pr(world: World) -> None:
    world.run("workflow_run", world.failed_run())
    [pr] = fix_prs(world)
    runner = Runner()
    run = world.run("workflow_run", world.failed_run(conclusion="success"), fix=runner)
    assert (run.code, run.outputs["status"], runner.jobs) == (0, "cleanup", [])
    assert world.fake.pulls[pr.number].state == "closed"
    assert world.fake.branch_sha(pr.head_ref) is None
    assert "Superseded" in world.fake.comments_on(pr.number)[-1].body


def test_an_already_passing_result_closes_the_superseded_fix_pr(world: World) -> None:
    world.run("workflow_run", world.failed_run())
    [pr] = fix_prs(world)
    run = world.run(
        "workflow_run", world.failed_run(), fix=Runner(lambda j: canned(j, "already_passing"))
    )
    assert (run.code, run.outputs["status"]) == (0, "already_passing")
    assert world.fake.pulls[pr.number].state == "closed"


def test_an_escalated_run_comments_how_to_answer_and_opens_no_pr(world: World) -> None:
    run = world.run(
        "workflow_run", world.failed_run(), fix=Runner(lambda j: canned(j, "escalated"))
    )
    assert (run.code, run.outputs["status"], run.outputs["pr-url"]) == (1, "escalated", "")
    assert fix_prs(world) == []
    [comment] = world.fake.comments_on(world.source_pr)
    assert "/fix abort" in comment.body and "a human is needed" in comment.body


# --- the failed run's jobs and logs ---------------------------------------------------------


def register_run(world: World, payload: Any, jobs: list[FakeJob]) -> None:
    run = payload["workflow_run"]
    world.fake.add_run(run["id"], run["head_sha"], run["head_branch"], jobs)


def test_the_failed_jobs_and_their_log_tails_reach_the_fix_bounded_and_inert(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(world.tmp)
    payload = world.failed_run()
    noise = [f"collected line {i}" for i in range(400)]
    test_log = log_lines(*noise, *HOSTILE_LOG, "FAILED tests/test_calc.py::test_add")
    register_run(
        world,
        payload,
        [
            FakeJob("lint", "success", [("Run ruff", "success")], log=log_lines("ok")),
            FakeJob(
                "test (3.11)",
                "failure",
                [("Set up job", "success"), ("Run pytest", "failure"), ("Post", "skipped")],
                log=test_log,
            ),
        ],
    )
    runner = Runner()
    run = world.run("workflow_run", payload, fix=runner)
    assert run.code == 0, run.logs
    [job] = runner.jobs
    [shown] = job.ci_jobs
    assert (shown["name"], shown["conclusion"], shown["failed_steps"]) == (
        "test (3.11)",
        "failure",
        ["Run pytest"],
    )
    tail = shown["log_tail"].splitlines()
    assert len(tail) == LINES_PER_JOB and len(shown["log_tail"]) <= CHARS_PER_JOB
    assert tail[-1] == "FAILED tests/test_calc.py::test_add"
    assert "collected line 0" not in tail and "2024-05-01T" not in shown["log_tail"]
    # The hostile lines are there as data: the token redacted, the fence defused.
    assert "::set-env name=NODE_OPTIONS::--require /tmp/evil.js" in tail
    assert LEAKED not in shown["log_tail"] and "[redacted:" in shown["log_tail"]
    assert "```" not in shown["log_tail"]
    # Nothing in it ran, was printed as a workflow command, or was logged.
    assert list(world.tmp.rglob("pwned*")) == []
    assert not any(line.startswith("::set-env") for line in run.stdout.splitlines())
    assert "evil.js" not in run.logs and LEAKED not in run.logs
    assert '"ci_context"' in run.logs
    # The log was downloaded from the pre-signed URL without the token.
    [download] = [r for r in world.fake.requests if r.path.startswith("/_blobs/")]
    assert "authorization" not in download.headers
    assert [r.path for r in world.fake.requests].count(download.path) == 1  # only the failed job


def test_an_api_error_reading_the_jobs_is_a_warning_and_the_fix_goes_on(world: World) -> None:
    payload = world.failed_run()
    register_run(world, payload, [FakeJob("test", "failure", [("Run pytest", "failure")])])
    world.fake.inject("GET", r"/actions/runs/\d+/jobs$", 502, times=10)
    runner = Runner()
    run = world.run("workflow_run", payload, fix=runner)
    assert run.code == 0 and run.outputs["status"] == "fixed"
    assert runner.jobs[0].ci_jobs == ()
    assert '"ci_logs_unavailable"' in run.logs and '"warning"' in run.logs
    assert len(fix_prs(world)) == 1


def test_an_unreadable_job_log_leaves_the_job_shown_without_it(world: World) -> None:
    payload = world.failed_run()
    register_run(world, payload, [FakeJob("test", "failure", [("Run pytest", "failure")])])
    world.fake.inject("GET", r"/actions/jobs/\d+/logs$", 410, times=10)  # logs expired
    runner = Runner()
    run = world.run("workflow_run", payload, fix=runner)
    assert run.code == 0
    assert [(j["name"], j["log_tail"]) for j in runner.jobs[0].ci_jobs] == [("test", "")]
    assert '"ci_log_unavailable"' in run.logs


def test_an_unknown_run_gives_no_context_and_no_error(world: World) -> None:
    runner = Runner()
    run = world.run("workflow_run", world.failed_run(), fix=runner)
    assert run.code == 0 and runner.jobs[0].ci_jobs == ()


# --- labels --------------------------------------------------------------------------------


def label_posts(world: World) -> list[Any]:
    return [
        r.body for r in world.fake.requests if r.method == "POST" and r.path.endswith("/labels")
    ]


def test_the_fix_pr_gets_the_default_label_once(world: World) -> None:
    world.run("workflow_run", world.failed_run())
    [pr] = fix_prs(world)
    assert pr.labels == ["fixbot"]
    world.run("workflow_run", world.failed_run())  # the same failure again: already labelled
    assert fix_prs(world)[0].labels == ["fixbot"]
    assert label_posts(world) == [["fixbot"]]


def test_labels_come_from_the_input_and_empty_means_none(world: World) -> None:
    run = world.run("workflow_run", world.failed_run(), FIXBOT_LABELS="bug, fixbot\nneeds review")
    assert run.code == 0, run.logs
    assert fix_prs(world)[0].labels == ["bug", "fixbot", "needs review"]


def test_no_labels_when_the_input_is_empty(world: World) -> None:
    world.run("workflow_run", world.failed_run(), FIXBOT_LABELS="")
    assert fix_prs(world)[0].labels == [] and label_posts(world) == []


# --- answering an escalation ----------------------------------------------------------------

THREAD = "fix-0123456789abcdef0123"


def test_an_escalation_comment_names_its_thread_and_a_fix_comment_answers_it(
    world: World,
) -> None:
    escalated = Runner(lambda j: canned(j, "escalated", thread_id=THREAD))
    world.run("workflow_run", world.failed_run(), fix=escalated)
    [comment] = world.fake.comments_on(world.source_pr)
    assert f"<!-- fixbot:thread={THREAD} -->" in comment.body
    answer = Runner()
    run = world.run("issue_comment", world.comment("/fix look at add"), fix=answer)
    assert run.code == 0, run.logs
    [job] = answer.jobs
    assert (job.thread, job.command, job.hint) == (THREAD, "fix", "look at add")
    # The fixed result replaced the comment in place: the question is answered.
    [comment] = world.fake.comments_on(world.source_pr)
    assert "fixbot:thread=" not in comment.body
    abort = Runner(lambda j: canned(j, "aborted"))
    world.run("issue_comment", world.comment("/fix abort"), fix=abort)
    assert abort.jobs[0].thread == ""  # nothing pending any more


def test_a_fix_comment_without_an_escalation_names_no_thread(world: World) -> None:
    runner = Runner()
    world.run("issue_comment", world.comment("/fix"), fix=runner)
    assert runner.jobs[0].thread == ""


# --- /fix comments ---------------------------------------------------------------------------


@pytest.mark.parametrize("login", ["writer", "maintainer"])
def test_fix_from_a_writer_opens_a_pr_for_the_pull_requests_head(world: World, login: str) -> None:
    runner = Runner()
    run = world.run("issue_comment", world.comment("/fix look at calc.py", login=login), fix=runner)
    assert run.code == 0, run.logs
    [job] = runner.jobs
    assert (job.commit, job.hint, job.trigger.head_ref) == (
        world.failing_sha,
        "look at calc.py",
        "feature",
    )
    [pr] = fix_prs(world)
    assert pr.base_ref == "feature"
    [comment] = world.fake.comments_on(world.source_pr)
    assert f"/pull/{pr.number}" in comment.body


def test_fix_abort_reaches_the_runner_as_the_abort_command(world: World) -> None:
    runner = Runner(lambda j: canned(j, "aborted"))
    run = world.run("issue_comment", world.comment("/fix abort"), fix=runner)
    assert run.code == 1
    assert [j.command for j in runner.jobs] == ["abort"]


def test_fix_from_a_reader_is_refused_politely_and_runs_nothing(world: World) -> None:
    runner = Runner()
    for _ in range(2):
        run = world.run("issue_comment", world.comment("/fix", login="reader"), fix=runner)
        assert (run.code, run.outputs["status"]) == (0, "refused")
    assert runner.jobs == []
    assert fix_prs(world) == []
    [comment] = world.fake.comments_on(world.source_pr)  # one, however often they ask
    assert REFUSAL_MARKER in comment.body and "@reader" in comment.body
    assert "write access" in comment.body


def test_a_permission_api_error_refuses(world: World) -> None:
    world.fake.inject("GET", r"/permission$", 502, times=10)
    runner = Runner()
    run = world.run("issue_comment", world.comment("/fix", login="writer"), fix=runner)
    assert (run.code, run.outputs["status"], runner.jobs) == (0, "refused", [])
    assert fix_prs(world) == []


def test_a_fork_pull_request_gets_the_diff_as_a_comment_and_no_push(world: World) -> None:
    fork_pr = world.fake.add_pull("main", head_repo="someone/octo-repo", head_sha=world.failing_sha)
    world.source_pr = fork_pr
    run = world.run("issue_comment", world.comment("/fix"))
    assert run.code == 0, run.logs
    assert fix_prs(world) == []
    assert git(world.bare, "branch", "--list", "fixbot/*") == ""
    [comment] = world.fake.comments_on(fork_pr)
    assert "comes from a fork" in comment.body and "+    return a + b" in comment.body


# --- ignored events ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event_name", "make"),
    [
        ("workflow_run", lambda w: w.failed_run(branch="fixbot/fix-0123456789ab")),
        ("issue_comment", lambda w: w.comment("/fix", login="fixbot[bot]")),
        ("issue_comment", lambda w: w.comment("/fix", action="edited")),
        ("issue_comment", lambda w: w.comment("thanks!")),
    ],
)
def test_ignored_events_touch_nothing(world: World, event_name: str, make: Any) -> None:
    before = set(os.listdir(world.workspace))
    runner = Runner()
    run = world.run(event_name, make(world), fix=runner)
    assert (run.code, run.outputs["status"], runner.jobs) == (0, "skipped", [])
    assert world.fake.requests == []
    assert set(os.listdir(world.workspace)) == before
    assert "skipped" in run.logs


def test_never_fix_branches_are_ignored(world: World) -> None:
    run = world.run("workflow_run", world.failed_run(), FIXBOT_NEVER_FIX="release/*, feat*")
    assert run.outputs["status"] == "skipped" and world.fake.requests == []


# --- malformed input -----------------------------------------------------------------------


def test_a_malformed_payload_exits_2_naming_the_problem(world: World) -> None:
    payload = world.failed_run()
    del payload["workflow_run"]["head_sha"]
    run = world.run("workflow_run", payload)
    assert (run.code, run.outputs["status"]) == (2, "error")
    assert "'workflow_run.head_sha' is missing" in run.logs
    assert "::error title=fixbot::" in run.stdout


def test_an_unknown_event_or_unreadable_file_exits_2(world: World) -> None:
    assert world.run("push", {"ref": "refs/heads/main"}).code == 2
    assert world.run("workflow_run", world.tmp / "missing.json").code == 2
    broken = world.tmp / "broken.json"
    broken.write_text("{not json")
    assert world.run("workflow_run", broken).code == 2


def test_a_missing_actions_variable_exits_2(world: World) -> None:
    out = world.tmp / "out.txt"
    log.configure(fmt="json", stream=io.StringIO())
    code = run_action({"GITHUB_OUTPUT": str(out)}, fix=Runner(), connect=world.connect)
    assert code == 2
    assert parse_outputs(out.read_text())["status"] == "error"


# --- hostile strings -----------------------------------------------------------------------

NASTY_BRANCH = "x;touch${IFS}pwned1`touch${IFS}pwned2`$(touch${IFS}pwned3)&|'\"<>"
NASTY_HINT = "$(touch pwned4); `touch pwned5` && rm -rf ~ || echo '\" ::set-env name=X::1"


def test_shell_metacharacters_in_branch_and_comment_are_harmless(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(world.tmp)
    git(world.workspace, "push", "-q", "origin", f"feature:refs/heads/{NASTY_BRANCH}")
    world.source_pr = world.fake.add_pull(NASTY_BRANCH, user="writer")
    runner = Runner()
    run = world.run("issue_comment", world.comment(f"/fix {NASTY_HINT}"), fix=runner)
    assert run.code == 0, run.logs
    assert runner.jobs[0].hint == NASTY_HINT
    [pr] = fix_prs(world)
    assert pr.base_ref == NASTY_BRANCH
    assert list(world.tmp.rglob("pwned*")) == []


def test_logged_untrusted_text_cannot_issue_workflow_commands(world: World) -> None:
    sneaky = "nope\n::set-env name=NODE_OPTIONS::--require /tmp/x.js\n  ::add-mask::x"
    path = world.event("workflow_run", world.failed_run())
    environ = world.environ("workflow_run", path)
    logs, stdout = io.StringIO(), io.StringIO()
    log.configure(fmt="human", stream=logs)
    runner = Runner(lambda j: canned(j, "escalated", reason=sneaky))
    assert run_action(environ, fix=runner, connect=world.connect, stdout=stdout) == 1
    assert "set-env" in logs.getvalue()
    assert not any(line.lstrip().startswith("::") for line in logs.getvalue().splitlines())
    # And while fixbot ran, the runner was told to ignore commands altogether.
    lines = stdout.getvalue().splitlines()
    stop = next(line for line in lines if line.startswith("::stop-commands::"))
    assert f"::{stop.removeprefix('::stop-commands::')}::" in lines


def test_workflow_command_helpers() -> None:
    assert neutral("a\n::error::x") == "a\\n::error::x"
    assert neutral("::error::x").startswith("\u200b")
    assert escape_data("100%\r\n::x") == "100%25%0D%0A::x"


def test_a_recorded_diff_may_not_touch_ci_files(world: World) -> None:
    evil = render_diff([FileChange(".github/workflows/ci.yml", None, "on: push\n")])
    run = world.run("workflow_run", world.failed_run(), fix=Runner(lambda j: canned(j, diff=evil)))
    assert run.code == 2
    assert (
        "refusing to publish the recorded diff: it changes '.github/workflows/ci.yml'" in run.logs
    )
    assert fix_prs(world) == []


# --- the token -----------------------------------------------------------------------------


def test_the_token_never_reaches_logs_argv_outputs_or_the_checkout(world: World) -> None:
    leaky = Runner(lambda j: canned(j, reason=f"the model echoed {TOKEN}"))
    run = world.run("workflow_run", world.failed_run(), fix=leaky)
    assert run.code == 0
    encoded = Git(world.workspace, "https://github.example", TOKEN).secrets()[1]
    for secret in (TOKEN, encoded):
        assert secret not in run.logs
        assert secret not in run.summary and secret not in json.dumps(run.outputs)
        assert all(secret not in " ".join(argv) for argv in world.argv_seen)
        assert secret not in (world.workspace / ".git" / "config").read_text()
        for path in world.workspace.rglob("*"):
            if path.is_file():
                assert secret.encode() not in path.read_bytes(), path
        assert all(secret not in p.body for p in world.fake.pulls.values())
        assert all(secret not in c.body for c in world.fake.comments.values())
    out = Path(run.outputs["diff-path"]).parent
    assert TOKEN not in (out / "evidence.json").read_text()
    # The only place it appears is the line that asks the runner to mask it.
    assert [line for line in run.stdout.splitlines() if TOKEN in line] == [f"::add-mask::{TOKEN}"]


def test_the_checkouts_hooks_and_fsmonitor_never_run_when_publishing(world: World) -> None:
    """A checkout whose config an earlier step may have rewritten: the publish step's git
    (a private index, apply, commit-tree, push) runs none of the programs it names."""
    marks = world.workspace.parent / "hook-marks"
    hooks = world.workspace / ".git" / "hooks"
    for name in ("post-index-change", "pre-push", "reference-transaction", "fsmonitor"):
        (hooks / name).write_text(f"#!/bin/sh\necho {name} >> {marks}\nenv >> {marks}\n")
        (hooks / name).chmod(0o755)
    git(world.workspace, "config", "core.fsmonitor", str(hooks / "fsmonitor"))
    run = world.run("workflow_run", world.failed_run())
    assert run.code == 0, run.logs
    assert len(fix_prs(world)) == 1
    assert not marks.exists(), marks.read_text()


def test_git_gets_the_token_as_an_auth_header_through_the_environment(world: World) -> None:
    world.run("workflow_run", world.failed_run())
    authed = [env for env in world.env_seen if "GIT_CONFIG_VALUE_0" in env]
    assert authed, "ls-remote and push carry the header"
    for env in authed:
        assert env["GIT_CONFIG_KEY_0"] == "http.https://github.example/.extraheader"
        assert env["GIT_CONFIG_VALUE_0"].startswith("AUTHORIZATION: basic ")
        assert "GITHUB_TOKEN" not in env
    # git really reads it as configuration, scoped to the server.
    shown = subprocess.run(
        ["git", "config", "--get-urlmatch", "http.extraheader", "https://github.example/o/r"],
        env=authed[0],
        capture_output=True,
        text=True,
        cwd=world.workspace,
    ).stdout
    assert shown.startswith("AUTHORIZATION: basic ")


# --- the two-job split ---------------------------------------------------------------------


def test_the_fix_job_writes_nothing_and_the_publish_job_runs_nothing(world: World) -> None:
    runner = Runner()
    fixed = world.run("workflow_run", world.failed_run(), fix=runner, phase="fix")
    assert (fixed.code, fixed.outputs["status"]) == (0, "fixed")
    assert world.writes() == []
    assert git(world.bare, "branch", "--list", "fixbot/*") == ""
    artifact = Path(fixed.outputs["diff-path"]).parent
    publisher = Runner()
    published = world.run(
        "workflow_run",
        world.failed_run(),
        fix=publisher,
        phase="publish",
        result_dir=artifact,
        FIXBOT_DIFF_SHA256=fixed.outputs["diff-sha256"],
    )
    assert published.code == 0, published.logs
    assert publisher.jobs == []
    [pr] = fix_prs(world)
    assert published.outputs["pr-number"] == str(pr.number)


def test_the_publish_job_refuses_a_tampered_result(world: World) -> None:
    fixed = world.run("workflow_run", world.failed_run(), phase="fix")
    artifact = Path(fixed.outputs["diff-path"]).parent
    (artifact / "fix.diff").write_text(
        render_diff([FileChange("calc.py", BROKEN, "import os\nos.system('id')\n")])
    )
    run = world.run("workflow_run", world.failed_run(), phase="publish", result_dir=artifact)
    assert run.code == 2
    assert "does not match the SHA-256" in run.logs
    assert fix_prs(world) == []


def test_the_publish_job_refuses_a_result_for_another_commit(world: World) -> None:
    fixed = world.run("workflow_run", world.failed_run(), phase="fix")
    artifact = Path(fixed.outputs["diff-path"]).parent
    evidence = json.loads((artifact / "evidence.json").read_text())
    evidence["commit"] = "f" * 40
    (artifact / "evidence.json").write_text(json.dumps(evidence))
    run = world.run("workflow_run", world.failed_run(), phase="publish", result_dir=artifact)
    assert run.code == 2 and fix_prs(world) == []


def test_a_refused_comment_is_answered_by_the_publish_job(world: World) -> None:
    fixed = world.run("issue_comment", world.comment("/fix", login="reader"), phase="fix")
    assert fixed.outputs["status"] == "refused" and world.writes() == []
    world.run("issue_comment", world.comment("/fix", login="reader"), phase="publish")
    [comment] = world.fake.comments_on(world.source_pr)
    assert REFUSAL_MARKER in comment.body


# --- the environment -----------------------------------------------------------------------


def test_pull_requests_not_permitted_is_an_actionable_error(world: World) -> None:
    refused = {"message": "GitHub Actions is not permitted to create or approve pull requests."}
    world.fake.inject("POST", r"/pulls$", 403, body=refused, times=5)
    run = world.run("workflow_run", world.failed_run())
    assert (run.code, run.outputs["status"]) == (3, "error")
    assert "Allow GitHub Actions to create and approve pull requests" in run.stdout
    assert (
        sum(1 for r in world.fake.requests if r.method == "POST" and r.path.endswith("/pulls")) == 1
    )


def test_the_action_environment_is_parsed_once_and_strictly(world: World) -> None:
    environ = world.environ("workflow_run", world.tmp / "e.json")
    env = ActionEnv.from_environ(environ)
    assert (env.draft, env.default_token, env.never_fix, env.config) == (True, True, (), None)
    assert env.out == world.tmp / "runner" / "fixbot-out"
    assert TOKEN not in repr(env)
    (world.workspace / ".fixbot.yml").write_text("max_iterations: 2\n")
    named = ActionEnv.from_environ(
        environ
        | {"FIXBOT_DRAFT": "false", "FIXBOT_NEVER_FIX": "a/*\nb, c", "FIXBOT_CONFIG": "x.yml"}
    )
    assert (named.draft, named.never_fix) == (False, ("a/*", "b", "c"))
    assert named.config == world.workspace / "x.yml"  # named: must exist, load_config says so
    assert ActionEnv.from_environ(environ).config == world.workspace / ".fixbot.yml"
    with pytest.raises(UsageError, match="FIXBOT_DRAFT must be true or false"):
        ActionEnv.from_environ(environ | {"FIXBOT_DRAFT": "maybe"})


def test_the_runner_gets_the_trusted_config_path(world: World) -> None:
    (world.workspace / ".fixbot.yml").write_text("max_iterations: 2\n")
    runner = Runner()
    world.run("workflow_run", world.failed_run(), fix=runner)
    assert runner.jobs[0].config_file == world.workspace / ".fixbot.yml"


def test_a_checkout_without_the_failing_commit_fetches_it(world: World) -> None:
    shallow = world.tmp / "shallow"
    url = f"file://{world.bare}"
    subprocess.run(
        ["git", "clone", "-q", "--depth=1", "--single-branch", "-b", "main", url, str(shallow)],
        check=True,
    )
    assert subprocess.run(
        ["git", "-C", str(shallow), "cat-file", "-e", world.failing_sha]
    ).returncode
    runner = Runner()
    run = world.run("workflow_run", world.failed_run(), fix=runner, GITHUB_WORKSPACE=str(shallow))
    assert run.code == 0, run.logs
    assert runner.jobs[0].commit == world.failing_sha
    git(shallow, "cat-file", "-e", f"{world.failing_sha}^{{commit}}")
    assert len(fix_prs(world)) == 1


# --- action.yml and the workflows ----------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def _yaml(rel: str) -> Any:
    import yaml

    return yaml.safe_load((ROOT / rel).read_text())


def _steps(document: Any) -> list[Any]:
    if "runs" in document:
        return list(document["runs"]["steps"])
    return [step for job in document["jobs"].values() for step in job.get("steps", [])]


@pytest.mark.parametrize(
    "rel", ["action.yml", ".github/workflows/ci.yml", ".github/workflows/fixbot.yml"]
)
def test_no_expression_inside_a_script_and_every_action_pinned(rel: str) -> None:
    for step in _steps(_yaml(rel)):
        assert "${{" not in step.get("run", ""), step
        uses = step.get("uses", "")
        if uses and not uses.startswith("./"):
            assert re.fullmatch(r"[\w.-]+/[\w.-]+(?:/[\w.-]+)*@[0-9a-f]{40}", uses), uses


def test_every_action_input_reaches_the_script_through_env() -> None:
    action = _yaml("action.yml")
    [step] = [s for s in action["runs"]["steps"] if s.get("id") == "fixbot"]
    mapped = " ".join(str(v) for v in step["env"].values())
    for name in action["inputs"]:
        assert f"inputs.{name}" in mapped, name
    for name, output in action["outputs"].items():
        assert output["value"] == f"${{{{ steps.fixbot.outputs.{name} }}}}"
    assert action["inputs"]["draft"]["default"] == "true"


def test_the_copy_paste_workflow_splits_read_and_write() -> None:
    workflow = _yaml(".github/workflows/fixbot.yml")
    triggers = workflow[True]  # YAML reads the key `on` as true
    assert triggers["workflow_run"]["types"] == ["completed"]
    assert triggers["issue_comment"]["types"] == ["created"]
    assert "workflow_dispatch" in triggers
    assert workflow["permissions"] == {}
    assert "concurrency" in workflow
    fix, publish = workflow["jobs"]["fix"], workflow["jobs"]["publish"]
    assert "write" not in fix["permissions"].values()
    assert publish["permissions"]["contents"] == "write"
    assert not any("api-key" in step.get("with", {}) for step in publish["steps"])
    phases = [
        s["with"]["phase"] for job in (fix, publish) for s in job["steps"] if s.get("uses") == "./"
    ]
    assert phases == ["fix", "publish"]
    for job in (fix, publish):
        checkout = job["steps"][0]
        assert checkout["uses"].startswith("actions/checkout@")
        assert checkout["with"]["persist-credentials"] is False


def test_the_version_strings_agree() -> None:
    import tomllib

    from fixbot import __version__

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["version"] == __version__
    # One Python for the package, the action, the image and CI.
    python = project["tool"]["mypy"]["python_version"]
    assert project["project"]["requires-python"] == f">={python}"
    assert project["tool"]["ruff"]["target-version"] == "py" + python.replace(".", "")
    [setup] = [s for s in _steps(_yaml("action.yml")) if "setup-python" in s.get("uses", "")]
    assert str(setup["with"]["python-version"]) == python
    image = re.search(
        r"^ARG PYTHON_IMAGE=python:(\d+\.\d+)\.", (ROOT / "Dockerfile").read_text(), re.M
    )
    assert image is not None and image.group(1) == python
    assert f"python:{python}." in (ROOT / ".github/workflows/ci.yml").read_text()


def test_the_workflow_keeps_fixbots_state_between_runs() -> None:
    fix = _yaml(".github/workflows/fixbot.yml")["jobs"]["fix"]
    assert fix["permissions"]["actions"] == "read"  # the failed run's jobs and logs
    uses = [step.get("uses", "") for step in fix["steps"]]
    restore = uses.index(next(u for u in uses if u.startswith("actions/cache/restore@")))
    save = uses.index(next(u for u in uses if u.startswith("actions/cache/save@")))
    assert restore < uses.index("./") < save
    restored, saved = fix["steps"][restore], fix["steps"][save]
    # Only the state: no prepared environment or log a fork built crosses runs this way.
    assert restored["with"]["path"] == saved["with"]["path"] == ".fixbot/state.db*"
    assert restored["with"]["key"] == saved["with"]["key"]
    assert saved["with"]["key"].startswith(restored["with"]["restore-keys"])
    assert "github.run_id" in saved["with"]["key"]  # a new cache per run: caches are immutable
    key = fix["env"]["FIXBOT_STATE_KEY"]
    assert "github.event.issue.number" in key  # one chain per PR
    assert "head_repository.full_name" in key  # a fork's branch is not the base's branch
    assert saved["if"].startswith("always()")  # an escalation exits 1: its state is kept too
    [step] = [s for s in fix["steps"] if s.get("uses") == "./"]
    assert step["env"]["FIXBOT_DATABASE_URL"] == "${{ secrets.FIXBOT_DATABASE_URL }}"
