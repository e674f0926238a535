"""The report channel, fixbot's side of it: the plugin staged where the sandbox sees it read-only,
the pipe or socket its lines come over, and the bounded reader that drains them.

The per-test results never pass through a file the code under test could write: they come over
a pipe whose reading end only fixbot holds (bubblewrap hands the writing end down through
pass_fds) or, where a sandbox cannot inherit a descriptor (Docker), over a unix socket in the
staged folder, which is mounted read-only; fixbot accepts one connection, made when the plugin
is imported, before any of the repository's code has run, and closes the listener at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import select
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fixbot.errors import SandboxFailed

PLUGIN_SOURCE = Path(__file__).with_name("plugin.py")  # package data, never imported
AUDIT_SOURCE = Path(__file__).with_name("audit.py")  # package data, staged as sitecustomize
HARNESS_MOUNT = "/fixbot-harness"  # where a sandbox shows the staged plugin, read-only
SOCKET_NAME = "channel.sock"
MAX_CHANNEL_BYTES = 64 * 1024 * 1024
MAX_CHANNEL_LINES = 1_000_000
MAX_LINE_BYTES = 1024 * 1024
RAW_CAP = 64 * 1024  # faulthandler's dump of a hung process, and anything else not JSON
READ_GRACE = 2.0  # seconds the reader may go on after the command ended

Transport = Literal["fd", "unix"]  # an inherited pipe, or a socket the plugin connects to


@dataclass(frozen=True)
class Staged:
    """The plugin copied into a folder of its own, under a module name the candidate cannot
    know when it writes its diff (so no `fixbot_harness_x.py` in the workspace can stand in
    for it, even where the working folder comes first on sys.path)."""

    folder: Path
    module: str

    def cleanup(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


LAID = "laid.json"  # beside the plugin: {"root": the tree as the run sees it, "files": ...}


def stage_plugin(
    parent: Path | None = None, laid: tuple[Collection[str], Mapping[str, str]] | None = None
) -> Staged:
    """The plugin under a random module name in a fresh folder, with the audit of code the run
    wrote (audit.py, as the `sitecustomize` every Python the run starts imports) and `laid`
    (every path at which the run sees the tree, and its code files' digests as fixbot laid
    them) beside it."""
    module = f"fixbot_harness_{secrets.token_hex(8)}"
    folder = Path(tempfile.mkdtemp(prefix="fixbot-harness-", dir=parent))
    folder.chmod(0o755)  # fixbot's, readable by the sandbox's nobody, writable by no one else
    target = folder / f"{module}.py"
    shutil.copyfile(PLUGIN_SOURCE, target)
    target.chmod(0o644)
    shutil.copyfile(AUDIT_SOURCE, folder / "sitecustomize.py")
    (folder / "sitecustomize.py").chmod(0o644)
    if laid is not None:
        roots, files = laid
        (folder / LAID).write_text(json.dumps({"roots": sorted(roots), "files": dict(files)}))
        (folder / LAID).chmod(0o644)
    return Staged(folder, module)


class ChannelReader:
    """Drains the reading end of the channel in a thread: bounded in memory, whoever writes.

    Past the caps it keeps reading (and counting) so a writer never blocks on a full pipe; what
    it drops is reported. `finish(grace)` lets it run until end of file or the grace is over:
    a process outside the sandbox's pid namespace that still holds the writing end (a daemon in
    a run without a sandbox) cannot hold fixbot.
    """

    def __init__(
        self,
        fd: int | None = None,
        *,
        listener: socket.socket | None = None,
        max_bytes: int = MAX_CHANNEL_BYTES,
        max_lines: int = MAX_CHANNEL_LINES,
        max_line: int = MAX_LINE_BYTES,
    ) -> None:
        if (fd is None) == (listener is None):
            raise ValueError("a reader reads one pipe or one socket")
        self._fd = fd
        self._listener = listener
        self.max_bytes, self.max_lines, self.max_line = max_bytes, max_lines, max_line
        self.lines: list[bytes] = []
        self.raw = bytearray()
        self.total = 0
        self.dropped_lines = 0
        self.long_lines = 0
        self.connections = 0
        self.eof = False
        self.cut = b""
        self._partial = bytearray()
        self._skipping = False  # inside a line that is already too long
        self._deadline: float | None = None
        self._conn: socket.socket | None = None
        self._thread = threading.Thread(target=self._loop, name="fixbot-channel", daemon=True)

    def start(self) -> ChannelReader:
        self._thread.start()
        return self

    def finish(self, grace: float = READ_GRACE) -> None:
        self._deadline = time.monotonic() + grace
        self._thread.join(grace + 1.0)

    def _expired(self) -> bool:
        return self._deadline is not None and time.monotonic() >= self._deadline

    def _loop(self) -> None:
        try:
            fd = self._fd if self._fd is not None else self._accept()
            if fd is None:
                return
            os.set_blocking(fd, False)
            while not self._expired():
                ready, _, _ = select.select([fd], [], [], 0.1)
                if not ready:
                    continue
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    self.eof = True
                    break
                self._feed(chunk)
        finally:
            self._flush_partial()
            if self._conn is not None:
                self._conn.close()

    def _accept(self) -> int | None:
        """The first connection, and only it: the listener is closed as soon as it arrives,
        before any of the repository's code (conftest.py included) has been imported."""
        listener = self._listener
        assert listener is not None
        try:
            while not self._expired():
                ready, _, _ = select.select([listener], [], [], 0.1)
                if ready:
                    self._conn, _ = listener.accept()
                    self.connections += 1
                    return self._conn.fileno()
            return None
        finally:
            listener.close()

    def _feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        while chunk:
            cut = chunk.find(b"\n")
            piece, chunk = (chunk, b"") if cut < 0 else (chunk[:cut], chunk[cut + 1 :])
            if not self._skipping:
                self._partial += piece
                if len(self._partial) > self.max_line:
                    self.long_lines += 1
                    self._partial.clear()
                    self._skipping = True
            if cut >= 0:
                if not self._skipping:
                    self._line(bytes(self._partial))
                self._partial.clear()
                self._skipping = False

    def _flush_partial(self) -> None:
        """A last line without its newline was cut by the process's end (a kill mid-write):
        kept apart, never read as a line."""
        if self._partial and not self._skipping:
            self.cut = bytes(self._partial[:200])
        self._partial.clear()

    def _line(self, line: bytes) -> None:
        if not line.startswith(b"{"):
            room = RAW_CAP - len(self.raw)
            if room > 0:
                self.raw += line[:room] + b"\n"
            return
        if len(self.lines) >= self.max_lines or self.total > self.max_bytes:
            self.dropped_lines += 1
            return
        self.lines.append(line)


