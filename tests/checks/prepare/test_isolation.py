"""The checks run in the project's own environment, never fixbot's: a virtualenv built only from
what its setup_command installs (or, without one, the shared one with pytest from the index),
nothing of fixbot's on its `sys.path`, the project's own pytest and plugins. Real repositories,
the real sandbox; the setup scripts install as pip would (an editable finder, a plugin's
dist-info), with no network, so the only download is the shared pytest, once per machine."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path

import pytest

from fixbot.checks import index_settings, run_trial
from fixbot.checks.prepare import PINNED, PYTEST_PIN, environment_record, prepared_environment
from fixbot.config import Config, Gates
from fixbot.sandbox import BwrapSandbox, Limits
from fixbot.snapshot import Snapshot, pin_commit, take_snapshot
from tests.conftest import RunFixbot, make_repo
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import GOOD, reply

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

FIXBOTS_SITE = sysconfig.get_paths()["purelib"]  # where fixbot's own packages are
SEES_NOTHING_OF_FIXBOT = f"""\
import importlib.util
import sys

import pytest


def test_nothing_of_fixbots_environment_is_seen() -> None:
    assert sys.prefix == "/fixbot-env"
    assert not [p for p in sys.path if p.startswith({FIXBOTS_SITE!r})], sys.path
    assert pytest.__file__.startswith("/fixbot-env/"), pytest.__file__
    for name in ("yaml", "langgraph", "openai", "fixbot", "structlog"):  # fixbot's own
        assert importlib.util.find_spec(name) is None, name
"""


def snapshot_of(repo: Path, work: Path) -> Snapshot:
    work.mkdir()
    return take_snapshot(repo, ["tests/**"], work, pin_commit(repo))


@pytest.mark.parametrize("setup", [None, "python -c pass"], ids=["shared", "project"])
def test_the_checks_see_nothing_of_fixbots_environment(tmp_path: Path, setup: str | None) -> None:
    repo = make_repo(tmp_path / "repo", {"tests/test_isolated.py": SEES_NOTHING_OF_FIXBOT})
    snapshot = snapshot_of(repo, tmp_path / "work")
    config = Config(setup_command=setup, gates=Gates(lint=False, types=False))
    result, _ = run_trial(BwrapSandbox(), snapshot, config, "", index=index_settings(os.environ))
    case = result["tests"]["tests.test_isolated::test_nothing_of_fixbots_environment_is_seen"]
    assert case["outcome"] == "passed", case["detail"] or result["log_tail"]
    environment = result["environment"]
    assert environment["kind"] == ("project" if setup else "shared")
    assert environment["pytest"] == PYTEST_PIN.split("==")[1]
    assert environment["pytest_from"] == (
        f"fixbot installed {PYTEST_PIN} from the package index (fixbot's pin)"
    )
    assert environment["python"] == sys.version.split()[0]
    assert result["imports"]["pytest"].startswith("/fixbot-env/")


# What `pip install -e .` of a src-layout project does with setuptools' modern editable mode: a
# finder appended to sys.meta_path, after the path-based one; any `yaml` on sys.path (fixbot's
# own PyYAML, once) is found first.
INSTALL_EDITABLE = """\
import sysconfig
from pathlib import Path

FINDER = '''
import importlib.util, sys

class Finder:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "yaml":
            return None
        return importlib.util.spec_from_file_location(
            "yaml", "/workspace/src/yaml/__init__.py",
            submodule_search_locations=["/workspace/src/yaml"],
        )

def install():
    sys.meta_path.append(Finder)
'''
site = Path(sysconfig.get_paths()["purelib"])
(site / "__editable___yaml_finder.py").write_text(FINDER)
hook = "import __editable___yaml_finder; __editable___yaml_finder.install()\\n"
(site / "__editable__.yaml-0.1.pth").write_text(hook)
"""
# ... and what a non-editable install does: a copy of the package in site-packages.
INSTALL_A_COPY = """\
import shutil, sysconfig
from pathlib import Path

shutil.copytree("src/yaml", Path(sysconfig.get_paths()["purelib"]) / "yaml")
"""
OWN_YAML = '''\
"""Not PyYAML: a project of the same name, at another version."""

__version__ = "0.1"


def safe_load(text: str) -> dict[str, str]:
    """`key: value` lines."""
    pairs = (line.split(":", 1) for line in text.splitlines() if line.strip())
    return {key.strip(): value for key, value in pairs}
'''
YAML_TESTS = """\
import yaml


