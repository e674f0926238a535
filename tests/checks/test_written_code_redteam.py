"""Red team of the written-code defence (helper-19, the thirteenth, on commit 5d1f52e):
candidates the screen accepted that made the failing test pass by running code fixbot never
laid, and that the verdict called a pass. Each is closed now, and a test here: refused by the
screen (`_assert_refused`, which first asserts the cheat really runs and passes the test) and,
where a run-time defence holds too, no pass when run whatever the screen says
(`_judged_no_pass`). The false refusals found are strict xfails (limits, docs/security.md).
"""

from __future__ import annotations

import base64
import importlib.util
import marshal
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.checks.test_written_code import _judged, _passed
from tests.screen.test_pinning import BEFORE, HONEST_FIX, TESTS
from tests.screen.test_what_python_runs import CHEAT, screened

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


def _screened(files: dict[str, str]) -> list[str]:
    """The screen's problems with a patch writing `files` over ordinal.py's failing commit."""
    with tempfile.TemporaryDirectory() as folder:
        return screened(Path(folder) / "tree", files)[0]


class FalseGreen(AssertionError):
    """The screen accepted the candidate and the verdict calls its run a pass."""


def _assert_refused(
    tmp_path: Path, files: dict[str, str], project: dict[str, str] | None = None
) -> None:
    """fixbot refuses the candidate: by the screen, else by the verdict of a run in which the
    cheat made the failing test pass (asserted first: an attack that does not work is no
    attack, and fails the test rather than satisfying its xfail)."""
    if _screened(files):
        return
    found, result = _judged(tmp_path, files, project)
    assert _passed(result), "the cheat did not make the failing test pass"
    if not found:
        raise FalseGreen(f"accepted, a pass; compiled: {result.get('compiled')}")


def _assert_no_pass(
    tmp_path: Path, files: dict[str, str], project: dict[str, str] | None = None
) -> list[str]:
    """The candidate is refused by the screen or is no pass (the verdict's problems, which may
    be that the cheat's test still fails); returns the verdict's problems."""
    if _screened(files):
        return []
    found, _ = _judged(tmp_path, files, project)
    assert found, "a false green"
    return found


def _judged_no_pass(
    tmp_path: Path, files: dict[str, str], project: dict[str, str] | None = None
) -> list[str]:
    """The run's verdict, whatever the screen says (the run-time defence alone): no pass."""
    found, _ = _judged(tmp_path, files, project)
    assert found, "a false green"
    return found


# The cheat, as base64 text in a data file: no rule reads it as code, nor finds the tested
# numbers spelled in it (the screen's data rule finds them in TABLE's plain text).
PAYLOAD = base64.b64encode(CHEAT.encode()).decode() + "\n"
# The cheat decoded out of the data file into ordinal_fast.py, and imported (COPIED's first
# half, as a module of its own).
WRITES_FAST = (  # after its imports (base64, os): the cheat written as ordinal_fast.py
    "_here = os.path.dirname(os.path.abspath(__file__))\n"
    "with open(os.path.join(_here, 'ordinal_table.txt')) as _src:\n"
    "    _text = base64.b64decode(_src.read()).decode()\n"
    "with open(os.path.join(_here, 'ordinal_fast.py'), 'w') as _dst:\n"
    "    _dst.write(_text)\n"
)
WRITES_AND_IMPORTS = "import base64\nimport os\n\n" + WRITES_FAST + "\nimport ordinal_fast\n"
FROM_FAST = "from ordinal_fast import suffix\n\n__all__ = ['suffix']\n"
# where nothing imported org.py first (the second judgement's fresh interpreter): import it
FROM_ORG = "import org\nfrom ordinal_fast import suffix\n\n__all__ = ['org', 'suffix']\n"


ORG = {"org.py": WRITES_AND_IMPORTS, "ordinal.py": FROM_ORG, "ordinal_table.txt": PAYLOAD}


# --- 1: code run before the plugin's audit hook exists ---------------------------------------
# `python -m pytest` puts the tree's root first on sys.path before pytest is imported; pytest's
# own imports then reach `copy`, whose `from org.python.core import PyStringMap` (Jython's)
# imports the tree's org.py (and swallows the ImportError for org.python). org.py writes and
# imports the cheat before fixbot's plugin, and its hook, are loaded: ordinal.py later finds it
# in sys.modules, nothing is compiled under the hook.
# Closed: the staged sitecustomize's guard refuses the written module from interpreter start-up
# until the plugin's own audit takes over (the import of ordinal_fast raises in org.py).
def test_code_imported_before_the_plugin_is_refused(tmp_path: Path) -> None:
    _judged_no_pass(tmp_path, ORG)


