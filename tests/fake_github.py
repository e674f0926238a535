"""A local GitHub REST server for the endpoints fixbot uses, speaking GitHub's real payloads.

Response bodies start from the examples in GitHub's OpenAPI description (`@octokit/openapi`,
copied to tests/fixtures/github/api/) with the fields fixbot and PyGithub read filled in from
in-memory state. Branches are real: they live in a bare git repository (the `origin` fixbot
pushes to), so a PR's head is whatever was pushed, and deleting a ref deletes the branch.

Workflow runs and their jobs are registered with `add_run`: the jobs API lists them, and a job's
logs endpoint answers 302 to a pre-signed URL on another host name (`localhost` instead of
`127.0.0.1`, the same server), as GitHub's does, which serves the log as plain text.

Failures can be injected per method and path: a status (5xx, 403, 422, 429), an optional body
and headers, for the next N matching requests.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

FIXTURES = Path(__file__).parent / "fixtures" / "github" / "api"
DOCS = "https://docs.github.com/rest"


def _template(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


@dataclass
class Injection:
    method: str
    path: re.Pattern[str]
    status: int
    body: Any  # a JSON value; None: GitHub's error body for the status
    headers: dict[str, str]
    times: int


@dataclass
class Recorded:
    method: str
    path: str
    body: Any
    headers: dict[str, str]


@dataclass
class _Pull:
    number: int
    head_ref: str
    head_sha: str
    head_repo: str
    base_ref: str
    title: str
    body: str
    draft: bool
    user: str
    state: str = "open"
    labels: list[str] = field(default_factory=list)


@dataclass
class FakeJob:
    """One job of a workflow run: its steps as (name, conclusion), as GitHub names them ("Run
    <command>" for an unnamed run: step, "Test (3.11)" for a matrix job), and its log's text.
    GitHub's own "Set up job" and "Complete job" steps are added around them when missing."""

    name: str
    conclusion: str = "failure"
    steps: list[tuple[str, str]] = field(default_factory=list)
    log: str = ""
    id: int = 0  # set by add_run


@dataclass
class _Run:
    id: int
    head_sha: str
    head_branch: str
    jobs: list[FakeJob]
    path: str = ".github/workflows/test.yml"
    name: str = "test"


@dataclass
class _Comment:
    id: int
    issue: int
    body: str
    user: str


class FakeGitHub:
    def __init__(
        self,
        origin: Path,
        *,
        repository: str = "octo-org/octo-repo",
        default_branch: str = "main",
        token: str = "",
        bot: str = "github-actions[bot]",
        prefix: str = "",
    ) -> None:
        self.origin = origin
        self.prefix = prefix  # "/api/v3" serves the API where GitHub Enterprise Server has it
        self.repository = repository
        self.default_branch = default_branch
        self.token = token
        self.bot = bot
        self.permissions: dict[str, str] = {}
        self.pulls: dict[int, _Pull] = {}
        self.comments: dict[int, _Comment] = {}
        self.runs: dict[int, _Run] = {}
        # The repository activity log, per repository (forks included): newest first.
        self.activity: dict[str, list[dict[str, Any]]] = {}
        self.labels: set[str] = set()  # labels the repository has (others are created on use)
        self.requests: list[Recorded] = []
        self.injections: list[Injection] = []
        self.create_delay = 0.0  # seconds between the duplicate check and the insert (races)
        self._numbers = itertools.count(1)
        self._comment_ids = itertools.count(1001)
        self._job_ids = itertools.count(399444496)
        self._lock = threading.RLock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    # --- lifecycle ----------------------------------------------------------------------

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}{self.prefix}"

    def __enter__(self) -> FakeGitHub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    # --- test controls --------------------------------------------------------------------

    def inject(
        self,
        method: str,
        path: str,
        status: int,
        *,
        body: Any = None,
        headers: dict[str, str] | None = None,
        times: int = 1,
    ) -> None:
        """The next `times` requests whose path matches the regex `path` get this answer."""
        self.injections.append(
            Injection(method, re.compile(path), status, body, headers or {}, times)
        )

    def add_pull(
        self,
        head_ref: str,
        *,
        base_ref: str | None = None,
        user: str = "contributor",
        head_repo: str | None = None,
        head_sha: str | None = None,
    ) -> int:
        """A pull request opened by someone else (the source of a /fix comment)."""
        with self._lock:
            number = next(self._numbers)
            self.pulls[number] = _Pull(
                number=number,
                head_ref=head_ref,
                head_sha=head_sha or self.branch_sha(head_ref) or "",
                head_repo=head_repo or self.repository,
                base_ref=base_ref or self.default_branch,
                title=f"Change {head_ref}",
                body="",
                draft=False,
                user=user,
            )
            return number

    def add_run(
        self,
        run_id: int,
        head_sha: str,
        head_branch: str,
        jobs: list[FakeJob],
        *,
        path: str = ".github/workflows/test.yml",
        name: str = "test",
    ) -> None:
        """A completed run of the workflow at `path` with these jobs (ids are assigned here)."""
        with self._lock:
            for job in jobs:
                job.id = next(self._job_ids)
            self.runs[run_id] = _Run(run_id, head_sha, head_branch, jobs, path, name)

    def record_push(
        self,
        branch: str,
        after: str,
        timestamp: str,
        *,
        before: str = "0" * 40,
        kind: str = "push",
        repository: str | None = None,
    ) -> None:
        """A push as GitHub's activity log records it (its time is GitHub's own)."""
        entry = _template("activity")
        entry.update(
            id=len(self.activity.get(repository or self.repository, [])) + 1,
            before=before,
            after=after,
            ref=f"refs/heads/{branch}",
            timestamp=timestamp,
            activity_type=kind,
            actor=self._user("writer"),
        )
        with self._lock:
            self.activity.setdefault(repository or self.repository, []).insert(0, entry)

    def add_comment(self, issue: int, body: str, *, user: str) -> int:
        """A comment someone else wrote (a reader can write any text, fixbot's markers too)."""
        with self._lock:
            comment = _Comment(next(self._comment_ids), issue, body, user)
            self.comments[comment.id] = comment
            return comment.id

    def open_pulls(self) -> list[_Pull]:
        return [p for p in self.pulls.values() if p.state == "open"]

    def fixbot_pulls(self) -> list[_Pull]:
        return [p for p in self.pulls.values() if p.user == self.bot]

    def comments_on(self, number: int) -> list[_Comment]:
        return [c for c in self.comments.values() if c.issue == number]

    def branch_sha(self, branch: str) -> str | None:
        result = subprocess.run(
            ["git", "-C", str(self.origin), "rev-parse", "--verify", "-q", f"refs/heads/{branch}"],
            capture_output=True,
            text=True,
        )
        return result.stdout.strip() or None

    # --- payloads ------------------------------------------------------------------------

    @property
    def blob_url(self) -> str:
        """Where job logs are downloaded from: another host name for the same server."""
        port = self._server.server_address[1]
        return f"http://localhost:{port}/_blobs"

    @property
    def api(self) -> str:
        return f"{self.url}/repos/{self.repository}"

    @property
    def html(self) -> str:
        return f"https://github.example/{self.repository}"

    def _user(self, login: str) -> dict[str, Any]:
        user: dict[str, Any] = copy.deepcopy(_template("issue-comment")["user"])
        user.update(
            login=login,
            type="Bot" if login.endswith("[bot]") else "User",
            url=f"{self.url}/users/{login}",
            html_url=f"https://github.example/{login}",
        )
        return user

    def _repo(self, full_name: str | None = None) -> dict[str, Any]:
        full_name = full_name or self.repository
        owner, name = full_name.split("/", 1)
        repo = _template("full-repository")
        repo.update(
            name=name,
            full_name=full_name,
            default_branch=self.default_branch,
            url=f"{self.url}/repos/{full_name}",
            html_url=f"https://github.example/{full_name}",
            fork=full_name != self.repository,
        )
        repo["owner"] = self._user(owner) | {"type": "Organization"}
        return repo

    def _pull_json(self, pull: _Pull) -> dict[str, Any]:
        data = _template("pull-request")
        live = self.branch_sha(pull.head_ref) if pull.head_repo == self.repository else None
        head_sha = live or pull.head_sha
        data.update(
            id=pull.number + 5000,
            number=pull.number,
            state=pull.state,
            title=pull.title,
            body=pull.body,
            draft=pull.draft,
            url=f"{self.api}/pulls/{pull.number}",
            html_url=f"{self.html}/pull/{pull.number}",
            issue_url=f"{self.api}/issues/{pull.number}",
            user=self._user(pull.user),
            merged=False,
            merged_at=None,
            closed_at=None if pull.state == "open" else "2024-01-01T00:00:00Z",
            labels=[self._label_json(name) for name in pull.labels],
            milestone=None,
            assignee=None,
            assignees=[],
            requested_reviewers=[],
            requested_teams=[],
        )
        data["head"].update(
            ref=pull.head_ref,
            sha=head_sha,
            label=f"{pull.head_repo.split('/')[0]}:{pull.head_ref}",
            repo=self._repo(pull.head_repo),
            user=self._user(pull.head_repo.split("/")[0]),
        )
        base_sha = self.branch_sha(pull.base_ref) or ""
        data["base"].update(
            ref=pull.base_ref,
            sha=base_sha,
            label=f"{self.repository.split('/')[0]}:{pull.base_ref}",
            repo=self._repo(),
            user=self._user(self.repository.split("/")[0]),
        )
        return data

    def _label_json(self, name: str) -> dict[str, Any]:
        data = _template("label")
        data.update(
            id=208045946 + sum(map(ord, name)),
            name=name,
            url=f"{self.api}/labels/{name}",
            description=None,
            default=False,
        )
        return data

    def _run_json(self, run: _Run) -> dict[str, Any]:
        data = _template("workflow-run")
        data.update(
            id=run.id,
            head_sha=run.head_sha,
            head_branch=run.head_branch,
            status="completed",
            conclusion="failure" if any(j.conclusion == "failure" for j in run.jobs) else "success",
            url=f"{self.api}/actions/runs/{run.id}",
            html_url=f"{self.html}/actions/runs/{run.id}",
            jobs_url=f"{self.api}/actions/runs/{run.id}/jobs",
            logs_url=f"{self.api}/actions/runs/{run.id}/logs",
            name=run.name,
            path=f"{run.path}@{run.head_branch}",  # the API's form: the file, then its ref
            pull_requests=[],
            repository=self._repo(),
            head_repository=self._repo(),
        )
        return data

    def _job_json(self, run: _Run, job: FakeJob) -> dict[str, Any]:
        data = _template("job")
        data.update(
            id=job.id,
            run_id=run.id,
            run_url=f"{self.api}/actions/runs/{run.id}",
            head_sha=run.head_sha,
            head_branch=run.head_branch,
            url=f"{self.api}/actions/jobs/{job.id}",
            html_url=f"{self.html}/actions/runs/{run.id}/job/{job.id}",
            check_run_url=f"{self.api}/check-runs/{job.id}",
            conclusion=job.conclusion,
            name=job.name,
            workflow_name=run.name,
            steps=[
                {
                    "name": name,
                    "status": "completed",
                    "conclusion": conclusion,
                    "number": number,
                    "started_at": "2020-01-20T09:42:40.000-08:00",
                    "completed_at": "2020-01-20T09:42:41.000-08:00",
                }
                for number, (name, conclusion) in enumerate(_as_run(job.steps), start=1)
            ],
        )
        return data

    def _find_job(self, job_id: int) -> tuple[_Run, FakeJob] | None:
        for run in self.runs.values():
            for job in run.jobs:
                if job.id == job_id:
                    return run, job
        return None

    def _comment_json(self, comment: _Comment) -> dict[str, Any]:
        data = _template("issue-comment")
        data.update(
            id=comment.id,
            node_id=f"IC_{comment.id}",
            body=comment.body,
            url=f"{self.api}/issues/comments/{comment.id}",
            html_url=f"{self.html}/pull/{comment.issue}#issuecomment-{comment.id}",
            issue_url=f"{self.api}/issues/{comment.issue}",
            user=self._user(comment.user),
        )
        return data

    # --- routes -------------------------------------------------------------------------

    def _routes(self) -> list[tuple[str, str, Callable[..., tuple[int, Any]]]]:
        repo = r"/repos/(?P<owner>[^/]+)/(?P<name>[^/]+)"
        return [
            ("GET", rf"{repo}", self._get_repo),
            ("GET", rf"{repo}/pulls", self._list_pulls),
            ("POST", rf"{repo}/pulls", self._create_pull),
            ("GET", rf"{repo}/pulls/(?P<number>\d+)", self._get_pull),
            ("PATCH", rf"{repo}/pulls/(?P<number>\d+)", self._update_pull),
            ("GET", rf"{repo}/issues/(?P<number>\d+)", self._get_issue),
            ("GET", rf"{repo}/issues/(?P<number>\d+)/comments", self._list_comments),
            ("POST", rf"{repo}/issues/(?P<number>\d+)/comments", self._create_comment),
            ("GET", rf"{repo}/issues/comments/(?P<id>\d+)", self._get_comment),
            ("PATCH", rf"{repo}/issues/comments/(?P<id>\d+)", self._edit_comment),
            ("POST", rf"{repo}/issues/(?P<number>\d+)/labels", self._add_labels),
            ("GET", rf"{repo}/collaborators/(?P<user>[^/]+)/permission", self._permission),
            ("GET", rf"{repo}/actions/runs/(?P<run_id>\d+)", self._get_run),
            ("GET", rf"{repo}/actions/runs/(?P<run_id>\d+)/jobs", self._list_jobs),
            ("GET", rf"{repo}/actions/jobs/(?P<job_id>\d+)", self._get_job),
            ("GET", rf"{repo}/actions/jobs/(?P<job_id>\d+)/logs", self._job_logs),
            ("GET", rf"{repo}/git/ref/heads/(?P<branch>.+)", self._get_ref),
            ("GET", rf"{repo}/activity", self._list_activity),
            ("DELETE", rf"{repo}/git/refs/heads/(?P<branch>.+)", self._delete_ref),
        ]

    def _check_repo(self, owner: str, name: str) -> tuple[int, Any] | None:
        if f"{owner}/{name}" != self.repository:
            return _error(404, "Not Found")
        return None

    def _get_repo(self, owner: str, name: str, **_: Any) -> tuple[int, Any]:
        return self._check_repo(owner, name) or (200, self._repo())

    def _list_pulls(self, owner: str, name: str, query: dict[str, str], **_: Any) -> Any:
        if missing := self._check_repo(owner, name):
            return missing
        state = query.get("state", "open")
        found = []
        for pull in sorted(self.pulls.values(), key=lambda p: -p.number):
            if state != "all" and pull.state != state:
                continue
            if (
                "head" in query
                and query["head"] != f"{pull.head_repo.split('/')[0]}:{pull.head_ref}"
            ):
                continue
            if "base" in query and query["base"] != pull.base_ref:
                continue
            found.append(self._pull_json(pull))
        return 200, found

    def _create_pull(self, owner: str, name: str, body: dict[str, Any], **_: Any) -> Any:
        if missing := self._check_repo(owner, name):
            return missing
        head, base = body.get("head", ""), body.get("base", "")
        head_sha = self.branch_sha(head)
        if head_sha is None or self.branch_sha(base) is None:
            field_name = "head" if head_sha is None else "base"
            return _validation({"resource": "PullRequest", "field": field_name, "code": "invalid"})
        with self._lock:
            if any(p.head_ref == head and p.state == "open" for p in self.pulls.values()):
                owner_login = self.repository.split("/")[0]
                return _validation(
                    {
                        "resource": "PullRequest",
                        "code": "custom",
                        "message": f"A pull request already exists for {owner_login}:{head}.",
                    }
                )
            if self.create_delay:
                threading.Event().wait(self.create_delay)
            number = next(self._numbers)
            pull = _Pull(
                number=number,
                head_ref=head,
                head_sha=head_sha,
                head_repo=self.repository,
                base_ref=base,
                title=body.get("title", ""),
                body=body.get("body") or "",
                draft=bool(body.get("draft", False)),
                user=self.bot,
            )
            self.pulls[number] = pull
        return 201, self._pull_json(pull)

    def _find_pull(self, owner: str, name: str, number: str) -> _Pull | tuple[int, Any]:
        if missing := self._check_repo(owner, name):
            return missing
        pull = self.pulls.get(int(number))
        return pull if pull is not None else _error(404, "Not Found")

    def _get_pull(self, owner: str, name: str, number: str, **_: Any) -> Any:
        pull = self._find_pull(owner, name, number)
        return pull if isinstance(pull, tuple) else (200, self._pull_json(pull))

    def _update_pull(
        self, owner: str, name: str, number: str, body: dict[str, Any], **_: Any
    ) -> Any:
        pull = self._find_pull(owner, name, number)
        if isinstance(pull, tuple):
            return pull
        with self._lock:
            for key in ("title", "body", "state"):
                if key in body:
                    setattr(pull, key, body[key])
        return 200, self._pull_json(pull)

    def _get_issue(self, owner: str, name: str, number: str, **_: Any) -> Any:
        pull = self._find_pull(owner, name, number)
        if isinstance(pull, tuple):
            return pull
        data = self._pull_json(pull)
        issue = {k: data[k] for k in ("id", "number", "state", "title", "body", "user")}
        issue.update(
            url=f"{self.api}/issues/{pull.number}",
            html_url=data["html_url"],
            pull_request={"url": data["url"], "html_url": data["html_url"]},
        )
        return 200, issue

    def _list_comments(self, owner: str, name: str, number: str, **_: Any) -> Any:
        pull = self._find_pull(owner, name, number)
        if isinstance(pull, tuple):
            return pull
        return 200, [self._comment_json(c) for c in self.comments_on(pull.number)]

    def _create_comment(
        self, owner: str, name: str, number: str, body: dict[str, Any], **_: Any
    ) -> Any:
        pull = self._find_pull(owner, name, number)
        if isinstance(pull, tuple):
            return pull
        with self._lock:
            comment = _Comment(next(self._comment_ids), pull.number, body["body"], self.bot)
            self.comments[comment.id] = comment
        return 201, self._comment_json(comment)

    def _get_comment(self, owner: str, name: str, id: str, **_: Any) -> Any:
        if missing := self._check_repo(owner, name):
            return missing
        comment = self.comments.get(int(id))
        return (200, self._comment_json(comment)) if comment else _error(404, "Not Found")

    def _edit_comment(self, owner: str, name: str, id: str, body: dict[str, Any], **_: Any) -> Any:
        if missing := self._check_repo(owner, name):
            return missing
        comment = self.comments.get(int(id))
        if comment is None:
            return _error(404, "Not Found")
        comment.body = body["body"]
        return 200, self._comment_json(comment)

    def _add_labels(self, owner: str, name: str, number: str, body: Any, **_: Any) -> Any:
        pull = self._find_pull(owner, name, number)
        if isinstance(pull, tuple):
            return pull
        # GitHub takes {"labels": [...]} or the bare array (PyGithub sends the array).
        names = body.get("labels") if isinstance(body, dict) else body
        if not isinstance(names, list) or not names:
            return _validation({"resource": "Label", "field": "labels", "code": "missing_field"})
        with self._lock:
            for label in names:
                label = label["name"] if isinstance(label, dict) else str(label)
                self.labels.add(label)
                if label not in pull.labels:
                    pull.labels.append(label)
        return 200, [self._label_json(label) for label in pull.labels]

    def _get_run(self, owner: str, name: str, run_id: str, **_: Any) -> Any:
        if missing := self._check_repo(owner, name):
            return missing
        run = self.runs.get(int(run_id))
        return (200, self._run_json(run)) if run else _error(404, "Not Found")

    def _list_jobs(self, owner: str, name: str, run_id: str, **_: Any) -> Any:
        if missing := self._check_repo(owner, name):
            return missing
        run = self.runs.get(int(run_id))
        if run is None:
            return _error(404, "Not Found")
        jobs = [self._job_json(run, job) for job in run.jobs]
        return 200, {"total_count": len(jobs), "jobs": jobs}

    def _get_job(self, owner: str, name: str, job_id: str, **_: Any) -> Any:
        if missing := self._check_repo(owner, name):
            return missing
        found = self._find_job(int(job_id))
        return (200, self._job_json(*found)) if found else _error(404, "Not Found")

    def _job_logs(self, owner: str, name: str, job_id: str, **_: Any) -> Any:
        if missing := self._check_repo(owner, name):
            return missing
        if self._find_job(int(job_id)) is None:
            return _error(404, "Not Found")
        signed = f"{self.blob_url}/{job_id}?urlExpires=2020-01-22T22%3A44%3A54Z&urlSignature=x"
        return 302, None, {"Location": signed}

    def _blob(self, path: str, headers: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        """The pre-signed download: no token wanted (a client that sends one leaks it)."""
        if "authorization" in headers:
            return 400, {"message": "a pre-signed URL takes no Authorization header"}, {}
        job_id = path.removeprefix("/_blobs/")
        found = self._find_job(int(job_id)) if job_id.isdigit() else None
        if found is None:
            return 404, PlainText("BlobNotFound"), {}
        return 200, PlainText(found[1].log), {}

    def _permission(self, owner: str, name: str, user: str, **_: Any) -> Any:
        if missing := self._check_repo(owner, name):
            return missing
        data = _template("collaborator-permission")
        permission = self.permissions.get(user, "none")
        role = {"none": "none", "read": "read", "write": "write", "admin": "admin"}
        data.update(
            permission="write" if permission == "maintain" else permission,
            role_name=role.get(permission, permission),
            user=self._user(user),
        )
        return 200, data

    def _list_activity(self, owner: str, name: str, query: dict[str, str], **_: Any) -> Any:
        """Any repository's log (a fork's too, as a public repository's is), filtered by ref."""
        ref = query.get("ref", "")
        ref = ref if ref.startswith("refs/") or not ref else f"refs/heads/{ref}"
        entries = self.activity.get(f"{owner}/{name}", [])
        per_page = int(query.get("per_page", "30"))
        return 200, [e for e in entries if not ref or e["ref"] == ref][:per_page]

    def _get_ref(self, owner: str, name: str, branch: str, **_: Any) -> Any:
        if missing := self._check_repo(owner, name):
            return missing
        sha = self.branch_sha(branch)
        if sha is None:
            return _error(404, "Not Found")
        data = _template("git-ref")
        data.update(ref=f"refs/heads/{branch}", url=f"{self.api}/git/refs/heads/{branch}")
        data["object"].update(sha=sha, url=f"{self.api}/git/commits/{sha}")
        return 200, data

    def _delete_ref(self, owner: str, name: str, branch: str, **_: Any) -> Any:
        if missing := self._check_repo(owner, name):
            return missing
        if self.branch_sha(branch) is None:
            return _error(422, "Reference does not exist")
        subprocess.run(
            ["git", "-C", str(self.origin), "update-ref", "-d", f"refs/heads/{branch}"],
            check=True,
        )
        return 204, None

    @property
    def graphql_path(self) -> str:
        """Where GitHub serves GraphQL: /graphql, or /api/graphql beside GHES's /api/v3."""
        return self.prefix.removesuffix("/v3") + "/graphql"

    def _graphql(self, body: Any, headers: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        """The one query fixbot makes: `viewer { login }`, the token's own identity."""
        if self.token and headers.get("authorization") != f"token {self.token}":
            return 401, {"message": "Bad credentials", "documentation_url": DOCS}, {}
        query = body.get("query", "") if isinstance(body, dict) else ""
        if "viewer" not in query:
            return 200, {"errors": [{"message": f"unsupported query: {query[:60]}"}]}, {}
        return 200, {"data": {"viewer": {"login": self.bot}}}, {}

    # --- HTTP -----------------------------------------------------------------------------

    def _injected(self, method: str, path: str) -> Injection | None:
        with self._lock:
            for injection in self.injections:
                live = injection.times > 0 and injection.method == method
                if live and injection.path.search(path):
                    injection.times -= 1
                    return injection
        return None

    def _dispatch(
        self, method: str, raw_path: str, body: Any, headers: dict[str, str]
    ) -> tuple[int, Any, dict[str, str]]:
        parts = urlsplit(raw_path)
        path = unquote(parts.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        with self._lock:
            self.requests.append(Recorded(method, path, body, headers))
        if method == "GET" and path.startswith("/_blobs/"):
            return self._blob(path, headers)
        if method == "POST" and path == self.graphql_path:
            return self._graphql(body, headers)
        if not path.startswith(self.prefix):
            return (*_error(404, "Not Found"), {})
        path = path[len(self.prefix) :]
        if self.token and headers.get("authorization") != f"token {self.token}":
            return (*_error(401, "Bad credentials"), {})
        if injection := self._injected(method, path):
            answer = injection.body
            if answer is None:
                answer = _error(injection.status, f"injected {injection.status}")[1]
            return injection.status, answer, injection.headers
        for route_method, pattern, handler in self._routes():
            match = re.fullmatch(pattern, path)
            if route_method == method and match:
                answer = handler(**match.groupdict(), query=query, body=body or {})
                return (*answer, {}) if len(answer) == 2 else answer
        return (*_error(404, "Not Found"), {})

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, data, extra = fake._dispatch(self.command, self.path, body, headers)
                kind = "application/json; charset=utf-8"
                if isinstance(data, PlainText):
                    payload, kind = data.text.encode(), "text/plain; charset=utf-8"
                else:
                    payload = b"" if data is None else json.dumps(data).encode()
                self.send_response(status)
                if payload:
                    self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                for key, value in extra.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _serve

        return Handler


def _as_run(steps: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """A job's steps as the jobs API lists them: GitHub's "Set up job" first, "Complete job"
    last."""
    names = [name for name, _ in steps]
    head = [] if names[:1] == ["Set up job"] else [("Set up job", "success")]
    tail = [] if names[-1:] == ["Complete job"] else [("Complete job", "success")]
    return [*head, *steps, *tail]


@dataclass
class PlainText:
    """A response body served as text/plain (a job log), not JSON."""

    text: str


def _error(status: int, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"message": message, "documentation_url": DOCS, "status": str(status)}


def _validation(*errors: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    return 422, {
        "message": "Validation Failed",
        "errors": list(errors),
        "documentation_url": f"{DOCS}/pulls/pulls#create-a-pull-request",
        "status": "422",
    }


@dataclass
class Origin:
    """A bare repository as `origin`, and a clone of it as the runner's workspace."""

    bare: Path
    workspace: Path
    commits: dict[str, str] = field(default_factory=dict)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def make_origin(tmp: Path, files: dict[str, str], *, branch: str = "main") -> Origin:
    """origin.git with one commit on `branch`, cloned to workspace/ (no credentials anywhere)."""
    seed = tmp / "seed"
    seed.mkdir()
    for rel, text in files.items():
        (seed / rel).parent.mkdir(parents=True, exist_ok=True)
        (seed / rel).write_text(text)
    _git(seed, "init", "-q", "-b", branch)
    _git(seed, "add", "-A")
    _git(seed, "-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-qm", "broken")
    bare = tmp / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(seed), str(bare)], check=True)
    workspace = tmp / "workspace"
    subprocess.run(["git", "clone", "-q", str(bare), str(workspace)], check=True)
    head = _git(workspace, "rev-parse", "HEAD").strip()
    return Origin(bare=bare, workspace=workspace, commits={branch: head})
