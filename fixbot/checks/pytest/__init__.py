"""pytest as fixbot runs it: its own plugin staged read-only under a random name (plugin.py,
package data, never imported by fixbot), the report channel the plugin writes to and fixbot
alone reads (channel.py), the channel's events parsed (events.py) and cross-checked against
pytest's own exit status, tallies and summary (crosscheck.py), one status decided, and a test
that ends its process deselected for a rerun (harness.py).
"""

from __future__ import annotations

from fixbot.checks.pytest.harness import (
    Launcher,
    SandboxLauncher,
    TestRun,
    junit_id,
    out_of_memory,
    run_pytest,
)

__all__ = ["Launcher", "SandboxLauncher", "TestRun", "junit_id", "out_of_memory", "run_pytest"]