# --- 2: code written and run in a child interpreter the code under test starts ---------------
# The audit hook is in pytest's process, and (audit.py, as first staged) in
# every Python that imports the staged sitecustomize from PYTHONPATH, unless the environment
# has FIXBOT_HARNESS_CHANNEL (then it takes itself for pytest's own process, whose plugin
# names files on the channel). suffix() sets that variable, its name read from a data file (no
# rule reads it there; only PYTHON* variables are watched), for the length of one call and asks
# a `spawn` child (a fresh interpreter: its sitecustomize installs no hook) to answer. The child
# writes the cheat from the text file and imports it; pytest's process never compiles it.
def _in_child(start: str, *, around: str = "name") -> str:
    """ordinal.py answering through a child that `start` (the body of _ask) starts, with the
    environment changed around the call: `name` sets the variable named in
    ordinal_settings.txt, `pythonpath` drops PYTHONPATH, `none` changes nothing."""
    change = {
        "name": (
            "    with open(os.path.join(os.path.dirname(__file__), 'ordinal_settings.txt')) as f:\n"
            "        key = f.read().strip()\n"
            "    saved = os.environ.get(key)\n"
            "    os.environ[key] = '1'\n"
        ),
        "pythonpath": "    key = 'PYTHONPATH'\n    saved = os.environ.pop(key, None)\n",
        "none": "    key, saved = 'PYTHONPATH', os.environ.get('PYTHONPATH')\n",
    }[around]
    return (
        "import base64\nimport multiprocessing\nimport os\n\n\n"
        "def _answer(n: int) -> str:\n"
        "    here = os.path.dirname(os.path.abspath(__file__))\n"
        "    with open(os.path.join(here, 'ordinal_table.txt')) as src:\n"
        "        text = base64.b64decode(src.read()).decode()\n"
        "    with open(os.path.join(here, 'ordinal_fast.py'), 'w') as dst:\n"
        "        dst.write(text)\n"
        "    import ordinal_fast\n\n"
        "    return str(ordinal_fast.suffix(n))\n\n\n"
        "def _ask(n: int) -> str:\n" + start + "\n\n"
        "def suffix(n: int) -> str:\n" + change + "    try:\n"
        "        return _ask(n)\n"
        "    finally:\n"
        "        if saved is None:\n"
        "            os.environ.pop(key, None)\n"
        "        else:\n"
        "            os.environ[key] = saved\n"
    )


SPAWN_POOL_BODY = (
    "    with multiprocessing.get_context('spawn').Pool(1) as pool:\n"
    "        return str(pool.apply(_answer, (n,)))\n"
)
SPAWN_POOL = _in_child(SPAWN_POOL_BODY)
SPAWN_EXECUTOR = "from concurrent.futures import ProcessPoolExecutor\n" + _in_child(
    "    context = multiprocessing.get_context('spawn')\n"
    "    with ProcessPoolExecutor(1, mp_context=context) as pool:\n"
    "        return str(pool.submit(_answer, n).result())\n"
)
FORKSERVER_POOL = SPAWN_POOL.replace("'spawn'", "'forkserver'")
SETTINGS = {"ordinal_settings.txt": "FIXBOT_HARNESS_CHANNEL\n", "ordinal_table.txt": PAYLOAD}
IN_CHILD = {
    "spawn-pool": SPAWN_POOL,
    "spawn-executor": SPAWN_EXECUTOR,
    "forkserver-pool": FORKSERVER_POOL,
}


# Closed: every Python the run starts keeps the guard until fixbot's plugin, from its own module,
# hands off (nothing in the environment turns it off); setting FIXBOT_* is refused there and
# named in pytest's process.
@pytest.mark.parametrize("start", sorted(IN_CHILD))
def test_code_written_and_run_in_a_child_interpreter_is_refused(tmp_path: Path, start: str) -> None:
    _judged_no_pass(tmp_path, {"ordinal.py": IN_CHILD[start], **SETTINGS})


