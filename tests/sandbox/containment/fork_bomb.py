"""Fork without end: every child forks too, and never exits."""

import os
import time

from probe import attempt, name_process, record


def attack():
    me = os.getpid()
    made = 0
    refused = ""
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        try:
            child = os.fork()
        except OSError as exc:
            refused = refused or type(exc).__name__
            time.sleep(0.005)
            continue
        if child == 0:
            name_process()
        elif os.getpid() == me:
            made += 1
    if os.getpid() != me:
        while True:
            time.sleep(3600)
    record(made=made, refused=refused)
    attempt("fork after", lambda: "forked" if os.fork() else os._exit(0))
