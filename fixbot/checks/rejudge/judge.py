"""The second judgement of the tests that decide `fixed`: each in a fresh interpreter, in a fresh
sandbox over a fresh copy of the snapshot and the diff, with nothing of the first judgement's:
no fixbot plugin, no report channel, no PYTEST_* or FIXBOT_* variable, no token. fixbot stages
runner.py read-only, hands it a nonce over a socket only fixbot and that process hold, and
believes `passed` only from the nonce's line and a zero exit status together.

A test the first judgement passed and this one does not (failed, skipped, no verdict, timed out)
is judged once more; a second disagreement is tampering, named.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import select
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fixbot.checks.rejudge.modes import Plan
from fixbot.commands import PYTHON
from fixbot.errors import SandboxFailed
from fixbot.proc import Completed

RUNNER_SOURCE = Path(__file__).with_name("runner.py")  # package data, never imported
JUDGE_MOUNT = "/fixbot-judge"  # where a sandbox shows the staged runner, read-only
SOCKET_NAME = "verdict.sock"
MAX_JUDGED = 32  # decisive tests judged again per attempt (a random sample past this)
LINE_CAP = 8192
GRACE = 20.0  # seconds beyond the per-test timeout a judged process may take (its start)

# (argv, env, fds, the staged folder) -> the finished command, in a fresh sandbox over a fresh
# copy of the snapshot and the diff.
Launch = Callable[[Sequence[str], Mapping[str, str], Sequence[int], Path], Completed]


@dataclass(frozen=True)
class Judgement:
    test: str
    mode: str  # plain | unittest | pytest
    verdict: str  # passed | failed | skipped | error | timeout | no verdict
    detail: str = ""

    def shown(self) -> str:
        return f"{self.verdict} ({self.mode})"


def judge_all(
    plans: Sequence[Plan],
    launch: Launch,
    *,
    passes_fds: bool,
    python: str,
    pytest_args: Sequence[str],
    timeout: float,
) -> list[Judgement]:
    """Each plan judged in its own process; the staged runner removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="fixbot-judge-"))
    try:
        folder.chmod(0o755)
        shutil.copyfile(RUNNER_SOURCE, folder / "runner.py")
        (folder / "runner.py").chmod(0o644)
        return [
            judge_one(p, launch, folder, passes_fds, python, pytest_args, timeout) for p in plans
        ]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def judge_one(
    plan: Plan,
    launch: Launch,
    folder: Path,
    passes_fds: bool,
    python: str,
    pytest_args: Sequence[str],
    timeout: float,
) -> Judgement:
    with verdict_channel(passes_fds, folder) as channel:
        argv = [python, "-I", f"{JUDGE_MOUNT}/runner.py", channel.address, *mode_args(plan)]
        if plan.mode == "pytest":
            argv += ["--", *pytest_args]
        env = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"} if plan.mode == "pytest" else {}
        done = launch(argv, env, channel.fds, folder)
    line = channel.line()
    if done.timed_out:
        return Judgement(plan.test, plan.mode, "timeout", f"no verdict within {timeout:g} s")
    said, _, rest = line.partition(" ")
    verdict, _, detail = rest.partition(" ")
    if not secrets.compare_digest(said.encode(), channel.nonce.encode()):
        tail = done.tail(400).strip()
        return Judgement(plan.test, plan.mode, "no verdict", f"exit {done.returncode}: {tail}")
    if verdict == "passed" and done.returncode != 0:
        return Judgement(plan.test, plan.mode, "error", f"passed, but exited {done.returncode}")
    return Judgement(plan.test, plan.mode, verdict or "no verdict", detail[:1500])


def interpreter_of(argv: Sequence[str]) -> str:
    """The Python a check's command runs (`python`, `python3.11`, a path to one), else the
    environment's `python`."""
    first = os.path.basename(argv[0]) if argv else ""
    return argv[0] if PYTHON.fullmatch(first) else "python"


def mode_args(plan: Plan) -> list[str]:
    if plan.mode == "pytest":
        return ["pytest", plan.nodeid]
    return [plan.mode, plan.module, plan.name, plan.file, str(plan.line), *plan.paths]


