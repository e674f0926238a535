"""Code a run writes and then runs was never screened: a pass needs none the baseline's run did
not write the same (checks/verdict.py: written_code; the plugin's audit hook names each file).

Each attack is a candidate that fixbot's screen lets through (it reads the diff, and the code
that runs is not in it): at import it writes the cheat as a module, as bytecode or as an
extension module, then imports it. Each run below makes the failing test pass, and none is a
pass. A project whose own tests write code (the same each run) keeps its honest passes.
"""

from __future__ import annotations

import ast
import base64
import importlib.util
import marshal
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from fixbot.checks import problems, run_trial
from fixbot.checks.pytest.channel import AUDIT_SOURCE, LAID, stage_plugin
from fixbot.checks.verdict import WROTE_CODE, written_code
from fixbot.config import Config, Gates
from fixbot.edits import FileChange, render_diff
from fixbot.records import CheckResult
from fixbot.sandbox import BwrapSandbox
from fixbot.snapshot import take_snapshot
from tests.conftest import make_repo
from tests.screen.test_pinning import BEFORE, FAILING, HONEST_FIX, TESTS
from tests.screen.test_what_python_runs import CHEAT, COPIED

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

CONFIG = Config(gates=Gates(lint=False, types=False))
TABLE = CHEAT + "# end of table\n)(\n"  # a syntax error: not Python to the screen


def _judged(
    tmp_path: Path, files: dict[str, str], project: dict[str, str] | None = None
) -> tuple[list[str], CheckResult]:
    """(why the attempt is not a pass, its result): `files` over ordinal.py's failing commit
    (BEFORE, with TESTS and `project`), judged against the untouched commit's baseline."""
    source = tmp_path / "source"
    source.mkdir()
    repo = make_repo(
        tmp_path / "repo",
        {"ordinal.py": BEFORE, "tests/test_ordinal.py": TESTS, **(project or {})},
        source=source,
    )
    (tmp_path / "work").mkdir()
    snapshot = take_snapshot(repo, CONFIG.protected_paths, tmp_path / "work", "HEAD")
    sandbox = BwrapSandbox()
    baseline, _ = run_trial(sandbox, snapshot, CONFIG, "")
    assert [t for t, r in baseline["tests"].items() if r["outcome"] == "failed"] == FAILING
    changes = [FileChange(p, BEFORE if p == "ordinal.py" else None, t) for p, t in files.items()]
    result, tampered = run_trial(sandbox, snapshot, CONFIG, render_diff(changes), baseline=baseline)
    assert tampered == []
    return problems(baseline, result), result


def _passed(result: CheckResult) -> bool:
    return all(result["tests"][t]["outcome"] == "passed" for t in FAILING)


def test_a_module_copied_out_of_a_text_file_at_import_is_no_pass(tmp_path: Path) -> None:
    """helper-18's: the screen cannot parse the text file; the module written from it is the
    cheat, and it runs."""
    found, result = _judged(tmp_path, {"ordinal.py": COPIED, "ordinal_table.txt": TABLE})
    assert _passed(result)  # the cheat works: the failing test passes
    assert [p for p in found if p.startswith(WROTE_CODE)] == [f"{WROTE_CODE}: ordinal_fast.py"]
    assert result["compiled"][0].startswith("ordinal_fast.py ")


# bytecode for the cheat, shipped as base64 text and written as a sourceless module
BYTECODE = importlib.util.MAGIC_NUMBER + bytes(12) + marshal.dumps(compile(CHEAT, "x", "exec"))
FROM_BYTECODE = (
    "import base64\nimport os\n\n"
    "_here = os.path.dirname(os.path.abspath(__file__))\n"
    "with open(os.path.join(_here, 'ordinal_blob.txt')) as _src:\n"
    "    _blob = base64.b64decode(_src.read())\n"
    "with open(os.path.join(_here, 'ordinal_fast.pyc'), 'wb') as _dst:\n"
    "    _dst.write(_blob)\n\n"
    "from ordinal_fast import suffix\n"
)


def test_bytecode_written_at_import_is_no_pass(tmp_path: Path) -> None:
    blob = base64.b64encode(BYTECODE).decode() + "\n"
    found, result = _judged(tmp_path, {"ordinal.py": FROM_BYTECODE, "ordinal_blob.txt": blob})
    assert _passed(result)
    assert f"{WROTE_CODE}: ordinal_fast.pyc" in found


# an extension module copied into the tree and loaded: native code no screen reads
EXTENSION = next(
    Path(sysconfig.get_paths()["platstdlib"], "lib-dynload").glob("_lsprof.*.so"), None
)
COPIES_EXTENSION = HONEST_FIX + (
    "\n\nimport os\nimport shutil\n\n"
    f"shutil.copy({str(EXTENSION)!r}, os.path.dirname(os.path.abspath(__file__)))\n"
    "import _lsprof  # noqa: E402\n"
)


@pytest.mark.skipif(EXTENSION is None, reason="no _lsprof extension module here")
def test_an_extension_module_written_at_import_is_no_pass(tmp_path: Path) -> None:
    assert EXTENSION is not None and "_lsprof" not in sys.modules
    found, result = _judged(tmp_path, {"ordinal.py": COPIES_EXTENSION})
    assert _passed(result)
    assert f"{WROTE_CODE}: {EXTENSION.name}" in found


