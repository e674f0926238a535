"""The result for a human: report.md, the PR body, the job summary (one renderer for all)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from fixbot.inert import code_span, fenced, prose
from fixbot.records import REVIEW_BLOCKS, round_firsts
from fixbot.report.gates import auto_gates
from fixbot.report.result import FixResult

_HEADLINES = {
    "fixed": "fixbot fixed the failing checks",
    "already_passing": "The checks already pass: nothing to fix",
    "escalated": "fixbot could not fix the failing checks: a human is needed",
    "aborted": "The fix was aborted by a human",
    "error": "fixbot could not run",
}


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cell(text: str, limit: int = 120) -> str:
    """Untrusted text as prose in a table cell (or a line): cut first, then made inert."""
    return prose(_short(text, limit))


def _code_cell(text: str, limit: int = 100) -> str:
    """Untrusted text as code in a table cell: GFM splits the row at `|` even inside a span."""
    return code_span(_short(text, limit)).replace("|", "\\|")


def render_markdown(result: FixResult) -> str:
    """Every field is shown as data: in the publish job the result was read from a file."""
    lines = [f"## {_HEADLINES[result.status]}", "", f"**Status:** {code_span(result.status)}  "]
    lines += [f"**Why:** {_cell(result.reason, 500)}  "]
    if result.commit:
        lines += [f"**Commit:** {code_span(result.commit)}  "]
        lines += [f"**Sandbox:** {_cell(result.sandbox, 60)}  "]
        lines += [f"**Thread:** {code_span(result.thread_id)}  "]
    if result.labels:
        lines += [f"**Labels:** {', '.join(code_span(label) for label in result.labels)}  "]
    if result.allowed_protected:
        allowed = ", ".join(code_span(p) for p in result.allowed_protected)
        lines += [f"**Protected files a maintainer allowed to change:** {allowed}  "]
    lines += [""]
    lines += _tests_table(result)
    lines += _checks_table(result)
    lines += _steps_not_run(result)
    if result.attempts:
        lines += ["", "### Attempts", "", "| # | model | tokens | cost | verdict | problems |"]
        lines += ["|---|---|---|---|---|---|"]
        lines += [_attempt_row(a) for a in result.attempts]
    lines += _reviews(result)
    path = run_path(result)
    if path:
        lines += ["", "### The path this run took", "", *mermaid(path)]
    if result.diff:
        lines += ["", "### The change", "", fenced(result.diff, "diff")]
        lines += ["", f"SHA-256 of the diff: {code_span(result.diff_sha256)}"]
    if result.dropped_hunks:
        lines += [
            "",
            f"{len(result.dropped_hunks)} hunk(s) of the passing diff were not needed "
            "for the pass and were dropped; the rest was re-verified.",
        ]
    if result.tokens:
        tokens = {k: _number(result.tokens.get(k, 0)) for k in ("total", "prompt", "completion")}
        lines += [
            "",
            f"Tokens: {tokens['total']} (prompt {tokens['prompt']}, "
            f"completion {tokens['completion']}), estimated cost ${_money(result.cost_usd)}",
        ]
    if result.manifest_sha256:
        lines += [
            f"Protected files: {len(result.protected)}, "
            f"manifest SHA-256 {code_span(result.manifest_sha256)}"
        ]
    if result.network_probe:
        probe = "; ".join(result.network_probe.splitlines())
        lines += [f"Network inside the sandbox: {_cell(probe, 300)}"]
    if result.not_secrets:
        names = ", ".join(code_span(name) for name in result.not_secrets)
        lines += [
            f"Not redacted: {names} holds a placeholder (too short or too common to be a "
            "secret, such as a local server's `local`)"
        ]
    if result.reproduce:
        lines += ["", "Re-check this verification locally:", "", fenced(result.reproduce)]
    lines += ["", f"<sub>fixbot {_cell(result.version, 40)}</sub>", ""]
    return "\n".join(lines)


def _attempt_row(a: Mapping[str, Any]) -> str:
    problems = "; ".join(str(p) for p in a["problems"][:3]) or "-"
    tokens = _number(a["prompt_tokens"] + a["completion_tokens"])
    model = str(a["model"])
    if isinstance(a.get("temperature"), int | float):
        model += f" (temperature {a['temperature']:g})"
    return (
        f"| {_number(a['number'])} | {_cell(model, 60)} | {tokens} | "
        f"${_money(a.get('cost_usd', 0.0))} | {_cell(str(a['verdict']), 20)} | "
        f"{_cell(problems)} |"
    )


def _reviews(result: FixResult) -> list[str]:
    """The reviewer's verdicts on the verified diffs: what it said is data, cut and made inert."""
    if not result.reviews:
        return []
    rows = ["", "### Review", ""]
    rows += ["A second model read the verified diff. Special-casing or tampering keeps it from"]
    rows += ["shipping; no verdict neither passes nor blocks anything.", ""]
    rows += ["| attempt | reviewer | verdict | why | tokens | cost |", "|---|---|---|---|---|---|"]
    for found in result.reviews:
        tokens = _number(found.get("prompt_tokens", 0) + found.get("completion_tokens", 0))
        rows.append(
            f"| {_number(found['attempt'])} | {_cell(str(found['model']), 60)} | "
            f"{_cell(_said(found.get('verdict')), 20)} | {_cell(str(found['reason']), 300)} | "
            f"{tokens} | ${_money(found.get('cost_usd', 0.0))} |"
        )
    return rows


