"""Flood every pipe and socket this process holds (fixbot's report channel among them) with
lines far longer than a report line may be, until the case's budget is written."""

import contextlib
import os

from probe import CASE, record

LINE = b"{" + b"x" * (2 * 1024 * 1024) + b"}\n"  # twice the longest line fixbot reads


def attack():
    fds = []
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError, ValueError):
            if int(name) > 2 and os.readlink(f"/proc/self/fd/{name}").startswith(
                ("pipe:", "socket:")
            ):
                fds.append(int(name))
    written = 0
    for _ in range(CASE["flood_mb"] // 2):
        for fd in fds:
            with contextlib.suppress(OSError):
                view = memoryview(LINE)
                while view:
                    view = view[os.write(fd, view) :]
                written += len(LINE)
    record(flooded=written)
    raise AssertionError("the real failure")
