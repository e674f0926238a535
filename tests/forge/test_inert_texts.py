"""Untrusted strings (test ids, messages, branch names, model text, reasons) render inert in
everything fixbot writes on GitHub: the PR body, its comments and the job summary, rendered by
a real CommonMark renderer (tests/markdown_html.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from fixbot.forge.github import FixJob
from fixbot.records import Attempt
from fixbot.report import FixResult
from tests.forge.conftest import Runner, World, canned, git
from tests.markdown_html import Rendered, render

HOSTILE = "x` @someone [link](http://x) <img src=x> ``` #4242"
HOSTILE_ID = f"tests/test_calc.py::test_add[{HOSTILE}]"
HOSTILE_BRANCH = "feature-@someone-`x`-<img>-#4242"


def hostile(job: FixJob, status: str = "fixed") -> FixResult:
    result = canned(job, status)
    baseline: dict[str, Any] = dict(result.baseline or {})
    baseline["tests"] = {
        HOSTILE_ID: {"outcome": "failed", "message": HOSTILE, "detail": ""},
    }
    attempt = Attempt(
        number=1,
        model=f"model {HOSTILE}",
        reply=HOSTILE,
        prompt_tokens=1,
        completion_tokens=1,
        diff="",
        verdict="fail",
        problems=[f"{HOSTILE_ID} still failed: {HOSTILE}"],
        check=None,
    )
    return replace(
        result, baseline=baseline, reason=f"because {HOSTILE}", attempts=[attempt], labels=[]
    )


def assert_inert(markdown: str) -> Rendered:
    page = render(markdown)
    assert "http://x" not in page.links and "x" not in page.links, page.links
    assert "img" not in page.tags
    live = [p for p in page.live() if "someone" in p or p == "#4242" or "http://x" in p]
    assert live == []
    return page


@pytest.mark.parametrize("status", ["fixed", "escalated"])
def test_a_hostile_test_id_and_reason_render_inert_everywhere(world: World, status: str) -> None:
    run = world.run("workflow_run", world.failed_run(), fix=Runner(lambda j: hostile(j, status)))
    assert run.code == (0 if status == "fixed" else 1), run.logs
    bodies = [c.body for c in world.fake.comments_on(world.source_pr)]
    bodies += [p.body for p in world.fake.fixbot_pulls()]
    assert bodies and run.summary
    for markdown in [*bodies, run.summary]:
        page = assert_inert(markdown)
        assert any(HOSTILE_ID in code for code in page.code) or "fixbot opened" in markdown


def test_a_hostile_branch_name_renders_inert_in_the_pr_body(world: World) -> None:
    git(world.workspace, "push", "-q", "origin", f"feature:refs/heads/{HOSTILE_BRANCH}")
    world.source_pr = world.fake.add_pull(HOSTILE_BRANCH, user="writer")
    run = world.run("issue_comment", world.comment("/fix"), fix=Runner(hostile))
    assert run.code == 0, run.logs
    [pr] = world.fake.fixbot_pulls()
    page = assert_inert(pr.body)
    assert HOSTILE_BRANCH in page.code
