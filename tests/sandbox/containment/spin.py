"""Never finish: a busy loop or a sleep, as the case says."""

import time

from probe import CASE, record


def attack():
    record(spinning=CASE["how"])
    if CASE["how"] == "sleep":
        time.sleep(3600)
    while True:
        pass
