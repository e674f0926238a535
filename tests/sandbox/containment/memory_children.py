"""Three children that each hold a share of memory under the cap: together, well over it."""

import os
import subprocess
import sys
import time

from probe import CASE, record

HOLD = (
    "import sys, time\n"
    "block = bytearray(int(sys.argv[1]) << 20)\n"
    "block[::4096] = b'x' * len(block[::4096])\n"  # touched, so it is really there
    "open(sys.argv[2], 'w').close()\n"
    "time.sleep(4)\n"
)


def attack():
    ready = [f"/workspace/.held-{os.getpid()}-{n}" for n in range(3)]
    children = [
        subprocess.Popen([sys.executable, "-c", HOLD, str(CASE["child_mb"]), path])
        for path in ready
    ]
    all_held = False
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and all(child.poll() is None for child in children):
        if all(os.path.exists(path) for path in ready):
            all_held = True  # every child holds its block, and all are alive at once
            break
        time.sleep(0.02)
    record(all_held=all_held, codes=[child.wait() for child in children])
