"""Become root: setuid and friends, and setuid-root programs."""

import os
import subprocess

from probe import MARKER, attempt, record


def run(argv):
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=5)
    return f"exit {done.returncode}: {done.stdout.decode()[-100:]} {done.stderr.decode()[-100:]}"


def attack():
    attempt("setuid", lambda: os.setuid(0))
    attempt("seteuid", lambda: os.seteuid(0))
    attempt("setresuid", lambda: os.setresuid(0, 0, 0))
    attempt("setgid", lambda: os.setgid(0))
    attempt("setgroups", lambda: os.setgroups([0]))
    touch = f"touch /workspace/{MARKER}-root; chown 0:0 /workspace/{MARKER}-root"
    attempt("su", lambda: run(["su", "-c", touch, "root"]))
    attempt("sudo", lambda: run(["sudo", "-n", "sh", "-c", touch]))
    attempt("mount", lambda: run(["mount", "-t", "tmpfs", "none", "/workspace"]))
    record(euid=os.geteuid(), uid=os.getuid())
