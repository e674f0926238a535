"""The pure decision: which GitHub events fixbot acts on, from real payload shapes."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from fixbot.errors import UsageError
from fixbot.forge.github.event import (
    Cleanup,
    PullInfo,
    Skip,
    Trigger,
    decide,
    load_payload,
    parse_command,
    with_pull,
)

EVENTS = Path(__file__).parent.parent / "fixtures" / "github" / "events"
SHA = "3484a3fb816e0859fd6e1cea078d76385ff50625"


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text())
    return data


def failed_run(**run: Any) -> dict[str, Any]:
    """The real workflow_run example, concluded as a failure on a feature branch."""
    payload = fixture("workflow_run.completed")
    payload["workflow_run"].update({"conclusion": "failure", "head_branch": "feature", **run})
    return payload


def pr_comment(body: str, *, action: str = "created", user: dict[str, Any] | None = None) -> Any:
    """The real issue_comment example, on a pull request (GitHub adds issue.pull_request)."""
    payload = fixture(f"issue_comment.{action}")
    payload["comment"]["body"] = body
    if user is not None:
        payload["comment"]["user"].update(user)
    number = payload["issue"]["number"]
    payload["issue"]["pull_request"] = {
        "url": f"https://api.github.com/repos/Codertocat/Hello-World/pulls/{number}",
        "html_url": f"https://github.com/Codertocat/Hello-World/pull/{number}",
        "diff_url": f"https://github.com/Codertocat/Hello-World/pull/{number}.diff",
        "patch_url": f"https://github.com/Codertocat/Hello-World/pull/{number}.patch",
        "merged_at": None,
    }
    return payload


# --- workflow_run --------------------------------------------------------------------------


def test_a_failed_run_triggers_a_fix_of_its_head_commit() -> None:
    decision = decide("workflow_run", failed_run())
    assert isinstance(decision, Trigger)
    assert decision.kind == "workflow_run"
    assert decision.repository == "octo-org/octo-repo"
    assert decision.head_sha == SHA
    assert decision.head_ref == "feature"
    assert decision.pr_number == 2  # the same-repository PR GitHub lists on the run
    assert decision.workflow == "test"
    assert decision.actor == "Codertocat"
    assert decision.run_id == 289782451
    assert decision.workflow_path == ".github/workflows/test.yml"
    assert not decision.from_fork


def test_a_failed_run_on_the_default_branch_triggers_a_fix() -> None:
    """The commonest red build: fixed through a PR against it (fixbot never pushes to it)."""
    decision = decide("workflow_run", failed_run(head_branch="master", pull_requests=[]))
    assert isinstance(decision, Trigger)
    assert decision.head_ref == decision.default_branch == "master"
    assert decision.pr_number is None
    skipped = decide("workflow_run", failed_run(head_branch="master"), never_fix=["master"])
    assert isinstance(skipped, Skip) and "never-fix" in skipped.reason


@pytest.mark.parametrize(
    ("path", "kept"),
    [
        (".github/workflows/ci.yaml", ".github/workflows/ci.yaml"),
        (".github/workflows/build.yml@main", ".github/workflows/build.yml"),  # the API's form
        ("octo-org/octo-repo/.github/workflows/report.yml@v2", ""),  # a reusable workflow
        ("dynamic/github-code-scanning/codeql", ""),
        (".github/workflows/../../secret.yml", ""),
    ],
)
def test_the_workflow_file_is_one_of_this_repositorys(path: str, kept: str) -> None:
    decision = decide("workflow_run", failed_run(path=path))
    assert isinstance(decision, Trigger) and decision.workflow_path == kept


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"action": "requested"}, "not completed"),
        ({"workflow_run.conclusion": "cancelled"}, "concluded cancelled"),
        ({"workflow_run.conclusion": None}, "without a conclusion"),
        ({"workflow_run.head_branch": "fixbot/fix-0123456789ab"}, "fixbot's own"),
        ({"workflow_run.head_branch": None}, "not on a branch"),
        ({"workflow_run.triggering_actor.type": "Bot"}, "bot"),
        ({"workflow_run.triggering_actor.login": "dependabot[bot]"}, "bot"),
        ({"workflow_run.head_repository.full_name": "someone/fork"}, "fork"),
    ],
)
def test_runs_fixbot_leaves_alone(change: dict[str, Any], why: str) -> None:
    payload = failed_run()
    for path, value in change.items():
        *parents, last = path.split(".")
        target = payload
        for part in parents:
            target = target[part]
        target[last] = value
    decision = decide("workflow_run", payload)
    assert isinstance(decision, Skip)
    assert why in decision.reason


def test_never_fix_patterns_are_honoured() -> None:
    payload = failed_run(head_branch="release/1.2")
    decision = decide("workflow_run", payload, never_fix=["release/*"])
    assert isinstance(decision, Skip)
    assert "never-fix" in decision.reason
    assert isinstance(decide("workflow_run", payload, never_fix=["hotfix/*"]), Trigger)


def test_a_green_run_on_a_branch_is_a_cleanup() -> None:
    decision = decide("workflow_run", failed_run(conclusion="success"))
    assert decision == Cleanup(repository="octo-org/octo-repo", branch="feature", head_sha=SHA)


def test_a_green_run_on_fixbots_own_branch_is_not_a_cleanup() -> None:
    decision = decide(
        "workflow_run", failed_run(conclusion="success", head_branch="fixbot/fix-0123456789ab")
    )
    assert isinstance(decision, Skip)


# --- issue_comment -------------------------------------------------------------------------


def test_a_fix_comment_on_a_pull_request_triggers_with_its_hint() -> None:
    decision = decide("issue_comment", pr_comment("/fix the parser drops the last token\nmore"))
    assert isinstance(decision, Trigger)
    assert decision.kind == "issue_comment"
    assert decision.command == "fix"
    assert decision.hint == "the parser drops the last token"
    assert decision.pr_number == 1
    assert decision.actor == "Codertocat"
    assert decision.head_sha == ""  # the payload does not carry it: with_pull resolves it


def test_fix_abort_is_the_abort_command() -> None:
    decision = decide("issue_comment", pr_comment("/fix abort"))
    assert isinstance(decision, Trigger)
    assert (decision.command, decision.hint) == ("abort", "")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("/fix", ("fix", "")),
        ("  /fix\tlook at utils.py", ("fix", "look at utils.py")),
        ("/fix ABORT", ("abort", "")),
        ("/fixes everything", None),
        ("please /fix", None),
        ("looks good\n/fix", None),
        ("", None),
        ("/fix a\x1b[31mred\x07 hint", ("fix", "a [31mred  hint")),
    ],
)
def test_parse_command(body: str, expected: tuple[str, str] | None) -> None:
    assert parse_command(body) == expected


def test_hints_are_capped() -> None:
    parsed = parse_command("/fix " + "x" * 5000)
    assert parsed is not None and len(parsed[1]) == 500


@pytest.mark.parametrize("action", ["edited", "deleted"])
def test_edited_and_deleted_comments_are_ignored(action: str) -> None:
    decision = decide("issue_comment", pr_comment("/fix now", action=action))
    assert isinstance(decision, Skip)
    assert action in decision.reason


def test_comments_that_are_not_commands_are_ignored() -> None:
    assert isinstance(decide("issue_comment", pr_comment("LGTM, /fix later")), Skip)


@pytest.mark.parametrize(
    "user", [{"type": "Bot", "login": "fixbot-app"}, {"login": "github-actions[bot]"}]
)
def test_comments_from_bots_are_ignored(user: dict[str, Any]) -> None:
    decision = decide("issue_comment", pr_comment("/fix", user=user))
    assert isinstance(decision, Skip)
    assert "bot" in decision.reason


def test_a_fix_comment_on_an_issue_is_ignored() -> None:
    payload = fixture("issue_comment.created")
    payload["comment"]["body"] = "/fix"
    decision = decide("issue_comment", payload)
    assert isinstance(decision, Skip)
    assert "pull requests" in decision.reason


def _comment_trigger() -> Trigger:
    decision = decide("issue_comment", pr_comment("/fix"))
    assert isinstance(decision, Trigger)
    return decision


def test_with_pull_completes_the_trigger_from_the_pull_request() -> None:
    pull = PullInfo(1, "a" * 40, "feature", "Codertocat/Hello-World", "master", "open")
    resolved = with_pull(_comment_trigger(), pull)
    assert isinstance(resolved, Trigger)
    assert (resolved.head_sha, resolved.head_ref) == ("a" * 40, "feature")
    assert not resolved.from_fork


@pytest.mark.parametrize(
    ("pull", "why"),
    [
        (PullInfo(1, "a" * 40, "fixbot/fix-0123456789ab", "Codertocat/Hello-World", "x", "open"),
         "fixbot's own"),
        (PullInfo(1, "a" * 40, "feature", "Codertocat/Hello-World", "master", "closed"), "closed"),
        (PullInfo(1, "a" * 40, "feature", "", "master", "open"), "no longer exists"),
    ],
)  # fmt: skip
def test_with_pull_applies_the_branch_rules(pull: PullInfo, why: str) -> None:
    resolved = with_pull(_comment_trigger(), pull)
    assert isinstance(resolved, Skip)
    assert why in resolved.reason


def test_with_pull_applies_the_never_fix_globs_and_fixes_the_default_branch() -> None:
    release = PullInfo(1, "a" * 40, "release/2", "Codertocat/Hello-World", "master", "open")
    resolved = with_pull(_comment_trigger(), release, never_fix=["release/*"])
    assert isinstance(resolved, Skip) and "never-fix pattern 'release/*'" in resolved.reason
    default = PullInfo(1, "a" * 40, "master", "Codertocat/Hello-World", "dev", "open")
    assert isinstance(with_pull(_comment_trigger(), default), Trigger)


def test_a_fork_pull_request_resolves_as_a_fork() -> None:
    pull = PullInfo(1, "a" * 40, "master", "someone/Hello-World", "master", "open")
    resolved = with_pull(_comment_trigger(), pull)
    assert isinstance(resolved, Trigger)
    assert resolved.from_fork  # its `master` is the fork's, not ours


# --- workflow_dispatch ---------------------------------------------------------------------


def test_a_dispatch_fixes_the_dispatched_commit_even_on_the_default_branch() -> None:
    payload = fixture("workflow_dispatch")
    payload["inputs"] = {"hint": "see issue 12"}
    decision = decide("workflow_dispatch", payload, sha="b" * 40)
    assert isinstance(decision, Trigger)
    assert (decision.head_ref, decision.head_sha) == ("main", "b" * 40)
    assert decision.hint == "see issue 12"
    assert decision.actor == "octocat"


def test_a_dispatch_on_a_tag_or_by_a_bot_is_ignored() -> None:
    tag = fixture("workflow_dispatch") | {"ref": "refs/tags/v1"}
    assert isinstance(decide("workflow_dispatch", tag, sha="b" * 40), Skip)
    bot = fixture("workflow_dispatch")
    bot["sender"]["type"] = "Bot"
    assert isinstance(decide("workflow_dispatch", bot, sha="b" * 40), Skip)


def test_a_dispatch_without_its_commit_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="GITHUB_SHA"):
        decide("workflow_dispatch", fixture("workflow_dispatch"))


# --- malformed and unknown -----------------------------------------------------------------


def test_an_unknown_event_is_a_usage_error_naming_it() -> None:
    with pytest.raises(UsageError, match="unsupported event 'push'"):
        decide("push", {})


RUN, COMMENT = "workflow_run", "issue_comment"


@pytest.mark.parametrize(
    ("event", "mutate", "message"),
    [
        (RUN, lambda p: p["workflow_run"].pop("head_sha"), "'workflow_run.head_sha' is missing"),
        (RUN, lambda p: p["workflow_run"].update(head_sha=7), "should be a string, not int"),
        (RUN, lambda p: p.pop("repository"), "'repository.full_name' is missing"),
        (COMMENT, lambda p: p["issue"].update(number="1"), "'issue.number' should be an integer"),
        (COMMENT, lambda p: p["comment"].update(user="x"), "'comment.user' should be an object"),
        (COMMENT, lambda p: p.pop("action"), "'action' is missing"),
    ],
)
def test_a_malformed_payload_is_a_usage_error_naming_the_field(
    event: str, mutate: Any, message: str
) -> None:
    payload = failed_run() if event == "workflow_run" else pr_comment("/fix")
    payload = copy.deepcopy(payload)
    mutate(payload)
    with pytest.raises(UsageError, match=message):
        decide(event, payload)


@pytest.mark.parametrize("text", ["", "{", "[1, 2]", "\xff"])
def test_a_payload_that_is_not_a_json_object_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError, match="workflow_run event payload"):
        load_payload("workflow_run", text.encode("latin-1"))


@pytest.mark.parametrize("sha", ["--upload-pack=touch pwned", "abc123", "A" * 40, ""])
def test_a_commit_that_is_not_a_full_id_is_refused(sha: str) -> None:
    with pytest.raises(UsageError, match=r"commit id|missing"):
        decide("workflow_run", failed_run(head_sha=sha or None))
    pull = PullInfo(1, sha, "feature", "Codertocat/Hello-World", "master", "open")
    with pytest.raises(UsageError, match="not a full commit id"):
        with_pull(_comment_trigger(), pull)
