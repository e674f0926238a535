"""fixbot's own pytest plugin: per-test timeouts, and a report channel the tests cannot rewrite.

fixbot copies this file into a fresh read-only folder under a random module name and loads it
with `-p <name>` (that folder on PYTHONPATH), whatever the repository configures and with
PYTEST_DISABLE_PLUGIN_AUTOLOAD=1. It runs inside the sandbox, under the repository's own Python
environment and pytest (7 or newer), so it imports nothing but the standard library and pytest.

Settings come from the environment, read once at import (before any conftest.py is imported):

    FIXBOT_HARNESS_CHANNEL  "fd:N" (an inherited pipe) or "unix:PATH" (a socket fixbot listens
                            on, for backends that cannot pass a descriptor); unset: no channel
    FIXBOT_HARNESS_RUN      the run's token: every line carries it, the canaries are named by it
    FIXBOT_HARNESS_TIMEOUT  seconds each phase (setup, call, teardown) of a test may take; 0: none
    FIXBOT_HARNESS_GRACE    seconds between the escalation steps of a timeout

The channel carries one JSON object per line, each with the run token and a sequence number:
hello, collected (the node ids, chunked), collection, start (before each test), result (after
each test's teardown: one final outcome, message and detail, capped), collect (a collector that
failed or was skipped), hung (a test that would not stop), integrity (what the machinery check
found) and finish (the exit status and pytest's own tallies). fixbot reads it outside the
sandbox and cross-checks it against the exit status and the terminal summary.

A test that runs past the timeout is interrupted by SIGALRM: the handler records the stack where
the test was and raises `HarnessTimeout` (a BaseException) in the main thread, which pytest reports
as the test's failure; the suite goes on. One that swallows it and keeps running is stopped at
the second alarm (timeout + grace): its result and stack go on the channel, then `os._exit(86)`.
One stuck in code that never returns to the interpreter (a C loop) is stopped by faulthandler's
watchdog thread (timeout + 2 x grace), which needs no GIL: it writes every thread's stack on the
channel as plain text and exits. fixbot then runs the suite again without the hung test.
"""

from __future__ import annotations

import builtins
import faulthandler
import importlib.util
import json
import os
import secrets
import shlex
import signal
import socket
import sys
import sysconfig
import threading
import time
import traceback
import types
from collections.abc import Generator, Iterable, Iterator
from typing import Any

import _pytest.fixtures
import _pytest.main
import _pytest.nodes
import _pytest.outcomes
import _pytest.python
import _pytest.reports
import _pytest.runner
import _pytest.skipping
import _pytest.terminal
import _pytest.unittest
import pluggy
import pytest

PROTOCOL = 1
HUNG_EXIT = 86  # the process was ended by this plugin: a test would not stop
MESSAGE_CAP = 600
DETAIL_CAP = 4000
STACK_CAP = 2500
IDS_PER_LINE = 200
MIN_LIMIT = 1.0  # seconds: the shortest a phase's limit becomes once the hang budget is spent
CATEGORIES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")

# What the plugin itself calls is bound here, at import: code that later replaces os.write or
# json's encoder reaches neither the channel nor the exit.
_write = os.write
_exit = os._exit
_monotonic = time.monotonic
_setitimer = signal.setitimer
_set_handler = signal.signal
_dump_later = faulthandler.dump_traceback_later
_cancel_dump = faulthandler.cancel_dump_traceback_later
_encode = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), check_circular=False).encode
_current_frames = sys._current_frames


class HarnessTimeout(BaseException):
    """Raised in the test by the alarm; a BaseException, so `except Exception` lets it through."""


# --- settings ----------------------------------------------------------------------------


def _float_env(name: str, default: float) -> float:
    try:
        return max(float(os.environ.get(name, default)), 0.0)
    except ValueError:
        return default


def _open_channel(spec: str) -> int | None:
    """The descriptor to write lines to, never inherited by what the tests start."""
    try:
        if spec.startswith("fd:"):
            fd = int(spec[3:])
            os.fstat(fd)
        elif spec.startswith("unix:"):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(spec[5:])
            fd = sock.detach()
        else:
            return None
        os.set_inheritable(fd, False)
        return fd
    except (OSError, ValueError):
        return None


_TIMEOUT = _float_env("FIXBOT_HARNESS_TIMEOUT", 0.0)
_GRACE = _float_env("FIXBOT_HARNESS_GRACE", 5.0) or 5.0
_BUDGET = _float_env("FIXBOT_HARNESS_HANG_BUDGET", 0.0)
for _name in ("FIXBOT_HARNESS_TIMEOUT", "FIXBOT_HARNESS_GRACE", "FIXBOT_HARNESS_HANG_BUDGET"):
    os.environ.pop(_name, None)
# The canaries' names: random, and not the channel's token (a name any code can read off the
# collected items must not be the key to the channel).
_CANARY = secrets.token_hex(8)


# --- the channel ---------------------------------------------------------------------------


