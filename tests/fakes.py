"""Test doubles shared by the suite: the scripted replies for the bundled example, an in-process
Model, a Sandbox that delegates to a real one, and a Sandbox that plays the checks over a tree.

The end-to-end tests talk to real servers (fake_openai.py, fake_github.py) with the real clients;
these doubles are for the fast in-process layer (tests/loop/) and for wrapping a real backend.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fixbot.model.client import ContextExceeded, DeadlinePassed, Reply
from fixbot.model.window import ContextRefusal, ContextWindow
from fixbot.proc import Completed
from fixbot.sandbox import DEFAULT_LIMITS, Limits, RunSpec, Sandbox

# --- scripted replies for the bundled example (examples/calc: mean divides by len + 1) ------


def reply(diff: str, prose: str = "The mean divides by the wrong count.") -> str:
    return f"{prose}\n\n```diff\n{diff}```\n"


GOOD_DIFF = """--- a/calc.py
+++ b/calc.py
@@ -10,3 +10,3 @@
 def mean(values: list[float]) -> float:
     \"\"\"The arithmetic mean of a non-empty list.\"\"\"
-    return sum(values) / (len(values) + 1)
+    return sum(values) / len(values)
"""
GOOD = reply(GOOD_DIFF)

WRONG_FIXES = (
    "sum(values) / (len(values) + 2)",
    "max(values) - min(values) + 0.5",
    "float(len(values)) * 3.25",
    "sorted(values)[0] if values else -1.0",
    "abs(values[-1] - values[0]) / 7",
    "round(sum(v * v for v in values), 2)",
    "values.count(0.0) + 42.0",
    "sum(values[:1]) - 9.75",
)


def wrong(n: int) -> str:
    """A wrong fix; different n give genuinely different fixes (not near-repeats)."""
    fix = WRONG_FIXES[n % len(WRONG_FIXES)]
    return reply(
        f"""--- a/calc.py
+++ b/calc.py
@@ -12,1 +12,1 @@
-    return sum(values) / (len(values) + 1)
+    return {fix}
""",
        prose=f"Attempt number {n}: return {fix}.",
    )


# --- an in-process Model -------------------------------------------------------------------


@dataclass
class ScriptedModel:
    """The Model protocol without a server: each call takes the next scripted reply (an
    exhausted script fails the test loudly) and records what it was asked. With
    `refuse_over` (characters), a longer request is refused as a server with a window of
    `refused_window` tokens would, counting two characters a token (`refused` records it)."""

    replies: list[str]
    name: str = "scripted-model"
    prompt_tokens: int = 100
    completion_tokens: int = 50
    asked: list[list[dict[str, str]]] = field(default_factory=list)
    temperatures: list[float | None] = field(default_factory=list)
    window: ContextWindow = field(default_factory=ContextWindow)
    max_tokens: list[int | None] = field(default_factory=list)
    refused_window: int = 0  # 0: no window
    refused: list[list[dict[str, str]]] = field(default_factory=list)

    @staticmethod
    def counted(messages: Sequence[Mapping[str, str]]) -> int:
        """The request's tokens as the windowed double counts them: two characters each."""
        return sum(len(m["content"]) for m in messages) // 2

    def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        temperature: float | None = None,
        deadline: float | None = None,
        max_tokens: int | None = None,
    ) -> Reply:
        if deadline is not None and time.time() >= deadline:
            raise DeadlinePassed("the deadline passed before the call")
        counted = self.counted(messages)
        if self.refused_window and counted + (max_tokens or 0) > self.refused_window:
            self.refused.append([dict(m) for m in messages])
            refusal = ContextRefusal(self.refused_window, counted)
            raise ContextExceeded(f"HTTP 400: {counted} tokens in the messages", refusal)
        if not self.replies:
            raise AssertionError(f"the script is exhausted after {len(self.asked)} calls")
        self.asked.append([dict(m) for m in messages])
        self.temperatures.append(temperature)
        self.max_tokens.append(max_tokens)
        assert not self.refused_window or counted + (max_tokens or 0) <= self.refused_window
        text = self.replies.pop(0)
        return Reply(text, self.name, self.prompt_tokens, self.completion_tokens, False)


# --- sandboxes -----------------------------------------------------------------------------


