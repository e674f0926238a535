"""Plant hooks and config in the workspace's .git, and in the host repository's."""

import os

from probe import CASE, MARKER, attempt

HOOK = f"#!/bin/sh\necho {MARKER} > /tmp/{MARKER}-hook-ran\n"


def write(path, text, mode="a"):
    with open(path, mode) as handle:
        handle.write(text)


def attack():
    attempt("hook", lambda: write(".git/hooks/post-checkout", HOOK, "w"))
    attempt("chmod hook", lambda: os.chmod(".git/hooks/post-checkout", 0o755))
    attempt("fsmonitor", lambda: write(".git/config", f"[core]\n\tfsmonitor = /tmp/{MARKER}\n"))
    for name in ("hooks/pre-commit", "config"):
        path = os.path.join(CASE["host_git"], name)
        attempt(f"host {name}", lambda p=path: write(p, HOOK))
