"""Live progress on stderr from the graph's update stream: node, attempt, outcome, elapsed
seconds, tokens. On a terminal, a status line rewritten in place (kept at each attempt's end);
otherwise one JSON line per step through the log. stdout is never touched.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TextIO

_KEPT = frozenset(
    {"baseline", "judge", "pick", "verify", "review", "finalize", "escalate", "paused", "resumed"}
)


class Progress:
    """An Observer (session.Observer) that shows where the run is."""

    def __init__(
        self,
        logger: Any,
        *,
        terminal: TextIO | None,
        attempts: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.logger = logger
        self.terminal = terminal
        self.attempts = attempts
        self.clock = clock
        self.start = clock()
        self.attempt = 0
        self.tokens = 0

    def __call__(self, node: str, update: dict[str, Any]) -> None:
        self.attempt = int(update.get("attempt", self.attempt))
        self.tokens = int(update.get("tokens_used", self.tokens))
        outcome = str(update.get("verdict") or update.get("status") or "")
        fields: dict[str, Any] = {
            "node": node,
            "attempt": self.attempt,
            "outcome": outcome,
            "elapsed": round(self.clock() - self.start, 1),
            "tokens": self.tokens,
        }
        for key in ("thread_id", "next", "reason", "finished"):
            if key in update:
                fields[key] = update[key]
        if node == "candidate" and update.get("candidates"):
            gathered = update["candidates"][-1]
            fields["slot"] = gathered["slot"]
            made = gathered["attempt"]
            fields["outcome"] = "refused" if made is None else made["verdict"]
        if node in ("judge", "pick") and update.get("attempts"):
            last = update["attempts"][-1]
            fields.update(attempt=last["number"], outcome=last["verdict"])
            fields["problems"] = last["problems"][:3]
            check = last.get("check") or {}
            if check.get("tampering"):  # the model is told less; the run log has it all
                fields["tampering"] = check["tampering"][:5]
        if node == "review" and update.get("reviews"):
            fields["outcome"] = update["reviews"][-1]["verdict"]
        if self.terminal is None:
            self.logger.info("resumed" if node == "resumed" else "node", **fields)
            return
        line = (
            f"{fields['elapsed']:7.1f}s  attempt {fields['attempt']}/{self.attempts}  "
            f"{node:<11} {fields['outcome']:<14} {self.tokens:>8,} tokens"
        )
        end = "\n" if node in _KEPT else ""
        self.terminal.write(f"\r\x1b[K{line}{end}")
        self.terminal.flush()