class DelegatingSandbox:
    """Forwards every call to a real backend; a test overrides only what it changes."""

    def __init__(self, inner: Sandbox) -> None:
        self.inner = inner
        self.name = inner.name
        self.host_toolchain = inner.host_toolchain

    @property
    def layered(self) -> bool:
        return self.inner.layered

    @property
    def passes_fds(self) -> bool:
        return self.inner.passes_fds

    def run(self, argv: Sequence[str], spec: RunSpec) -> Completed:
        return self.inner.run(argv, spec)

    def prepare(
        self,
        argv: Sequence[str],
        *,
        workspace: Path,
        env_dir: Path,
        limits: Limits = DEFAULT_LIMITS,
        env: Mapping[str, str] | None = None,
        mounts: Sequence[tuple[Path, str]] = (),
    ) -> Completed:
        return self.inner.prepare(
            argv, workspace=workspace, env_dir=env_dir, limits=limits, env=env, mounts=mounts
        )

    def describe(self) -> str:
        return self.inner.describe()

    def close(self) -> None:
        self.inner.close()


Outcomes = Callable[[Path], Mapping[str, str]]


Findings = Callable[[Path], Sequence[tuple[str, int, str, str]]]  # (path, line, code, message)


def _none(tree: Path) -> list[tuple[str, int, str, str]]:
    return []


class PlayedSandbox:
    """A Sandbox that runs nothing: the test command's per-test outcomes are what `outcomes`
    says of the workspace it was given (JUnit-style ids of module-level tests, as fixbot keys
    its results; a run narrowed to node ids reports those only), written on the report channel
    as fixbot's pytest plugin writes them, with the canaries, tallies and summary line a real
    run has; ruff and mypy find what `lint` and `types` say of it (nothing by default); any
    other command prints that the network is refused. Fast and deterministic, for driving the
    loop in-process. `forges(tree)`: this workspace's code also writes a line of its own on the
    channel, as a candidate that lies to the report would (the run is then `tampered`)."""

    name = "played"
    layered = False
    passes_fds = True
    host_toolchain = True

    def __init__(
        self,
        outcomes: Outcomes,
        lint: Findings = _none,
        types: Findings = _none,
        forges: Callable[[Path], bool] | None = None,
    ) -> None:
        self.outcomes = outcomes
        self.lint = lint
        self.types = types
        self.forges = forges
        self.runs: list[tuple[str, ...]] = []

    def run(self, argv: Sequence[str], spec: RunSpec) -> Completed:
        self.runs.append(tuple(argv))
        if any(word.endswith("/runner.py") for word in argv[:4]):
            return self._judge(argv, spec)
        if "pytest" in argv:
            found = dict(self.outcomes(spec.workspace))
            selected = [word for word in argv if "::" in word]
            if selected:
                found = {t: o for t, o in found.items() if _node_id(t) in selected}
            forged = self.forges is not None and self.forges(spec.workspace)
            output = play_channel(found, _digest(spec.workspace), spec, forged=forged)
            code = int(any(o in ("failed", "error") for o in found.values()))
            return Completed(tuple(argv), code, output, 0.01, False, len(output))
        if "ruff" in argv:
            return self._ruff(argv, spec)
        if "mypy" in argv:
            lines = [f"{p}:{n}: error: {m}  [{c}]" for p, n, c, m in self.types(spec.workspace)]
            return Completed(tuple(argv), int(bool(lines)), "\n".join(lines), 0.01, False, 1)
        return Completed(tuple(argv), 0, "1.1.1.1:80 refused: played", 0.01, False, 26)

    def _judge(self, argv: Sequence[str], spec: RunSpec) -> Completed:
        """The second judgement's runner, played: the test's outcome in this workspace, said
        with the nonce fixbot sent over the socket it passed down."""
        at = next(i for i, word in enumerate(argv) if word.endswith("/runner.py"))
        mode, rest = argv[at + 2], list(argv[at + 3 :])  # runner.py CHANNEL MODE ...
        alone = f"{rest[2]}::{rest[1].replace('.', '::')}" if mode != "pytest" else ""
        nodeid = rest[0] if mode == "pytest" else alone
        played = {_node_id(t): o for t, o in self.outcomes(spec.workspace).items()}
        verdict = "passed" if played.get(nodeid) == "passed" else "failed"
        with socket.socket(fileno=os.dup(spec.fds[0])) as channel:
            nonce = channel.recv(256).split(b"\n")[0].decode()
            channel.sendall(f"{nonce} {verdict} played\n".encode())
        code = 0 if verdict == "passed" else 1
        return Completed(tuple(argv), code, f"judged {verdict}", 0.01, False, 13)

    def _ruff(self, argv: Sequence[str], spec: RunSpec) -> Completed:
        found = self.lint(spec.workspace)
        report = [w.split("=", 1)[1] for w in argv if w.startswith("--output-file=")]
        if report:
            items = [
                {"filename": p, "location": {"row": n}, "code": c, "message": m}
                for p, n, c, m in found
            ]
            (spec.outputs / Path(report[0]).name).write_text(json.dumps(items))
        return Completed(tuple(argv), int(bool(found)), "", 0.01, False, 0)

    def prepare(
        self,
        argv: Sequence[str],
        *,
        workspace: Path,
        env_dir: Path,
        limits: Limits = DEFAULT_LIMITS,
        env: Mapping[str, str] | None = None,
        mounts: Sequence[tuple[Path, str]] = (),
    ) -> Completed:
        return Completed(tuple(argv), 0, "", 0.01, False, 0)

    def describe(self) -> str:
        return "played (no process)"

    def close(self) -> None:
        pass