def _writer(fd: int | None, run: str) -> tuple[Any, Any]:
    """(emit, descriptor) over the channel: the descriptor, the token and the sequence number
    live in this closure only, never as attributes that code walking the interpreter's objects
    by name would find. The descriptor is moved to a random high number first."""
    if fd is not None:
        try:
            moved = _fcntl_dup(fd)
            os.close(fd)
            fd = moved
        except OSError:
            pass
    state: list[Any] = [fd, 0]
    lock = threading.RLock()  # the alarm handler may write while the main thread does

    def emit(kind: str, **fields: Any) -> None:
        if state[0] is None:
            return
        with lock:
            line = _encode({"k": kind, "run": run, "seq": state[1], **fields}) + "\n"
            state[1] += 1
            data = line.encode("ascii")
            try:
                while data:
                    data = data[_write(state[0], data) :]
            except OSError:
                state[0] = None  # fixbot stopped listening: the tests go on regardless

    def descriptor() -> int | None:
        found: int | None = state[0]
        return found

    return emit, descriptor


def _fcntl_dup(fd: int) -> int:
    """A copy of `fd` at a random number above the usual ones, not inherited."""
    import fcntl

    low = 300 + secrets.randbelow(600)
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, low)
    return moved


_emit, _descriptor = _writer(
    _open_channel(os.environ.pop("FIXBOT_HARNESS_CHANNEL", "")),
    os.environ.pop("FIXBOT_HARNESS_RUN", "") or secrets.token_hex(8),
)


def _cap(text: str, cap: int) -> str:
    """The text, or its head and tail with the middle elided, in at most `cap` characters,
    the mark included (the reader keeps `cap` characters: the tail, where a traceback says
    where it raised and what, must not be what it cuts)."""
    if len(text) <= cap:
        return text
    kept = max(0, cap - len(f"\n[... {len(text)} characters elided ...]\n"))
    head = kept // 2
    tail = text[len(text) - (kept - head) :]
    return f"{text[:head]}\n[... {len(text) - kept} characters elided ...]\n{tail}"


# --- code the run wrote ----------------------------------------------------------------------
# audit.py, staged beside this file as sitecustomize.py, finds each code file that Python is
# about to run with bytes other than fixbot laid (laid.json); its start-up guard refuses them
# until this plugin's own audit names each one on the channel, before that code runs, so nothing
# it does can take the line back. The plugin hands off from its module's top-level code, last
# (a second hand-off is refused, and named). fixbot judges the names against the baseline's
# (checks/verdict.py: written_code).

COMPILED_CAP = 2000  # findings fixbot reads per process; one past it makes the run tampered
_HERE = os.path.dirname(os.path.abspath(__file__))


