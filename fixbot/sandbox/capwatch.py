"""A fork bomb ends its run at once: pids.max holds it but never stops it.

While a run goes on, a thread reads its cgroup's pids.events (`max`: how many new processes the
cap refused); a cap that has refused on every read for HELD_SECONDS kills everything in the
cgroup, and the run ends then instead of at its timeout. A burst that hits the cap and subsides
(a test that starts too many threads once) goes on.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from fixbot.errors import SandboxFailed
from fixbot.sandbox.cgroups import Cgroup

HELD_SECONDS = 1.0  # the process cap refusing forks this long ends the run
_POLL_SECONDS = 0.1


class CapWatch:
    """Watches one run's cgroup from a thread: when its process cap has refused new processes
    for HELD_SECONDS on end, everything in it is killed and `ended` says so."""

    def __init__(self, group: Cgroup, held: float = HELD_SECONDS) -> None:
        self.group = group
        self.held = held
        self.ended = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        first = 0.0
        seen = self.group.processes_refused()
        while not self._stop.wait(_POLL_SECONDS):
            now, count = time.monotonic(), self.group.processes_refused()
            if count == seen:
                first = 0.0  # the burst subsided
                continue
            seen, first = count, first or now
            if now - first >= self.held:
                self.ended = True
                with contextlib.suppress(SandboxFailed, OSError):
                    self.group.kill()
                return

    def __enter__(self) -> CapWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@contextlib.contextmanager
def held_cap(group: Cgroup | None, held: float = HELD_SECONDS) -> Iterator[CapWatch | None]:
    """A CapWatch over the run's cgroup while the block runs (None without a cgroup)."""
    if group is None:
        yield None
        return
    with CapWatch(group, held) as watch:
        yield watch
