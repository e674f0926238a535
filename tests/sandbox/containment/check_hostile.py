"""Copied into each hostile workspace as tests/test_hostile.py: runs the case's attack.

The test passes or fails as the attack goes; the suite never looks at that, only at what the
attack managed to do.
"""

import hostile
import probe


def test_hostile():
    probe.record(started=True)
    probe.linger()
    hostile.attack()
    probe.record(finished=True)
