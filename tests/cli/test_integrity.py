"""No false green: reproduction before spend, classification, minimal fixes, re-verification."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from fixbot.config import load_config
from fixbot.model.client import OpenAIModel
from fixbot.proc import Completed
from fixbot.report import render_markdown
from fixbot.runs import FixRequest, run_fix
from fixbot.runs.clients import Clients
from fixbot.sandbox import BwrapSandbox, RunSpec
from fixbot.snapshot import pin_commit
from tests.conftest import RunFixbot, git, make_repo, read_example
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import GOOD, DelegatingSandbox, reply, wrong

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="needs bubblewrap (apt-get install bubblewrap)"
)

FLAKY_TEST = """import os


def test_sometimes() -> None:
    assert os.environ.get("FIXBOT_TEST_RUN", "0") != "1"
"""


class CountingSandbox(DelegatingSandbox):
    """The real bwrap sandbox, telling each test run its number (so a test can be flaky)."""

    def __init__(self) -> None:
        super().__init__(BwrapSandbox())
        self.runs = 0

    def run(self, argv: Sequence[str], spec: RunSpec) -> Completed:
        if spec.env is not None:  # the test command (gates get no env)
            spec = replace(spec, env={**spec.env, "FIXBOT_TEST_RUN": str(self.runs)})
            self.runs += 1
        return self.inner.run(argv, spec)


def test_a_flaky_failure_is_not_fixed_and_costs_no_model_call(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {
            "calc.py": read_example("calc.py").replace("(len(values) + 1)", "len(values)"),
            "tests/test_flaky.py": FLAKY_TEST,
            ".fixbot.yml": "gates: {lint: false, types: false}\n",
        },
    )
    # The test fails only in the run numbered 1: numbering from 1, the first baseline run
    # fails and the second (its reproduction) passes.
    sandbox = CountingSandbox()
    sandbox.runs = 1
    config = load_config(repo, overrides={"model": "m"})
    request = FixRequest(
        repo=repo, commit=pin_commit(repo), config=config, model_name="m", base_url=None
    )
    with (
        ScriptedOpenAI([]) as server,
        OpenAIModel(model="m", api_key="k", base_url=server.base_url) as model,
        closing(sqlite3.connect(tmp_path / "state.db", check_same_thread=False)) as db,
    ):
        clients = Clients(model=model, sandbox=sandbox, checkpointer=SqliteSaver(db))
        result = run_fix(request, clients)
    assert server.requests == []
    assert result.status == "escalated" and result.exit_code == 1
    assert result.classification == "flaky"
    assert result.flaky_tests == ["tests.test_flaky::test_sometimes"]
    assert result.escalation == "flaky" and result.reason.startswith("flaky:")


FLAKY_NEIGHBOUR = """import os


def test_now_and_then() -> None:
    # Fails in the first baseline run and in the first final run, passes otherwise.
    assert os.environ.get("FIXBOT_TEST_RUN", "0") not in ("1", "4")
