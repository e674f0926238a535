"""Real projects' setups, end to end through `fixbot fix` with a scripted model and a real
sandbox: a commit that poisons its prepared environment cannot fake another commit's pass, a
project that takes its version from git metadata installs from the snapshot, and the pytest
plugins the project's setup installs load as they do in its CI.

The installs reach the package index (PyPI, or this machine's own index settings, which the
prepare step inherits): CI has the network for them, as the prepare step always does.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import RunFixbot, git, make_repo
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import GOOD, reply

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="needs bubblewrap (apt-get install bubblewrap)"
)

# What the prepare step may inherit from the machine the suite runs on (index.py).
_CARRIED = ("PIP_", "UV_", "REQUESTS_CA_BUNDLE", "SSL_CERT_", "CURL_CA_BUNDLE", "HOME")


def index_env() -> dict[str, str]:
    """This machine's package-index settings, as a maintainer's shell would pass them."""
    return {
        key: value
        for key, value in os.environ.items()
        if key.startswith(_CARRIED) or key.lower() in ("http_proxy", "https_proxy", "no_proxy")
    }


SETUP_PY = """\
from setuptools import setup

about = {}
exec(open("_version.py").read(), about)  # the repository's code, run by the install
setup(name="calc", version=about["__version__"], py_modules=["calc"])
"""
CLEAN_VERSION = '__version__ = "1.0"\n'
# A .pth runs at every interpreter start: this one hands `import calc` a correct module, so the
# failing tests pass without the repository's calc.py being fixed.
POISONED_VERSION = """\
import sysconfig
from pathlib import Path

CODE = (
    "def add(a, b):\\n    return a + b\\n\\n"
    "def mean(values):\\n    return sum(values) / len(values)\\n\\n"
    "def clamp(value, low, high):\\n    return max(low, min(value, high))\\n"
)
LINE = (
    "import sys, types; m = types.ModuleType('calc'); exec(%r, m.__dict__); "
    "sys.modules['calc'] = m\\n" % CODE
)
Path(sysconfig.get_paths()["purelib"], "zz-calc.pth").write_text(LINE)
__version__ = "1.0"
"""
POISON_CONFIG = "setup_command: python setup.py --version\ngates: {lint: false, types: false}\n"


def test_a_commit_cannot_poison_the_prepared_environment_for_another(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {"setup.py": SETUP_PY, "_version.py": CLEAN_VERSION, ".fixbot.yml": POISON_CONFIG},
    )
    # A commit on another branch, with the same dependency files, poisons its own environment.
    git(repo, "checkout", "-qb", "attacker")
    (repo / "_version.py").write_text(POISONED_VERSION)
    git(repo, "-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-qam", "poison")
    with ScriptedOpenAI([]) as server:
        poisoned = run_fixbot(repo, base_url=server.base_url, env=index_env())
    assert poisoned.evidence["status"] == "already_passing"  # its own lie, on its own tree
    # The clean commit: the real failure is reproduced, and fixed by the real fix.
    git(repo, "checkout", "-q", "main")
    with ScriptedOpenAI([GOOD]) as server:
        clean = run_fixbot(repo, base_url=server.base_url, env=index_env())
    assert clean.code == 0, clean.stderr
    evidence = clean.evidence
    assert evidence["status"] == "fixed"
    assert "tests.test_calc::test_mean" in [
        test for test, case in evidence["baseline"]["tests"].items() if case["outcome"] == "failed"
    ]
    assert "sum(values) / len(values)" in (clean.out / "fix.diff").read_text()
    assert len(list((repo / ".fixbot" / "envs").glob("*/.fixbot-prepared"))) == 2


HATCH_PYPROJECT = """\
[build-system]
requires = ["hatchling", "hatch-vcs"]
build-backend = "hatchling.build"

[project]
name = "gen"
dynamic = ["version"]
requires-python = ">=3.11"

[tool.hatch.version]
source = "vcs"

[tool.hatch.build.hooks.vcs]
version-file = "gen/_version.py"

[tool.hatch.build.targets.wheel]
packages = ["gen"]
"""
GEN_TEST = """\
from gen import __version__, mean


def test_mean() -> None:
    assert mean([1.0, 2.0, 3.0]) == 2.0


def test_the_version_comes_from_the_pinned_commit() -> None:
    assert __version__.startswith("0.0.0+g"), __version__
"""
GEN_FIX = reply(
    """--- a/gen/core.py
+++ b/gen/core.py
@@ -1,3 +1,3 @@
 def mean(values: list[float]) -> float:
     \"\"\"The arithmetic mean of a non-empty list.\"\"\"
-    return sum(values) / (len(values) + 1)
+    return sum(values) / len(values)
"""
)


def test_a_hatch_vcs_project_installs_from_the_snapshot_and_is_fixed(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": HATCH_PYPROJECT,
            ".gitignore": "gen/_version.py\n",
            "gen/__init__.py": (
                "from gen._version import __version__\nfrom gen.core import mean\n\n"
                "__all__ = ['__version__', 'mean']\n"
            ),
            "gen/core.py": (
                "def mean(values: list[float]) -> float:\n"
                '    """The arithmetic mean of a non-empty list."""\n'
                "    return sum(values) / (len(values) + 1)\n"
            ),
            "tests/test_gen.py": GEN_TEST,
            ".fixbot.yml": (
                "setup_command: python -m pip install -e .\ngates: {lint: false, types: false}\n"
            ),
        },
        source=tmp_path / "empty",
    )
    with ScriptedOpenAI([GEN_FIX]) as server:
        run = run_fixbot(repo, base_url=server.base_url, env=index_env())
    assert run.code == 0, run.stderr
    evidence = run.evidence
    assert evidence["status"] == "fixed", evidence["reason"]
    tests = evidence["baseline"]["tests"]
    assert tests["tests.test_gen::test_mean"]["outcome"] == "failed"
    assert tests["tests.test_gen::test_the_version_comes_from_the_pinned_commit"]["outcome"] == (
        "passed"
    )
    assert "gen/_version.py" not in (run.out / "fix.diff").read_text()


ASYNC_TEST = """\
from aio import double


async def test_double() -> None:
    assert await double(2) == 4
"""
ASYNC_FIX = reply(
    """--- a/aio.py
+++ b/aio.py
@@ -1,2 +1,2 @@
 async def double(value: int) -> int:
-    return value * 3
+    return value * 2
"""
)


def test_a_pytest_asyncio_project_loads_its_plugin_and_is_fixed(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": '[tool.pytest.ini_options]\nasyncio_mode = "auto"\n',
            "aio.py": "async def double(value: int) -> int:\n    return value * 3\n",
            "tests/test_aio.py": ASYNC_TEST,
            ".fixbot.yml": (
                "setup_command: python -m pip install pytest-asyncio\n"
                "gates: {lint: false, types: false}\n"
            ),
        },
        source=tmp_path / "empty",
    )
    with ScriptedOpenAI([ASYNC_FIX]) as server:
        run = run_fixbot(repo, base_url=server.base_url, env=index_env())
    assert run.code == 0, run.stderr
    evidence = run.evidence
    assert evidence["status"] == "fixed", evidence["reason"]
    case = evidence["baseline"]["tests"]["tests.test_aio::test_double"]
    assert case["outcome"] == "failed"
    assert "assert 6 == 4" in case["message"] + case["detail"]  # run by the plugin, as in CI
    assert any("-p asyncio" in command for command in evidence["baseline"]["commands"])


@pytest.fixture(autouse=True)
def _empty_source(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
