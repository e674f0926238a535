"""Decide, then publish: a recorded FixResult -> exactly one PR per failure, one comment per PR.

The logic here runs over two small seams, so tests can drive it with real things:

    Publisher   the GitHub REST calls fixbot makes (fixbot/github.py implements it with PyGithub)
    Git         git in the workspace, through fixbot.proc; the token reaches git only through
                GIT_CONFIG_* environment variables, never argv and never .git/config

Exactly one PR per failure:
    * the head branch is `fixbot/fix-<12 hex>`, a fingerprint of the failure (repository,
      failing commit, workflow, the normalised set of failing test ids);
    * the fix commit is deterministic (fixed identity and dates, parent = the failing commit),
      so the same fix is the same commit: nothing is pushed when the branch already holds it;
    * a push uses `--force-with-lease` against what `ls-remote` saw; losing the lease to a
      concurrent run that pushed the same commit is success;
    * the PR is found by its head branch, else created; "a pull request already exists" (a
      concurrent run, or a retried POST) is answered by finding and updating it.

fixbot never pushes anywhere but `fixbot/fix-*` in the base repository: not the default branch,
not the failing branch, not a fork (for a fork's PR the diff goes into a comment instead).
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
import time
from base64 import b64encode
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from fixbot import proc
from fixbot.errors import EnvironmentProblem, UsageError
from fixbot.forge.github.event import BRANCH_PREFIX, Trigger, commit_id
from fixbot.forge.runlog import JobSummary
from fixbot.records import FAILING
from fixbot.report.result import FixResult, render_markdown
from fixbot.secrets import redact

FIX_BRANCH = re.compile(r"fixbot/fix-[0-9a-f]{12}")
COMMENT_MARKER = "<!-- fixbot:comment -->"
REFUSAL_MARKER = "<!-- fixbot:refusal -->"  # its own comment: a refusal never hides a result
# In the comment on an escalated run: the thread a later `/fix <hint>` or `/fix abort` answers.
THREAD_MARKER = "<!-- fixbot:thread={} -->"
_THREAD_MARKER = re.compile(r"<!-- fixbot:thread=(fix-[0-9a-f]{20}) -->")
BODY_CAP = 60_000  # GitHub refuses PR and comment bodies over 65,536 characters
WRITE_PERMISSIONS = frozenset({"admin", "maintain", "write"})
GIT_NAME = "github-actions[bot]"
GIT_EMAIL = "41898282+github-actions[bot]@users.noreply.github.com"
GIT_TIMEOUT = 300.0
# What git may see of the host environment; the token comes only through GIT_CONFIG_*.
GIT_ENV_ALLOWED = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR")
REFUSED_PATHS = (".github/", ".fixbot.yml")


class PullRequestExists(Exception):
    """The API refused to create a PR because one is already open for the head branch."""


class GitFailed(EnvironmentProblem):
    """A git command fixbot relies on failed; the message carries the command and its output."""


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


class Publisher(Protocol):
    """The GitHub calls fixbot makes, for one repository. Errors propagate (fail closed)."""

    def default_branch(self) -> str: ...

    def permission(self, user: str) -> str: ...

    def get_pull(self, number: int) -> PullRequest: ...

    def find_pr_by_branch(self, branch: str) -> PullRequest | None: ...

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


# --- who may ask ---------------------------------------------------------------------------


def may_trigger(publisher: Publisher, user: str) -> tuple[bool, str]:
    """Write, maintain or admin, per the collaborator-permission API. Any error refuses."""
    try:
        permission = publisher.permission(user)
    except Exception as exc:  # fail closed: whatever went wrong, nobody gets in
        return False, f"could not read the permission of {user!r} ({type(exc).__name__}): refused"
    if permission in WRITE_PERMISSIONS:
        return True, f"{user!r} has {permission} permission"
    return False, f"{user!r} has {permission or 'no'} permission; write is needed"


def refusal_comment(user: str) -> str:
    return (
        f"{REFUSAL_MARKER}\nThanks for the request, @{user}. `/fix` can be used by people with "
        "write access to this repository, so fixbot did not run. A maintainer can comment "
        "`/fix` to start it.\n"
    )


# --- the failure's identity ----------------------------------------------------------------


def failing_tests(result: FixResult) -> list[str]:
    tests: Mapping[str, Mapping[str, object]] = (result.baseline or {}).get("tests", {})
    return [test for test, case in tests.items() if case.get("outcome") in FAILING]


def fingerprint(repository: str, commit: str, workflow: str, tests: Iterable[str]) -> str:
    """12 hex digits naming one failure: the same failure always maps to the same branch."""
    normalised = sorted({t.strip().replace("\\", "/") for t in tests if t.strip()})
    identity = json.dumps([repository.lower(), commit, workflow.strip(), normalised])
    return hashlib.sha256(identity.encode()).hexdigest()[:12]


def fix_branch(trigger: Trigger, result: FixResult) -> str:
    digest = fingerprint(trigger.repository, result.commit, trigger.workflow, failing_tests(result))
    return f"{BRANCH_PREFIX}fix-{digest}"


def check_branch(branch: str, trigger: Trigger) -> None:
    """The one place that says where fixbot may push: its own `fixbot/fix-*` branches only."""
    if not FIX_BRANCH.fullmatch(branch) or branch in (trigger.head_ref, trigger.default_branch):
        raise UsageError(
            f"refusing to push to {branch!r}: fixbot pushes only fixbot/fix-* branches"
        )
    if trigger.from_fork:
        raise UsageError("refusing to push for a fork's pull request")


# --- git in the workspace ------------------------------------------------------------------


@dataclass(frozen=True)
class Git:
    workspace: Path
    server_url: str  # https://github.com, or a GHES host: the auth header is scoped to it
    token: str = field(repr=False)
    host_env: Mapping[str, str] = field(default_factory=dict, repr=False)
    remote: str = "origin"

    def env(self, *, auth: bool = False, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {k: self.host_env[k] for k in GIT_ENV_ALLOWED if k in self.host_env}
        env.update(GIT_TERMINAL_PROMPT="0", **(extra or {}))
        if auth and self.token:
            basic = b64encode(f"x-access-token:{self.token}".encode()).decode()
            env.update(
                GIT_CONFIG_COUNT="1",
                GIT_CONFIG_KEY_0=f"http.{self.server_url.rstrip('/')}/.extraheader",
                GIT_CONFIG_VALUE_0=f"AUTHORIZATION: basic {basic}",
            )
        return env

    def secrets(self) -> list[str]:
        """What must never be logged: the token and the header value made from it."""
        if not self.token:
            return []
        return [self.token, b64encode(f"x-access-token:{self.token}".encode()).decode()]

    def run(
        self,
        *args: str,
        auth: bool = False,
        stdin: bytes | None = None,
        extra: Mapping[str, str] | None = None,
    ) -> str:
        argv = ["git", "-C", str(self.workspace), *args]
        env = self.env(auth=auth, extra=extra)
        try:
            return proc.check(argv, env=env, timeout=GIT_TIMEOUT, stdin_data=stdin).output
        except proc.CommandFailed as exc:
            raise GitFailed(str(exc)) from exc

    def has_commit(self, sha: str) -> bool:
        commit_id(sha, "the commit to fix")
        argv = ["git", "-C", str(self.workspace), "cat-file", "-e", f"{sha}^{{commit}}"]
        return proc.run(argv, env=self.env(), timeout=GIT_TIMEOUT).returncode == 0

    def ensure_commit(self, sha: str, *, pull: int | None = None) -> None:
        """A shallow checkout may lack the failing commit: fetch exactly it (or, for a pull
        request from a fork, its pull ref, which the base repository serves)."""
        if self.has_commit(sha):
            return
        try:
            self.run("fetch", "--no-tags", "--depth=50", self.remote, sha, auth=True)
        except GitFailed:
            if pull is None:
                raise
            self.run(
                "fetch", "--no-tags", "--depth=50", self.remote, f"refs/pull/{pull}/head", auth=True
            )
        if not self.has_commit(sha):
            raise GitFailed(f"commit {sha} is not in {self.remote}")

    def remote_sha(self, branch: str) -> str | None:
        out = self.run("ls-remote", self.remote, f"refs/heads/{branch}", auth=True)
        for line in out.splitlines():
            sha, _, ref = line.partition("\t")
            if ref == f"refs/heads/{branch}":
                return sha
        return None

    def commit_fix(self, parent: str, diff: str, message: str) -> str:
        """The fix as a commit on `parent`, built in a private index: the working tree, the
        checkout's index and its hooks are never touched. Same inputs, same commit id."""
        commit_id(parent, "the fixed commit")
        date = _last_line(self.run("show", "-s", "--format=%ct", parent))
        stamp = f"@{date} +0000"
        with tempfile.TemporaryDirectory(prefix="fixbot-index-") as tmp:
            index = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.run("read-tree", parent, extra=index)
            numstat = self.run("apply", "--numstat", "-z", "-", stdin=diff.encode())
            refuse_paths(_numstat_paths(numstat))
            self.run(
                "apply", "--cached", "--whitespace=nowarn", "-",
                stdin=diff.encode(), extra=index,
            )  # fmt: skip
            tree = _last_line(self.run("write-tree", extra=index))
        identity = {
            "GIT_AUTHOR_NAME": GIT_NAME,
            "GIT_AUTHOR_EMAIL": GIT_EMAIL,
            "GIT_AUTHOR_DATE": stamp,
            "GIT_COMMITTER_NAME": GIT_NAME,
            "GIT_COMMITTER_EMAIL": GIT_EMAIL,
            "GIT_COMMITTER_DATE": stamp,
        }
        out = self.run("commit-tree", tree, "-p", parent, stdin=message.encode(), extra=identity)
        return _last_line(out)

    def push(self, sha: str, branch: str, *, expected: str | None) -> bool:
        """Push `sha` to `branch` if the branch still is `expected` (None: absent).
        False when the lease was lost (someone else moved the branch first)."""
        commit_id(sha, "the fix commit")
        if expected is not None:
            commit_id(expected, "the branch's commit")
        lease = f"--force-with-lease=refs/heads/{branch}:{expected or ''}"
        argv = ["git", "-C", str(self.workspace), "push", "--porcelain", lease, self.remote]
        argv.append(f"{sha}:refs/heads/{branch}")
        result = proc.run(argv, env=self.env(auth=True), timeout=GIT_TIMEOUT)
        if result.returncode == 0 and not result.timed_out:
            return True
        # The lease (or the remote's own ref lock, in a race) refused the update.
        if "stale info" in result.output or "rejected]" in result.output:
            return False
        raise GitFailed(str(proc.CommandFailed(result)))


