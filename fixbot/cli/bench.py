"""fixbot bench: fixbot over a corpus of failing repositories, one row each, and the totals.

A corpus is a folder of entries; an entry is a folder holding a repository's files and its
`.fixbot.yml` (not a git repository: the bench copies it to a temporary folder and commits it
there as one commit). Each entry is fixed by the code path `fixbot fix` runs, handed in by
cli.py (`FixEntry`), with its sandbox wrapped in `TimedSandbox` to count the seconds spent in
sandboxed commands. Rows, totals and their rendering are pure.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from fixbot import proc
from fixbot.config import CONFIG_FILE
from fixbot.errors import EnvironmentProblem, FixbotError, UsageError
from fixbot.paths import DIRNAME
from fixbot.proc import Completed
from fixbot.records import RunStatus
from fixbot.report import FixResult, error_result
from fixbot.sandbox import DEFAULT_LIMITS, Limits, RunSpec, Sandbox

# What an entry's copy leaves behind: another repository's history, fixbot's state, caches.
_NOT_COPIED = (".git", DIRNAME, "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache")
_GIT_IDENTITY = ("-c", "user.name=fixbot bench", "-c", "user.email=bench@fixbot.invalid")

Wrap = Callable[[Sandbox], Sandbox]
# cli.py's fix of one committed repository: (repository, wrap its sandbox) -> the result.
FixEntry = Callable[[Path, Wrap], FixResult]


@dataclass(frozen=True)
class Row:
    entry: str
    status: RunStatus
    attempts: int  # model attempts made
    attempts_to_pass: int | None  # the attempt that passed, when fixed (0: no model call)
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    sandbox_seconds: float
    wall_seconds: float
    classification: str  # code | flaky | environment, once the baseline ran
    reason: str

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "tokens": self.tokens}


def find_entries(corpus: Path) -> list[Path]:
    """The corpus's entries, by name: its folders that hold a .fixbot.yml."""
    if not corpus.is_dir():
        raise UsageError(f"no corpus folder at {corpus}")
    found = sorted(p for p in corpus.iterdir() if p.is_dir() and (p / CONFIG_FILE).is_file())
    if not found:
        raise UsageError(f"the corpus {corpus} has no entries (folders with a {CONFIG_FILE})")
    return found


def materialize(entry: Path, dest: Path) -> Path:
    """A git repository at dest holding the entry's files as one commit."""
    shutil.copytree(entry, dest, ignore=shutil.ignore_patterns(*_NOT_COPIED), symlinks=True)
    git = ["git", "-C", str(dest), *_GIT_IDENTITY, "-c", "commit.gpgsign=false"]
    try:
        proc.check([*git, "init", "-q", "-b", "main"], timeout=60)
        proc.check([*git, "add", "-A"], timeout=120)
        proc.check([*git, "commit", "-q", "--no-verify", "-m", "failing build"], timeout=120)
    except proc.CommandFailed as exc:
        raise EnvironmentProblem(f"cannot commit corpus entry {entry.name}: {exc}") from None
    return dest


def run_bench(
    found: Sequence[Path],
    fix: FixEntry,
    *,
    on_row: Callable[[Row], None] = lambda row: None,
    clock: Callable[[], float] = time.perf_counter,
) -> list[Row]:
    """Each entry committed in a temporary folder and fixed; an entry's error is its row."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="fixbot-bench-") as scratch:
        for entry in found:
            timer = SandboxTimer(clock)
            start = clock()
            try:
                result = fix(materialize(entry, Path(scratch) / entry.name), timer.wrap)
            except FixbotError as exc:
                result = error_result(exc, repo=str(entry))
            rows.append(row_of(entry.name, result, timer.seconds, clock() - start))
            on_row(rows[-1])
    return rows


def row_of(name: str, result: FixResult, sandbox_seconds: float, wall_seconds: float) -> Row:
    passed = [a["number"] for a in result.attempts if a["verdict"] == "pass"]
    return Row(
        entry=name,
        status=result.status,
        attempts=len(result.attempts),
        attempts_to_pass=(passed[-1] if passed else 0) if result.status == "fixed" else None,
        prompt_tokens=int(result.tokens.get("prompt", 0)),
        completion_tokens=int(result.tokens.get("completion", 0)),
        cost_usd=cost_of(result),
        sandbox_seconds=round(sandbox_seconds, 3),
        wall_seconds=round(wall_seconds, 3),
        classification=result.classification,
        reason="" if result.status == "fixed" else result.reason,
    )


def cost_of(result: FixResult) -> float:
    """The run's estimated cost, where the result carries one (0.0 where it does not)."""
    value = result.summary().get("cost_usd", getattr(result, "cost_usd", 0.0))
    return float(value or 0.0)