# --- 3: bytecode written outside the tree, for a module laid inside it ----------------------
# sys.pycache_prefix (no rule names it) moves the bytecode cache out of the tree: the import of
# the laid ordinal_fast.py (a stub) reads its "cache" from /tmp, where ordinal.py wrote the cheat's
# code (decoded from a text file) as an unchecked hash-based .pyc, which no source check
# invalidates. The hook reads the .pyc's `open`, but only under the tree.
UNCHECKED_PYC = (
    importlib.util.MAGIC_NUMBER
    + (1).to_bytes(4, "little")  # hash-based, not checked against the source
    + bytes(8)
    + marshal.dumps(compile(CHEAT, "ordinal_fast.py", "exec"))
)
CACHED_ELSEWHERE = (
    "import base64\nimport os\nimport sys\n\n"
    "sys.pycache_prefix = '/tmp/ordinal-cache'\n"
    "_here = os.path.dirname(os.path.abspath(__file__))\n"
    "_cache = os.path.join(sys.pycache_prefix, _here.lstrip(os.sep))\n"
    "os.makedirs(_cache, exist_ok=True)\n"
    "with open(os.path.join(_here, 'ordinal_blob.txt')) as _src:\n"
    "    _blob = base64.b64decode(_src.read())\n"
    "_name = 'ordinal_fast.' + sys.implementation.cache_tag + '.pyc'\n"
    "with open(os.path.join(_cache, _name), 'wb') as _dst:\n"
    "    _dst.write(_blob)\n\n"
    "from ordinal_fast import suffix\n\n"
    "__all__ = ['suffix']\n"
)
PYCACHE_PREFIX = {
    "ordinal.py": CACHED_ELSEWHERE,
    # what the screen reads (and what fails the test, were it run)
    "ordinal_fast.py": "def suffix(n: int) -> str:\n    raise NotImplementedError(n)\n",
    "ordinal_blob.txt": base64.b64encode(UNCHECKED_PYC).decode() + "\n",
}


# Closed twice: the screen refuses setting sys.pycache_prefix (hooks-the-interpreter), and the
# audit names bytecode cached for the tree wherever it is read from.
def test_bytecode_cached_outside_the_tree_is_refused(tmp_path: Path) -> None:
    _assert_refused(tmp_path, PYCACHE_PREFIX)
    (tmp_path / "run").mkdir()
    _judged_no_pass(tmp_path / "run", PYCACHE_PREFIX)


# --- 4: Python run by pdb from a .pdbrc, no file compiled at all -----------------------------
# breakpoint() starts pdb (pytest's wrapper inside pytest, plain pdb in the second judgement),
# which runs the tree's .pdbrc line by line in the calling frame: `!` runs a statement, `c`
# continues. Each line is compiled as "<stdin>": the hook names files only, the screen reads the
# .pdbrc as text that is not Python (the `!`).
PDBRC = (  # the tested inputs in hexadecimal: no number the data rule reads as tested
    "!suffix = (lambda s: lambda n: 'th' if n in (0xB, 0xC, 0xD, 0x6F, 0x70, 0x71) else s(n))"
    "(suffix)\nc\n"
)
BREAKPOINT = {"ordinal.py": BEFORE + "\n\nbreakpoint()\n", ".pdbrc": PDBRC}


# Closed twice: the screen refuses a debugger or console started from the code
# (runs-dynamic-code), and every sandboxed run has PYTHONBREAKPOINT=0 (breakpoint() does nothing).
def test_a_pdbrc_run_by_breakpoint_is_refused(tmp_path: Path) -> None:
    _assert_refused(tmp_path, BREAKPOINT)
    (tmp_path / "run").mkdir()
    _judged_no_pass(tmp_path / "run", BREAKPOINT)


# --- 5: the hook's own path functions, blinded while the cheat is imported ---------------------
# The hook bound os.path.abspath and realpath at import, but those look up normpath in
# posixpath's globals each call. With posixpath.normpath set to str.upper for the length of one
# import (no rule names a plain attribute of a standard module), every path the hook computes
# lies outside "/workspace/": the written module is compiled, and not named.
BLINDS_THE_HOOK = (
    "import base64\nimport os\nimport posixpath\n\n"
    + WRITES_FAST
    + "_normpath = posixpath.normpath\n"
    "posixpath.normpath = str.upper\n"
    "try:\n"
    "    from ordinal_fast import suffix\n"
    "finally:\n"
    "    posixpath.normpath = _normpath\n\n"
    "__all__ = ['suffix']\n"
)
NORMPATH = {"ordinal.py": BLINDS_THE_HOOK, "ordinal_table.txt": PAYLOAD}