def _audit_module() -> types.ModuleType | None:
    """audit.py as staged beside this file, loaded by its path under a name of its own (in no
    module table); None where it was not staged (the plugin run by hand)."""
    path = os.path.join(_HERE, "sitecustomize.py")
    if not os.path.isfile(path):
        return None
    spec = importlib.util.spec_from_file_location(f"{__name__}_audit", path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _namer(emit: Any) -> Any:
    """Names each finding once on the channel."""
    named: set[tuple[str, str]] = set()

    def name(path: str, digest: str) -> None:
        if (path, digest) not in named and len(named) <= COMPILED_CAP:  # more: tampered
            emit("compiled", path=path, sha256=digest)  # first: if it raises, it is named again
            named.add((path, digest))

    return name


# --- the machinery check -------------------------------------------------------------------

# Whole modules whose functions and classes build, route, count and print reports.
_WATCHED_MODULES = (
    "_pytest.reports",
    "_pytest.runner",
    "_pytest.main",
    "_pytest.terminal",
    "_pytest.python",
    "_pytest.skipping",
    "_pytest.outcomes",
    "_pytest.nodes",
    "_pytest.fixtures",
    "_pytest.unittest",
    "json",
    "json.encoder",
    __name__,
)
# Single functions from modules whose other globals may legitimately change.
_WATCHED_NAMES: dict[types.ModuleType, tuple[str, ...]] = {
    os: ("_exit", "write", "fstat"),
    signal: ("signal", "setitimer", "getsignal"),
    faulthandler: ("dump_traceback_later", "cancel_dump_traceback_later"),
    builtins: ("__import__", "compile", "exec"),
    sys: ("_current_frames", "exit"),
}
_DESCRIPTORS = (types.FunctionType, classmethod, staticmethod, property, types.BuiltinFunctionType)


def _watched_modules() -> list[tuple[str, types.ModuleType]]:
    names = list(_WATCHED_MODULES)
    names += sorted(n for n in sys.modules if n == "pluggy" or n.startswith("pluggy."))
    return [(n, sys.modules[n]) for n in names if n in sys.modules]


def _entries(module: types.ModuleType, name: str) -> Iterator[tuple[str, object]]:
    """(qualified name, object) for what in a module and its classes could reroute a report."""
    picked = _WATCHED_NAMES.get(module)
    values = vars(module)
    for key in picked if picked is not None else sorted(values):
        value = values.get(key)
        if isinstance(value, type) and value.__module__ == module.__name__:
            yield f"{name}.{key}", value
            for attr, member in sorted(vars(value).items()):
                if isinstance(member, _DESCRIPTORS):
                    yield f"{name}.{key}.{attr}", member
        elif isinstance(value, _DESCRIPTORS) or picked is not None:
            yield f"{name}.{key}", value


def _snapshot() -> dict[str, object]:
    found: dict[str, object] = {}
    for name, module in _watched_modules():
        found[f"sys.modules[{name!r}]"] = module
        found.update(_entries(module, name))
    for module in _WATCHED_NAMES:
        found.update(_entries(module, module.__name__))
    return found


def _code(obj: object) -> types.CodeType | None:
    """The code object behind obj (a function, method, classmethod, staticmethod or property);
    None for built-in (C) code and for objects that are not code."""
    for _ in range(4):
        if isinstance(obj, (classmethod, staticmethod)):
            obj = obj.__func__
        elif isinstance(obj, property):
            obj = obj.fget
        elif isinstance(obj, types.MethodType):
            obj = obj.__func__
        else:
            break
    code = getattr(obj, "__code__", None)
    return code if isinstance(code, types.CodeType) else None


def _codes_of(value: object) -> Iterator[types.CodeType]:
    code = _code(value)
    if code is not None:
        yield code
    elif isinstance(value, type):
        for member in list(vars(value).values()):
            found = _code(member)
            if found is not None:
                yield found


def _known_code() -> list[types.CodeType]:
    """Every code object of every function and class method in the modules loaded when this
    plugin loads: pytest, pluggy, the standard library and the plugins loaded before any of the
    repository's code. Kept alive here, so identities stay unique."""
    found: list[types.CodeType] = []
    for module in list(sys.modules.values()):
        try:
            values = list(vars(module).values())
        except TypeError:
            continue
        for value in values:
            found.extend(_codes_of(value))
    return found


def _known(obj: object) -> bool:
    """Code that existed before any of the repository's code ran (by identity, never by the
    file name its code object claims: any code can set that)."""
    code = _code(obj)
    return code is not None and id(code) in _KNOWN_IDS


def _where(obj: object) -> str:
    code = _code(obj)
    return f" (by code claiming {code.co_filename})" if code is not None else ""


def machinery_problems(baseline: dict[str, tuple[object, types.CodeType | None]]) -> list[str]:
    """What changed in pytest's, pluggy's and this plugin's code since the plugin was loaded:
    an object replaced by one whose code did not exist then, a function whose code object was
    swapped, an entry added by new code. Identities and code objects, captured at load."""
    problems = []
    now = _snapshot()
    for key, (before, code) in baseline.items():
        after = now.get(key, _MISSING)
        if after is before:
            if _code(after) is not code:
                problems.append(f"{key}'s code was replaced{_where(after)}")
        elif not _known(after):
            problems.append(f"{key} was replaced{_where(after)}")
    for key in sorted(set(now) - set(baseline)):
        if _code(now[key]) is not None and not _known(now[key]):
            problems.append(f"{key} was added{_where(now[key])}")
    return problems


def _captured() -> dict[str, tuple[object, types.CodeType | None]]:
    return {key: (value, _code(value)) for key, value in _snapshot().items()}


_MISSING = object()


# --- the harness ---------------------------------------------------------------------------


class _Canary(pytest.Item):
    """One of fixbot's own checks, added to every run; its outcome is known in advance."""

    role = ""
    harness: Harness | None = None

    def runtest(self) -> None:
        if self.role == "must_fail":
            raise AssertionError(f"fixbot canary {_CANARY}: this check fails on purpose")
        if self.role == "integrity" and self.harness is not None:
            problems = self.harness.integrity_problems()
            if problems:
                raise AssertionError("pytest's reporting was tampered with: " + "; ".join(problems))

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, self.name

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        return str(excinfo.value)


CANARY_ROLES = ("integrity", "must_pass", "must_fail")  # must_fail last: `-x` stops there


def canary_ids(run: str) -> dict[str, str]:
    return {role: f"fixbot_canary_{run}::{role}" for role in CANARY_ROLES}


def _category(report: Any) -> str:
    """The terminal's tally a report goes into (as _pytest's report_teststatus hooks decide)."""
    if hasattr(report, "wasxfail"):
        if report.skipped:
            return "xfailed"
        if report.passed:
            return "xpassed"
    if report.when in ("setup", "teardown", "collect"):
        return "error" if report.failed else "skipped" if report.skipped else ""
    return str(report.outcome)


def _message(report: Any) -> str:
    """One line for the outcome, as pytest's JUnit report gave it: the crash's message, a
    skip's or an xfail's reason."""
    longrepr = report.longrepr
    if hasattr(report, "wasxfail") and report.skipped:
        return str(report.wasxfail)  # xfailed: its reason, not the expected failure
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        return str(crash.message)
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])  # a skip: (path, line, reason)
        return reason[len("Skipped: ") :] if reason.startswith("Skipped: ") else reason
    text = str(report.longreprtext or "")
    return next((line for line in text.splitlines() if line.strip()), "")


