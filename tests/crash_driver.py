"""Runs `fixbot fix` in-process and dies (os._exit) right after a chosen node's update was
checkpointed: a crash at that node boundary. Used by tests/test_crash_resume.py."""

from __future__ import annotations

import os
import sys
from typing import Any

from fixbot import cli
from fixbot.runs import session


def main() -> None:
    crash_after = os.environ["FIXBOT_CRASH_AFTER"]
    real_run_fix = session.run_fix

    def run_fix(*args: Any, **kwargs: Any) -> Any:
        observe = kwargs["observe"]

        def dying(node: str, update: dict[str, Any]) -> None:
            observe(node, update)
            if node == crash_after:
                os._exit(9)

        kwargs["observe"] = dying
        return real_run_fix(*args, **kwargs)

    cli.run_fix = run_fix  # type: ignore[attr-defined]
    raise SystemExit(cli.main(sys.argv[1:]))


if __name__ == "__main__":
    main()