def _last_line(output: str) -> str:
    """The answer of a git plumbing command (stderr warnings, if any, come before it)."""
    lines = output.strip().splitlines()
    return lines[-1].strip() if lines else ""


def _numstat_paths(numstat: str) -> list[str]:
    """Paths from `git apply --numstat -z`: `a\\td\\tpath\\0`, or `a\\td\\t\\0src\\0dst\\0`."""
    parts = numstat.split("\0")
    paths: list[str] = []
    i = 0
    while i < len(parts):
        head = parts[i]
        if not head:
            i += 1
            continue
        path = head.split("\t", 2)[-1] if head.count("\t") >= 2 else ""
        if path:
            paths.append(path)
            i += 1
        else:  # a rename or copy: source and destination follow
            paths.extend(p for p in parts[i + 1 : i + 3] if p)
            i += 3
    return paths


def refuse_paths(paths: Sequence[str]) -> None:
    """The recorded diff is data from another job: it may not touch CI or fixbot's config."""
    for path in paths:
        if any(path == p.rstrip("/") or path.startswith(p) for p in REFUSED_PATHS) or (
            ".git" in Path(path).parts
        ):
            raise UsageError(f"refusing to publish a diff that changes {path!r}")


# --- PRs and comments ----------------------------------------------------------------------


