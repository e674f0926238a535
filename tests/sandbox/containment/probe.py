"""Copied into each hostile workspace: what the hostile code managed to do goes to probe.json.

`record` rewrites the whole file atomically after every step, so a process killed halfway
(memory, time, output) still leaves the steps it got through.
"""

import contextlib
import ctypes
import json
import os
import subprocess
import sys
import time

WORKSPACE = "/workspace"
RESULT = os.path.join(WORKSPACE, "probe.json")
with open(os.path.join(WORKSPACE, "case.json")) as _handle:
    CASE = json.load(_handle)
MARKER = CASE["marker"]  # 15 characters: a whole process name (comm)


def record(**items):
    data = {}
    with contextlib.suppress(OSError, ValueError), open(RESULT) as handle:
        data = json.load(handle)
    data.update(items)
    scratch = f"{RESULT}.{os.getpid()}"
    with open(scratch, "w") as handle:
        json.dump(data, handle)
    os.replace(scratch, RESULT)


def attempt(name, action):
    """Run one hostile step: record "ok" (or what it returned) or the exception it raised."""
    try:
        value = action()
    except BaseException as exc:
        record(**{name: f"{type(exc).__name__}: {exc}"[:300]})
        return None
    record(**{name: "ok" if value is None else value})
    return value


def name_process():
    """Give this process the marker as its name, so the host can find it (zombies included)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(15, MARKER.encode(), 0, 0, 0)  # PR_SET_NAME


def linger():
    """Leave a detached process behind, with the marker in its argv: the sandbox must end it.

    Returns once the host has seen it (its watcher signals the linger, which then leaves
    `.seen` beside its ready file), or after 10 s if it never does (the host's check fails).
    """
    ready = os.path.join(WORKSPACE, f".linger-{os.getpid()}")
    subprocess.Popen(
        [sys.executable, "-c", LINGER, ready, MARKER, "fixbot-test-linger"],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while not os.path.exists(f"{ready}.seen") and time.monotonic() < deadline:
        time.sleep(0.01)


LINGER = """
import signal, sys, time
signal.signal(signal.SIGWINCH, lambda *_: open(sys.argv[1] + ".seen", "w").close())
open(sys.argv[1], "w").close()
time.sleep(3600)
"""
