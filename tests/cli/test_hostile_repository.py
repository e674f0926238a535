"""`fixbot fix --apply` end to end over a hostile repository: its committed .gitattributes names
a filter driver for every file and LFS for some, and its config (rewritten after the commit,
as an earlier CI step running the repository's code could) names the filter programs, an
fsmonitor and hooks, each of which would record that it ran and the environment it saw, the
model key in it. fixbot still fixes the failure with the scripted model's fix, applies it to the
working tree, and none of the programs ever runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import RunFixbot, git, make_repo
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import GOOD

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="needs bubblewrap (apt-get install bubblewrap)"
)

ATTRIBUTES = "* filter=evil\n*.bin filter=lfs diff=lfs merge=lfs -text\ncalc.py ident\n"
HOOKS = ("post-index-change", "post-checkout", "pre-commit", "post-applypatch")


def test_a_hostile_repository_runs_nothing_on_the_host_and_is_still_fixed(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(tmp_path / "repo", {".gitattributes": ATTRIBUTES, "data.bin": "lfs\n"})
    marks, traps = tmp_path / "marks", tmp_path / "traps"
    traps.mkdir()
    programs = {}
    for name in ("smudge", "clean", "lfs", "fsmonitor", *HOOKS):
        program = traps / name
        program.write_text(f"#!/bin/sh\necho {name} >> {marks}\nenv >> {marks}\ncat\n")
        program.chmod(0o755)
        programs[name] = str(program)
    for key, name in (
        ("filter.evil.smudge", "smudge"),
        ("filter.evil.clean", "clean"),
        ("filter.lfs.smudge", "lfs"),
        ("filter.lfs.process", "lfs"),
        ("core.fsmonitor", "fsmonitor"),
    ):
        git(repo, "config", key, programs[name])
    git(repo, "config", "filter.evil.required", "true")
    for hook in HOOKS:
        shutil.copy(programs[hook], repo / ".git" / "hooks" / hook)
    with ScriptedOpenAI([GOOD]) as server:
        run = run_fixbot(repo, "--apply", base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert run.evidence["status"] == "fixed"
    assert "return sum(values) / len(values)" in (repo / "calc.py").read_text()  # applied
    assert not marks.exists(), marks.read_text()  # no filter, fsmonitor or hook ran: the
    # model key (API_KEY, in fixbot's environment) never reached one of them