@dataclass(frozen=True)
class Opened:
    """One run's channel: what the plugin is told (FIXBOT_HARNESS_CHANNEL), the descriptors
    the command inherits, and the reader (read it after the `with` block has ended)."""

    address: str
    fds: tuple[int, ...]
    reader: ChannelReader


@contextlib.contextmanager
def open_channel(transport: Transport, staged: Staged, harness: str) -> Iterator[Opened]:
    """A fresh channel for one command; `harness` is where the command sees the staged folder.
    When the block ends, fixbot's copy of the writing end is closed and the reader given its
    grace, so what follows the block reads a finished reader."""
    if transport == "fd":
        read_end, write_end = os.pipe()
        reader = ChannelReader(read_end).start()
        try:
            yield Opened(f"fd:{write_end}", (write_end,), reader)
        finally:
            os.close(write_end)
            reader.finish()
            os.close(read_end)
        return
    path = staged.folder / SOCKET_NAME
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(str(path))
        path.chmod(0o666)  # the sandbox's nobody connects; the folder stays fixbot's, read-only
        listener.listen(1)
    except OSError as exc:  # a path past AF_UNIX's 108 bytes (a long TMPDIR), say
        listener.close()
        raise SandboxFailed(f"cannot listen for the report channel at {path}: {exc}") from exc
    reader = ChannelReader(listener=listener).start()
    try:
        yield Opened(f"unix:{harness}/{SOCKET_NAME}", (), reader)
    finally:
        reader.finish()
        with contextlib.suppress(OSError):
            path.unlink()