def _final(reports: list[Any], nodeid: str) -> tuple[str, Any | None]:
    """One outcome for a test from its phase reports, as fixbot's results know them. A call
    phase may bring several reports (each subtest's, then the test's own): any that failed
    fails the test, the first one the message."""
    by_when = {r.when: r for r in reports}
    setup, teardown = by_when.get("setup"), by_when.get("teardown")
    calls = [r for r in reports if r.when == "call"]
    call = next((r for r in reversed(calls) if not _is_subtest(r)), calls[-1] if calls else None)
    if setup is not None and setup.failed:
        return "error", setup
    failed = next((r for r in calls if r.failed), None)
    if failed is not None:
        return "failed", failed
    if teardown is not None and teardown.failed:
        return "error", teardown
    for report in (setup, call):
        if report is not None and report.skipped:
            return ("xfailed" if hasattr(report, "wasxfail") else "skipped"), report
    if call is None:
        return "error", None  # no call phase and no reason: pytest was cut short
    return "passed", call


def _is_subtest(report: Any) -> bool:
    """A subtest's report (pytest 9's SubtestReport, pytest-subtests'): it has a context."""
    return getattr(report, "context", None) is not None and type(report).__name__ != "TestReport"


def _subtest_label(report: Any) -> str:
    context = getattr(report, "context", None)
    if context is None:
        return ""
    msg = getattr(context, "msg", None)
    kwargs = getattr(context, "kwargs", None) or {}
    described = " ".join([f"[{msg}]" if msg else "", *(f"{k}={v!r}" for k, v in kwargs.items())])
    return f"(subtest {described.strip()}) " if described.strip() else "(subtest) "


def _stack_text(frame: types.FrameType | None, title: str) -> str:
    """The frames of the test itself (pytest's and pluggy's own frames above it dropped)."""
    if frame is None:
        return f"{title}: no Python frame\n"
    entries = traceback.extract_stack(frame)
    start = 0
    for index, entry in enumerate(entries):
        if _is_test_frame(entry.filename):
            start = index
            break
    frames = "".join(traceback.format_list(entries[start:]))
    return f"{title} (most recent call last):\n{frames}\n"


_RUNNER_DIRS = tuple(
    os.path.dirname(str(m.__file__)) + os.sep for m in (_pytest.main, pluggy) if m.__file__
)


def _is_test_frame(filename: str) -> bool:
    if filename.startswith("<") or filename == __file__:
        return False
    return not filename.startswith(_RUNNER_DIRS) and not filename.endswith(
        (os.sep + "runpy.py", os.sep + "pytest" + os.sep + "__main__.py")
    )


def _threads_text(skip: int | None) -> str:
    names = {t.ident: t.name for t in threading.enumerate()}
    parts = []
    for ident, frame in _current_frames().items():
        if ident != skip:
            parts.append(_stack_text(frame, f"Thread {names.get(ident, ident)}"))
    return "".join(parts)


# --- where the test process found its code: for fixbot's environment checks ---------------
# (one self-contained block: the `imports` field of `finish`, and `phase`, `frames` and
# `assertion` of a failing test's `result`; events.py reads them, checks/classify.py and
# checks/baseline.py judge them)

IMPORTS_CAP = 400  # top-level modules reported at most
FRAMES_HEAD, FRAMES_TAIL = 12, 36  # traceback files kept: the outermost and the innermost
_STDLIB = tuple(
    os.path.realpath(sysconfig.get_paths()[key]) + os.sep
    for key in ("stdlib", "platstdlib")
    if key in sysconfig.get_paths()
)
_raised: dict[tuple[str, str], tuple[list[str], bool]] = {}  # (node id, phase) -> files, verdict


def _imported() -> dict[str, str]:
    """Top-level module -> the file it was imported from (a namespace package: its first
    folder), the standard library's and this plugin's (and its folder's) left out; past the
    cap, those from the environment itself go first (what lies elsewhere is what the checks
    look for)."""
    found: list[tuple[bool, str, str]] = []
    own = os.path.realpath(sys.prefix) + os.sep
    for name, module in list(sys.modules.items()):
        if "." in name or module is None or name == __name__:
            continue
        where = _origin(module)
        if where is None:
            continue
        real = os.path.realpath(where)
        if real.startswith(_STDLIB) and os.sep + "site-packages" + os.sep not in real:
            continue
        if os.path.dirname(real) == os.path.realpath(_HERE):
            continue  # fixbot's own, staged beside this file (the audit's sitecustomize)
        found.append((real.startswith(own), name[:100], real[:300]))
    found.sort(key=lambda entry: entry[0])  # stable: import order within each group
    return {name: path for _, name, path in found[:IMPORTS_CAP]}


