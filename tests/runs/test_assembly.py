"""One assembly for every root: the LangGraph server's run and `fixbot fix` get the same config
from the same inputs and environment, and the same dependencies from it."""

from __future__ import annotations

import argparse
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from fixbot import server
from fixbot.cli.fix import inputs as cli_inputs
from fixbot.config import Inputs, load_config
from fixbot.errors import UsageError
from fixbot.loop import Deps
from fixbot.runs import deps_for, judged_by, open_clients, recorded_at
from fixbot.snapshot import pin_commit
from tests.conftest import API_KEY, make_repo, read_example
from tests.fake_openai import ScriptedOpenAI

STRONG = (
    "strong_model: bigger-model\nstrong_after: 2\nbudget: {tokens: 90000}\n"
    "review: {model: reviewer-model}\n"
)


def args(**given: Any) -> argparse.Namespace:
    values = {"model": None, "base_url": None, "sandbox": None, "max_iterations": None}
    return argparse.Namespace(**{**values, **given})


def facts(deps: Deps) -> dict[str, Any]:
    """What a run's nodes get, as comparable data (the clients are two live objects)."""
    strong, reviewer = deps.strong_model, deps.reviewer
    return {
        "model": (deps.model.name, deps.model.window),
        "strong": (strong.name, strong.window) if strong else None,
        "reviewer": (reviewer.name, reviewer.window) if reviewer else None,
        "sandbox": deps.sandbox.describe(),
        "config": deps.config,
        "files": deps.files,
        "secrets": deps.known_secrets,
        "index": deps.index,
        "repository": deps.repository,
        "base": deps.base_snapshot,
        "manifest": dict(deps.snapshot.manifest),
        "commit": deps.snapshot.commit,
    }


def test_the_server_and_the_cli_build_the_same_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": read_example(".fixbot.yml") + STRONG})
    with ScriptedOpenAI([]) as endpoint:
        env = {
            "OPENAI_API_KEY": API_KEY,
            "OPENAI_BASE_URL": endpoint.base_url,
            "FIXBOT_MODEL": "scripted-model",
            "PIP_INDEX_URL": "https://user:pw-8f2k1q9z@index.example/simple",
        }
        from_cli = load_config(repo, overrides=cli_inputs(args(sandbox="bwrap"), env).overrides())
        settings = server.RunSettings(repo=str(repo), sandbox="bwrap")
        from_server = load_config(repo, overrides=server.inputs(settings, env).overrides())
        assert from_cli == from_server
        assert from_cli.model == "scripted-model" and from_cli.strong_model == "bigger-model"
        commit = pin_commit(repo)
        with ExitStack() as stack:
            mine = stack.enter_context(open_clients(repo, "thread-cli", from_cli, env))
            hosted = stack.enter_context(
                open_clients(repo, "thread-server", from_server, env, hosted=None)
            )
            assert mine.checkpointer is not None and hosted.checkpointer is None
            cli_deps = deps_for(mine, from_cli, repo, commit, tmp_path / "cli")
            server_deps = deps_for(hosted, from_server, repo, commit, tmp_path / "server")
    assert facts(cli_deps) == facts(server_deps)
    assert facts(cli_deps)["strong"] == ("bigger-model", cli_deps.model.window)
    assert facts(cli_deps)["reviewer"] == ("reviewer-model", cli_deps.model.window)
    assert API_KEY in cli_deps.known_secrets and "pw-8f2k1q9z" in " ".join(cli_deps.known_secrets)


def test_inputs_over_the_config_are_one_rule_for_every_root() -> None:
    env = {"FIXBOT_MODEL": "from-env", "OPENAI_BASE_URL": "http://own/v1"}
    assert Inputs().over(env).overrides() == {"model": "from-env", "base_url": "http://own/v1"}
    assert Inputs(model="given", max_iterations=2).over(env).overrides() == {
        "model": "given",
        "base_url": "http://own/v1",
        "max_iterations": 2,
    }
    assert cli_inputs(args(model="given", max_iterations=2), env) == Inputs(
        model="given", base_url="http://own/v1", max_iterations=2
    )
    settings = server.RunSettings(repo="/r", model="given", max_iterations=2)
    assert server.inputs(settings, env) == cli_inputs(args(model="given", max_iterations=2), env)


def test_a_server_run_cannot_send_the_servers_key_elsewhere() -> None:
    settings = server.RunSettings(repo="/r", base_url="http://attacker.example/v1")
    with pytest.raises(UsageError, match="cannot name its own base_url"):
        server.inputs(settings, {"OPENAI_BASE_URL": "http://own/v1"})


def test_a_resume_is_judged_by_what_its_run_recorded(tmp_path: Path) -> None:
    """judged_by, the one rule for every resume: the recorded checks replace the config's, and
    the run's protected globs join the config's (a glob dropped since still protects)."""
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": "protected_paths: ['golden/**']\n"})
    recorded = recorded_at(repo, pin_commit(repo), load_config(repo))
    assert "tests/test_calc.py" in recorded["manifest"]
    later = load_config(make_repo(tmp_path / "later", {".fixbot.yml": "gates: {lint: false}\n"}))
    judged = judged_by(later, recorded)
    assert [c["name"] for c in recorded["checks"]] == [c.name for c in judged.checks]
    assert judged.protected_paths == (*later.protected_paths, "golden/**")
    assert judged_by(later, {"manifest": {}}) == later  # recorded before fixbot kept them
