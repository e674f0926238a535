"""A run's result as data (FixResult) and the one mapping from an outcome to an exit code."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from fixbot import __version__
from fixbot.errors import UsageError
from fixbot.records import (
    FAILING,
    RUN_STATUSES,
    Attempt,
    EscalationKind,
    Review,
    RunStatus,
    StepNotRun,
)

EXIT_OK = 0
EXIT_NOT_FIXED = 1
EXIT_USAGE = 2
EXIT_ENVIRONMENT = 3

ErrorKind = Literal["", "usage", "environment"]
_EXIT_BY_STATUS: Mapping[str, int] = {
    "fixed": EXIT_OK,
    "already_passing": EXIT_OK,
    "escalated": EXIT_NOT_FIXED,
    "aborted": EXIT_NOT_FIXED,
}


def exit_code(status: RunStatus, error_kind: ErrorKind = "") -> int:
    """The one mapping from a run's outcome to the process exit code."""
    if status == "error":
        return EXIT_USAGE if error_kind == "usage" else EXIT_ENVIRONMENT
    if status not in _EXIT_BY_STATUS:
        raise ValueError(f"a run that is {status!r} has no exit code yet")
    return _EXIT_BY_STATUS[status]


def error_kind(error: BaseException) -> ErrorKind:
    return "usage" if isinstance(error, UsageError) else "environment"


@dataclass(frozen=True)
class FixResult:
    status: RunStatus  # never "running": a result is what a run ended with
    reason: str
    error_kind: ErrorKind = ""  # when status is error
    escalation: EscalationKind = ""  # why, when status is escalated (or aborted after it)
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
    reviews: list[Review] = field(default_factory=list)  # the reviewer's verdicts (config.review)
    network_probe: str = ""
    reproduce: str = ""  # one command that re-runs the verification locally
    allowed_protected: list[str] = field(default_factory=list)  # opened to edits by a human
    hint: str = ""
    resumes: int = 0
    escalated_at: list[int] = field(default_factory=list)  # attempts done at each escalation
    steps_not_run: list[StepNotRun] = field(default_factory=list)  # the Action: failed CI steps
    # Credential variables holding a placeholder (`local`), not a secret: left unredacted.
    not_secrets: list[str] = field(default_factory=list)
    version: str = __version__

    @property
    def exit_code(self) -> int:
        return exit_code(self.status, self.error_kind)

    @property
    def failing_tests(self) -> list[str]:
        """The tests that failed at baseline, but the quarantined: the failure's identity."""
        baseline = self.baseline or {}
        tests: Mapping[str, Mapping[str, object]] = baseline.get("tests", {})
        quarantined = baseline.get("quarantined", {})
        return sorted(
            test
            for test, case in tests.items()
            if case.get("outcome") in FAILING and test not in quarantined
        )

    @property
    def quarantined(self) -> dict[str, str]:
        """Tests outside the pass definition (flaky at baseline, or the environment's): why."""
        found: Mapping[str, str] = (self.baseline or {}).get("quarantined", {})
        return dict(sorted(found.items()))

    @property
    def diff_sha256(self) -> str:
        return hashlib.sha256(self.diff.encode()).hexdigest() if self.diff else ""

    def to_json(self) -> str:
        data = asdict(self)
        data["diff_sha256"] = self.diff_sha256
        return json.dumps(data, indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> FixResult:
        """A result written by `to_json`; ValueError for anything else (another job wrote it:
        every field is checked for its JSON type before it is used)."""
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("the evidence is not a JSON object")
        data.pop("diff_sha256", None)
        if data.get("status") not in RUN_STATUSES - {"running"}:
            raise ValueError(f"unknown status {data.get('status')!r}")
        for key, value in data.items():
            expected = _JSON_TYPES.get(key)
            if expected is None:
                raise ValueError(f"unknown field {key!r}")
            wrong = not isinstance(value, expected)
            if wrong or (isinstance(value, bool) and bool not in expected):
                raise ValueError(f"field {key!r} is {type(value).__name__}, not the recorded type")
        return cls(**data)

    def summary(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "escalation": self.escalation,
            "reason": self.reason,
            "thread_id": self.thread_id,
            "commit": self.commit,
            "attempts": len(self.attempts),
            "tokens": dict(self.tokens),
            "cost_usd": round(self.cost_usd, 6),
            "exit_code": self.exit_code,
        }


def error_result(error: BaseException, **facts: Any) -> FixResult:
    return FixResult(status="error", reason=str(error), error_kind=error_kind(error), **facts)


def _json_types() -> dict[str, tuple[type, ...]]:
    """Each FixResult field's JSON type(s), from its annotation."""
    found: dict[str, tuple[type, ...]] = {}
    for name, kind in FixResult.__annotations__.items():
        text = str(kind)
        if text.startswith(("list[", "Sequence[")):
            types: tuple[type, ...] = (list,)
        elif text.startswith("Mapping[") or text.startswith("dict["):
            types = (dict,)
        elif text == "int":
            types = (int,)
        elif text == "float":
            types = (int, float)
        else:  # str and the Literal aliases of str
            types = (str,)
        found[name] = (*types, type(None)) if "None" in text else types
    return found


_JSON_TYPES = _json_types()
