"""The texts fixbot writes on GitHub: the PR's title, body and commit message, its comments,
and the hidden markers that find them again. Untrusted text goes in escaped or fenced."""

from __future__ import annotations

import re
from collections.abc import Sequence

from fixbot.forge.trigger import Trigger
from fixbot.inert import code_span, prose
from fixbot.report import FixResult, render_markdown
from fixbot.secrets import redact

COMMENT_MARKER = "<!-- fixbot:comment -->"
REFUSAL_MARKER = "<!-- fixbot:refusal -->"  # its own comment: a refusal never hides a result
# In the comment on an escalated run: the thread a later `/fix <hint>` or `/fix abort` answers.
THREAD_MARKER = "<!-- fixbot:thread={} -->"
THREAD_PATTERN = re.compile(r"<!-- fixbot:thread=(fix-[0-9a-f]{20}) -->")
BODY_CAP = 60_000  # GitHub refuses PR and comment bodies over 65,536 characters


def refusal_comment(user: str) -> str:
    # The requester is mentioned on purpose; a login is [A-Za-z0-9-] (anything else is dropped).
    login = re.sub(r"[^A-Za-z0-9-]", "", user)
    return (
        f"{REFUSAL_MARKER}\nThanks for the request, @{login}. `/fix` can be used by people with "
        "write access to this repository, so fixbot did not run. A maintainer can comment "
        "`/fix` to start it.\n"
    )


def moved_comment(why: str, head: str) -> str:
    """The pull request's head moved after the `/fix` comment (or that could not be ruled
    out): nothing was fixed."""
    return (
        f"{REFUSAL_MARKER}\nfixbot did not run: {prose(why)}. A `/fix` fixes the commit that was "
        f"the head when it was written; the head is now {code_span(head[:12])}. Comment `/fix` "
        "again to fix it.\n"
    )


def title(result: FixResult, trigger: Trigger) -> str:
    count = len(result.failing_tests)
    what = f"{count} failing test{'s' if count != 1 else ''}" if count else "the failing checks"
    return f"fixbot: fix {what} on {trigger.head_ref}"[:200]


def commit_message(result: FixResult, trigger: Trigger) -> str:
    tests = sorted(result.failing_tests)
    lines = [title(result, trigger), ""]
    # "Test:", not "Fixes:": a closing keyword before a test id like `t[#12]` could close #12.
    lines += [f"Test: {t}" for t in tests[:50]]
    lines += ["", f"Diff-SHA256: {result.diff_sha256}", f"Verified-by: fixbot {result.version}"]
    return "\n".join(lines) + "\n"


def pr_body(result: FixResult, trigger: Trigger, default_token: bool, known: Sequence[str]) -> str:
    source = []
    if trigger.run_url:
        source.append(f"the failed run {trigger.run_url}")  # from the event: GitHub's URL
    if trigger.pr_number is not None:
        source.append(f"#{trigger.pr_number}")
    head = f"Fixes the failure on {code_span(trigger.head_ref)} at {code_span(result.commit[:12])}"
    head += f" ({', '.join(source)})." if source else "."
    parts = [COMMENT_MARKER, head, "", render_markdown(result)]
    if default_token:
        parts += [
            "> [!NOTE]",
            "> This pull request was opened with the workflow's `GITHUB_TOKEN`, so GitHub does "
            "not start its checks by itself: close and reopen it (or push to it) to run CI, or "
            "give fixbot a GitHub App or fine-grained token through the `github-token` input.",
        ]
    return cap(redact("\n".join(parts) + "\n", known=known))


def status_comment(result: FixResult) -> str:
    if result.status != "escalated":
        return render_markdown(result)
    # The marker goes first: a body capped at GitHub's limit loses its end, never the marker.
    marker = THREAD_MARKER.format(result.thread_id) + "\n" if result.thread_id else ""
    answer = "To continue, comment `/fix <a hint for the model>`; to stop, comment `/fix abort`."
    return f"{marker}{render_markdown(result)}\n{answer}\n"


def fork_comment(result: FixResult) -> str:
    return (
        "This pull request comes from a fork, so fixbot does not push a branch for it. "
        "The verified fix, to apply with `git apply`:\n\n"
        f"{render_markdown(result)}"
    )


def cap(text: str) -> str:
    if len(text) <= BODY_CAP:
        return text
    return text[: BODY_CAP - 40] + "\n\n[... truncated by fixbot ...]\n"
