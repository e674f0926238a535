"""The forge's seam: the GitHub REST calls fixbot makes, and what they return, as data.

github/client.py implements Publisher with PyGithub; tests serve GitHub's real payloads over a
socket to the same client. Errors propagate: every caller fails closed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from fixbot.errors import EnvironmentProblem
from fixbot.forge.runlog import JobSummary
from fixbot.forge.trigger import Push


class PullRequestExists(Exception):
    """The API refused to create a PR because one is already open for the head branch."""


class PullRequestsNotPermitted(EnvironmentProblem):
    """The token may not open pull requests (a repository or organisation setting)."""


@dataclass(frozen=True)
class PullRequest:
    number: int
    url: str  # html_url
    head_ref: str
    head_sha: str
    head_repository: str  # owner/name; "" when the fork is gone
    base_ref: str
    state: str
    title: str = ""
    body: str = ""
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class Comment:
    id: int
    body: str
    author: str = ""  # the login GitHub records as its author


class Publisher(Protocol):
    """The GitHub calls fixbot makes, for one repository. Errors propagate (fail closed)."""

    def default_branch(self) -> str: ...

    def identity(self) -> str:
        """The login this token acts as: the author of every comment fixbot writes."""
        ...

    def permission(self, user: str) -> str: ...

    def get_pull(self, number: int) -> PullRequest: ...

    def find_pr_by_branch(self, branch: str) -> PullRequest | None: ...

    def pushes(self, repository: str, branch: str) -> list[Push]:
        """GitHub's record of the updates of `branch` in `repository`, newest first."""
        ...

    def open_pulls_into(self, base: str) -> list[PullRequest]: ...

    def create_pr(
        self, *, branch: str, base: str, title: str, body: str, draft: bool
    ) -> PullRequest: ...

    def update_pr(self, number: int, *, title: str, body: str) -> PullRequest: ...

    def close_pr(self, number: int) -> None: ...

    def comments(self, number: int) -> list[Comment]: ...

    def create_comment(self, number: int, body: str) -> None: ...

    def edit_comment(self, number: int, comment_id: int, body: str) -> None: ...

    def add_labels(self, number: int, labels: Sequence[str]) -> None: ...

    def delete_branch(self, branch: str) -> None: ...

    def run_jobs(self, run_id: int) -> list[JobSummary]: ...

    def job_log(self, job_id: int, *, max_bytes: int) -> str:
        """The last `max_bytes` of a job's log (plain text)."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Published:
    action: str  # created | updated | unchanged | commented | closed | refused | none
    pr_number: int | None = None
    pr_url: str = ""
    branch: str = ""
    pushed: bool = False
    closed: tuple[int, ...] = ()