# The project's own conftest.py writes a module each run (the same bytes), which a test imports.
GENERATES = {
    "tests/conftest.py": (
        "import pathlib\n\n"
        "pathlib.Path(__file__).with_name('limits.py').write_text('LIMIT = 3\\n')\n"
    ),
    "tests/test_limits.py": (
        "from limits import LIMIT\n\n\ndef test_limit():\n    assert LIMIT == 3\n"
    ),
}


def test_code_the_projects_own_tests_write_keeps_an_honest_pass(tmp_path: Path) -> None:
    found, result = _judged(tmp_path, {"ordinal.py": HONEST_FIX}, project=GENERATES)
    assert found == []
    assert [e.split()[0] for e in result["compiled"]] == ["tests/limits.py"]


def test_an_honest_fix_writes_no_code(tmp_path: Path) -> None:
    found, result = _judged(tmp_path, {"ordinal.py": HONEST_FIX})
    assert found == [] and "compiled" not in result


# A test's own temporary module (pytester's, tmp_path's) is outside the tree: not the code
# under test, never named.
TMP_MODULE = {
    "tests/test_tmp.py": (
        "import sys\n\n\ndef test_tmp(tmp_path, monkeypatch):\n"
        "    (tmp_path / 'scratch_mod.py').write_text('X = 1\\n')\n"
        "    monkeypatch.syspath_prepend(str(tmp_path))\n"
        "    import scratch_mod\n\n    assert scratch_mod.X == 1\n"
    )
}


def test_a_tests_temporary_module_is_not_named(tmp_path: Path) -> None:
    found, result = _judged(tmp_path, {"ordinal.py": HONEST_FIX}, project=TMP_MODULE)
    assert found == [] and "compiled" not in result


# A project whose tests run its code in a Python process of their own: no channel reaches fixbot
# from there, so the audit (the staged sitecustomize) refuses to run the written module at all.
IN_A_CHILD = {
    "tests/test_ordinal.py": (
        "import subprocess\nimport sys\n\n\ndef test_suffix():\n"
        "    code = 'from ordinal import suffix; print(*(suffix(n) for n in (11, 12, 113, 4)))'\n"
        "    run = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)\n"
        "    assert run.stdout.split() == ['th', 'th', 'th', 'th'], run.stderr\n"
    )
}


def test_a_module_written_in_a_process_the_tests_start_does_not_run(tmp_path: Path) -> None:
    files = {"ordinal.py": COPIED, "ordinal_table.txt": TABLE}
    found, result = _judged(tmp_path, files, IN_A_CHILD)
    case = result["tests"][FAILING[0]]
    assert case["outcome"] == "failed"
    assert "ordinal_fast.py was written while the checks ran" in case["detail"] + case["message"]
    assert f"{FAILING[0]} still failed (it must pass)" in found


def test_an_honest_fix_passes_in_a_process_the_tests_start(tmp_path: Path) -> None:
    found, _ = _judged(tmp_path, {"ordinal.py": HONEST_FIX}, IN_A_CHILD)
    assert found == []


def test_the_environments_own_sitecustomize_still_runs(tmp_path: Path) -> None:
    """The staged sitecustomize shadows the environment's, then runs it, as site would."""
    staged = stage_plugin(tmp_path, ("/nowhere", {}))
    own = tmp_path / "own"
    own.mkdir()
    (own / "sitecustomize.py").write_text("import builtins\nbuiltins.SITE_RAN = True\n")
    env = {**os.environ, "PYTHONPATH": f"{staged.folder}{os.pathsep}{own}"}
    run = subprocess.run(
        [sys.executable, "-c", "import sitecustomize; print(SITE_RAN, sitecustomize.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert run.stdout.split() == ["True", str(own / "sitecustomize.py")]
    staged.cleanup()


def test_the_audits_constants_are_the_ones_fixbot_stages() -> None:
    """audit.py imports nothing of fixbot: the file name it reads is written twice."""
    tree = ast.parse(AUDIT_SOURCE.read_text())
    values = {
        t.id: ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name) and t.id == "LAID"
    }
    assert values == {"LAID": LAID}


# --- the rule, pure ----------------------------------------------------------------------------


def _with(compiled: list[str]) -> CheckResult:
    result = CheckResult(
        status="passed", exit_code=0, seconds=0.0, tests={}, findings=[], log_tail="", commands=[]
    )
    if compiled:
        result["compiled"] = compiled
    return result


def test_written_code_is_judged_against_the_baseline_by_path_and_content() -> None:
    base = _with(["tests/limits.py 1111"])
    assert written_code(base, _with(["tests/limits.py 1111"])) == []
    assert written_code(base, _with([])) == []
    changed = written_code(base, _with(["tests/limits.py 2222"]))
    assert changed == [f"{WROTE_CODE}: tests/limits.py"]
    many = [f"m{i}.py {i}" for i in range(7)]
    assert written_code(_with([]), _with(many))[0].endswith("m4.py ...")
