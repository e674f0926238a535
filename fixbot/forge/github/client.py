"""The Publisher over GitHub's REST API: the only module that imports PyGithub.

Built once by `connect`, with an explicit retry policy: 5xx answers and rate limits are retried
with exponential backoff, honouring `Retry-After` (PyGithub's `GithubRetry` also recognises
GitHub's rate-limit 403s); any other 4xx is final. The base URL comes from `GITHUB_API_URL`, so
GitHub Enterprise Server works. Every API failure leaves this module as an `EnvironmentProblem`
(`PullRequestExists` and `PullRequestsNotPermitted` where the caller acts on the difference).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import requests
from github import Auth, Github, GithubException, GithubRetry
from github.PullRequest import PullRequest as GhPullRequest
from github.WorkflowJob import WorkflowJob

from fixbot import __version__
from fixbot.errors import EnvironmentProblem
from fixbot.forge import (
    Comment,
    JobSummary,
    PullRequest,
    PullRequestExists,
    PullRequestsNotPermitted,
    Push,
)

DEFAULT_API_URL = "https://api.github.com"
RETRY_STATUSES = (500, 502, 503, 504)
TIMEOUT_SECONDS = 30
LOG_CHUNK_BYTES = 64 * 1024

_T = TypeVar("_T")


class GitHubApiError(EnvironmentProblem):
    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


NOT_PERMITTED = (
    "GitHub refused to let this token open a pull request ({detail}). Allow it under the "
    "repository's (or organisation's) Settings > Actions > General > Workflow permissions: "
    "'Allow GitHub Actions to create and approve pull requests', and give the job "
    "`permissions: pull-requests: write` and `contents: write`; or pass a GitHub App or "
    "fine-grained token with those permissions as the action's `github-token` input."
)


def retry_policy(*, total: int = 5, backoff_factor: float = 1.0) -> GithubRetry:
    return GithubRetry(
        total=total,
        backoff_factor=backoff_factor,
        backoff_max=60,
        status_forcelist=list(RETRY_STATUSES),
        respect_retry_after_header=True,
        allowed_methods=frozenset({"GET", "POST", "PATCH", "PUT", "DELETE", "HEAD"}),
        raise_on_status=False,  # the last answer becomes a GithubException with its status
        max_rate_limit_wait=300,
    )


def connect(
    repository: str,
    token: str,
    *,
    api_url: str = DEFAULT_API_URL,
    retry: GithubRetry | None = None,
    throttle: bool = True,
) -> GitHubPublisher:
    """The one PyGithub client of a run. `throttle=False` drops GitHub's advised spacing of
    requests (1 s between writes), for tests against a local server."""
    client = Github(
        auth=Auth.Token(token) if token else None,
        base_url=(api_url or DEFAULT_API_URL).rstrip("/"),
        timeout=TIMEOUT_SECONDS,
        user_agent=f"fixbot/{__version__}",
        retry=retry if retry is not None else retry_policy(),
        seconds_between_requests=0.25 if throttle else None,
        seconds_between_writes=1.0 if throttle else None,
    )
    return GitHubPublisher(client, repository)


@contextmanager
def _api(what: str) -> Iterator[None]:
    try:
        yield
    except GithubException as exc:
        raise GitHubApiError(
            f"GitHub API: {what} failed ({exc.status}: {_message(exc)})", status=exc.status
        ) from exc
    except requests.RequestException as exc:
        raise GitHubApiError(f"GitHub API: {what} failed ({type(exc).__name__})") from exc


def _message(exc: GithubException) -> str:
    data = exc.data if isinstance(exc.data, dict) else {}
    parts = [str(data.get("message") or exc.message or "")]
    for error in data.get("errors") or []:
        if isinstance(error, dict) and error.get("message"):
            parts.append(str(error["message"]))
    return "; ".join(p for p in parts if p)


class GitHubPublisher:
    """fixbot.forge.Publisher for one repository."""

    def __init__(self, client: Github, repository: str) -> None:
        self._client = client
        self._full_name = repository
        self._owner = repository.split("/", 1)[0]
        self._identity = ""
        with _api(f"reading {repository}"):
            self._repo = client.get_repo(repository)

    def _call(self, what: str, fn: Callable[[], _T]) -> _T:
        with _api(what):
            return fn()

    def default_branch(self) -> str:
        return self._call("reading the repository", lambda: str(self._repo.default_branch))

    def identity(self) -> str:
        """GraphQL's `viewer`: one query that answers for a personal token (the user), the
        workflow's GITHUB_TOKEN (`github-actions[bot]`) and a GitHub App's installation token
        (`<app>[bot]`), where REST's GET /user refuses the last two. Read once per run."""
        if not self._identity:

            def viewer() -> str:
                _, data = self._client.requester.graphql_query("query { viewer { login } }", {})
                login = ((data.get("data") or {}).get("viewer") or {}).get("login")
                if not isinstance(login, str) or not login:
                    raise GitHubApiError("GitHub API: the token's identity has no login")
                return login

            self._identity = self._call("reading the token's identity", viewer)
        return self._identity

    def permission(self, user: str) -> str:
        return self._call(
            f"reading {user}'s permission", lambda: self._repo.get_collaborator_permission(user)
        )

    def get_pull(self, number: int) -> PullRequest:
        return self._call(f"reading #{number}", lambda: _pull(self._repo.get_pull(number)))

    def find_pr_by_branch(self, branch: str) -> PullRequest | None:
        def find() -> PullRequest | None:
            pulls = self._repo.get_pulls(state="open", head=f"{self._owner}:{branch}")
            for pull in pulls:
                if pull.head.ref == branch:
                    return _pull(pull)
            return None

        return self._call(f"looking up the pull request for {branch}", find)

    def pushes(self, repository: str, branch: str) -> list[Push]:
        """The repository activity log (GET /repos/{owner}/{repo}/activity) for the branch:
        GitHub's own times of each push, force push and creation, newest first. PyGithub has
        no call for it; its requester sends the request with the same auth and retries."""

        def activity() -> list[Push]:
            _, data = self._client.requester.requestJsonAndCheck(
                "GET",
                f"/repos/{repository}/activity",
                parameters={"ref": f"refs/heads/{branch}", "per_page": 100},
            )
            entries = data if isinstance(data, list) else []
            return [
                Push(
                    before=str(entry.get("before") or ""),
                    after=str(entry.get("after") or ""),
                    timestamp=str(entry.get("timestamp") or ""),
                    kind=str(entry.get("activity_type") or ""),
                )
                for entry in entries
                if isinstance(entry, dict) and entry.get("ref") in (None, f"refs/heads/{branch}")
            ]

        return self._call(f"reading the pushes to {repository}:{branch}", activity)

    def open_pulls_into(self, base: str) -> list[PullRequest]:
        return self._call(
            f"listing pull requests into {base}",
            lambda: [_pull(p) for p in self._repo.get_pulls(state="open", base=base)],
        )

    def create_pr(
        self, *, branch: str, base: str, title: str, body: str, draft: bool
    ) -> PullRequest:
        try:
            pull = self._repo.create_pull(
                base=base,
                head=branch,
                title=title,
                body=body,
                draft=draft,
                maintainer_can_modify=True,
            )
        except GithubException as exc:
            message = _message(exc)
            if exc.status == 422 and "already exists" in message.lower():
                raise PullRequestExists(message) from exc
            if exc.status == 403 and "not permitted to create" in message.lower():
                raise PullRequestsNotPermitted(NOT_PERMITTED.format(detail=message)) from exc
            raise GitHubApiError(
                f"GitHub API: opening a pull request failed ({exc.status}: {message})",
                status=exc.status,
            ) from exc
        except requests.RequestException as exc:
            raise GitHubApiError(f"GitHub API: opening a pull request failed ({exc})") from exc
        return _pull(pull)

    def update_pr(self, number: int, *, title: str, body: str) -> PullRequest:
        def update() -> PullRequest:
            pull = self._repo.get_pull(number)
            pull.edit(title=title, body=body)
            return _pull(pull)

        return self._call(f"updating #{number}", update)

    def close_pr(self, number: int) -> None:
        self._call(f"closing #{number}", lambda: self._repo.get_pull(number).edit(state="closed"))

    def comments(self, number: int) -> list[Comment]:
        return self._call(
            f"listing the comments of #{number}",
            lambda: [
                Comment(id=c.id, body=c.body or "", author=c.user.login if c.user else "")
                for c in self._repo.get_issue(number).get_comments()
            ],
        )

    def create_comment(self, number: int, body: str) -> None:
        self._call(
            f"commenting on #{number}", lambda: self._repo.get_issue(number).create_comment(body)
        )

    def edit_comment(self, number: int, comment_id: int, body: str) -> None:
        self._call(
            f"editing comment {comment_id}",
            lambda: self._repo.get_issue(number).get_comment(comment_id).edit(body),
        )

    def add_labels(self, number: int, labels: Sequence[str]) -> None:
        self._call(
            f"labelling #{number}", lambda: self._repo.get_issue(number).add_to_labels(*labels)
        )

    def run_jobs(self, run_id: int) -> list[JobSummary]:
        """The jobs of the run's latest attempt, with the names of their failed steps."""
        return self._call(
            f"listing the jobs of run {run_id}",
            lambda: [_job(job) for job in self._repo.get_workflow_run(run_id).jobs("latest")],
        )

    def job_log(self, job_id: int, *, max_bytes: int) -> str:
        """GitHub answers the logs endpoint with a redirect to a short-lived, pre-signed URL on
        another host: PyGithub reads the redirect, and the log is streamed from there without
        the token, keeping only its end."""
        location = self._call(
            f"locating the log of job {job_id}",
            lambda: self._repo.get_workflow_job(job_id).logs_url(),
        )
        with _api(f"downloading the log of job {job_id}"):
            response = requests.get(location, stream=True, timeout=TIMEOUT_SECONDS)
            with response:
                response.raise_for_status()
                kept: deque[bytes] = deque()
                size = 0
                for chunk in response.iter_content(LOG_CHUNK_BYTES):
                    kept.append(chunk)
                    size += len(chunk)
                    while size - len(kept[0]) >= max_bytes:
                        size -= len(kept.popleft())
        data = b"".join(kept)
        if len(data) > max_bytes:  # cut to size, starting at a whole line
            data = data[-max_bytes:].partition(b"\n")[2]
        return data.decode("utf-8", errors="replace")

    def delete_branch(self, branch: str) -> None:
        self._call(f"deleting {branch}", lambda: self._repo.get_git_ref(f"heads/{branch}").delete())

    def close(self) -> None:
        self._client.close()


def _pull(pull: GhPullRequest) -> PullRequest:
    head_repo: Any = pull.head.repo
    return PullRequest(
        number=pull.number,
        url=pull.html_url,
        head_ref=pull.head.ref,
        head_sha=pull.head.sha,
        head_repository=head_repo.full_name if head_repo is not None else "",
        base_ref=pull.base.ref,
        state=pull.state,
        title=pull.title or "",
        body=pull.body or "",
        labels=tuple(label.name for label in pull.labels),
    )


def _job(job: WorkflowJob) -> JobSummary:
    return JobSummary(
        id=job.id,
        name=job.name or "",
        conclusion=job.conclusion or "",
        failed_steps=tuple(step.name for step in job.steps if step.conclusion in _FAILED),
    )


# A step that failed, or was stopped where it stood (the step a job's timeout cut short).
_FAILED = ("failure", "timed_out", "cancelled")