def totals(rows: Sequence[Row]) -> dict[str, Any]:
    statuses = [row.status for row in rows]
    to_pass = [row.attempts_to_pass for row in rows if row.attempts_to_pass is not None]
    return {
        "entries": len(rows),
        "fixed": statuses.count("fixed"),
        "escalated": statuses.count("escalated"),
        "error": statuses.count("error"),
        "other": sum(s not in ("fixed", "escalated", "error") for s in statuses),
        "attempts": sum(row.attempts for row in rows),
        "mean_attempts_to_pass": round(sum(to_pass) / len(to_pass), 2) if to_pass else None,
        "prompt_tokens": sum(row.prompt_tokens for row in rows),
        "completion_tokens": sum(row.completion_tokens for row in rows),
        "tokens": sum(row.tokens for row in rows),
        "cost_usd": round(sum(row.cost_usd for row in rows), 6),
        "sandbox_seconds": round(sum(row.sandbox_seconds for row in rows), 3),
        "wall_seconds": round(sum(row.wall_seconds for row in rows), 3),
    }


def render_json(rows: Sequence[Row], **facts: Any) -> str:
    data = {**facts, "rows": [row.as_dict() for row in rows], "totals": totals(rows)}
    return json.dumps(data, sort_keys=True) + "\n"


_HEADER = ("ENTRY", "STATUS", "ATTEMPTS", "TO PASS", "TOKENS", "COST $", "SANDBOX S", "WALL S")
_REASON_WIDTH = 100


def render_table(rows: Sequence[Row]) -> str:
    """One line per entry, a totals line, the counts; the reason for each one not fixed."""
    total = totals(rows)
    lines = [(*_cells(row), _one_line(row.reason)) for row in rows]
    mean = total["mean_attempts_to_pass"]
    summary = (
        f"{total['fixed']}/{total['entries']} fixed",
        str(total["attempts"]),
        "-" if mean is None else f"{mean:g}",
        str(total["tokens"]),
        f"{total['cost_usd']:.4f}",
        f"{total['sandbox_seconds']:.1f}",
        f"{total['wall_seconds']:.1f}",
    )
    table = [(*_HEADER, "REASON"), *lines, ("TOTAL", *summary, "")]
    widths = [max(len(line[i]) for line in table) for i in range(len(_HEADER))]
    rendered = [_align(line, widths) for line in table]
    rendered.insert(len(rendered) - 1, "-" * len(rendered[0]))
    counts = ", ".join(f"{total[k]} {k}" for k in ("fixed", "escalated", "error", "other"))
    return "\n".join([*rendered, f"{counts} of {total['entries']} entries", ""])


def _cells(row: Row) -> tuple[str, ...]:
    return (
        row.entry,
        row.status,
        str(row.attempts),
        "-" if row.attempts_to_pass is None else str(row.attempts_to_pass),
        str(row.tokens),
        f"{row.cost_usd:.4f}",
        f"{row.sandbox_seconds:.1f}",
        f"{row.wall_seconds:.1f}",
    )


def _align(line: Iterable[str], widths: Sequence[int]) -> str:
    cells = list(line)
    # Names and words to the left, numbers to the right; the reason runs on unpadded.
    padded = [
        cell.ljust(width) if i < 2 else cell.rjust(width)
        for i, (cell, width) in enumerate(zip(cells, widths, strict=False))
    ]
    return "  ".join([*padded, *cells[len(widths) :]]).rstrip()


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _REASON_WIDTH else text[: _REASON_WIDTH - 1] + "…"


class SandboxTimer:
    """The seconds an entry's sandboxed commands took, whichever thread ran them."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self.seconds = 0.0
        self._lock = threading.Lock()

    def wrap(self, sandbox: Sandbox) -> Sandbox:
        return TimedSandbox(sandbox, self)

    def add(self, seconds: float) -> None:
        with self._lock:
            self.seconds += seconds


class TimedSandbox:
    """A Sandbox that runs everything through `inner` and adds the time to `timer`."""

    def __init__(self, inner: Sandbox, timer: SandboxTimer) -> None:
        self.inner = inner
        self.timer = timer
        self.name = inner.name
        self.host_toolchain = inner.host_toolchain

    @property
    def layered(self) -> bool:
        return self.inner.layered

    @property
    def passes_fds(self) -> bool:
        return self.inner.passes_fds

    def run(self, argv: Sequence[str], spec: RunSpec) -> Completed:
        start = self.timer.clock()
        try:
            return self.inner.run(argv, spec)
        finally:
            self.timer.add(self.timer.clock() - start)

    def prepare(
        self,
        argv: Sequence[str],
        *,
        workspace: Path,
        env_dir: Path,
        limits: Limits = DEFAULT_LIMITS,
    ) -> Completed:
        start = self.timer.clock()
        try:
            return self.inner.prepare(argv, workspace=workspace, env_dir=env_dir, limits=limits)
        finally:
            self.timer.add(self.timer.clock() - start)

    def describe(self) -> str:
        return self.inner.describe()

    def close(self) -> None:
        self.inner.close()