def test_this_is_the_projects_own_yaml() -> None:
    assert yaml.__version__ == "0.1"


def test_safe_load() -> None:
    assert yaml.safe_load("a: 1\\nb: 2\\n") == {"a": "1", "b": "2"}
"""
YAML_FIX = reply(
    """--- a/src/yaml/__init__.py
+++ b/src/yaml/__init__.py
@@ -8,2 +8,2 @@
     pairs = (line.split(":", 1) for line in text.splitlines() if line.strip())
-    return {key.strip(): value for key, value in pairs}
+    return {key.strip(): value.strip() for key, value in pairs}
""",
    prose="The values keep their leading space.",
)


def yaml_project(path: Path, install: str) -> Path:
    empty = path.parent / "empty"
    empty.mkdir(exist_ok=True)
    config = "setup_command: python tools/install.py\ntest_command: python -m pytest\n"
    files = {
        "src/yaml/__init__.py": OWN_YAML,
        "tests/test_yaml.py": YAML_TESTS,
        "tools/install.py": install,
        ".fixbot.yml": config + "gates: {lint: false, types: false}\n",
    }
    return make_repo(path, files, source=empty)


def test_a_project_named_like_one_of_fixbots_dependencies_is_fixed_against_its_own_code(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    """PyYAML is fixbot's; this project's `yaml` is another package at another version. Its
    tests import its own, in its own environment, and the real fix passes them."""
    repo = yaml_project(tmp_path / "repo", INSTALL_EDITABLE)
    with ScriptedOpenAI([YAML_FIX]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr[-3000:]
    evidence = run.evidence
    assert evidence["status"] == "fixed"
    baseline = evidence["baseline"]
    assert baseline["tests"]["tests.test_yaml::test_this_is_the_projects_own_yaml"]["outcome"] == (
        "passed"
    )
    assert baseline["imports"]["yaml"] == "/workspace/src/yaml/__init__.py"
    assert "shadowed" not in baseline["environment"]


def test_the_project_imported_from_anywhere_but_the_repository_is_an_error(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = yaml_project(tmp_path / "repo", INSTALL_A_COPY)
    with ScriptedOpenAI([YAML_FIX]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 3, run.stderr[-3000:]
    assert server.requests == []  # no model call
    assert "the tests import the project's own package from outside the repository" in run.stderr
    assert "'yaml' from /fixbot-env/lib/python" in run.stderr
    assert "(the repository has src/yaml)" in run.stderr
    assert "pip install -e ." in run.stderr


SEE_FIXBOTS_SITE = """\
import sys, sysconfig
from pathlib import Path

outside = f"{sys.base_prefix}/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
(Path(sysconfig.get_paths()["purelib"]) / "outside.pth").write_text(outside + "\\n")
"""
IMPORTS_YAML = """\
import yaml


def test_yaml_is_there() -> None:
    assert yaml.safe_load("a: 1") == {"a": 1}
"""


def test_a_module_imported_from_outside_the_environment_is_named_in_the_evidence(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    """A setup that makes another folder importable (here: fixbot's own site-packages, as the
    prepared environment once did) is the project's choice; what its tests took from there is
    named."""
    config = "setup_command: python tools/see.py\ngates: {lint: false, types: false}\n"
    files = {"tools/see.py": SEE_FIXBOTS_SITE, "tests/test_outside.py": IMPORTS_YAML}
    repo = make_repo(tmp_path / "repo", {**files, ".fixbot.yml": config})
    with ScriptedOpenAI([GOOD]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr[-3000:]
    shadowed = run.evidence["baseline"]["environment"]["shadowed"]
    assert f"yaml: {os.path.realpath(FIXBOTS_SITE)}/yaml/__init__.py" in shadowed, shadowed


# A plugin as pip installs one: its module, its dist-info with the pytest11 entry point. Its
# fixture needs an API this pytest no longer has (as pytest-benchmark's did under a newer
# pytest than the project's own): it works under pytest 8, not 9.
INSTALL_PLUGIN = """\
import sysconfig
from pathlib import Path