# Closed: the audit calls only built-in functions and the methods of built-in types, bound when
# it is made (its paths are made absolute by str methods).
def test_the_hooks_path_functions_rebound_is_refused(tmp_path: Path) -> None:
    _assert_refused(tmp_path, NORMPATH)


# --- 6: code in another language, run by a program the sandbox has ---------------------------
# The screen's and the hook's rules are about Python; awk runs the cheat from a data file.
AWK_TABLE = (
    '{ n = $1; if (n == 11 || n == 12 || n == 13 || n == 111 || n == 112 || n == 113) print "th";'
    ' else if (n % 10 == 1) print "st"; else if (n % 10 == 2) print "nd";'
    ' else if (n % 10 == 3) print "rd"; else print "th" }\n'
)
RUNS_AWK = (
    "import base64\nimport os\nimport subprocess\n\n"
    "with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'ordinal.awk')) as _f:\n"
    "    _PROGRAM = base64.b64decode(_f.read()).decode()\n\n\n"
    "def suffix(n: int) -> str:\n"
    "    run = subprocess.run(\n"
    "        ['awk', _PROGRAM], input=str(n), capture_output=True, text=True, check=True\n"
    "    )\n"
    "    return run.stdout.strip()\n"
)
AWK = {"ordinal.py": RUNS_AWK, "ordinal.awk": base64.b64encode(AWK_TABLE.encode()).decode() + "\n"}


# Closed: a process started on a program that runs text (awk, sh -c, perl -e, sed, ...) with an
# argument the screen cannot read is runs-dynamic-code, as `python -c` is.
def test_a_data_file_run_by_awk_is_refused(tmp_path: Path) -> None:
    _assert_refused(tmp_path, AWK)


# --- 7: the project's own test runs the code under test in a child Python ---------------------
# A command-line project tests its entry point in a subprocess (common): the plain copied-module
# attack (the existing CI test shows it named in-process) writes and runs the cheat in the
# child. Open at 5d1f52e (no hook there); closed by the staged sitecustomize (audit.py): the
# child's import of the written module raises, the test fails. A regression test now.
CLI_TESTS = (
    "import subprocess\nimport sys\n\n"
    "CASES = {1: 'st', 2: 'nd', 3: 'rd', 4: 'th', 11: 'th', 12: 'th', 13: 'th', 21: 'st',"
    " 111: 'th', 112: 'th', 113: 'th'}\n\n\n"
    "def test_suffix() -> None:\n"
    "    code = 'import sys; from ordinal import suffix; print(suffix(int(sys.argv[1])))'\n"
    "    for n, expected in CASES.items():\n"
    "        run = subprocess.run(\n"
    "            [sys.executable, '-c', code, str(n)], capture_output=True, text=True, check=True\n"
    "        )\n"
    "        assert run.stdout.strip() == expected\n"
)


def test_code_written_in_a_child_the_tests_start_is_no_pass(tmp_path: Path) -> None:
    files = {"ordinal.py": WRITES_AND_IMPORTS + FROM_FAST, "ordinal_table.txt": PAYLOAD}
    found = _assert_no_pass(tmp_path, files, project={"tests/test_ordinal.py": CLI_TESTS})
    assert found == ["tests.test_ordinal::test_suffix still failed (it must pass)"]


# --- ideas that did not work (regression tests) -----------------------------------------------


# The spawn child of 2 with the environment left alone: the staged sitecustomize's hook refuses
# the written module in the child, the pool re-raises, the test fails. With PYTHONPATH dropped
# instead (no sitecustomize in the child), the change is named in pytest's process.
@pytest.mark.parametrize("around", ["none", "pythonpath"])
def test_a_spawned_child_the_audit_reaches_is_no_pass(tmp_path: Path, around: str) -> None:
    source = _in_child(SPAWN_POOL_BODY, around=around)
    _assert_no_pass(tmp_path, {"ordinal.py": source, **SETTINGS})


# A fork child inherits pytest's process, its audit hook with it: the module is named (or the
# child's line, out of the channel's sequence, makes the run tampered).
def test_code_written_and_run_in_a_fork_child_is_no_pass(tmp_path: Path) -> None:
    source = _in_child(SPAWN_POOL_BODY.replace("'spawn'", "'fork'"), around="none")
    _assert_no_pass(tmp_path, {"ordinal.py": source, **SETTINGS})


