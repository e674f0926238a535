"""Leave a thousand children unreaped, each named with the marker."""

import os

from probe import CASE, name_process, record


def attack():
    made = 0
    for _ in range(CASE["zombies"]):
        try:
            child = os.fork()
        except OSError:
            break
        if child == 0:
            name_process()
            os._exit(0)
        made += 1
    record(zombies=made)