def _said(verdict: object) -> str:
    return "no verdict" if verdict == "none" else str(verdict)


def _number(value: object) -> str:
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else "?"


def _money(value: object) -> str:
    return f"{value:.4f}" if isinstance(value, int | float) and not isinstance(value, bool) else "?"


def _checks_table(result: FixResult) -> list[str]:
    """A row per check: how it ended at baseline and in the final verification."""
    runs = (result.baseline or {}).get("checks", [])
    if not runs:
        return _gates_table(result)  # evidence from before per-check records
    after = {run["name"]: run for run in (result.verification or {}).get("checks", [])}
    rows = ["", "### Checks", "", "| check | kind | before | after |", "|---|---|---|---|"]
    for run in runs:
        kind = _cell(str(run["kind"]), 20) + (" (gate: new findings block)" if run["gate"] else "")
        now = after.get(run["name"])
        shown = _state(now) if now is not None else "-"
        rows.append(f"| {_code_cell(str(run['name']), 64)} | {kind} | {_state(run)} | {shown} |")
    aside = (result.baseline or {}).get("set_aside", [])
    for run in aside:  # a gate that could not run on the failing commit guarded nothing
        why = "set aside: it could not run on the failing commit"
        rows.append(f"| {_code_cell(str(run['name']), 64)} | gate | {_state(run)} | {why} |")
    ran = {str(run["name"]) for run in [*runs, *aside] if run["gate"]}
    return rows + auto_gates(result.config, ran)


def _state(run: Mapping[str, Any]) -> str:
    return _cell(f"{run['status']}: {run['summary']}", 100)


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
        rows.append(f"| {_cell(str(tool), 20)} | {before[tool]} | {now} |")
    return rows


def _steps_not_run(result: FixResult) -> list[str]:
    """The Action: failed CI steps (or commands in them) fixbot did not run as checks."""
    if not result.steps_not_run:
        return []
    rows = ["", "### CI steps fixbot did not run", ""]
    rows += ["These failed in the CI run; fixbot runs checks as plain commands in its sandbox"]
    rows += ["(no shell, no network, no services), so it did not run them:", ""]
    rows += ["| job | step | command | why |", "|---|---|---|---|"]
    for entry in result.steps_not_run:
        command = _code(entry["command"]) if entry["command"] else "-"
        why = _cell(entry["why"], 200).replace("<", "&lt;")
        rows.append(f"| {_code(entry['job'])} | {_code(entry['step'])} | {command} | {why} |")
    return rows


def _code(text: str) -> str:
    """Untrusted text (a CI step, a command) as one Markdown code span in a table cell."""
    return f"`{_cell(text, 100).replace('`', chr(39))}`"


def _tests_table(result: FixResult) -> list[str]:
    if not result.baseline:
        return []
    before = result.baseline.get("tests", {})
    failing = result.failing_tests
    rows: list[str] = []
    after: Mapping[str, Any] = (result.verification or {}).get("tests", {})
    if failing:
        rows += ["### Originally failing tests", "", "| test | before | after |", "|---|---|---|"]
    for test in failing:
        now = after.get(test, {}).get("outcome", "-")
        was = before[test]["outcome"]
        rows.append(f"| {_code_cell(test)} | {_cell(was, 20)} | {_cell(str(now), 20)} |")
    if result.quarantined:
        rows += ["", "### Quarantined tests (outside the pass definition)", ""]
        rows += ["Their outcome neither made nor broke the pass.", ""]
        rows += ["| test | why | after |", "|---|---|---|"]
    for test, why in result.quarantined.items():
        now = after.get(test, {}).get("outcome", "-")
        rows.append(f"| {_code_cell(test)} | {_cell(why, 300)} | {_cell(str(now), 20)} |")
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
            reviewed = [r.get("verdict") for r in result.reviews if r.get("attempt") == number]
            blocked = bool(reviewed) and reviewed[-1] in REVIEW_BLOCKS
            held = not (blocked or number in escalations or (last and result.status != "fixed"))
            path.append(("step", f"verify: {'pass' if held or blocked else 'fail'}"))
            if held or blocked:
                if result.dropped_hunks:
                    path.append(("step", f"minimize: {len(result.dropped_hunks)} dropped"))
                if reviewed:
                    path.append(("step", f"review: {_said(reviewed[-1])}"))
            if held:
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


_LABEL_UNSAFE = re.compile(r"[^A-Za-z0-9 :,.()_-]")
_SHAPES = {"start": '(["{}"])', "end": '(["{}"])', "human": '{{{{"{}"}}}}', "step": '["{}"]'}


def mermaid(path: list[Step]) -> list[str]:
    """A Mermaid flowchart (GitHub renders it) of the path. The labels are fixbot's own words
    around numbers and verdicts read from the result; anything else in them becomes `?`."""
    lines = ["```mermaid", "flowchart LR"]
    nodes = [
        f"n{i}" + _SHAPES[shape].format(_LABEL_UNSAFE.sub("?", label))
        for i, (shape, label) in enumerate(path)
    ]
    if len(nodes) == 1:
        lines.append(f"  {nodes[0]}")
    for i in range(1, len(nodes)):
        lines.append(f"  {nodes[i - 1] if i == 1 else f'n{i - 1}'} --> {nodes[i]}")
    return [*lines, "```"]
