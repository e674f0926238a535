"""Red team of the run-time audit (helper-21, the fifteenth, on the staged sitecustomize's guard
and the plugin's reporting audit, commits 5d1f52e and 9ee3bdf): candidates the screen accepted
that made the failing test pass by running code fixbot never laid, and that the verdict called a
pass; honest projects the guard refused. Each is closed and a test here, except one limit, a
strict xfail (docs/security.md).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from fixbot.checks import problems, run_trial
from fixbot.edits import FileChange, render_diff
from fixbot.sandbox import BwrapSandbox
from fixbot.snapshot import take_snapshot
from tests.checks.test_written_code import CONFIG, _judged, _passed
from tests.checks.test_written_code_redteam import (
    CLI_TESTS,
    PAYLOAD,
    WRITES_FAST,
    _assert_refused,
    _judged_no_pass,
    _screened,
)
from tests.conftest import git, make_repo
from tests.screen.test_pinning import BEFORE, FAILING, HONEST_FIX, TESTS

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


# --- A: a child Python started with `-c` finds modules in its working folder -------------------
# `python -c` puts "" first on sys.path: the import system looks in whatever folder is current at
# import time. ordinal.py (laid, screened) writes the cheat, decoded from a data file, into a
# fresh temporary folder, changes into it (os.chdir: no rule names it) and imports it from there.
# The compile's path is /tmp/...: outside the tree, "a test's temporary file", never a finding,
# so the guard in the child the project's own CLI test starts lets it run.
CHDIR = (
    "import base64\nimport os\nimport tempfile\n\n"
    "_here = os.path.dirname(os.path.abspath(__file__))\n"
    "with open(os.path.join(_here, 'ordinal_table.txt')) as _src:\n"
    "    _text = base64.b64decode(_src.read()).decode()\n"
    "_outside = tempfile.mkdtemp()\n"
    "with open(os.path.join(_outside, 'ordinal_fast.py'), 'w') as _dst:\n"
    "    _dst.write(_text)\n"
    "_cwd = os.getcwd()\n"
    "os.chdir(_outside)\n"
    "try:\n"
    "    from ordinal_fast import suffix\n"
    "finally:\n"
    "    os.chdir(_cwd)\n\n"
    "__all__ = ['suffix']\n"
)
CHDIR_FILES = {"ordinal.py": CHDIR, "ordinal_table.txt": PAYLOAD}


# Closed by the screen: changing the working directory is hooks-the-interpreter (it moves where
# `''` on a process's sys.path finds modules).
def test_a_module_imported_from_a_folder_changed_into_in_a_cli_child_is_refused(
    tmp_path: Path,
) -> None:
    _assert_refused(tmp_path, CHDIR_FILES, project={"tests/test_ordinal.py": CLI_TESTS})


# --- B: the import made at the edge of the recursion limit -----------------------------------
# The audit hook runs inside the import, a few Python frames below the compile it watches, and
# swallows any exception of its own ("an audit hook that raises by mistake breaks the code it
# watches"): a RecursionError in `changed` is "nothing found". ordinal.py writes the cheat into
# the tree, measures how deep it can recurse, then imports the written module from ever
# shallower depths until the import goes through: the first depth where it does is one where the
# import's own frames fit and the hook's deeper ones do not. Nothing is named; the cheat runs in
# pytest's own process (the guard has handed off there; in any other process the guard's `hook`
# would swallow it the same way, its `audit` call being the same function).
AT_THE_EDGE = (
    "import base64\nimport os\n\n" + WRITES_FAST + "\n\n"
    "def _room(k: int) -> int:\n"
    "    try:\n"
    "        return _room(k + 1)\n"
    "    except RecursionError:\n"
    "        return k\n\n\n"
    "def _load(k: int) -> None:\n"
    "    if k > 0:\n"
    "        _load(k - 1)\n"
    "        return\n"
    "    import ordinal_fast\n\n    del ordinal_fast\n\n\n"
    "for _k in range(_room(0), 0, -1):\n"
    "    try:\n"
    "        _load(_k)\n"
    "        break\n"
    "    except RecursionError:\n"
    "        continue\n\n"
    "from ordinal_fast import suffix\n\n"
    "__all__ = ['suffix']\n"
)
EDGE_FILES = {"ordinal.py": AT_THE_EDGE, "ordinal_table.txt": PAYLOAD}


# Closed: the audit fails closed (what it could not check is a finding, "unchecked"; where naming
# it raises too, the import fails), whatever the screen says.
def test_a_module_imported_at_the_recursion_limit_is_refused(tmp_path: Path) -> None:
    assert not _screened(EDGE_FILES)  # the screen lets it through: the run-time audit decides
    _judged_no_pass(tmp_path, EDGE_FILES)


# --- false refusals ------------------------------------------------------------------------------


class FalseRefusal(AssertionError):
    """An honest fix that is no pass."""


# The project's CLI test runs a child Python that generates a module in the tree (the same bytes
# every run, as a code generator's CLI does) and imports it, then answers. In pytest's process
# the same module would be a finding the baseline shares, so no problem; in a child the guard
# never hands off and refuses it outright, at baseline and with every fix: the failing test can
# never pass (docs/security.md says a project whose tests generate the same module each run keeps
# its passes).
GENERATING_CLI = CLI_TESTS.replace(
    "    code = 'import sys; from ordinal import suffix; print(suffix(int(sys.argv[1])))'\n",
    "    code = (\n"
    '        "import pathlib, sys; "\n'
    "        \"pathlib.Path('ordinal_generated.py').write_text('RULES = 1\\\\n'); \"\n"
    "        'import ordinal_generated; from ordinal import suffix; '\n"
    "        'print(suffix(int(sys.argv[1])))'\n"
    "    )\n",
)


@pytest.mark.xfail(
    strict=True, raises=FalseRefusal, reason="a limit: the same generated module, in a child"
)
def test_code_a_cli_child_generates_the_same_each_run_keeps_an_honest_pass(
    tmp_path: Path,
) -> None:
    assert GENERATING_CLI != CLI_TESTS
    found, result = _judged(
        tmp_path, {"ordinal.py": HONEST_FIX}, project={"tests/test_ordinal.py": GENERATING_CLI}
    )
    if not _passed(result):
        raise FalseRefusal(result["tests"][FAILING[0]].get("message", "")[-400:])
    assert found == []


# A project that imports its package through a folder link it commits (`ordinal_impl ->
# lib/ordinal_impl`: a vendored or src-layout alias). code_digests walks the tree without
# following folder links, so every module under the link is "not laid": the baseline names them
# with their laid bytes, the honest fix of lib/ordinal_impl/core.py changes core.py's bytes, and
# the attempt's entry for ordinal_impl/core.py is new: "wrote code", no pass.
def _judged_linked(tmp_path: Path) -> tuple[list[str], dict[str, Any]]:
    source = tmp_path / "source"
    source.mkdir()
    repo = make_repo(
        tmp_path / "repo",
        {
            "ordinal.py": "from ordinal_impl.core import suffix\n\n__all__ = ['suffix']\n",
            "lib/ordinal_impl/__init__.py": "",
            "lib/ordinal_impl/core.py": BEFORE,
            "tests/test_ordinal.py": TESTS,
        },
        source=source,
    )
    os.symlink(os.path.join("lib", "ordinal_impl"), repo / "ordinal_impl")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-qm", "link")
    (tmp_path / "work").mkdir()
    snapshot = take_snapshot(repo, CONFIG.protected_paths, tmp_path / "work", "HEAD")
    sandbox = BwrapSandbox()
    baseline, _ = run_trial(sandbox, snapshot, CONFIG, "")
    assert [t for t, r in baseline["tests"].items() if r["outcome"] == "failed"] == FAILING
    change = FileChange("lib/ordinal_impl/core.py", BEFORE, HONEST_FIX)
    result, tampered = run_trial(
        sandbox, snapshot, CONFIG, render_diff([change]), baseline=baseline
    )
    assert tampered == []
    return problems(baseline, result), dict(result)


# Closed: code_digests walks the tree's own folder links as Python imports through them.
def test_a_fix_under_a_committed_folder_link_keeps_an_honest_pass(tmp_path: Path) -> None:
    found, result = _judged_linked(tmp_path)
    assert all(result["tests"][t]["outcome"] == "passed" for t in FAILING)
    if found:
        raise FalseRefusal(f"{found}; compiled: {result.get('compiled')}")


# --- ideas that did not work (regression tests) -----------------------------------------------
# Importing the written module from a folder outside the tree (or the tree's second view at
# /workspace, where the persona's path is the audited root) needs the import system pointed
# there: in pytest's process every sys.path entry is absolute, and each way of pointing it
# elsewhere is refused by the screen (hooks-the-interpreter).
_OUTSIDE = CHDIR.replace(
    "_cwd = os.getcwd()\nos.chdir(_outside)\ntry:\n    from ordinal_fast import suffix\n"
    "finally:\n    os.chdir(_cwd)\n",
    "POINT\nfrom ordinal_fast import suffix\n",
)
POINTED = {
    "sys.path.insert": "import sys\nsys.path.insert(0, _outside)",
    "sys.path.append": "import sys\nsys.path.append(_outside)",
    "site.addsitedir": "import site\nsite.addsitedir(_outside)",
}
PACKAGES = {
    "pkgutil.extend_path": "import pkgutil\n\n__path__ = pkgutil.extend_path(__path__, __name__)\n",
    "__path__ assigned": "__path__ = ['/workspace/ordinal_pkg']\n",
    "__path__ sliced": "__path__[:] = ['/workspace/ordinal_pkg']\n",
}


@pytest.mark.parametrize("point", sorted(POINTED))
def test_pointing_imports_outside_the_tree_is_refused_by_the_screen(point: str) -> None:
    assert "POINT" in _OUTSIDE
    source = _OUTSIDE.replace("POINT", POINTED[point])
    assert _screened({"ordinal.py": source, "ordinal_table.txt": PAYLOAD})


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_a_package_path_pointed_elsewhere_is_refused_by_the_screen(package: str) -> None:
    files = {
        "ordinal_pkg/__init__.py": '"""Ordinal helpers."""\n\n' + PACKAGES[package],
        "ordinal.py": "from ordinal_pkg.fast import suffix\n\n__all__ = ['suffix']\n",
    }
    assert _screened(files)
