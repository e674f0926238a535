"""A run's result as data (FixResult), its files on disk, and the one mapping to exit codes.

Exit codes:
    0  fixed, or already passing
    1  not fixed: escalated (attempts or budget spent, every candidate rejected, flaky,
       environment) or aborted by a human
    2  usage or configuration error
    3  environment error: no sandbox, model unreachable, not a git repository, dirty tree, ...
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fixbot import __version__
from fixbot.errors import UsageError
from fixbot.loop.state import FixState
from fixbot.records import Attempt, round_firsts
from fixbot.secrets import redact

EXIT_OK = 0
EXIT_NOT_FIXED = 1
EXIT_USAGE = 2
EXIT_ENVIRONMENT = 3

_EXIT_BY_STATUS = {
    "fixed": EXIT_OK,
    "already_passing": EXIT_OK,
    "escalated": EXIT_NOT_FIXED,
    "aborted": EXIT_NOT_FIXED,
}


def exit_code(status: str, error_kind: str = "") -> int:
    """The one mapping from a run's outcome to the process exit code."""
    if status == "error":
        return EXIT_USAGE if error_kind == "usage" else EXIT_ENVIRONMENT
    return _EXIT_BY_STATUS[status]


def error_kind(error: BaseException) -> str:
    return "usage" if isinstance(error, UsageError) else "environment"


@dataclass(frozen=True)
class FixResult:
    status: str  # fixed | already_passing | escalated | error
    reason: str
    error_kind: str = ""  # usage | environment, when status is error
    thread_id: str = ""
    repo: str = ""
    commit: str = ""
    sandbox: str = ""
    config: Mapping[str, Any] = field(default_factory=dict)
    manifest_sha256: str = ""
    protected: list[str] = field(default_factory=list)
    baseline: Mapping[str, Any] | None = None
    attempts: list[Attempt] = field(default_factory=list)
    verification: Mapping[str, Any] | None = None
    diff: str = ""
    tokens: Mapping[str, int] = field(default_factory=dict)
    cost_usd: float = 0.0  # estimated from the price table (0 when the models have no price)
    classification: str = ""  # code | flaky | environment
    labels: list[str] = field(default_factory=list)
    flaky_tests: list[str] = field(default_factory=list)
    dropped_hunks: list[str] = field(default_factory=list)
    network_probe: str = ""
    reproduce: str = ""  # one command that re-runs the verification locally
    allowed_protected: list[str] = field(default_factory=list)  # opened to edits by a human
    hint: str = ""
    resumes: int = 0
    escalated_at: list[int] = field(default_factory=list)  # attempts done at each escalation
    version: str = __version__

    @property
    def exit_code(self) -> int:
        return exit_code(self.status, self.error_kind)

    @property
    def diff_sha256(self) -> str:
        return hashlib.sha256(self.diff.encode()).hexdigest() if self.diff else ""

    def to_json(self) -> str:
        data = asdict(self)
        data["diff_sha256"] = self.diff_sha256
        return json.dumps(data, indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> FixResult:
        data = json.loads(text)
        data.pop("diff_sha256", None)
        return cls(**data)

    def summary(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "reason": self.reason,
            "thread_id": self.thread_id,
            "commit": self.commit,
            "attempts": len(self.attempts),
            "tokens": dict(self.tokens),
            "cost_usd": round(self.cost_usd, 6),
            "exit_code": self.exit_code,
        }


def from_state(state: FixState, **facts: Any) -> FixResult:
    attempts = state["attempts"]
    tokens = {
        "prompt": sum(a["prompt_tokens"] for a in attempts),
        "completion": sum(a["completion_tokens"] for a in attempts),
    }
    tokens["total"] = tokens["prompt"] + tokens["completion"]
    return FixResult(
        status=state["status"],
        reason=state["reason"],
        thread_id=state["thread_id"],
        commit=state["commit"],
        baseline=state["baseline"],
        attempts=list(attempts),
        verification=state["verification"],
        diff=state["final_diff"] if state["status"] == "fixed" else "",
        tokens=tokens,
        cost_usd=float(state["cost_used"]),
        classification=state["classification"],
        labels=list(state["labels"]),
        flaky_tests=list(state["flaky_tests"]),
        dropped_hunks=list(state["dropped_hunks"]),
        network_probe=state["network_probe"],
        allowed_protected=list(state["allowed_protected"]),
        hint=state["hint"],
        resumes=state["resumes"],
        escalated_at=list(state["escalated_at"]),
        **facts,
    )


def error_result(error: BaseException, **facts: Any) -> FixResult:
    return FixResult(status="error", reason=str(error), error_kind=error_kind(error), **facts)


def write_outputs(result: FixResult, out: Path, *, known: Iterable[str] = ()) -> list[Path]:
    """evidence.json, report.md and (only when fixed) fix.diff, each written atomically.

    Everything is scanned for secrets and redacted first (model replies and logs quote
    whatever the repository or the model wrote); a fix that adds one was refused earlier.
    """
    out.mkdir(parents=True, exist_ok=True)
    written = [
        _write_atomic(out / "evidence.json", redact(result.to_json(), known=known)),
        _write_atomic(out / "report.md", redact(render_markdown(result), known=known)),
    ]
    stale = out / "fix.diff"
    if result.status == "fixed":
        written.append(_write_atomic(stale, result.diff))
    elif stale.exists():
        stale.unlink()
    return written


def _write_atomic(path: Path, text: str) -> Path:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)
    return path


