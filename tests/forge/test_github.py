"""The PyGithub Publisher, over HTTP, against a local server that speaks GitHub's payloads;
and the publish logic (one PR per failure, one comment per PR) over the same seam."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixbot.errors import EnvironmentProblem
from fixbot.forge import PullRequestExists, PullRequestsNotPermitted, may_trigger, upsert_comment
from fixbot.forge.github.client import GitHubApiError, GitHubPublisher, connect, retry_policy
from fixbot.forge.publish import close_superseded, find_or_create_pr, fingerprint
from fixbot.forge.texts import COMMENT_MARKER
from tests.fake_github import FakeGitHub, FakeJob, make_origin

REPO = "octo-org/octo-repo"
TOKEN = "ghs_FakeInstallationToken0123456789abcd"


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    made = make_origin(tmp_path, {"a.py": "x = 1\n"})
    for branch in ("feature", "fixbot/fix-0123456789ab", "fixbot/fix-ba9876543210"):
        subprocess.run(["git", "-C", str(made.bare), "branch", branch, "main"], check=True)
    return made.bare


@pytest.fixture
def fake(origin: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(origin, repository=REPO, token=TOKEN) as server:
        yield server


def publisher_for(fake: FakeGitHub) -> GitHubPublisher:
    return connect(
        REPO, TOKEN, api_url=fake.url, retry=retry_policy(backoff_factor=0), throttle=False
    )


@pytest.fixture
def github(fake: FakeGitHub) -> Iterator[GitHubPublisher]:
    publisher = publisher_for(fake)
    yield publisher
    publisher.close()


def posts(fake: FakeGitHub, suffix: str) -> int:
    return sum(1 for r in fake.requests if r.method == "POST" and r.path.endswith(suffix))


# --- the client ----------------------------------------------------------------------------


def test_a_runs_jobs_and_the_end_of_a_job_log(fake: FakeGitHub, github: GitHubPublisher) -> None:
    log = "".join(f"2024-05-01T12:00:00.0000000Z line {i}\n" for i in range(1000))
    steps = [("Set up job", "success"), ("Run pytest", "failure"), ("Complete job", "success")]
    fake.add_run(
        30433642,
        "a" * 40,
        "feature",
        [
            FakeJob("lint", "success", [("Run ruff", "success")]),
            FakeJob("test", "failure", steps, log),
        ],
    )
    lint, test = github.run_jobs(30433642)
    assert (lint.name, lint.conclusion, lint.failed_steps) == ("lint", "success", ())
    assert (test.name, test.conclusion, test.failed_steps) == ("test", "failure", ("Run pytest",))
    end = github.job_log(test.id, max_bytes=1000)
    assert len(end.encode()) <= 1000
    assert end.startswith("2024-05-01T") and end.endswith("line 999\n")  # whole lines only
    assert github.job_log(test.id, max_bytes=10**6) == log
    # GitHub redirects to a pre-signed URL on another host: the token must not follow.
    downloads = [r for r in fake.requests if r.path.startswith("/_blobs/")]
    assert downloads and all("authorization" not in r.headers for r in downloads)


def test_an_unknown_run_or_expired_log_is_an_api_error(
    fake: FakeGitHub, github: GitHubPublisher
) -> None:
    with pytest.raises(GitHubApiError, match="404"):
        github.run_jobs(1)
    fake.add_run(7, "a" * 40, "feature", [FakeJob("test", log="x\n")])
    fake.inject("GET", r"/actions/jobs/\d+/logs$", 410, times=5)
    with pytest.raises(GitHubApiError, match="410"):
        github.job_log(fake.runs[7].jobs[0].id, max_bytes=100)


def test_labels_are_added_to_a_pull_request(fake: FakeGitHub, github: GitHubPublisher) -> None:
    number = fake.add_pull("feature")
    github.add_labels(number, ["fixbot", "needs review"])
    assert github.get_pull(number).labels == ("fixbot", "needs review")
    [post] = [r for r in fake.requests if r.method == "POST"]
    assert post.path.endswith(f"/issues/{number}/labels")


def test_the_token_goes_in_the_authorization_header(
    fake: FakeGitHub, github: GitHubPublisher
) -> None:
    github.default_branch()
    assert {r.headers["authorization"] for r in fake.requests} == {f"token {TOKEN}"}
    assert all(TOKEN not in r.path for r in fake.requests)


def test_a_wrong_token_is_an_environment_problem(fake: FakeGitHub) -> None:
    with pytest.raises(GitHubApiError, match="401"):
        connect(REPO, "ghs_wrong", api_url=fake.url, retry=retry_policy(backoff_factor=0))


def test_the_base_url_can_be_a_github_enterprise_server(origin: Path) -> None:
    with FakeGitHub(origin, repository=REPO, token=TOKEN, prefix="/api/v3") as ghes:
        publisher = publisher_for(ghes)
        assert publisher.default_branch() == "main"
        publisher.close()
        assert all(r.path.startswith("/api/v3/repos/") for r in ghes.requests)


def test_server_errors_are_retried_then_succeed(fake: FakeGitHub, github: GitHubPublisher) -> None:
    fake.inject("POST", r"/pulls$", 502, times=2)
    pull = github.create_pr(branch="feature", base="main", title="t", body="b", draft=True)
    assert pull.number == 1
    assert posts(fake, "/pulls") == 3
    assert len(fake.open_pulls()) == 1


def test_server_errors_give_up_after_the_retry_budget(fake: FakeGitHub) -> None:
    github = connect(REPO, TOKEN, api_url=fake.url, retry=retry_policy(total=2, backoff_factor=0))
    fake.inject("GET", r"/pulls/1$", 503, times=10)
    with pytest.raises(GitHubApiError, match="503"):
        github.get_pull(1)
    github.close()
    assert sum(1 for r in fake.requests if r.path.endswith("/pulls/1")) == 3


def test_retry_after_is_honoured(fake: FakeGitHub, github: GitHubPublisher) -> None:
    fake.inject("GET", r"/permission$", 429, headers={"Retry-After": "1"})
    fake.permissions["alice"] = "admin"
    start = time.monotonic()
    assert github.permission("alice") == "admin"
    assert time.monotonic() - start >= 1.0


def test_a_secondary_rate_limit_403_is_retried(fake: FakeGitHub, github: GitHubPublisher) -> None:
    limit = {"message": "You have exceeded a secondary rate limit.", "documentation_url": "x"}
    fake.inject("GET", r"/permission$", 403, body=limit, headers={"Retry-After": "0"})
    fake.permissions["alice"] = "write"
    assert github.permission("alice") == "write"


def test_actions_not_permitted_to_open_prs_is_clear_and_not_retried(
    fake: FakeGitHub, github: GitHubPublisher
) -> None:
    refused = {
        "message": "GitHub Actions is not permitted to create or approve pull requests.",
        "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
        "status": "403",
    }
    fake.inject("POST", r"/pulls$", 403, body=refused, times=10)
    with pytest.raises(PullRequestsNotPermitted) as caught:
        github.create_pr(branch="feature", base="main", title="t", body="b", draft=True)
    message = str(caught.value)
    assert "Allow GitHub Actions to create and approve pull requests" in message
    assert "github-token" in message
    assert isinstance(caught.value, EnvironmentProblem)
    assert posts(fake, "/pulls") == 1


def test_a_duplicate_pull_request_is_recognised(fake: FakeGitHub, github: GitHubPublisher) -> None:
    github.create_pr(branch="feature", base="main", title="t", body="b", draft=True)
    with pytest.raises(PullRequestExists, match="already exists"):
        github.create_pr(branch="feature", base="main", title="t", body="b", draft=True)


def test_pull_requests_round_trip(fake: FakeGitHub, github: GitHubPublisher) -> None:
    created = github.create_pr(branch="feature", base="main", title="t", body="b", draft=True)
    assert fake.pulls[created.number].draft is True
    assert github.find_pr_by_branch("feature") == created
    assert github.find_pr_by_branch("other") is None
    updated = github.update_pr(created.number, title="t2", body="b2")
    assert (updated.title, updated.body) == ("t2", "b2")
    assert [p.number for p in github.open_pulls_into("main")] == [created.number]
    github.close_pr(created.number)
    assert github.find_pr_by_branch("feature") is None
    github.delete_branch("feature")
    assert fake.branch_sha("feature") is None


@pytest.mark.parametrize(
    ("permission", "allowed"),
    [("admin", True), ("maintain", True), ("write", True), ("read", False), ("none", False)],
)
def test_write_maintain_and_admin_may_trigger(
    fake: FakeGitHub, github: GitHubPublisher, permission: str, allowed: bool
) -> None:
    fake.permissions["someone"] = permission
    assert may_trigger(github, "someone")[0] is allowed


@pytest.mark.parametrize("status", [404, 500, 401])
def test_a_permission_api_error_refuses(
    fake: FakeGitHub, github: GitHubPublisher, status: int
) -> None:
    fake.permissions["admin-user"] = "admin"
    fake.inject("GET", r"/permission$", status, times=10)
    allowed, why = may_trigger(github, "admin-user")
    assert not allowed
    assert "refused" in why


# --- the logic over the Publisher ----------------------------------------------------------


def test_find_or_create_creates_once_then_updates_in_place(github: GitHubPublisher) -> None:
    first, action = find_or_create_pr(
        github, branch="feature", base="main", title="t", body="b", draft=True
    )
    assert action == "created"
    same, action = find_or_create_pr(
        github, branch="feature", base="main", title="t", body="b", draft=True
    )
    assert (same.number, action) == (first.number, "unchanged")
    newer, action = find_or_create_pr(
        github, branch="feature", base="main", title="t", body="b2", draft=True
    )
    assert (newer.number, newer.body, action) == (first.number, "b2", "updated")


def test_already_exists_is_answered_by_finding_and_updating(
    fake: FakeGitHub, github: GitHubPublisher
) -> None:
    # The listing is stale for a moment (another run's PR is not listed yet): POST says 422.
    existing = github.create_pr(branch="feature", base="main", title="old", body="old", draft=True)
    fake.inject("GET", r"/pulls$", 200, body=[], times=1)
    pull, action = find_or_create_pr(
        github,
        branch="feature",
        base="main",
        title="new",
        body="new",
        draft=True,
        wait=lambda s: None,
    )
    assert (pull.number, action, pull.title) == (existing.number, "updated", "new")
    assert len(fake.open_pulls()) == 1


def test_racing_creators_end_with_one_pull_request(
    fake: FakeGitHub, github: GitHubPublisher
) -> None:
    fake.create_delay = 0.2
    results: list[str] = []

    def one() -> None:
        publisher = publisher_for(fake)
        _, action = find_or_create_pr(
            publisher, branch="feature", base="main", title="t", body="b", draft=True
        )
        publisher.close()
        results.append(action)

    threads = [threading.Thread(target=one) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(fake.pulls) == 1
    assert sorted(results)[0] == "created" and results.count("created") == 1


def test_one_comment_per_pull_request_edited_in_place(
    fake: FakeGitHub, github: GitHubPublisher
) -> None:
    number = fake.add_pull("feature", user="alice")
    upsert_comment(github, number, "first")
    upsert_comment(github, number, "second")
    upsert_comment(github, number, "second")
    comments = fake.comments_on(number)
    assert len(comments) == 1
    assert comments[0].body == f"{COMMENT_MARKER}\nsecond"
    assert sum(1 for r in fake.requests if r.method == "PATCH") == 1


def test_superseded_fix_prs_are_closed_and_their_branches_deleted(
    fake: FakeGitHub, github: GitHubPublisher
) -> None:
    ours = github.create_pr(
        branch="fixbot/fix-0123456789ab", base="feature", title="t", body="b", draft=True
    )
    elsewhere = github.create_pr(
        branch="fixbot/fix-ba9876543210", base="main", title="t", body="b", draft=True
    )
    human = fake.add_pull("feature", base_ref="main", user="alice")
    closed = close_superseded(github, REPO, "feature", "`feature` is green.")
    assert closed == (ours.number,)
    assert fake.pulls[ours.number].state == "closed"
    assert fake.branch_sha("fixbot/fix-0123456789ab") is None
    assert "Superseded" in fake.comments_on(ours.number)[0].body
    assert fake.pulls[elsewhere.number].state == "open"
    assert fake.pulls[human].state == "open"


def test_the_fingerprint_names_the_failure_not_the_run() -> None:
    base = fingerprint(REPO, "a" * 40, "ci", ["tests/test_a.py::test_x", "tests/test_b.py::t"])
    assert len(base) == 12 and int(base, 16) >= 0
    same = fingerprint(
        REPO.upper(), "a" * 40, "ci", [" tests/test_b.py::t", "tests/test_a.py::test_x"]
    )
    assert same == base
    assert fingerprint(REPO, "b" * 40, "ci", ["tests/test_a.py::test_x"]) != base
    assert (
        fingerprint(REPO, "a" * 40, "lint", ["tests/test_a.py::test_x", "tests/test_b.py::t"])
        != base
    )