site = Path(sysconfig.get_paths()["purelib"])
(site / "strict_plugin.py").write_text('''
import pytest


@pytest.fixture
def strict_clock():
    if pytest.version_tuple[0] >= 9:
        raise AttributeError("'Function' object has no attribute '_nodeid'")
    return 42
''')
info = site / "strict_plugin-1.0.dist-info"
info.mkdir()
(info / "METADATA").write_text("Metadata-Version: 2.1\\nName: strict_plugin\\nVersion: 1.0\\n")
(info / "entry_points.txt").write_text("[pytest11]\\nstrict = strict_plugin\\n")
(info / "RECORD").write_text("")
"""
PLUGIN_TESTS = """\
def test_the_clock(strict_clock: int) -> None:
    assert strict_clock == 42
"""


def plugin_project(path: Path, **files: str) -> Path:
    config = "setup_command: python tools/install.py\ngates: {lint: false, types: false}\n"
    laid = {"tools/install.py": INSTALL_PLUGIN, "tests/test_clock.py": PLUGIN_TESTS, **files}
    return make_repo(path, {**laid, ".fixbot.yml": config})


def test_a_project_pinning_its_pytest_runs_its_plugin_under_that_pytest(tmp_path: Path) -> None:
    """The project asks for pytest 8.4.2 (requirements-dev.txt) and installs none: fixbot
    installs that one, and the plugin that breaks under fixbot's pin works."""
    repo = plugin_project(tmp_path / "repo", **{"requirements-dev.txt": "pytest==8.4.2\n"})
    snapshot = snapshot_of(repo, tmp_path / "work")
    config = Config(setup_command="python tools/install.py", gates=Gates(lint=False, types=False))
    result, _ = run_trial(BwrapSandbox(), snapshot, config, "", index=index_settings(os.environ))
    case = result["tests"]["tests.test_clock::test_the_clock"]
    assert case["outcome"] == "passed", case["detail"] or result["log_tail"]
    environment = result["environment"]
    assert environment["pytest"] == "8.4.2"
    assert "pytest==8.4.2" in environment["pytest_from"]
    assert "requirements-dev.txt asks for it" in environment["pytest_from"]
    assert environment["plugins"] == [
        {
            "dist": "strict_plugin",
            "version": "1.0",
            "names": ["strict"],
            "modules": ["strict_plugin"],
        }
    ]
    assert " -p strict" in " ".join(result["commands"])


def test_a_plugin_fixture_error_from_site_packages_is_quarantined_not_demanded_of_the_fix(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    """Under fixbot's pin the plugin's fixture raises in setup, from site-packages: the test is
    the environment's, quarantined beside the code failure (calc's mean), which is fixed."""
    repo = plugin_project(tmp_path / "repo")
    with ScriptedOpenAI([GOOD]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr[-3000:]
    evidence = run.evidence
    assert evidence["status"] == "fixed"
    reason = evidence["baseline"]["quarantined"]["tests.test_clock::test_the_clock"]
    assert reason.startswith(
        "environment: the pytest plugin strict_plugin 1.0 (strict_plugin, site-packages) raised "
        "in the test's setup, with no frame of the repository"
    ), reason
    assert "'_nodeid'" in reason
    case = evidence["baseline"]["tests"]["tests.test_clock::test_the_clock"]
    assert case["phase"] == "setup"
    assert case["frames"][-1].endswith("/site-packages/strict_plugin.py")


def test_a_setup_command_that_replaces_the_pytest_leaves_nothing_of_fixbots(
    tmp_path: Path,
) -> None:
    """What fixbot wrote into its pytest's dist-info is in its RECORD: pip removes it with the
    distribution (a project that installs its own pytest first uninstalls that one)."""
    repo = make_repo(tmp_path / "repo")
    snapshot = snapshot_of(repo, tmp_path / "work")
    env = prepared_environment(
        BwrapSandbox(),
        snapshot,
        "python -m pip uninstall -y pytest",
        Limits(timeout_seconds=300),
        index_settings(os.environ),
        pytest=PINNED,
    )
    assert env is not None
    (site,) = env.glob("lib/python*/site-packages")
    assert not list(site.glob("pytest-*.dist-info")), sorted(p.name for p in site.iterdir())
    assert environment_record(env)["pytest"] == ""