_HEADLINES = {
    "fixed": "fixbot fixed the failing checks",
    "already_passing": "The checks already pass: nothing to fix",
    "escalated": "fixbot could not fix the failing checks: a human is needed",
    "aborted": "The fix was aborted by a human",
    "error": "fixbot could not run",
}


def _cell(text: str, limit: int = 120) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_markdown(result: FixResult) -> str:
    lines = [f"## {_HEADLINES[result.status]}", "", f"**Status:** `{result.status}`  "]
    lines += [f"**Why:** {_cell(result.reason, 500)}  "]
    if result.commit:
        lines += [f"**Commit:** `{result.commit}`  ", f"**Sandbox:** {result.sandbox}  "]
        lines += [f"**Thread:** `{result.thread_id}`  "]
    if result.labels:
        lines += [f"**Labels:** {', '.join(result.labels)}  "]
    if result.allowed_protected:
        allowed = ", ".join(f"`{p}`" for p in result.allowed_protected)
        lines += [f"**Protected files a maintainer allowed to change:** {allowed}  "]
    lines += [""]
    lines += _tests_table(result)
    lines += _gates_table(result)
    if result.attempts:
        lines += ["", "### Attempts", "", "| # | model | tokens | cost | verdict | problems |"]
        lines += ["|---|---|---|---|---|---|"]
        for a in result.attempts:
            problems = "; ".join(a["problems"][:3]) or "-"
            tokens = a["prompt_tokens"] + a["completion_tokens"]
            spent = float(a.get("cost_usd", 0.0))
            model = a["model"]
            if a.get("temperature") is not None:
                model += f" (temperature {a['temperature']:g})"
            lines.append(
                f"| {a['number']} | {_cell(model, 60)} | {tokens} | ${spent:.4f} | "
                f"{a['verdict']} | {_cell(problems)} |"
            )
    path = run_path(result)
    if path:
        lines += ["", "### The path this run took", "", *mermaid(path)]
    if result.diff:
        lines += ["", "### The change", "", "```diff", result.diff.rstrip("\n"), "```"]
        lines += ["", f"SHA-256 of the diff: `{result.diff_sha256}`"]
    if result.dropped_hunks:
        lines += [
            "",
            f"{len(result.dropped_hunks)} hunk(s) of the passing diff were not needed "
            "for the pass and were dropped; the rest was re-verified.",
        ]
    if result.tokens:
        lines += [
            "",
            f"Tokens: {result.tokens.get('total', 0)} "
            f"(prompt {result.tokens.get('prompt', 0)}, "
            f"completion {result.tokens.get('completion', 0)}), "
            f"estimated cost ${result.cost_usd:.4f}",
        ]
    if result.manifest_sha256:
        lines += [
            f"Protected files: {len(result.protected)}, manifest SHA-256 `{result.manifest_sha256}`"
        ]
    if result.network_probe:
        probe = "; ".join(result.network_probe.splitlines())
        lines += [f"Network inside the sandbox: {_cell(probe, 300)}"]
    if result.reproduce:
        lines += ["", "Re-check this verification locally:", "", f"    {result.reproduce}"]
    lines += ["", f"<sub>fixbot {result.version}</sub>", ""]
    return "\n".join(lines)


