"""The prepared environment's pytest plugins load (`-p NAME` for each of its own pytest11 entry
points); a plugin that is only in fixbot's own environment never does."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fixbot.checks import run_trial
from fixbot.checks.prepare import plugin_options
from fixbot.config import Config, Gates
from fixbot.sandbox import BwrapSandbox
from fixbot.snapshot import pin_commit, take_snapshot
from tests.conftest import make_repo


def dist(site: Path, name: str, entry_points: str, kind: str = "dist-info") -> None:
    folder = site / f"{name}-1.0.{kind}"
    folder.mkdir(parents=True)
    (folder / "entry_points.txt").write_text(entry_points)


def test_each_pytest11_entry_point_of_the_environment_is_named(tmp_path: Path) -> None:
    site = tmp_path / "env" / "lib" / "python3.11" / "site-packages"
    dist(site, "pytest_asyncio", "[pytest11]\nasyncio = pytest_asyncio.plugin\n")
    dist(
        site,
        "pytest_xdist",
        "[pytest11]\nxdist.looponfail = xdist.looponfail\nxdist = xdist.plugin\n",
    )
    dist(site, "pytest_django", "[pytest11]\ndjango = pytest_django.plugin\n", kind="egg-info")
    dist(site, "hypothesis", "[console_scripts]\nhypothesis = hypothesis.extra.cli:main\n")
    dist(site, "odd", "[pytest11]\n--help = odd\nspaced name = odd\n")  # not plain names
    assert plugin_options(tmp_path / "env") == [
        "-p", "asyncio", "-p", "django", "-p", "xdist", "-p", "xdist.looponfail",
    ]  # fmt: skip
    assert plugin_options(None) == []


def test_a_linked_or_broken_entry_points_file_is_ignored(tmp_path: Path) -> None:
    site = tmp_path / "env" / "lib" / "python3.11" / "site-packages"
    dist(site, "broken", "[pytest11\nnot ini at all")
    outside = tmp_path / "outside.txt"
    outside.write_text("[pytest11]\nstolen = stolen\n")
    (site / "linked-1.0.dist-info").mkdir()
    (site / "linked-1.0.dist-info" / "entry_points.txt").symlink_to(outside)
    assert plugin_options(tmp_path / "env") == []


ANYIO = """\
def test_needs_the_anyio_plugin(anyio_backend: str) -> None:
    assert anyio_backend
"""


@pytest.mark.parametrize("setup", [None, "python -c pass"], ids=["no setup", "prepared"])
def test_a_plugin_only_in_fixbots_own_environment_is_not_loaded(
    tmp_path: Path, setup: str | None
) -> None:
    # anyio's pytest plugin is installed wherever fixbot is (httpx needs anyio); autoloaded,
    # it would provide the `anyio_backend` fixture.
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed here; CI installs it")
    repo = make_repo(tmp_path / "repo", {"tests/test_anyio.py": ANYIO})
    (tmp_path / "work").mkdir()
    snapshot = take_snapshot(repo, ["tests/**"], tmp_path / "work", pin_commit(repo))
    config = Config(setup_command=setup, gates=Gates(lint=False, types=False))
    result, _ = run_trial(BwrapSandbox(), snapshot, config, "")
    case = result["tests"]["tests.test_anyio::test_needs_the_anyio_plugin"]
    assert case["outcome"] == "error"
    assert "fixture 'anyio_backend' not found" in case["message"] + case["detail"]
    assert not any(" -p anyio" in command for command in result["commands"])