def find_or_create_pr(
    publisher: Publisher,
    *,
    branch: str,
    base: str,
    title: str,
    body: str,
    draft: bool,
    wait: Callable[[float], None] = time.sleep,
) -> tuple[PullRequest, str]:
    """The one open PR for `branch`, created or brought up to date; and what was done."""
    existing = publisher.find_pr_by_branch(branch)
    if existing is None:
        try:
            return publisher.create_pr(
                branch=branch, base=base, title=title, body=body, draft=draft
            ), "created"
        except PullRequestExists:
            existing = _find_after_conflict(publisher, branch, wait)
    if existing.title == title and existing.body == body:
        return existing, "unchanged"
    return publisher.update_pr(existing.number, title=title, body=body), "updated"


def _find_after_conflict(
    publisher: Publisher, branch: str, wait: Callable[[float], None]
) -> PullRequest:
    for delay in (0.0, 0.5, 1.0, 2.0):  # the PR another run just opened may take a moment to list
        wait(delay)
        found = publisher.find_pr_by_branch(branch)
        if found is not None:
            return found
    raise EnvironmentProblem(f"GitHub says a pull request for {branch} exists, but none is open")


def upsert_comment(
    publisher: Publisher, number: int, body: str, *, marker: str = COMMENT_MARKER
) -> None:
    """One fixbot comment per pull request and marker, edited in place."""
    body = _cap(body if marker in body else f"{marker}\n{body}")
    for comment in publisher.comments(number):
        if marker in comment.body:
            if comment.body != body:
                publisher.edit_comment(number, comment.id, body)
            return
    publisher.create_comment(number, body)


