"""Double-fork a daemon that ignores hangups and terminations, to outlive the run."""

import os
import signal
import sys
import time

from probe import MARKER, record


def attack():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            os.execv(
                sys.executable, [sys.executable, "-c", "import time; time.sleep(3600)", MARKER]
            )
        os._exit(0)
    time.sleep(0.5)
    record(daemonised=True)
