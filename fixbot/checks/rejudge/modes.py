"""How each decisive test is judged the second time, read from the protected test file (the
snapshot's, never the candidate's) and the protected pytest configuration, without running any
of it.

    plain      a module-level `def test_x():` that takes nothing and has no decorator, in a module
               with no fixture, no pytest marker and no module setup, under no conftest.py: the
               runner imports the module as pytest would (its rootdir-relative package, the
               configuration's `pythonpath`) and calls the function; no pytest at all
    unittest   a method of a `unittest.TestCase` class (in the same file's class tree), likewise
               undecorated and under no conftest.py: run by unittest's own loader and result
               (subTest failures and skips counted, as unittest counts them)
    pytest     anything else (fixtures, parameters, markers, conftest.py, doctests, an import
               mode or plugin the configuration sets): a separate pytest session of the project's
               own pytest, without fixbot's plugin, whose verdict is its own exit status

A plan the file cannot support (the function is not there, the file is not Python) falls back
to `pytest`: the second judgement never guesses more leniently than pytest itself.
"""

from __future__ import annotations

import ast
import configparser
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

Mode = Literal["plain", "unittest", "pytest"]
Read = Callable[[str], str | None]  # a repository path -> its text in the snapshot, or None

# Configuration that changes how pytest imports or selects a test: judged by pytest only.
_PYTEST_ONLY_OPTIONS = ("--import-mode", "-p", "--rootdir", "-c", "--confcutdir", "--pyargs")
_SETUP_NAMES = {"setup_module", "teardown_module", "setup_function", "teardown_function"}
_SETUP_NAMES |= {"setUpModule", "tearDownModule", "pytestmark", "pytest_plugins"}
_TESTCASES = {"TestCase", "IsolatedAsyncioTestCase"}


@dataclass(frozen=True)
class Plan:
    test: str  # the result's id (JUnit-style)
    nodeid: str  # pytest's
    mode: Mode
    module: str = ""  # the dotted name the runner imports (plain, unittest)
    name: str = ""  # the function, or Class.method
    paths: tuple[str, ...] = ()  # repository folders put first on sys.path, in order
    file: str = ""  # the test file, whose own text the runner executes (plain, unittest)
    line: int = 0  # where the test function's `def` is: what it calls must be that code
    why: str = ""  # why it is judged by pytest (for the evidence)


def plan(test: str, nodeid: str, read: Read, *, cwd_on_path: bool) -> Plan:
    """How `nodeid` (`tests/test_x.py::test_y`, `tests/test_x.py::C::test_m`) is judged.
    `cwd_on_path`: the check runs `python -m pytest`, which puts the working folder first."""
    file, _, rest = nodeid.partition("::")
    names = rest.split("::") if rest else []

    def by_pytest(why: str) -> Plan:
        return Plan(test, nodeid, "pytest", why=why)

    if "[" in nodeid or not file.endswith(".py") or not names or len(names) > 2:
        return by_pytest("a parametrized, nested or non-Python test")
    source = read(file)
    if source is None:
        return by_pytest("its file is not in the snapshot")
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return by_pytest("its file does not parse")
    conftest = _conftest(file, read)
    if conftest:
        return by_pytest(f"{conftest} may change how it runs")
    config = _config(file, read)
    if config.pytest_only:
        return by_pytest(f"{config.file} sets {config.pytest_only}")
    if _module_setup(tree):
        return by_pytest("its module has fixtures, markers or module setup")
    module, base = _module_name(file, read)
    paths = (*config.pythonpath, *([base] if base else ["."]), *(["."] if cwd_on_path else []))
    if len(names) == 1:
        function = _top_function(tree, names[0])
        if function is None or not _plain(function):
            return by_pytest("it takes fixtures, is decorated or is not a plain function")
        where = tuple(dict.fromkeys(paths))
        return Plan(test, nodeid, "plain", module, names[0], where, file, function.lineno)
    cls, method = names
    line = _testcase_method(tree, cls, method)
    if not line:
        return by_pytest("it is not an undecorated method of a unittest.TestCase class")
    where = tuple(dict.fromkeys(paths))
    return Plan(test, nodeid, "unittest", module, f"{cls}.{method}", where, file, line)


def _conftest(file: str, read: Read) -> str:
    """A conftest.py pytest would load for this file (in its folder or any above it)."""
    folder = PurePosixPath(file).parent
    for parent in (folder, *folder.parents):
        candidate = str(parent / "conftest.py") if str(parent) != "." else "conftest.py"
        if read(candidate) is not None:
            return candidate
    return ""