def _origin(module: types.ModuleType) -> str | None:
    try:
        where = getattr(module, "__file__", None) or next(iter(module.__path__), None)
    except Exception:  # a lazy module that raises on attribute access, or has no __path__
        where = None
    return where if isinstance(where, str) and not where.startswith("<") else None


def _traceback_files(error: BaseException) -> list[str]:
    """The files of the frames an exception passed through, its causes' first (as Python
    prints them), outermost first; a run of frames in one file counts once."""
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and len(chain) < 8 and all(current is not c for c in chain):
        chain.append(current)
        current = current.__cause__ or (
            None if current.__suppress_context__ else current.__context__
        )
    files: list[str] = []
    for link in reversed(chain):
        tb = link.__traceback__
        while tb is not None:
            name = tb.tb_frame.f_code.co_filename
            name = name[:100] if name.startswith("<") else os.path.abspath(name)[:300]
            if not files or files[-1] != name:
                files.append(name)
            tb = tb.tb_next
    if len(files) > FRAMES_HEAD + FRAMES_TAIL:
        files = [*files[:FRAMES_HEAD], "...", *files[-FRAMES_TAIL:]]
    return files


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    yield
    excinfo = call.excinfo
    skips = (pytest.skip.Exception, pytest.xfail.Exception, HarnessTimeout)
    if excinfo is not None and not isinstance(excinfo.value, skips):
        verdict = isinstance(excinfo.value, (AssertionError, pytest.fail.Exception))
        _raised[(item.nodeid, call.when)] = (_traceback_files(excinfo.value), verdict)


def _raised_fields(nodeid: str, decisive: Any) -> dict[str, Any]:
    """What a failing test's `result` carries of the exception that decided it."""
    found = {key: _raised.pop(key) for key in list(_raised) if key[0] == nodeid}
    when = str(getattr(decisive, "when", ""))
    if (nodeid, when) not in found:
        return {}
    files, verdict = found[(nodeid, when)]
    return {"phase": when, "frames": files, "assertion": verdict}