"""


def test_a_flaky_neighbour_is_quarantined_and_the_deterministic_failure_fixed(
    tmp_path: Path,
) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {
            "tests/test_flaky.py": FLAKY_NEIGHBOUR,
            ".fixbot.yml": "gates: {lint: false, types: false}\n",
        },
    )
    # Runs 1-2: the baseline (the neighbour fails in 1 only); 3: the attempt; 4-5: the final
    # runs, the neighbour failing in 4: quarantined, it neither makes nor breaks the pass.
    sandbox = CountingSandbox()
    sandbox.runs = 1
    config = load_config(repo, overrides={"model": "m"})
    request = FixRequest(
        repo=repo, commit=pin_commit(repo), config=config, model_name="m", base_url=None
    )
    with (
        ScriptedOpenAI([GOOD]) as server,
        OpenAIModel(model="m", api_key="k", base_url=server.base_url) as model,
        closing(sqlite3.connect(tmp_path / "state.db", check_same_thread=False)) as db,
    ):
        clients = Clients(model=model, sandbox=sandbox, checkpointer=SqliteSaver(db))
        result = run_fix(request, clients)
    assert result.status == "fixed", result.reason
    assert len(server.requests) == 1
    flaky = "tests.test_flaky::test_now_and_then"
    assert result.classification == "code"
    assert result.flaky_tests == [flaky]
    assert result.failing_tests == [
        "tests.test_calc::test_mean",
        "tests.test_calc::test_mean_single",
    ]
    assert result.quarantined[flaky].startswith("flaky:")
    # Both final runs ran: the neighbour's failure in run 4 did not end the verification.
    assert sandbox.runs == 6
    # The model was never asked to fix the neighbour.
    prompt = json.dumps(server.requests[0])
    assert "tests.test_calc::test_mean" in prompt and flaky not in prompt
    report = render_markdown(result)
    assert "Quarantined tests" in report and flaky in report


def test_an_environment_failure_is_escalated_without_a_model_call(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    test = "import requests_that_is_not_installed\n\n\ndef test_it() -> None:\n    pass\n"
    repo = make_repo(tmp_path / "repo", {"tests/test_net.py": test})
    (repo / "tests" / "test_calc.py").unlink()
    git(repo, "commit", "-qam", "only the environment fails")
    with ScriptedOpenAI([]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 1
    assert server.requests == []
    evidence = run.evidence
    assert evidence["classification"] == "environment"
    assert "module 'requests_that_is_not_installed' is not installed" in evidence["reason"]
    assert json.loads(run.stdout)["status"] == "escalated"


GENERATED_VERSION = {
    "pyproject.toml": (
        '[project]\nname = "gen"\ndynamic = ["version"]\n\n'
        '[build-system]\nrequires = ["hatchling", "hatch-vcs"]\n'
        'build-backend = "hatchling.build"\n\n'
        '[tool.hatch.version]\nsource = "vcs"\n\n'
        '[tool.hatch.build.hooks.vcs]\nversion-file = "gen/_version.py"\n'
    ),
    ".gitignore": "gen/_version.py\n",
    "gen/__init__.py": "from gen._version import __version__\n\n__all__ = ['__version__']\n",
    "tests/test_gen.py": (
        "import gen\n\n\ndef test_version() -> None:\n    assert gen.__version__\n"
    ),
}


def test_only_environment_collection_errors_escalate_naming_what_is_missing(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    # hatch-vcs writes gen/_version.py at install time; without a setup_command nothing did.
    other = "import numpy_that_is_not_installed\n\n\ndef test_it() -> None:\n    pass\n"
    repo = make_repo(tmp_path / "repo", {**GENERATED_VERSION, "tests/test_num.py": other})
    (repo / "tests" / "test_calc.py").unlink()
    git(repo, "commit", "-qam", "only the environment fails")
    with ScriptedOpenAI([]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 1, run.stderr
    assert server.requests == []
    evidence = run.evidence
    assert evidence["escalation"] == "environment"
    reason = evidence["reason"]
    assert "module 'gen._version' is generated when the project is installed" in reason
    assert "install the project in setup_command" in reason
    assert "module 'numpy_that_is_not_installed' is not installed" in reason
    assert "python -m pip install numpy_that_is_not_installed" in reason
    assert "tests.test_gen" in reason and "tests.test_num" in reason


def test_a_module_the_environment_breaks_is_left_aside_and_the_code_failure_fixed(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    broken = "import numpy_that_is_not_installed\n\n\ndef test_it() -> None:\n    pass\n"
    repo = make_repo(tmp_path / "repo", {"tests/test_num.py": broken})
    with ScriptedOpenAI([wrong(1), GOOD]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr
    evidence = run.evidence
    assert evidence["status"] == "fixed"
    quarantined = evidence["baseline"]["quarantined"]
    assert list(quarantined) == ["tests.test_num"]
    assert quarantined["tests.test_num"].startswith(
        "environment: module 'numpy_that_is_not_installed' is not installed"
    )
    # Neither the task nor the retry (a rewrite of mean from its docstring) asks for it.
    assert "tests.test_calc::test_mean" in json.dumps(server.requests[0])
    for request in server.requests:
        assert "tests.test_num" not in json.dumps(request)
    assert "tests.test_num" in (run.out / "report.md").read_text()


def test_a_failure_that_also_fails_on_the_base_is_labelled_pre_existing(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(tmp_path / "repo")
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "NOTES.md").write_text("a later commit\n")
    git(repo, "add", "NOTES.md")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-qm", "notes")
    with ScriptedOpenAI([GOOD]) as server:
        run = run_fixbot(repo, "--base", base, base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert run.evidence["labels"] == ["pre-existing"]
    assert "pre-existing" in (run.out / "report.md").read_text()


def test_a_base_that_names_no_commit_is_a_usage_error(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(tmp_path / "repo")
    with ScriptedOpenAI([]) as server:
        run = run_fixbot(repo, "--base", "no-such-branch", base_url=server.base_url)
    assert run.code == 2
    assert "no-such-branch" in run.evidence["reason"]


GOOD_WITH_NOISE = reply(
    "--- a/calc.py\n+++ b/calc.py\n@@ -1,3 +1,3 @@\n"
    '-"""A tiny calculator with a bug for fixbot to fix."""\n'
    '+"""A tiny calculator."""\n'
    " \n"
    " import os\n"
    "@@ -10,3 +10,3 @@\n"
    " def mean(values: list[float]) -> float:\n"
    '     """The arithmetic mean of a non-empty list."""\n'
    "-    return sum(values) / (len(values) + 1)\n"
    "+    return sum(values) / len(values)\n"
)


def test_unneeded_hunks_are_dropped_and_the_rest_reverified(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(tmp_path / "repo")
    with ScriptedOpenAI([GOOD_WITH_NOISE]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr
    evidence = run.evidence
    assert len(evidence["dropped_hunks"]) == 1
    assert "A tiny calculator." in evidence["dropped_hunks"][0]
    diff = (run.out / "fix.diff").read_text()
    assert "len(values)" in diff and "A tiny calculator." not in diff
    assert "1 unneeded hunk(s) dropped" in evidence["reason"]
    assert "1.1.1.1:80 refused" in evidence["network_probe"]
    assert "127.0.0.1:80 refused" in evidence["network_probe"]


def test_fixbot_verify_rechecks_the_evidence(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    repo = make_repo(tmp_path / "repo")
    with ScriptedOpenAI([GOOD]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr
    evidence_path = run.out / "evidence.json"
    command = run.evidence["reproduce"]
    assert command.startswith("fixbot verify ") and str(repo) in command

    def verify(path: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "fixbot", "verify", str(path), "--repo", str(repo), "--json"],
            capture_output=True,
            text=True,
            timeout=300,
        )

    held = verify(evidence_path)
    assert held.returncode == 0, held.stderr
    assert json.loads(held.stdout)["holds"] is True

    forged = json.loads(evidence_path.read_text())
    forged["diff"] = forged["diff"].replace("len(values)", "len(values) or 1")
    (tmp_path / "forged.json").write_text(json.dumps(forged))
    broken = verify(tmp_path / "forged.json")
    assert broken.returncode == 1
    assert "SHA-256" in " ".join(json.loads(broken.stdout)["problems"])

    (tmp_path / "junk.json").write_text("{not json")
    assert verify(tmp_path / "junk.json").returncode == 2


def test_a_diff_that_adds_a_secret_is_refused(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    token = "ghp_" + "Z9y8" * 9  # built here so this file holds no scannable secret
    leaky = GOOD.replace(
        "+    return sum(values) / len(values)\n",
        f'+    return sum(values) / len(values)\n+TOKEN = "{token}"\n',
    )
    repo = make_repo(tmp_path / "repo")
    with ScriptedOpenAI([leaky]) as server:
        run = run_fixbot(repo, "--max-iterations", "1", base_url=server.base_url)
    assert run.code == 1
    (attempt,) = run.evidence["attempts"]
    assert attempt["verdict"] == "rejected" and attempt["check"] is None
    assert any("adds a secret (GitHub Token)" in p for p in attempt["problems"])
    for name in ("evidence.json", "report.md"):
        assert token not in (run.out / name).read_text()


def test_the_run_keys_never_reach_the_model_or_the_outputs(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    from tests.conftest import API_KEY

    calc = read_example("calc.py").replace(
        '"""A tiny calculator', f'"""Deployed with key {API_KEY}. A tiny calculator'
    )
    repo = make_repo(tmp_path / "repo", {"calc.py": calc})
    with ScriptedOpenAI([GOOD.replace("The mean", f"I saw {API_KEY}. The mean")]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert API_KEY not in json.dumps(server.requests)
    assert "[redacted:known]" in json.dumps(server.requests)
    for name in ("evidence.json", "report.md"):
        assert API_KEY not in (run.out / name).read_text()
