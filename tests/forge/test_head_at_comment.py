"""`/fix` fixes the commit that was the pull request's head when the comment was written, by
GitHub's own record of the branch's pushes (the repository activity log), never by commit
dates, which whoever pushes chooses. A head pushed after the comment, or a record that cannot
be read, is refused with a comment, and nothing runs."""

from __future__ import annotations

import pytest

from fixbot.errors import UsageError
from fixbot.forge import REFUSAL_MARKER, Push, moved_since
from tests.forge.conftest import Runner, World, git

COMMENTED = "2019-05-15T15:20:21Z"  # the fixture comment's created_at


def push_new_head(world: World, *, date: str = "2019-05-15T15:10:00 +0000") -> str:
    """A new commit on the PR's branch whose dates (author's choice) say it is old."""
    work = world.workspace
    git(work, "checkout", "-q", "feature")
    (work / "calc.py").write_text("def add(a, b):\n    return a * b\n")
    git(
        work,
        "-c", "user.name=t", "-c", "user.email=t@invalid",
        "commit", "-qam", "sneaky", f"--date={date}",
    )  # fmt: skip
    git(work, "push", "-q", "origin", "feature")
    head = git(work, "rev-parse", "HEAD").strip()
    git(work, "checkout", "-q", "main")
    return head


def test_a_head_pushed_after_the_comment_is_refused_with_a_comment(world: World) -> None:
    head = push_new_head(world)  # committed "at 15:10", before the comment...
    world.fake.record_push("feature", head, "2019-05-15T15:25:00Z", before=world.failing_sha)
    runner = Runner()
    run = world.run("issue_comment", world.comment("/fix"), fix=runner)
    assert (run.code, run.outputs["status"], runner.jobs) == (0, "refused", [])
    assert world.fake.fixbot_pulls() == []
    [comment] = world.fake.comments_on(world.source_pr)
    assert REFUSAL_MARKER in comment.body and "after the /fix comment" in comment.body
    assert head[:12] in comment.body


def test_a_force_push_after_the_comment_is_refused_too(world: World) -> None:
    head = push_new_head(world)
    world.fake.record_push("feature", head, "2019-05-15T16:00:00Z", kind="force_push")
    runner = Runner()
    run = world.run("issue_comment", world.comment("/fix"), fix=runner)
    assert (run.outputs["status"], runner.jobs) == ("refused", [])


def test_the_fix_phase_refuses_without_writing_and_the_publish_phase_comments(
    world: World,
) -> None:
    head = push_new_head(world)
    world.fake.record_push("feature", head, "2019-05-15T15:25:00Z")
    fixed = world.run("issue_comment", world.comment("/fix"), phase="fix")
    assert fixed.outputs["status"] == "refused" and world.writes() == []
    world.run("issue_comment", world.comment("/fix"), phase="publish")
    [comment] = world.fake.comments_on(world.source_pr)
    assert REFUSAL_MARKER in comment.body


def test_an_unreadable_record_refuses(world: World) -> None:
    world.fake.inject("GET", r"/activity$", 403, times=10)
    runner = Runner()
    run = world.run("issue_comment", world.comment("/fix"), fix=runner)
    assert (run.outputs["status"], runner.jobs) == ("refused", [])
    assert "could not be read" in world.fake.comments_on(world.source_pr)[0].body


def test_a_head_unchanged_since_the_comment_is_fixed(world: World) -> None:
    runner = Runner()
    run = world.run("issue_comment", world.comment("/fix"), fix=runner)
    assert run.code == 0, run.logs
    assert [j.commit for j in runner.jobs] == [world.failing_sha]
    assert any(r.path.endswith("/activity") for r in world.fake.requests)


A, B, C = "a" * 40, "b" * 40, "c" * 40


@pytest.mark.parametrize(
    ("pushes", "head", "moved"),
    [
        ([], A, False),  # nothing recorded: no push after the comment either
        ([Push(B, A, "2019-05-15T15:00:00Z", "push")], A, False),
        (
            [
                Push(A, B, "2019-05-15T15:30:00Z", "push"),
                Push(C, A, "2019-05-15T15:00:00Z", "push"),
            ],
            B,
            True,
        ),
        ([Push(A, B, COMMENTED, "push")], B, True),  # the same second: not provably before
        ([Push(B, C, "2019-05-15T15:00:00Z", "push")], A, True),  # the record disagrees
        ([Push(B, A, "2019-05-15T17:00:00+02:00", "push")], A, False),  # 15:00 UTC
    ],
)
def test_moved_since_reads_githubs_times_only(pushes: list[Push], head: str, moved: bool) -> None:
    assert bool(moved_since(pushes, COMMENTED, head)) is moved


def test_a_time_that_is_not_iso_8601_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="ISO 8601"):
        moved_since([], "yesterday", A)
