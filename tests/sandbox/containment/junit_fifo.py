"""Leave fixbot's report as a pipe that nobody writes, and never let pytest write the real one."""

import os

from probe import record


def attack():
    report = "/fixbot-out/junit.xml"
    if os.path.lexists(report):
        os.remove(report)
    os.mkfifo(report)
    record(fifo=True)
    os._exit(1)
