"""The one subprocess helper: argv lists, a new session, the process group killed on timeout.

Output is drained continuously and capped: the head and the tail are kept, the middle is counted
and dropped, so a flood cannot grow fixbot's memory.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

DEFAULT_OUTPUT_CAP = 256 * 1024


@dataclass(frozen=True)
class Completed:
    argv: tuple[str, ...]
    returncode: int
    output: str  # stdout and stderr interleaved, capped
    seconds: float
    timed_out: bool
    output_bytes: int  # everything the process wrote, including what the cap dropped

    @property
    def output_truncated(self) -> bool:
        return self.output_bytes > len(self.output.encode("utf-8", "replace"))

    def tail(self, chars: int = 2000) -> str:
        return self.output[-chars:]


class CappedSink:
    """Keeps the first and last `cap // 2` bytes of a stream, counting the rest."""

    def __init__(self, cap: int) -> None:
        self.half = max(cap // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.half:
                del self.tail[: len(self.tail) - self.half]

    def text(self) -> str:
        dropped = self.total - len(self.head) - len(self.tail)
        middle = f"\n[... {dropped} bytes of output dropped ...]\n".encode() if dropped else b""
        return bytes(self.head + middle + self.tail).decode("utf-8", "replace")


def _drain(stream: IO[bytes], sink: CappedSink) -> None:
    while chunk := stream.read1(65536):  # type: ignore[attr-defined]
        sink.feed(chunk)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def run(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    output_cap: int = DEFAULT_OUTPUT_CAP,
    stdin_data: bytes | None = None,
    pass_fds: Sequence[int] = (),
) -> Completed:
    """Run argv to completion (or timeout), never through a shell."""
    if not argv:
        raise ValueError("empty argv")
    start = time.monotonic()
    proc = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env) if env is not None else None,
        stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        pass_fds=tuple(pass_fds),
    )
    sink = CappedSink(output_cap)
    reader = threading.Thread(target=_drain, args=(proc.stdout, sink), daemon=True)
    reader.start()
    # A timer kills the group while wait() blocks in waitpid: Popen.wait(timeout) would poll
    # with sleeps and add up to 50 ms to every command.
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        _kill_group(proc)

    timer = threading.Timer(timeout, expire) if timeout is not None else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        if proc.stdin is not None:
            # Written after the timer starts: a child that never reads cannot outlast it.
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.write(stdin_data or b"")
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.close()
        proc.wait()
    finally:
        if timer is not None:
            timer.cancel()
        # The whole group goes, also on success: a double-forked daemon must not outlive the run.
        _kill_group(proc)
        proc.wait()
    timed_out = expired.is_set()
    reader.join(timeout=5)
    if proc.stdout is not None:
        proc.stdout.close()
    return Completed(
        argv=tuple(argv),
        returncode=proc.returncode,
        output=sink.text(),
        seconds=time.monotonic() - start,
        timed_out=timed_out,
        output_bytes=sink.total,
    )


class CommandFailed(Exception):
    """A command fixbot relies on (git, say) failed; carries the command and its output."""

    def __init__(self, result: Completed) -> None:
        self.result = result
        super().__init__(
            f"command failed ({result.returncode}): {' '.join(result.argv)}\n{result.tail(1500)}"
        )


def check(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    stdin_data: bytes | None = None,
) -> Completed:
    """Like run(), but a non-zero exit or a timeout raises CommandFailed."""
    result = run(argv, cwd=cwd, env=env, timeout=timeout, stdin_data=stdin_data)
    if result.returncode != 0 or result.timed_out:
        raise CommandFailed(result)
    return result
