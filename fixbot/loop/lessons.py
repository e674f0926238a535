"""Lessons: after a verified pass, what fixed which failure, per repository, in a LangGraph store.

A lesson is written by finalize only (a real, re-verified pass; never an unverified attempt),
keyed by the failure's signature (so a rerun after a crash rewrites the same lesson), and
read by generate: the few whose signatures share most with the current failure. Each
repository has its own namespace; a namespace holds at most CAP lessons (the oldest go first);
every lesson is timestamped, listable and deletable (`fixbot lessons list|rm`).

Lessons are text fixbot wrote from its own verified runs, shown to the model as background,
never as instructions.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import BaseStore

from fixbot.edits import changed_paths, summary
from fixbot.loop.deps import Deps
from fixbot.loop.state import FixState
from fixbot.records import CheckResult, failing_tests
from fixbot.secrets import redact

CAP = 50
SHOWN = 3
MIN_SCORE = 0.25  # share of words two failures must have in common to count as alike
# Words every failure has: sharing them says nothing.
_COMMON = frozenset(
    {"tests", "test", "py", "assert", "assertionerror", "error", "n", "self", "none", "true",
     "false", "is", "not", "in", "and", "or", "where", "failed", "exit", "code"}
)  # fmt: skip
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")
_PAGE = 100


@dataclass(frozen=True)
class Lesson:
    key: str
    failure: tuple[str, ...]  # the signature: failing test ids and their messages, normalised
    fix: str  # the diagnosis and what changed, short
    files: tuple[str, ...]
    created_at: float
    thread: str

    def as_value(self) -> dict[str, Any]:
        return {
            "failure": list(self.failure),
            "fix": self.fix,
            "files": list(self.files),
            "created_at": self.created_at,
            "thread": self.thread,
        }

    @classmethod
    def from_value(cls, key: str, value: Mapping[str, Any]) -> Lesson:
        return cls(
            key=key,
            failure=tuple(str(v) for v in value.get("failure", [])),
            fix=str(value.get("fix", "")),
            files=tuple(str(v) for v in value.get("files", [])),
            created_at=float(value.get("created_at", 0.0)),
            thread=str(value.get("thread", "")),
        )


def namespace(repository: str) -> tuple[str, ...]:
    """The store namespace of one repository (its identity, hashed: no paths in the store)."""
    return ("fixbot", "lessons", hashlib.sha256(repository.encode()).hexdigest()[:16])


def signature(failing: Mapping[str, str]) -> tuple[str, ...]:
    """failing test id -> message, as sorted lines with numbers blanked (42 and 43 are alike)."""
    lines = {
        f"{test} {_NUMBER.sub('N', message.splitlines()[0] if message else '')}".strip()
        for test, message in failing.items()
    }
    return tuple(sorted(lines))


def lesson_key(failure: Iterable[str]) -> str:
    return hashlib.sha256("\n".join(failure).encode()).hexdigest()[:20]


def record(store: BaseStore, repository: str, lesson: Lesson) -> None:
    """Write (or rewrite) a lesson, then drop the oldest beyond CAP."""
    space = namespace(repository)
    store.put(space, lesson.key, lesson.as_value(), index=False)
    every = listing(store, repository)
    for old in every[CAP:]:
        store.delete(space, old.key)


def listing(store: BaseStore, repository: str) -> list[Lesson]:
    """Every lesson of the repository, newest first."""
    space = namespace(repository)
    found: list[Lesson] = []
    while True:
        page = store.search(space, limit=_PAGE, offset=len(found))
        found += [Lesson.from_value(item.key, item.value) for item in page]
        if len(page) < _PAGE:
            break
    return sorted(found, key=lambda lesson: lesson.created_at, reverse=True)


def remove(store: BaseStore, repository: str, key: str) -> bool:
    space = namespace(repository)
    if store.get(space, key) is None:
        return False
    store.delete(space, key)
    return True


def relevant(
    store: BaseStore, repository: str, failure: Iterable[str], limit: int = SHOWN
) -> list[Lesson]:
    """The lessons whose failures share the most words with this one (none: nothing shared)."""
    wanted = _words(failure)
    scored = []
    for lesson in listing(store, repository):
        theirs = _words(lesson.failure)
        union = wanted | theirs
        score = len(wanted & theirs) / len(union) if union else 0.0
        if score >= MIN_SCORE:
            scored.append((score, lesson.created_at, lesson))
    scored.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [lesson for _, _, lesson in scored[:limit]]


def prune(store: BaseStore, older_than: float, now: float | None = None) -> int:
    """Delete every repository's lessons older than `older_than` seconds; how many went."""
    cutoff = (time.time() if now is None else now) - older_than
    gone = 0
    for space in store.list_namespaces(prefix=("fixbot", "lessons"), limit=10_000):
        offset = 0
        while True:
            page = store.search(space, limit=_PAGE, offset=offset)
            old = [item.key for item in page if float(item.value.get("created_at", 0)) < cutoff]
            for key in old:
                store.delete(space, key)
            gone += len(old)
            if len(page) < _PAGE:
                break
            offset += len(page) - len(old)
    return gone


def _words(lines: Iterable[str]) -> set[str]:
    found = {word.lower() for line in lines for word in _WORD.findall(line)}
    return found - _COMMON


def failure_of(check: CheckResult) -> tuple[str, ...]:
    return signature({t: check["tests"][t]["message"] for t in failing_tests(check)})


def shown_for(store: BaseStore | None, repository: str, baseline: CheckResult) -> list[Lesson]:
    """What fixed the failures most like this one before, in this repository."""
    if store is None or not repository:
        return []
    return relevant(store, repository, failure_of(baseline))


def learn(store: BaseStore | None, deps: Deps, state: FixState) -> None:
    """After a verified pass only: what fixed this failure, for the next run to see."""
    if store is None or not deps.repository or state["baseline"] is None:
        return
    last = state["attempts"][-1]
    failure = failure_of(state["baseline"])
    fixed = state["final_diff"] or last["diff"]
    prose = last["reply"].split("```", 1)[0].strip().replace("\n", " ")
    lesson = Lesson(
        key=lesson_key(failure),
        failure=failure,
        fix=redact(f"{prose[:300]} Changed: {summary(fixed)}", known=deps.known_secrets),
        files=tuple(changed_paths(fixed)),
        created_at=deps.clock(),
        thread=state["thread_id"],
    )
    record(store, deps.repository, lesson)