def _node_id(test: str) -> str:
    """pytest's node id for a played test id (`tests.test_calc::test_mean`)."""
    classname, _, name = test.rpartition("::")
    return f"{classname.replace('.', '/')}.py::{name}"


def _digest(tree: Path) -> str:
    """What the code in the tree is, in eight hex digits: a failure's message names it, so that
    different code fails with a different message (as a real assertion would)."""
    code = sorted((p.relative_to(tree).as_posix(), p.read_bytes()) for p in tree.rglob("*.py"))
    return hashlib.sha256(repr(code).encode()).hexdigest()[:8]


def play_channel(
    outcomes: Mapping[str, str], code: str, spec: RunSpec, *, forged: bool = False
) -> str:
    """Write a whole, self-consistent pytest run on the channel the harness passed in `spec`
    (what fixbot's plugin would say for these outcomes), and return the terminal's output;
    `forged`: with one more line that fixbot's plugin did not write."""
    env = dict(spec.env or {})
    run, address = env["FIXBOT_HARNESS_RUN"], env["FIXBOT_HARNESS_CHANNEL"]
    assert address == f"fd:{spec.fds[0]}", address
    tag = f"played{run}"
    canaries = {f"fixbot_canary_{tag}::{r}": r for r in ("integrity", "must_pass", "must_fail")}
    played = {_node_id(t): o for t, o in outcomes.items()}
    played.update({t: "xfailed" if r == "must_fail" else "passed" for t, r in canaries.items()})
    lines: list[dict[str, Any]] = [
        {
            "k": "hello",
            "terminal": True,
            "verbosity": 0,
            "canary": tag,
            "must_fail": "xfailed",
            "rootdir": "/workspace",
            "inifile": "",
        },
        {"k": "collected", "ids": list(played)},
        {"k": "collection", "count": len(played)},
    ]
    tally: Counter[str] = Counter()
    for nodeid, outcome in played.items():
        message = "" if outcome == "passed" else f"{outcome} on code {code}"
        if canaries.get(nodeid) == "must_fail":
            message = f"fixbot canary {tag}"
        tally[outcome] += 1
        lines.append({"k": "start", "nodeid": nodeid})
        lines.append(
            {"k": "result", "nodeid": nodeid, "outcome": outcome, "message": message,
             "detail": "", "categories": [outcome], "timeout": False}
        )  # fmt: skip
    failing = tally["failed"] + tally["error"]
    lines.append({"k": "integrity", "problems": []})
    lines.append(
        {"k": "finish", "exitstatus": int(bool(failing)), "stats": dict(tally),
         "testsfailed": failing, "testscollected": len(played), "shouldstop": False,
         "shouldfail": False}
    )  # fmt: skip
    data = b"".join(
        json.dumps({**line, "run": run, "seq": seq}).encode() + b"\n"
        for seq, line in enumerate(lines)
    )
    if forged:
        data += b'{"k":"result","nodeid":"forged","outcome":"passed"}\n'

    while data:
        data = data[os.write(spec.fds[0], data) :]
    words = ("failed", "error", "passed", "skipped", "xfailed")
    summary = ", ".join(f"{tally[k]} {k}" for k in words if tally[k])
    return f"played\n{summary} in 0.01s\n"