class Harness:
    """The hooks, registered as one object in pytest_configure."""

    def __init__(self, config: pytest.Config, timeout: float) -> None:
        self.config = config
        self.emit = _emit
        self.timeout = timeout
        self.limit = timeout  # this phase's: shorter once tests have hung (the hang budget)
        self.budget = _BUDGET  # seconds the hung tests of this process may take in all; 0: none
        self.hung_seconds = 0.0
        self.grace = _GRACE
        self.phase: tuple[str, str] | None = None  # (node id, when) while one runs
        self.strikes = 0
        self.timed_out: dict[str, tuple[str, str, float]] = {}  # node id -> (when, stack, limit)
        self.reports: dict[str, list[Any]] = {}
        self.categories: dict[str, list[str]] = {}
        self.rerunning: set[str] = set()
        self.made: dict[tuple[str, str], str] = {}
        self.violations: list[str] = []
        self.exitstatus = 0
        self.previous_handler: Any = None
        self.watchdog_failures = 0
        self.main_thread = threading.main_thread().ident
        self.test_modules: list[types.ModuleType] = []
        # The plugin manager and its hook callers, as they are now: callables on the instances
        # (pluggy's own _hookexec, _inner_hookexec) that code could swap without a class patch.
        # The plugin manager and its hook callers as they were when this module was registered
        # (before any conftest.py), and this harness as it is made.
        self.instances = {**self._instance_callables(), **_MANAGER}

    # the run's shape

    @property
    def must_fail(self) -> str:
        """How the must-fail canary ends: `xfailed` where pytest's xfail is in force (so the
        exit status carries the repository's failures), else `failed`."""
        option = getattr(self.config, "option", None)
        active = self.config.pluginmanager.has_plugin("skipping")
        return "xfailed" if active and not getattr(option, "runxfail", False) else "failed"

    def hello(self) -> None:
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        self.emit(
            "hello",
            protocol=PROTOCOL,
            canary=_CANARY,
            must_fail=self.must_fail,
            rootdir=str(getattr(self.config, "rootpath", "") or ""),
            inifile=str(getattr(self.config, "inipath", "") or ""),
            pytest=pytest.__version__,
            pluggy=getattr(pluggy, "__version__", "?"),
            python=sys.version.split()[0],
            pid=os.getpid(),
            plugin=__file__,
            timeout=self.timeout,
            grace=self.grace,
            terminal=terminal is not None,
            verbosity=int(getattr(self.config.option, "verbose", 0) or 0),
            faulthandler_timeout=str(self.config.getini("faulthandler_timeout") or ""),
        )

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> Generator[None, Any, None]:
        yield  # after every other plugin's selection and reordering: the canaries run last
        for role, nodeid in canary_ids(_CANARY).items():
            item = _Canary.from_parent(session, name=nodeid.split("::")[-1], nodeid=nodeid)
            item.role = role
            item.harness = self
            if role == "must_fail" and self.must_fail == "xfailed":
                # Expected to fail, strictly, with an AssertionError: pytest's exit status then
                # says whether any of the repository's own tests failed (fixbot reads it).
                item.add_marker(
                    pytest.mark.xfail(
                        reason=f"fixbot canary {_CANARY}", raises=AssertionError, strict=True
                    )
                )
            items.append(item)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        ids = [item.nodeid for item in session.items]
        for start in range(0, len(ids), IDS_PER_LINE):
            self.emit("collected", ids=ids[start : start + IDS_PER_LINE])
        self.emit("collection", count=len(ids))
        self.test_modules = [
            module
            for item in session.items
            if not isinstance(item, _Canary)
            and isinstance(module := getattr(item, "module", None), types.ModuleType)
        ]

    @pytest.hookimpl(tryfirst=True)
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed or report.skipped:
            self.emit(
                "collect",
                nodeid=report.nodeid,
                outcome="error" if report.failed else "skipped",
                category=_category(report),
                message=_cap(_message(report), MESSAGE_CAP),
                detail=_cap(str(report.longreprtext or ""), DETAIL_CAP),
            )

    # one test

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self.reports[nodeid] = []  # a rerun's outcome is its last run's; every run's tallies count
        if nodeid not in self.rerunning:
            self.emit("start", nodeid=nodeid)

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, Any, None]:
        yield from self._phase(item, "setup")

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, None]:
        yield from self._phase(item, "call")

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, Any, None]:
        yield from self._phase(item, "teardown")

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, Any, None]:
        outcome = yield
        try:
            report = outcome.get_result()
        except BaseException:  # another plugin failed: pytest reports that itself
            return
        excinfo = call.excinfo
        skips = (pytest.skip.Exception, pytest.xfail.Exception)
        raised = excinfo is not None and not isinstance(excinfo.value, skips)
        if raised and report.outcome == "passed" and not hasattr(report, "wasxfail"):
            error = type(excinfo.value).__name__ if excinfo is not None else "?"
            self.violations.append(
                f"{item.nodeid} raised {error} in {call.when} but its report says passed"
            )
        self.made[(item.nodeid, call.when)] = str(report.outcome)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        made = self.made.pop((report.nodeid, report.when), None)
        if made == "failed" and report.outcome == "passed":
            self.violations.append(
                f"{report.nodeid}'s {report.when} report was made failed and logged passed"
            )
        self.reports.setdefault(report.nodeid, []).append(report)
        self.categories.setdefault(report.nodeid, []).append(self._category(report))

    def _category(self, report: Any) -> str:
        """The tally the terminal puts this report in: pytest's own hook decides it (plugins,
        subtests and reruns add their own words), as the terminal reporter asks it."""
        try:
            status = self.config.hook.pytest_report_teststatus(report=report, config=self.config)
            return str(status[0]) if status else _category(report)
        except Exception:  # a plugin's hook failed: the terminal would not have counted it
            return _category(report)

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        reports = self.reports.pop(nodeid, [])
        if any(r.outcome == "rerun" for r in reports):
            self.rerunning.add(nodeid)  # a rerun plugin runs it again: one result, at its end
            return
        self.rerunning.discard(nodeid)
        categories = self.categories.pop(nodeid, [])
        outcome, decisive = _final(reports, nodeid)
        message = _message(decisive) if decisive is not None and outcome != "passed" else ""
        if message and decisive is not None and _is_subtest(decisive):
            message = _subtest_label(decisive) + message
        detail = str(decisive.longreprtext or "") if decisive is not None else ""
        timed_out = self.timed_out.pop(nodeid, None)
        if timed_out is not None:
            when, stack, limit = timed_out
            message = f"timed out after {limit:g} s (in {when})"
            if limit < self.timeout:
                message += (
                    f": the limit was shortened from {self.timeout:g} s, earlier tests having "
                    f"hung for {self.hung_seconds - limit:g} s of this run's {self.budget:g} s"
                )
            detail = f"{stack}\n{detail}"
        if outcome == "passed":
            detail = ""
        raised = _raised_fields(nodeid, decisive)  # always: what it holds of this test goes
        if outcome not in ("failed", "error") or timed_out is not None:
            raised = {}
        self.emit(
            "result",
            nodeid=nodeid,
            outcome=outcome,
            message=_cap(message, MESSAGE_CAP),
            detail=_cap(detail, DETAIL_CAP),
            categories=[c for c in categories if c],
            timeout=timed_out is not None,
            **raised,
        )

    # the end

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_sessionfinish(
        self, session: pytest.Session, exitstatus: int
    ) -> Generator[None, Any, None]:
        yield  # the terminal reporter has printed its summary by now
        self.exitstatus = int(session.exitstatus)
        self.emit("integrity", problems=self.integrity_problems())
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        stats = getattr(terminal, "stats", {}) if terminal is not None else {}
        self.emit(
            "finish",
            watchdog_failures=self.watchdog_failures,
            exitstatus=self.exitstatus,
            stats={key: len(value) for key, value in stats.items() if key},
            # What the summary line counts (a report may not count towards it: a subtest's,
            # unless verbose), as the terminal reporter decides it.
            shown={
                key: sum(1 for r in value if getattr(r, "count_towards_summary", True))
                for key, value in stats.items()
                if key
            },
            testsfailed=int(session.testsfailed),
            testscollected=int(session.testscollected),
            shouldstop=bool(session.shouldstop),
            shouldfail=bool(session.shouldfail),
            imports=_imported(),
        )

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """A thread a timed-out test left running would hold the interpreter's exit forever."""
        deadline = _monotonic() + self.grace
        for thread in threading.enumerate():
            if thread is threading.current_thread() or thread.daemon:
                continue
            thread.join(max(deadline - _monotonic(), 0.0))
        left = [t.name for t in threading.enumerate() if t.is_alive() and not t.daemon]
        if len(left) > 1:
            self.emit("exit", code=self.exitstatus, threads=left[:20])
            sys.stdout.flush()
            sys.stderr.flush()
            _exit(self.exitstatus)

    # the timeout

    def _phase(self, item: pytest.Item, when: str) -> Generator[None, Any, None]:
        self._arm(item.nodeid, when)
        try:
            yield
        finally:
            self._disarm()

    def _limit(self) -> float:
        """This phase's time limit: the per-test timeout until tests have hung, then what is
        left of the hang budget (never under MIN_LIMIT), so that many hanging tests still end
        well inside the whole command's timeout."""
        if self.budget <= 0 or self.hung_seconds <= 0:
            return self.timeout
        return max(MIN_LIMIT, min(self.timeout, self.budget - self.hung_seconds))

    def _arm(self, nodeid: str, when: str) -> None:
        self.phase = (nodeid, when)
        self.strikes = 0
        if self.timeout <= 0:
            return
        self.limit = self._limit()
        if threading.get_ident() == self.main_thread:
            self.previous_handler = _set_handler(signal.SIGALRM, self._on_alarm)
            _setitimer(signal.ITIMER_REAL, self.limit)
        channel = _descriptor()
        target = channel if channel is not None else sys.stderr.fileno()
        try:
            _dump_later(self.limit + 2 * self.grace, exit=True, file=target)
        except (RuntimeError, OSError, ValueError):
            # No thread to be had (the sandbox's process limit): the alarm still works, and a
            # hang in C is left to the whole-command timeout, which names the running test.
            self.watchdog_failures += 1

    def _disarm(self) -> None:
        self.phase = None
        if self.timeout <= 0:
            return
        _cancel_dump()
        if threading.get_ident() == self.main_thread:
            _setitimer(signal.ITIMER_REAL, 0)
            _set_handler(signal.SIGALRM, self.previous_handler or signal.SIG_DFL)

    def _on_alarm(self, signum: int, frame: types.FrameType | None) -> None:
        __tracebackhide__ = True
        phase = self.phase
        if phase is None:
            return
        nodeid, when = phase
        self.strikes += 1
        stack = _stack_text(frame, f"Timed out after {self.limit:g} s in {when}; the test was")
        others = _threads_text(skip=threading.get_ident())
        if self.strikes == 1:
            self.timed_out[nodeid] = (when, _cap(stack + others, STACK_CAP), self.limit)
            self.hung_seconds += self.limit
            _setitimer(signal.ITIMER_REAL, self.grace)
            raise HarnessTimeout(f"timed out after {self.limit:g} s")
        # The test caught the timeout and went on: nothing in this process can unwind it.
        self.emit(
            "result",
            nodeid=nodeid,
            outcome="failed" if when == "call" else "error",
            message=_cap(
                f"timed out after {self.limit:g} s (in {when}) and kept running "
                f"{self.grace:g} s more: it caught the timeout",
                MESSAGE_CAP,
            ),
            detail=_cap(stack + others, DETAIL_CAP),
            categories=["failed" if when == "call" else "error"],
            timeout=True,
        )
        self.emit("hung", nodeid=nodeid, when=when, how="swallowed")
        sys.stdout.flush()
        sys.stderr.flush()
        _exit(HUNG_EXIT)

    # the machinery

    def _instance_callables(self) -> dict[str, object]:
        found = _manager_callables(self.config.pluginmanager)
        found["channel.emit"] = self.emit
        found["harness.class"] = type(self)
        found.update({f"harness.{k}": v for k, v in vars(type(self)).items() if callable(v)})
        found.update(
            {
                f"harness.{k}": v
                for k, v in vars(self).items()
                if callable(v) and k != "previous_handler"
            }
        )
        return found

    def integrity_problems(self) -> list[str]:
        problems = machinery_problems(_SNAPSHOT)
        now = self._instance_callables()
        for key, before in self.instances.items():
            after = now.get(key, _MISSING)
            if after is not before or _code(after) is not _code(before):
                problems.append(f"{key} was replaced{_where(after)}")
        for key, value in now.items():
            if key not in self.instances and not _known(value):
                problems.append(f"{key} was added{_where(value)}")
        problems += self._foreign_hooks()
        problems += self.violations
        return problems[:50]

    def _foreign_hooks(self) -> list[str]:
        """Hook implementations from code that did not exist when this plugin loaded and is
        neither one of pytest's conftest modules, a collected test module, nor a plugin the
        repository's configuration names (each by identity)."""
        manager = self.config.pluginmanager
        allowed = {id(m) for m in self.test_modules}
        allowed |= {id(m) for m in getattr(manager, "_conftest_plugins", ())}
        allowed |= {id(sys.modules[n]) for n in self._configured_plugins() if n in sys.modules}
        problems = []
        for hook_name, caller in sorted(vars(manager.hook).items()):
            get = getattr(caller, "get_hookimpls", None)
            if get is None:
                continue
            for impl in get():
                if _known(impl.function) or id(impl.plugin) in allowed:
                    continue
                problems.append(
                    f"{hook_name} is implemented by new code{_where(impl.function)} (plugin "
                    f"{impl.plugin_name!r}), which is not a conftest.py or a configured plugin"
                )
        return problems

    def _configured_plugins(self) -> set[str]:
        names: set[str] = set()
        args = list(self.config.invocation_params.args)
        addopts = self.config.getini("addopts")
        args += shlex.split(addopts) if isinstance(addopts, str) else list(addopts or [])
        for index, arg in enumerate(args):
            if arg == "-p" and index + 1 < len(args):
                names.add(args[index + 1])
            elif arg.startswith("-p") and len(arg) > 2:
                names.add(arg[2:])
        for plugin in self.config.pluginmanager.get_plugins():
            listed = getattr(plugin, "pytest_plugins", ())
            if isinstance(plugin, types.ModuleType) and listed:
                names.update([listed] if isinstance(listed, str) else _strings(listed))
        return names


