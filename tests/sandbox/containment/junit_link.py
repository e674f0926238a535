"""Leave fixbot's report as a link to a host file, and never let pytest write the real one."""

import os

from probe import CASE, record


def attack():
    report = "/fixbot-out/junit.xml"
    if os.path.lexists(report):
        os.remove(report)
    os.symlink(CASE["host_report"], report)
    record(linked=True)
    os._exit(1)