def disagreements(first: Mapping[str, str], second: Sequence[Judgement]) -> list[str]:
    """Each decisive test the first judgement passed and the second did not, named."""
    return [
        f"{j.test} passed in fixbot's pytest run but {j.verdict} when judged alone in a fresh "
        f"interpreter ({j.mode}): {j.detail[:300]}".rstrip(": ")
        for j in second
        if first.get(j.test) == "passed" and j.verdict != "passed"
    ]


def sample(tests: Sequence[str]) -> list[str]:
    """At most MAX_JUDGED of the decisive tests: all of them, else a random sample the code
    under test cannot predict."""
    if len(tests) <= MAX_JUDGED:
        return list(tests)
    chosen = list(tests)
    secrets.SystemRandom().shuffle(chosen)
    return sorted(chosen[:MAX_JUDGED])


class _Verdict:
    """One judged process's socket: fixbot sends the nonce first and reads the one line back."""

    def __init__(self, nonce: str) -> None:
        self.nonce = nonce
        self.address = ""
        self.fds: tuple[int, ...] = ()
        self._data = bytearray()
        self._thread: threading.Thread | None = None
        self._deadline: float | None = None

    def serve(self, sock: socket.socket | None, listener: socket.socket | None) -> None:
        self._thread = threading.Thread(
            target=self._loop, args=(sock, listener), name="fixbot-verdict", daemon=True
        )
        self._thread.start()

    def finish(self, grace: float = 2.0) -> None:
        self._deadline = time.monotonic() + grace
        if self._thread is not None:
            self._thread.join(grace + 1.0)

    def line(self) -> str:
        return bytes(self._data).split(b"\n", 1)[0].decode("utf-8", "replace")

    def _expired(self) -> bool:
        return self._deadline is not None and time.monotonic() >= self._deadline

    def _loop(self, sock: socket.socket | None, listener: socket.socket | None) -> None:
        try:
            if listener is not None:
                sock = self._accept(listener)
            if sock is None:
                return
            sock.sendall(f"{self.nonce}\n".encode())
            sock.setblocking(False)
            while not self._expired() and len(self._data) < LINE_CAP:
                ready, _, _ = select.select([sock], [], [], 0.1)
                if not ready:
                    continue
                try:
                    chunk = sock.recv(4096)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    break
                if not chunk:
                    break
                self._data += chunk
                if b"\n" in chunk:
                    break
        except OSError:
            return
        finally:
            if sock is not None:
                sock.close()

    def _accept(self, listener: socket.socket) -> socket.socket | None:
        """The first connection only, made before any of the repository's code runs."""
        try:
            while not self._expired():
                ready, _, _ = select.select([listener], [], [], 0.1)
                if ready:
                    conn, _ = listener.accept()
                    return conn
            return None
        finally:
            listener.close()


@contextlib.contextmanager
def verdict_channel(passes_fds: bool, folder: Path) -> Iterator[_Verdict]:
    """A fresh socket for one judged process: an inherited one (bubblewrap passes it down), or
    one fixbot listens on in the staged folder (Docker). The line is readable after the block."""
    channel = _Verdict(secrets.token_hex(16))
    if passes_fds:
        mine, theirs = socket.socketpair()
        channel.address, channel.fds = f"fd:{theirs.fileno()}", (theirs.fileno(),)
        theirs.set_inheritable(True)
        channel.serve(mine, None)
        try:
            yield channel
        finally:
            theirs.close()
            channel.finish()
        return
    path = folder / SOCKET_NAME
    with contextlib.suppress(OSError):
        path.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(str(path))
        path.chmod(0o666)
        listener.listen(1)
    except OSError as exc:
        listener.close()
        raise SandboxFailed(f"cannot listen for the second judgement at {path}: {exc}") from exc
    channel.address = f"unix:{JUDGE_MOUNT}/{SOCKET_NAME}"
    channel.serve(None, listener)
    try:
        yield channel
    finally:
        channel.finish()
        with contextlib.suppress(OSError):
            os.unlink(path)