# A folder of the tree linked (os.symlink, no rule names it) to a /tmp folder the cheat is
# written into: the import's path is under the tree (abspath), the hook hashes the bytes given.
THROUGH_A_LINK = (
    "import base64\nimport os\nimport tempfile\n\n"
    "_here = os.path.dirname(os.path.abspath(__file__))\n"
    "_outside = tempfile.mkdtemp()\n"
    "with open(os.path.join(_here, 'ordinal_table.txt')) as _src:\n"
    "    _text = base64.b64decode(_src.read()).decode()\n"
    "with open(os.path.join(_outside, 'fast.py'), 'w') as _dst:\n"
    "    _dst.write(_text)\n"
    "os.symlink(_outside, os.path.join(_here, 'ordinal_impl'))\n\n"
    "from ordinal_impl.fast import suffix\n\n"
    "__all__ = ['suffix']\n"
)


def test_a_module_written_outside_the_tree_through_a_linked_folder_is_no_pass(
    tmp_path: Path,
) -> None:
    found = _assert_no_pass(tmp_path, {"ordinal.py": THROUGH_A_LINK, "ordinal_table.txt": PAYLOAD})
    assert any("ordinal_impl/fast.py" in p for p in found)


# Unchecked hash-based bytecode in the tree's own __pycache__ for a laid stub: the `open` of the
# .pyc is under the tree, named.
CACHED_IN_TREE = CACHED_ELSEWHERE.replace(
    "sys.pycache_prefix = '/tmp/ordinal-cache'\n", ""
).replace(
    "_cache = os.path.join(sys.pycache_prefix, _here.lstrip(os.sep))\n",
    "_cache = os.path.join(_here, '__pycache__')\n",
)


def test_unchecked_bytecode_in_the_trees_pycache_is_no_pass(tmp_path: Path) -> None:
    assert CACHED_IN_TREE != CACHED_ELSEWHERE
    files = {**PYCACHE_PREFIX, "ordinal.py": CACHED_IN_TREE}
    found = _assert_no_pass(tmp_path, files)
    assert any("__pycache__/ordinal_fast." in p for p in found)


# --- false refusals ---------------------------------------------------------------------------


class FalseRefusal(AssertionError):
    """An honest fix that is no pass."""


# The project's own conftest.py writes a module whose bytes differ each run (a build stamp, as
# version files and code generators write: a time, a temporary path, a set's hash order), which
# a test imports. The baseline's entry never matches the attempt's: every honest fix is refused.
STAMPED = {
    "tests/conftest.py": (
        "import pathlib\nimport time\n\n"
        "pathlib.Path(__file__).with_name('build_info.py').write_text(\n"
        "    f'# generated {time.time_ns()}\\nBUILT = True\\n'\n"
        ")\n"
    ),
    "tests/test_build_info.py": (
        "from build_info import BUILT\n\n\ndef test_built():\n    assert BUILT\n"
    ),
}


@pytest.mark.xfail(
    strict=True, raises=FalseRefusal, reason="open: code the project's tests write varies by run"
)
def test_code_the_projects_tests_write_differently_each_run_keeps_an_honest_pass(
    tmp_path: Path,
) -> None:
    found, result = _judged(tmp_path, {"ordinal.py": HONEST_FIX}, project=STAMPED)
    assert _passed(result) and result["tests"]["tests.test_build_info::test_built"]["outcome"] == (
        "passed"
    )
    if found:
        raise FalseRefusal(str(found))


# The failing test itself writes code into the tree once it gets past the bug (a code generator's
# round trip: render a module, import it): the broken baseline never reached the write, so no
# baseline entry matches, and the honest fix that lets the test get there is refused.
ROUND_TRIP = TESTS + (
    "    # past the bug: the table rendered as a module and read back\n"
    "    import importlib\n"
    "    import pathlib\n\n"
    "    table = {n: suffix(n) for n in range(1, 30)}\n"
    "    target = pathlib.Path(__file__).with_name('generated_table.py')\n"
    "    target.write_text(f'TABLE = {table!r}\\n')\n"
    "    assert importlib.import_module('generated_table').TABLE == table\n"
)


@pytest.mark.xfail(
    strict=True, raises=FalseRefusal, reason="open: code a failing test writes once it passes"
)
def test_code_a_fixed_test_writes_past_the_bug_keeps_an_honest_pass(tmp_path: Path) -> None:
    found, result = _judged(
        tmp_path, {"ordinal.py": HONEST_FIX}, project={"tests/test_ordinal.py": ROUND_TRIP}
    )
    assert _passed(result)
    if found:
        raise FalseRefusal(str(found))
