"""Leave half a report line on the channel (no newline: as a kill mid-write would), then never
finish, so that the whole-command timeout ends the run."""

import contextlib
import os
import time

from probe import record


def attack():
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError, ValueError):
            if int(name) > 2 and os.readlink(f"/proc/self/fd/{name}").startswith(
                ("pipe:", "socket:")
            ):
                os.write(int(name), b'{"k":"result","nodeid":"tests/test_hostile.py::test_hos')
    record(cut=True)
    time.sleep(3600)