def _gates_table(result: FixResult) -> list[str]:
    if not result.baseline:
        return []
    before = Counter(f["tool"] for f in result.baseline.get("findings", []))
    after = Counter(f["tool"] for f in (result.verification or {}).get("findings", []))
    tools = sorted(set(before) | set(after))
    if not tools:
        return []
    rows = ["", "### Gates (findings)", "", "| gate | before | after |", "|---|---|---|"]
    for tool in tools:
        now = after[tool] if result.verification else "-"
        rows.append(f"| {tool} | {before[tool]} | {now} |")
    return rows


def _tests_table(result: FixResult) -> list[str]:
    if not result.baseline:
        return []
    before = result.baseline.get("tests", {})
    failing = sorted(t for t, r in before.items() if r["outcome"] in ("failed", "error"))
    if not failing:
        return []
    after: Mapping[str, Any] = (result.verification or {}).get("tests", {})
    rows = ["### Originally failing tests", "", "| test | before | after |", "|---|---|---|"]
    for test in failing:
        now = after.get(test, {}).get("outcome", "-")
        rows.append(f"| `{_cell(test, 100)}` | {before[test]['outcome']} | {now} |")
    return rows


# (shape, label): "start" and "end" are stadiums, "human" a hexagon, "step" a box.
Step = tuple[str, str]


def run_path(result: FixResult) -> list[Step]:
    """The graph nodes the run went through, in order, from the recorded result alone."""
    if result.status == "error":
        return []
    path: list[Step] = [("start", "baseline")]
    if result.status == "already_passing":
        return [*path, ("end", "already passing")]
    escalations = list(result.escalated_at)
    if 0 in escalations:
        path += _escalation(result, after=0)
    firsts = round_firsts(result.attempts)
    for index, attempt in enumerate(result.attempts):
        number, verdict = attempt["number"], attempt["verdict"]
        size = int(attempt.get("round_size", 1))
        first = firsts[index]
        if size < 2:
            path.append(("step", f"generate {number}"))
        elif number == first:  # a round of parallel candidates: one step for all of them
            path.append(("step", f"candidates {first}-{first + size - 1} at once"))
        if verdict == "rejected":
            path.append(("step", f"apply {number}: rejected"))
        else:
            path.append(("step", f"check {number}: {verdict}"))
        last = index == len(result.attempts) - 1
        if verdict == "pass" and number == first + size - 1:  # a round's winner is its last
            held = not (number in escalations or (last and result.status != "fixed"))
            path.append(("step", f"verify: {'pass' if held else 'fail'}"))
            if held:
                if result.dropped_hunks:
                    path.append(("step", f"minimize: {len(result.dropped_hunks)} dropped"))
                path.append(("end", "finalize: fixed"))
                continue
        if number in escalations:
            path += _escalation(result, after=number)
        elif not last and number == first + size - 1:
            path.append(("step", "reflect"))
    return path


def _escalation(result: FixResult, *, after: int) -> list[Step]:
    steps: list[Step] = [("step", "escalate")]
    if any(attempt["number"] > after for attempt in result.attempts):
        return [*steps, ("human", "await human: continue")]
    if result.status == "aborted":
        return [*steps, ("human", "await human: abort"), ("end", "aborted")]
    return [*steps, ("human", "await human")]


_SHAPES = {"start": '(["{}"])', "end": '(["{}"])', "human": '{{{{"{}"}}}}', "step": '["{}"]'}


def mermaid(path: list[Step]) -> list[str]:
    """A Mermaid flowchart (GitHub renders it) of the path; labels are fixbot's own words."""
    lines = ["```mermaid", "flowchart LR"]
    nodes = [f"n{i}" + _SHAPES[shape].format(label) for i, (shape, label) in enumerate(path)]
    if len(nodes) == 1:
        lines.append(f"  {nodes[0]}")
    for i in range(1, len(nodes)):
        lines.append(f"  {nodes[i - 1] if i == 1 else f'n{i - 1}'} --> {nodes[i]}")
    return [*lines, "```"]
