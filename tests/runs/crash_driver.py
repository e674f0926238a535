"""Runs `fixbot fix` in-process and dies (os._exit) right after a chosen node's update was
checkpointed: a crash at that node boundary. Used by tests/runs/test_crash_resume.py."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from typing import Any

from fixbot import cli
from fixbot.cli import fix as fix_module
from fixbot.runs import FixRequest
from fixbot.runs.clients import Clients


def main() -> None:
    crash_after = os.environ["FIXBOT_CRASH_AFTER"]
    real_run_fix = fix_module.run_fix

    def run_fix(request: FixRequest, clients: Clients) -> Any:
        def dying(node: str, update: dict[str, Any]) -> None:
            clients.observe(node, update)
            if node == crash_after:
                os._exit(9)

        return real_run_fix(request, replace(clients, observe=dying))

    fix_module.run_fix = run_fix  # type: ignore[assignment]
    raise SystemExit(cli.main(sys.argv[1:]))


if __name__ == "__main__":
    main()