def pending_thread(publisher: Publisher, number: int) -> str:
    """The thread of the escalated run fixbot's comment on PR `number` asks about, or ""."""
    for comment in publisher.comments(number):
        if COMMENT_MARKER in comment.body:
            found = _THREAD_MARKER.search(comment.body)
            return found.group(1) if found else ""
    return ""


def close_superseded(
    publisher: Publisher, repository: str, branch: str, why: str
) -> tuple[int, ...]:
    """Close fixbot's open PRs into `branch` (with a comment) and delete their branches."""
    closed: list[int] = []
    for pull in publisher.open_pulls_into(branch):
        if not FIX_BRANCH.fullmatch(pull.head_ref):
            continue
        if pull.head_repository.lower() != repository.lower():
            continue
        publisher.create_comment(
            pull.number, f"{COMMENT_MARKER}\nSuperseded: {why} Closing this pull request.\n"
        )
        publisher.close_pr(pull.number)
        publisher.delete_branch(pull.head_ref)
        closed.append(pull.number)
    return tuple(closed)


# --- what a result publishes ----------------------------------------------------------------


def publish(
    result: FixResult,
    trigger: Trigger,
    *,
    publisher: Publisher,
    git: Git,
    draft: bool = True,
    default_token: bool = True,
    secrets: Sequence[str] = (),
    labels: Sequence[str] = (),
) -> Published:
    """Everything a recorded result leads to on GitHub; nothing else writes there."""
    if result.commit and result.commit != trigger.head_sha:
        raise UsageError(
            f"the recorded result is for commit {result.commit[:12]}, "
            f"but the event is about {trigger.head_sha[:12]}"
        )
    known = [*secrets, *git.secrets()]
    if result.status == "fixed" and result.diff:
        if trigger.from_fork:
            return _comment_only(publisher, trigger, _fork_comment(result), known)
        return _open_fix_pr(result, trigger, publisher, git, draft, default_token, known, labels)
    if result.status == "already_passing":
        closed = close_superseded(
            publisher,
            trigger.repository,
            trigger.head_ref,
            f"`{_code(trigger.head_ref)}` passes at {result.commit[:12]} without this change.",
        )
        if trigger.pr_number is not None:
            body = f"The checks already pass at `{result.commit[:12]}`: nothing to fix.\n"
            upsert_comment(publisher, trigger.pr_number, body)
        return Published(action="closed" if closed else "none", closed=closed)
    return _comment_only(publisher, trigger, _status_comment(result), known)


def cleanup(publisher: Publisher, repository: str, branch: str, sha: str) -> Published:
    why = f"the checks of `{_code(branch)}` pass at {sha[:12]} without this change."
    closed = close_superseded(publisher, repository, branch, why)
    return Published(action="closed" if closed else "none", closed=closed)


