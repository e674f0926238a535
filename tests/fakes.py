"""Test doubles shared by the suite: the scripted replies for the bundled example, an in-process
Model, a Sandbox that delegates to a real one, and a Sandbox that plays the checks over a tree.

The end-to-end tests talk to real servers (fake_openai.py, fake_github.py) with the real clients;
these doubles are for the fast in-process layer (tests/loop/) and for wrapping a real backend.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import quoteattr

from fixbot.llm import ContextExceeded, DeadlinePassed, Reply
from fixbot.proc import Completed
from fixbot.sandbox import DEFAULT_LIMITS, Limits, RunSpec, Sandbox
from fixbot.window import ContextRefusal, ContextWindow

# --- scripted replies for the bundled example (examples/calc: mean divides by len + 1) ------


def reply(diff: str, prose: str = "The mean divides by the wrong count.") -> str:
    return f"{prose}\n\n```diff\n{diff}```\n"


GOOD = reply(
    """--- a/calc.py
+++ b/calc.py
@@ -10,3 +10,3 @@
 def mean(values: list[float]) -> float:
     \"\"\"The arithmetic mean of a non-empty list.\"\"\"
-    return sum(values) / (len(values) + 1)
+    return sum(values) / len(values)
"""
)

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

    @property
    def layered(self) -> bool:
        return self.inner.layered

    def run(self, argv: Sequence[str], spec: RunSpec) -> Completed:
        return self.inner.run(argv, spec)

    def prepare(
        self,
        argv: Sequence[str],
        *,
        workspace: Path,
        env_dir: Path,
        limits: Limits = DEFAULT_LIMITS,
    ) -> Completed:
        return self.inner.prepare(argv, workspace=workspace, env_dir=env_dir, limits=limits)

    def describe(self) -> str:
        return self.inner.describe()

    def close(self) -> None:
        self.inner.close()


Outcomes = Callable[[Path], Mapping[str, str]]


class PlayedSandbox:
    """A Sandbox that runs nothing: the test command's per-test outcomes are what `outcomes`
    says of the workspace it was given (written as pytest's JUnit report, where fixbot reads
    them); the gates find nothing; any other command prints that the network is refused.
    Fast and deterministic, for driving the loop in-process."""

    name = "played"
    layered = False

    def __init__(self, outcomes: Outcomes) -> None:
        self.outcomes = outcomes
        self.runs: list[tuple[str, ...]] = []

    def run(self, argv: Sequence[str], spec: RunSpec) -> Completed:
        self.runs.append(tuple(argv))
        if "pytest" in argv:
            found = self.outcomes(spec.workspace)
            junit = _junit(found, _digest(spec.workspace))
            (spec.outputs / "junit.xml").write_text(junit, encoding="utf-8")
            failed = any(outcome != "passed" for outcome in found.values())
            return Completed(tuple(argv), int(failed), "played", 0.01, False, 6)
        if "ruff" in argv:
            return Completed(tuple(argv), 0, "[]", 0.01, False, 2)
        if "mypy" in argv:
            return Completed(tuple(argv), 0, "", 0.01, False, 0)
        return Completed(tuple(argv), 0, "1.1.1.1:80 refused: played", 0.01, False, 26)

    def prepare(
        self,
        argv: Sequence[str],
        *,
        workspace: Path,
        env_dir: Path,
        limits: Limits = DEFAULT_LIMITS,
    ) -> Completed:
        return Completed(tuple(argv), 0, "", 0.01, False, 0)

    def describe(self) -> str:
        return "played (no process)"

    def close(self) -> None:
        pass


def _digest(tree: Path) -> str:
    """What the code in the tree is, in eight hex digits: a failure's message names it, so that
    different code fails with a different message (as a real assertion would)."""
    code = sorted((p.relative_to(tree).as_posix(), p.read_bytes()) for p in tree.rglob("*.py"))
    return hashlib.sha256(repr(code).encode()).hexdigest()[:8]


def _junit(outcomes: Mapping[str, str], code: str) -> str:
    cases = []
    for test, outcome in outcomes.items():
        classname, _, name = test.rpartition("::")
        message = quoteattr(f"{outcome} on code {code}")
        inner = "" if outcome == "passed" else f"<failure message={message}>{outcome}</failure>"
        cases.append(
            f"<testcase classname={quoteattr(classname)} name={quoteattr(name)}>{inner}</testcase>"
        )
    return f'<testsuites><testsuite name="pytest">{"".join(cases)}</testsuite></testsuites>'
