"""Fork until the limit says no, say so in /workspace/full, and hold every process a while:
what a neighbouring sandbox starting at that moment meets."""

import os
import time

from probe import CASE, name_process, record


def attack():
    me = os.getpid()
    made, refused = 0, ""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not refused:
        try:
            child = os.fork()
        except OSError as exc:
            refused = type(exc).__name__
            break
        if child == 0:
            name_process()
            while True:
                time.sleep(3600)
        made += 1
    if os.getpid() == me:
        record(made=made, refused=refused)
        with open("/workspace/full.tmp", "w") as handle:
            handle.write(str(made))
        os.rename("/workspace/full.tmp", "/workspace/full")
        time.sleep(CASE["hold"])