def _open_fix_pr(
    result: FixResult,
    trigger: Trigger,
    publisher: Publisher,
    git: Git,
    draft: bool,
    default_token: bool,
    known: Sequence[str],
    labels: Sequence[str],
) -> Published:
    branch = fix_branch(trigger, result)
    check_branch(branch, trigger)
    git.ensure_commit(result.commit)
    sha = git.commit_fix(result.commit, result.diff, _commit_message(result, trigger))
    pushed = _push_once(git, sha, branch)
    title = _title(result, trigger)
    body = _pr_body(result, trigger, default_token, known)
    pull, action = find_or_create_pr(
        publisher, branch=branch, base=trigger.head_ref, title=title, body=body, draft=draft
    )
    missing = [label for label in dict.fromkeys(labels) if label not in pull.labels]
    if missing:
        publisher.add_labels(pull.number, missing)
    if trigger.pr_number is not None:
        verb = "opened" if action == "created" else "updated"
        note = f"fixbot {verb} {pull.url} with a verified fix for `{result.commit[:12]}`.\n"
        upsert_comment(publisher, trigger.pr_number, note)
    return Published(
        action=action, pr_number=pull.number, pr_url=pull.url, branch=branch, pushed=pushed
    )


def _push_once(git: Git, sha: str, branch: str) -> bool:
    """Push unless the branch already holds this exact commit. True when this run pushed."""
    current = git.remote_sha(branch)
    if current == sha:
        return False
    if git.push(sha, branch, expected=current):
        return True
    if git.remote_sha(branch) == sha:  # a concurrent run pushed the same fix first
        return False
    raise EnvironmentProblem(f"{branch} moved while fixbot pushed to it; run fixbot again")


def _comment_only(
    publisher: Publisher, trigger: Trigger, body: str, known: Sequence[str]
) -> Published:
    if trigger.pr_number is None:
        return Published(action="none")
    upsert_comment(publisher, trigger.pr_number, redact(body, known=known))
    return Published(action="commented", pr_number=None)


def _title(result: FixResult, trigger: Trigger) -> str:
    count = len(failing_tests(result))
    what = f"{count} failing test{'s' if count != 1 else ''}" if count else "the failing checks"
    return f"fixbot: fix {what} on {trigger.head_ref}"[:200]


def _commit_message(result: FixResult, trigger: Trigger) -> str:
    tests = sorted(failing_tests(result))
    lines = [_title(result, trigger), ""]
    lines += [f"Fixes: {t}" for t in tests[:50]]
    lines += ["", f"Diff-SHA256: {result.diff_sha256}", f"Verified-by: fixbot {result.version}"]
    return "\n".join(lines) + "\n"


def _pr_body(result: FixResult, trigger: Trigger, default_token: bool, known: Sequence[str]) -> str:
    source = []
    if trigger.run_url:
        source.append(f"the failed run {trigger.run_url}")
    if trigger.pr_number is not None:
        source.append(f"#{trigger.pr_number}")
    head = f"Fixes the failure on `{_code(trigger.head_ref)}` at `{result.commit[:12]}`"
    head += f" ({', '.join(source)})." if source else "."
    parts = [COMMENT_MARKER, head, "", render_markdown(result)]
    if default_token:
        parts += [
            "> [!NOTE]",
            "> This pull request was opened with the workflow's `GITHUB_TOKEN`, so GitHub does "
            "not start its checks by itself: close and reopen it (or push to it) to run CI, or "
            "give fixbot a GitHub App or fine-grained token through the `github-token` input.",
        ]
    return _cap(redact("\n".join(parts) + "\n", known=known))


def _status_comment(result: FixResult) -> str:
    if result.status != "escalated":
        return render_markdown(result)
    # The marker goes first: a body capped at GitHub's limit loses its end, never the marker.
    marker = THREAD_MARKER.format(result.thread_id) + "\n" if result.thread_id else ""
    answer = "To continue, comment `/fix <a hint for the model>`; to stop, comment `/fix abort`."
    return f"{marker}{render_markdown(result)}\n{answer}\n"


def _fork_comment(result: FixResult) -> str:
    return (
        "This pull request comes from a fork, so fixbot does not push a branch for it. "
        "The verified fix, to apply with `git apply`:\n\n"
        f"{render_markdown(result)}"
    )


def _code(text: str) -> str:
    """Untrusted text inside a Markdown code span."""
    return text.replace("`", "'").replace("\n", " ")


def _cap(text: str) -> str:
    if len(text) <= BODY_CAP:
        return text
    return text[: BODY_CAP - 40] + "\n\n[... truncated by fixbot ...]\n"