def _attributes(obj: object) -> dict[str, object]:
    """An object's own attributes, from its __dict__ or its __slots__ (pluggy's HookCaller)."""
    found = dict(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            if slot not in found and hasattr(obj, slot):
                found[slot] = getattr(obj, slot)
    return found


def _strings(values: Iterable[object]) -> list[str]:
    return [v for v in values if isinstance(v, str)]


# --- the module's own hooks --------------------------------------------------------------

_harness: Harness | None = None


def _manager_callables(manager: Any) -> dict[str, object]:
    """The plugin manager's and its hook callers' callables, as they are now: code could swap
    pluggy's own _hookexec, _inner_hookexec on the instances without a class patch."""
    found = {f"pluginmanager.{k}": v for k, v in vars(manager).items() if callable(v)}
    for name, caller in vars(manager.hook).items():
        for key, value in _attributes(caller).items():
            if callable(value) and not isinstance(value, type):
                found[f"hook.{name}.{key}"] = value
    return found


_MANAGER: dict[str, object] = {}


def pytest_plugin_registered(plugin: object, manager: Any) -> None:
    """This module's own registration, before any conftest.py is imported: the plugin manager
    as it is then."""
    if plugin is sys.modules.get(__name__) and not _MANAGER:
        _MANAGER.update(_manager_callables(manager))


@pytest.hookimpl(trylast=True)  # after the terminal reporter is registered
def pytest_configure(config: pytest.Config) -> None:
    global _harness
    if _harness is not None:
        return  # an in-process nested run (pytester) keeps the outer session's harness
    _harness = Harness(config, _TIMEOUT)
    config.pluginmanager.register(_harness, "fixbot-harness")
    # No debugger in a check: pytest's own would read a .pdbrc (the tree's) and run it as code.
    sys.breakpointhook = _no_debugger
    _harness.hello()


def _no_debugger(*args: object, **kwargs: object) -> None:
    """`breakpoint()` in a check: nothing (no one is at the terminal, and no .pdbrc runs)."""


# Last: everything above is in the snapshot, taken before any conftest.py is imported.
_KNOWN_CODE = _known_code()
_KNOWN_IDS = frozenset(id(code) for code in _KNOWN_CODE)
_SNAPSHOT = _captured()
_audit = _audit_module()
if _audit is not None:  # last, and the hook bound to no name
    sys.addaudithook(_audit.auditor(*_audit.laid(_HERE), _namer(_emit)))
    if _descriptor() is not None:  # this audit reports now: the start-up guard stands down
        try:
            sys.audit(_audit.HANDOFF)
        except RuntimeError:  # code got there first: whatever it did was never audited
            _emit("compiled", path="(the audit was handed off before fixbot's plugin)", sha256="")
del _audit