@dataclass(frozen=True)
class _Config:
    file: str = ""
    pythonpath: tuple[str, ...] = ()
    pytest_only: str = ""  # the setting that makes it pytest's alone to judge


def _config(file: str, read: Read) -> _Config:
    """The pytest configuration that applies to this file: the first file, from its folder
    up, that holds a pytest section, in pytest's own order of names."""
    folder = PurePosixPath(file).parent
    for parent in (folder, *folder.parents):
        prefix = "" if str(parent) == "." else f"{parent}/"
        for name in ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"):
            text = read(prefix + name)
            section = _section(name, text) if text is not None else None
            if section is not None:
                return _settings(prefix + name, prefix, section)
    return _Config()


def _section(name: str, text: str) -> dict[str, object] | None:
    if name == "pyproject.toml":
        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, ValueError):
            return {"unreadable": True}
        tool = data.get("tool", {})
        found = tool.get("pytest", {}) if isinstance(tool, dict) else {}
        if not isinstance(found, dict) or not found:
            return None
        options = found.get("ini_options", found)
        return options if isinstance(options, dict) else {"unreadable": True}
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return {"unreadable": True}
    wanted = {"setup.cfg": "tool:pytest"}.get(name, "pytest")
    if not parser.has_section(wanted):
        return {} if name in ("pytest.ini", ".pytest.ini") else None  # pytest.ini always counts
    return dict(parser.items(wanted))


def _settings(file: str, prefix: str, section: dict[str, object]) -> _Config:
    if section.get("unreadable"):
        return _Config(file, (), "an unreadable configuration")
    words = _words(section.get("addopts", ""))
    for word in words:
        if word.split("=", 1)[0] in _PYTEST_ONLY_OPTIONS or word.startswith("-p"):
            return _Config(file, (), f"addopts {word}")
    if section.get("usefixtures"):
        return _Config(file, (), "usefixtures")
    entries = _words(section.get("pythonpath", ""))
    paths = tuple(str(PurePosixPath(prefix + e)) if prefix else e for e in entries)
    return _Config(file, paths)


def _words(value: object) -> list[str]:
    """An ini setting's words: a string split on whitespace, or a TOML list."""
    if isinstance(value, str):
        return value.split()
    return [str(word) for word in value] if isinstance(value, list) else []


def _module_setup(tree: ast.Module) -> bool:
    """Module-level fixtures, pytest markers or setup that a plain call would not run."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (
            node.name in _SETUP_NAMES or any(_is_fixture(d) for d in node.decorator_list)
        ):
            return True
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id in _SETUP_NAMES for t in targets):
            return True
    return False


def _is_fixture(decorator: ast.expr) -> bool:
    text = ast.unparse(decorator)
    return "fixture" in text


def _top_function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    found = None
    for node in tree.body:  # the last definition wins, as at import
        defines = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        if defines and getattr(node, "name", None) == name:
            found = node if isinstance(node, ast.FunctionDef) else None
    return found


def _plain(function: ast.FunctionDef) -> bool:
    args = function.args
    takes = args.posonlyargs or args.args or args.kwonlyargs or args.vararg or args.kwarg
    return not takes and not function.decorator_list


def _testcase_method(tree: ast.Module, cls: str, method: str) -> int:
    """The line of the method's `def` when it is an undecorated method of a TestCase class of
    this file; 0 otherwise (inherited from a base, decorated: pytest's to judge)."""
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    node = classes.get(cls)
    if node is None or node.decorator_list or not _is_testcase(node, classes, depth=0):
        return 0
    found = [i for i in node.body if isinstance(i, ast.FunctionDef) and i.name == method]
    return found[-1].lineno if found and not found[-1].decorator_list else 0


def _is_testcase(node: ast.ClassDef, classes: dict[str, ast.ClassDef], depth: int) -> bool:
    if depth > 10:
        return False
    for base in node.bases:
        name = ast.unparse(base)
        if name.rsplit(".", 1)[-1] in _TESTCASES:
            return True
        if name in classes and _is_testcase(classes[name], classes, depth + 1):
            return True
    return False


def _module_name(file: str, read: Read) -> tuple[str, str]:
    """(the dotted name pytest's default import mode gives the file, the folder it puts on
    sys.path): the first folder up from the file without an __init__.py is the base."""
    path = PurePosixPath(file)
    parts = [path.stem]
    folder = path.parent
    while str(folder) != "." and read(str(folder / "__init__.py")) is not None:
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts), "" if str(folder) == "." else str(folder)


def plans(tests: Sequence[tuple[str, str]], read: Read, *, cwd_on_path: bool) -> list[Plan]:
    return [plan(test, nodeid, read, cwd_on_path=cwd_on_path) for test, nodeid in tests]
