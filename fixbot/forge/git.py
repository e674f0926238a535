"""git in the publish job's workspace, through fixbot.proc: the fix as a deterministic commit,
pushed with a lease. The token reaches git only through GIT_CONFIG_* environment variables,
never argv and never .git/config; no hook, fsmonitor or filter the checkout's config names runs
(snapshot.NO_PROGRAMS)."""

from __future__ import annotations

import tempfile
from base64 import b64encode
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fixbot import proc
from fixbot.errors import EnvironmentProblem, UsageError
from fixbot.forge.trigger import commit_id
from fixbot.screen import unpublishable
from fixbot.snapshot import NO_PROGRAMS, config_args

GIT_NAME = "github-actions[bot]"
GIT_EMAIL = "41898282+github-actions[bot]@users.noreply.github.com"
GIT_TIMEOUT = 300.0
# What git may see of the host environment; the token comes only through GIT_CONFIG_*.
GIT_ENV_ALLOWED = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR")


class GitFailed(EnvironmentProblem):
    """A git command fixbot relies on failed; the message carries the command and its output."""


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

    def argv(self, *args: str) -> list[str]:
        return ["git", "-C", str(self.workspace), *config_args(NO_PROGRAMS), *args]

    def run(
        self,
        *args: str,
        auth: bool = False,
        stdin: bytes | None = None,
        extra: Mapping[str, str] | None = None,
    ) -> str:
        argv = self.argv(*args)
        env = self.env(auth=auth, extra=extra)
        try:
            return proc.check(argv, env=env, timeout=GIT_TIMEOUT, stdin_data=stdin).output
        except proc.CommandFailed as exc:
            raise GitFailed(str(exc)) from exc

    def has_commit(self, sha: str) -> bool:
        commit_id(sha, "the commit to fix")
        argv = self.argv("cat-file", "-e", f"{sha}^{{commit}}")
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

    def commit_fix(
        self, parent: str, diff: str, message: str, *, protected: Sequence[str] = ()
    ) -> str:
        """The fix as a commit on `parent`, built in a private index: the working tree, the
        checkout's index and its hooks are never touched. Same inputs, same commit id. What
        git itself reads in the diff is checked once more (`protected`: the trusted globs)."""
        commit_id(parent, "the fixed commit")
        date = _last_line(self.run("show", "-s", "--format=%ct", parent))
        stamp = f"@{date} +0000"
        with tempfile.TemporaryDirectory(prefix="fixbot-index-") as tmp:
            index = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.run("read-tree", parent, extra=index)
            numstat = self.run("apply", "--numstat", "-z", "-", stdin=diff.encode())
            summary = self.run("apply", "--summary", "-", stdin=diff.encode())
            refuse_paths(_numstat_paths(numstat), protected, numstat=numstat, summary=summary)
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
        argv = self.argv("push", "--porcelain", lease, self.remote)
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


def refuse_paths(
    paths: Sequence[str],
    protected: Sequence[str] = (),
    *,
    numstat: str = "",
    summary: str = "",
) -> None:
    """The recorded diff is data from another job: what git says it would do with it (the
    paths it touches, binary changes, modes, links, renames) must pass the publish rules too."""
    problems = unpublishable(paths, protected)
    if any(entry.startswith("-\t-\t") for entry in numstat.split("\0")):
        problems.append("git reads a binary change in it")
    for line in summary.splitlines():
        kept = line.strip()
        if kept and not kept.startswith(("create mode 100644 ", "delete mode 100644 ")):
            problems.append(f"git reads {kept[:80]!r} in it")
    if problems:
        raise UsageError("refusing to publish the recorded diff: " + "; ".join(problems[:5]))
