"""fixbot's second judge of one test, in a fresh interpreter: package data, staged read-only into
the sandbox beside nothing of fixbot's, run as `python -I runner.py CHANNEL MODE ...` by the
project's own Python. It imports only the standard library (and, for the pytest mode, the
project's own pytest), and shares nothing with the first judgement's process or its plugin.

    CHANNEL   fd:N (an inherited socket) or unix:PATH (a socket fixbot listens on)
    MODE      plain MODULE FUNCTION FILE LINE PATH...
                  run FILE's own text as MODULE, call FUNCTION (the code defined at LINE)
              unittest MODULE CLASS.METHOD FILE LINE PATH...
              pytest NODEID ... -- PYTEST_ARGS...

The test runs in a forked child that closes fixbot's socket before any of the repository's
code runs: it never holds the nonce, and all it can say is its exit status (0 only when the
test passed, as the child saw it) and a line of detail. The parent, which runs none of the
repository's code and is not readable by the sandbox's other processes, waits for the child,
then reads the nonce fixbot chose for this run (never in argv or the environment, which /proc
shows) and writes `NONCE VERDICT` back; fixbot believes `passed` only from both the line and the
parent's exit status. So code under test that knows it is judged can at most end its own
process with status 0 before the test has run: only an explicit end of the process does that
(os._exit, an exec), which the static screen refuses.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import traceback
from collections.abc import Sequence
from typing import Any

_exit = os._exit
CHILD_CAP = 4000  # bytes of the test's process's line (under a pipe's buffer: it never blocks)


def _connect(spec: str) -> socket.socket:
    """fixbot's socket for this run, connected; the nonce on it is read only once the test has
    run, in the parent, which runs none of the repository's code."""
    if spec.startswith("fd:"):
        sock = socket.socket(fileno=int(spec[3:]))
    elif spec.startswith("unix:"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(spec[5:])
    else:
        raise SystemExit("runner: no channel")
    sock.set_inheritable(False)
    return sock


def _nonce(sock: socket.socket) -> str:
    sock.settimeout(30)
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(256)
        if not chunk:
            raise SystemExit("runner: no nonce")
        data += chunk
    sock.settimeout(None)
    return data.strip().decode("ascii")


def _undumpable() -> None:
    """No other process of the sandbox's user may read this one's memory (/proc/PID/mem):
    what the test leaves running after it cannot read the nonce the parent reads last."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):
        pass


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


def _judge(mode: str, rest: Sequence[str]) -> tuple[str, str]:
    try:
        if mode in ("plain", "unittest"):
            run = _plain if mode == "plain" else _unittest
            return run(rest[0], rest[1], rest[2], int(rest[3]), rest[4:])
        if mode == "pytest":
            cut = list(rest).index("--")
            return _pytest(rest[:cut], rest[cut + 1 :])
        return "error", f"unknown mode {mode}"
    except BaseException:  # the import itself failed, or the harness did
        return "error", traceback.format_exc(limit=8)[-1500:]


def main(argv: Sequence[str]) -> None:
    """The test runs in a child process that never holds fixbot's socket or the nonce: all it
    can say is its exit status (0 only when the test passed) and a line of detail. This
    process, which runs none of the repository's code, waits for it, then reads the nonce and
    writes `NONCE VERDICT` to fixbot."""
    sock = _connect(argv[0])
    _undumpable()
    mode, rest = argv[1], argv[2:]
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        sock.close()
        os.close(read_end)
        verdict, detail = _judge(mode, rest)
        with contextlib.suppress(OSError):
            os.write(write_end, f"{verdict} {detail}".encode("utf-8", "replace")[:CHILD_CAP])
        sys.stdout.flush()
        sys.stderr.flush()
        _exit(0 if verdict == "passed" else 1)
    os.close(write_end)
    _, status = os.waitpid(child, 0)
    os.set_blocking(read_end, False)
    said = ""
    with contextlib.suppress(OSError):
        said = os.read(read_end, CHILD_CAP).decode("utf-8", "replace")
    verdict, _, detail = said.partition(" ")
    code = os.waitstatus_to_exitcode(status)
    if verdict == "passed" and code != 0:
        verdict, detail = "error", f"the test's process said passed but exited {code}"
    elif code == 0 and verdict != "passed":
        verdict, detail = "error", f"the test's process exited 0 but said {said[:200]!r}"
    elif not verdict:
        verdict, detail = "error", f"the test's process exited {code} and said nothing"
    line = f"{_nonce(sock)} {verdict} {detail}".replace("\n", "\\n")[:4000] + "\n"
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
