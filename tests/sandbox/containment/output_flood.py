"""Flood fixbot with output: on stdout, and past pytest's capture on the original pipes."""

import contextlib
import os

from probe import CASE, record

CHUNK = b"z" * 65536


def attack():
    pipes = [1, 2]
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/self/fd/{name}").startswith("pipe:"):
                pipes.append(int(name))
    record(pipes=sorted(set(pipes)))
    written = 0
    for _ in range(CASE["flood_mb"] * 16):
        for fd in set(pipes):
            with contextlib.suppress(OSError):
                written += os.write(fd, CHUNK)
    record(written=written)
