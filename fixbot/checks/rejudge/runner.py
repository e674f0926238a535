"""fixbot's second judge of one test, in a fresh interpreter: package data, staged read-only into
the sandbox beside nothing of fixbot's, run as `python -I runner.py CHANNEL MODE ...` by the
project's own Python. It imports only the standard library (and, for the pytest mode, the
project's own pytest), and shares nothing with the first judgement's process or its plugin.

    CHANNEL   fd:N (an inherited socket) or unix:PATH (a socket fixbot listens on)
    MODE      plain MODULE FUNCTION FILE LINE PATH...
                  run FILE's own text as MODULE, call FUNCTION (the code defined at LINE)
              unittest MODULE CLASS.METHOD FILE LINE PATH...
              pytest NODEID ... -- PYTEST_ARGS...

Before any of the repository's code runs, it reads one line from the channel: the nonce fixbot
chose for this run (never in argv or the environment, which /proc shows). When the test has
run it writes `NONCE VERDICT` back and ends the process with os._exit, 0 for `passed`, 1 for
anything else; fixbot believes `passed` only from both the line and the exit status.
"""

from __future__ import annotations

import os
import socket
import sys
import traceback
from collections.abc import Sequence
from typing import Any

_exit = os._exit


def _connect(spec: str) -> tuple[socket.socket, str]:
    if spec.startswith("fd:"):
        sock = socket.socket(fileno=int(spec[3:]))
    elif spec.startswith("unix:"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(spec[5:])
    else:
        raise SystemExit("runner: no channel")
    sock.set_inheritable(False)
    sock.settimeout(30)
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(256)
        if not chunk:
            raise SystemExit("runner: no nonce")
        data += chunk
    sock.settimeout(None)
    return sock, data.strip().decode("ascii")


def _paths(paths: Sequence[str]) -> None:
    """Put the repository's folders first on sys.path, as pytest's default import mode does;
    the runner's own folder is never on it."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    for path in reversed(paths):
        sys.path.insert(0, os.path.abspath(path))


def _outcome_of(error: BaseException) -> str:
    """A pytest outcome raised outside pytest (skip, xfail) is not a pass."""
    kind = type(error).__name__
    if kind in ("Skipped", "XFailed", "Failed", "Exit"):
        return kind.lower()
    return "failed"


def _module(module_name: str, file: str) -> dict[str, Any]:
    """The test module run from its own (protected) text into a namespace this runner holds:
    never looked up again through the module object, whose attribute access code can replace."""
    import importlib.util

    package, _, _ = module_name.rpartition(".")
    if package:
        importlib.import_module(package)
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None:
        raise ImportError(f"cannot load {file}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    namespace: dict[str, Any] = module.__dict__
    with open(file, "rb") as handle:
        code = compile(handle.read(), file, "exec", dont_inherit=True)
    exec(code, namespace)  # noqa: S102 - the protected test file's own code, as pytest runs it
    return namespace


def _same_code(function: Any, file: str, line: int) -> str:
    """'' when `function` is the code the test file defines at `line`; why not, else."""
    code = getattr(function, "__code__", None)
    if code is None or code.co_firstlineno != line:
        return f"the test at {file}:{line} was replaced in memory by {function!r}"
    if os.path.abspath(code.co_filename) != os.path.abspath(file):
        return f"the test at {file}:{line} was replaced in memory (its code is elsewhere)"
    return ""


def _plain(
    module_name: str, function_name: str, file: str, line: int, paths: Sequence[str]
) -> tuple[str, str]:
    _paths(paths)
    namespace = _module(module_name, file)
    function = namespace.get(function_name)
    replaced = _same_code(function, file, line)
    if replaced:
        return "error", replaced
    try:
        function()  # type: ignore[misc]
    except BaseException as error:  # a test's failure, whatever it raised
        return _outcome_of(error), traceback.format_exc(limit=8)[-1500:]
    return "passed", ""


def _unittest(
    module_name: str, dotted: str, file: str, line: int, paths: Sequence[str]
) -> tuple[str, str]:
    import unittest

    _paths(paths)
    namespace = _module(module_name, file)
    class_name, _, method = dotted.partition(".")
    cls = namespace.get(class_name)
    if not isinstance(cls, type) or not issubclass(cls, unittest.TestCase):
        return "error", f"{class_name} is not the test file's TestCase class"
    replaced = _same_code(vars(cls).get(method), file, line)
    if replaced:
        return "error", replaced
    suite = unittest.TestSuite([cls(method)])
    result = unittest.TestResult()
    suite.run(result)
    problems = [text for _, text in (*result.errors, *result.failures)]
    if result.testsRun != 1:
        return "error", f"ran {result.testsRun} tests"
    if problems:
        return "failed", problems[0][-1500:]
    if result.skipped or result.expectedFailures or result.unexpectedSuccesses:
        return "skipped", "skipped, an expected failure, or an unexpected success"
    return "passed", ""


class _Watch:
    """What pytest reported for the selected tests, every phase (subtests too)."""

    def __init__(self, wanted: Sequence[str]) -> None:
        self.wanted = set(wanted)
        self.collected: set[str] = set()
        self.failed: list[str] = []
        self.passed: set[str] = set()
        self.other: list[str] = []

    def pytest_collection_finish(self, session: Any) -> None:
        self.collected = {item.nodeid for item in session.items}

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.nodeid not in self.wanted:
            return
        if report.failed:
            self.failed.append(f"{report.nodeid} {report.when}")
        elif report.skipped or hasattr(report, "wasxfail"):
            self.other.append(f"{report.nodeid} {report.when} {report.outcome}")
        elif report.when == "call" and report.passed:
            self.passed.add(report.nodeid)


def _pytest(nodeids: Sequence[str], args: Sequence[str]) -> tuple[str, str]:
    import pytest

    watch = _Watch(nodeids)
    code = pytest.main([*args, *nodeids], plugins=[watch])
    missing = watch.wanted - watch.collected
    if missing:
        return "error", f"not collected: {sorted(missing)[:3]}"
    if watch.failed:
        return "failed", "; ".join(watch.failed[:3])
    if watch.other or watch.passed != watch.wanted:
        return "skipped", "; ".join(watch.other[:3]) or "no passing call"
    return ("passed", "") if int(code) == 0 else ("failed", f"pytest exited {int(code)}")


def main(argv: Sequence[str]) -> None:
    sock, nonce = _connect(argv[0])
    mode, rest = argv[1], argv[2:]
    try:
        if mode in ("plain", "unittest"):
            run = _plain if mode == "plain" else _unittest
            verdict, detail = run(rest[0], rest[1], rest[2], int(rest[3]), rest[4:])
        elif mode == "pytest":
            cut = rest.index("--")
            verdict, detail = _pytest(rest[:cut], rest[cut + 1 :])
        else:
            verdict, detail = "error", f"unknown mode {mode}"
    except BaseException:  # the import itself failed, or the harness did
        verdict, detail = "error", traceback.format_exc(limit=8)[-1500:]
    line = f"{nonce} {verdict} {detail}".replace("\n", "\\n")[:4000] + "\n"
    try:
        sock.sendall(line.encode("utf-8", "replace"))
        sock.close()
    except OSError:
        pass
    sys.stdout.flush()
    sys.stderr.flush()
    _exit(0 if verdict == "passed" else 1)


if __name__ == "__main__":
    main(sys.argv[1:])
