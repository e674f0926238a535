"""An ordinary test suite's need: start a few dozen threads at once."""

import threading
import time

from probe import CASE, attempt, record


def attack():
    threads = [threading.Thread(target=time.sleep, args=(0.5,)) for _ in range(CASE["count"])]

    def start():
        for thread in threads:
            thread.start()
        record(threads=sum(thread.is_alive() for thread in threads))

    attempt("start", start)
    for thread in threads:
        if thread.ident is not None:
            thread.join()
