"""One trial: a fresh workspace over a snapshot, a canonical diff applied, the checks run over it.

The workspace is a layer over the snapshot where the sandbox can merge one (overlayfs), else a
full copy; either way it lives in the attempt's scratch folder, capped in size when fixbot is
root. Protected files are put back from the snapshot before the checks and compared with the
manifest after them; the scratch folder is removed whatever happens.

A trial runs in one of three ways (`mode`, with the baseline it is judged against):

    full     every check, whole, on one fresh copy
    first    failing first (an attempt): the baseline's failing checks and tests on a fresh
             copy; when they do not all pass, that partial result is the attempt's (never a
             pass); when they do, every other check on another fresh copy, and the two together
             are a full run (each check ran whole on a clean copy of the snapshot and the diff;
             a narrowed pytest check runs again whole)
    rerun    only the baseline's failing checks and tests: a baseline's reproduction, a fix's
             further verification runs (a partial result, judged by verdict.reproduced)

A narrowed run that cannot be read as one (pytest did not collect a node id, a usage error)
proves nothing: its check runs whole.
"""

from __future__ import annotations

import contextlib
import hashlib
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from fixbot.checks.gates import BadTestCommand, config_pin
from fixbot.checks.part import Part, aggregate, set_aside, without_set_aside
from fixbot.checks.prepare import (
    IndexSettings,
    checks_environment,
    environment_record,
    lay_generated,
    plugin_options,
)
from fixbot.checks.rejudge import (
    GRACE,
    JUDGE_MOUNT,
    Judgement,
    interpreter_of,
    judge_all,
    once_passed,
    plans,
    rejudged,
)
from fixbot.checks.selection import Selection, failing_first, pytest_arguments
from fixbot.checks.suite import ordered, run_suite
from fixbot.checks.verdict import problems, reproduced
from fixbot.commands import CheckSpec
from fixbot.config import Config, checks_of
from fixbot.edits import plan_patch
from fixbot.errors import SandboxFailed, UsageError
from fixbot.proc import Completed
from fixbot.records import COMPLETED, CheckResult
from fixbot.sandbox import (
    WORKSPACE,
    Limits,
    Persona,
    RunSpec,
    Sandbox,
    Scratch,
    attempt_scratch,
    host_persona,
)
from fixbot.snapshot import (
    Snapshot,
    Workspace,
    mismatches,
    prepare,
    put_back_protected,
    read_inside,
    tree_bytes,
)

INFRA_ATTEMPTS = 3


def limits_for(config: Config) -> Limits:
    s = config.sandbox
    return Limits(
        timeout_seconds=s.timeout_seconds, memory_mb=s.memory_mb, cpus=s.cpus, disk_mb=s.disk_mb
    )


def setup_limits(config: Config) -> Limits:
    """The prepare step's limits: more time and /tmp than a check (it builds and downloads)."""
    s = config.sandbox
    return Limits(
        timeout_seconds=max(s.timeout_seconds, 900),
        memory_mb=s.memory_mb,
        cpus=s.cpus,
        tmp_size_mb=1024,
        file_size_mb=1024,
    )


def reader(root: Path) -> Callable[[str], str | None]:
    return lambda path: read_inside(root, path)


def tampered_problems(paths: Sequence[str]) -> list[str]:
    """The one wording of a protected file found changed after a check ran."""
    return [f"protected file {path} was modified while the checks ran" for path in paths]


Mode = Literal["full", "first", "rerun"]


def run_trial(
    sandbox: Sandbox,
    snapshot: Snapshot,
    config: Config,
    patch_text: str,
    *,
    baseline: CheckResult | None = None,
    mode: Mode = "full",
    index: IndexSettings | None = None,
) -> tuple[CheckResult, list[str]]:
    """(the checks' result, protected files found modified afterwards)

    A failure of the sandbox itself (not of the code in it) is retried a bounded number of
    times on a fresh copy, then raised: it is the environment's problem and costs no budget.
    A run the code under test tampered with is a result (`tampered`), never retried.
    Without a baseline, or with one older than per-check records, every mode is `full`.
    `index`: the host's package-index settings, for the prepare step.
    """
    setup, limits = config.setup_commands, setup_limits(config)
    checks = checks_of(config, reader(snapshot.tree))
    if baseline is not None:
        checks = tuple(without_set_aside(checks, baseline))
    prepared = checks_environment(sandbox, snapshot, setup, checks, limits, index)
    selection: Selection = {}
    if baseline is not None and mode != "full":
        selection = failing_first(baseline, checks, lambda rel: _is_file(snapshot.tree, rel))
    failures: list[str] = []
    pins = _configured(baseline) if baseline is not None else {}
    trial = Trial(sandbox, snapshot, config, patch_text, prepared, tuple(checks), pins)
    for _ in range(INFRA_ATTEMPTS):
        try:
            if baseline is None or not selection:
                parts, tampered = trial.run()
                # Only a run of the untouched commit sets a gate aside, never a candidate's.
                untouched = baseline is None and not patch_text
                parts, aside = set_aside(parts) if untouched else (parts, [])
                whole = aggregate(parts)
                if aside:
                    whole["set_aside"] = aside
                result = trial.judged(baseline, whole) if baseline is not None else whole
            elif mode == "first":
                result, tampered = trial.first(baseline, selection)
            else:
                result, tampered = trial.rerun(selection)
            result["environment"] = environment_record(prepared)
            return result, tampered
        except SandboxFailed as exc:
            failures.append(str(exc))
    raise SandboxFailed(f"the sandbox failed {INFRA_ATTEMPTS} times in a row; last: {failures[-1]}")


@dataclass(frozen=True)
class Trial:
    """What every check run of one trial shares: fresh copies of the snapshot with the diff,
    the prepared environment, the configured checks."""

    sandbox: Sandbox
    snapshot: Snapshot
    config: Config
    patch_text: str
    prepared: Path | None
    checks: tuple[CheckSpec, ...]
    # By check: where pytest found its configuration on the untouched commit (the baseline's
    # record); every later run of the check is pinned to it (gates.config_pin).
    configured: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def persona(self, scratch: Scratch) -> Persona:
        """The host's own facts, not the sandbox's, for every run of the project's commands and
        the second judgement: code right only where fixbot runs it has no fact to go by."""
        limits = limits_for(self.config)
        found = host_persona(
            self.snapshot.repo,
            scratch_capped=scratch.capped,
            file_size=limits.file_size_mb * 1024 * 1024,
        )
        # An engine's overlay volume is mounted once: the tree stays at WORKSPACE there.
        if self.sandbox.name == "docker" and self.sandbox.layered:
            found = replace(found, workspace=WORKSPACE)
        return found

    @contextlib.contextmanager
    def fresh_tree(self) -> Iterator[tuple[Workspace, Scratch]]:
        """One fresh copy of the snapshot with the diff (its generated files laid, its
        protected files put back), in a capped scratch folder removed afterwards."""
        patch = plan_patch(self.patch_text, reader(self.snapshot.tree)) if self.patch_text else None
        limits = limits_for(self.config)
        # A full copy needs room for the tree itself on top of what the attempt may write.
        extra = 0 if self.sandbox.layered else tree_bytes(self.snapshot)
        with attempt_scratch(limits.disk_mb, extra_bytes=extra) as scratch:
            tree = prepare(
                self.snapshot, scratch.path / "repo", layered=self.sandbox.layered, patch=patch
            )
            lay_generated(self.prepared, tree.root)  # what the install wrote into the tree
            put_back_protected(self.snapshot, tree)
            yield tree, scratch

    def run(
        self, names: set[str] | None = None, selection: Selection | None = None
    ) -> tuple[list[Part], list[str]]:
        """The checks named (all when None) on one fresh copy, narrowed as `selection` says:
        (their parts, protected files found modified afterwards)."""
        checks = [c for c in self.checks if names is None or c.name in names]
        with self.fresh_tree() as (tree, scratch):
            try:
                parts = run_suite(
                    self.sandbox,
                    tree.root,
                    checks,
                    lower=tree.lower,
                    prepared=self.prepared,
                    readonly=list(self.snapshot.protected),
                    limits=limits_for(self.config),
                    scratch=scratch.path,
                    selection=selection,
                    pytest_options=plugin_options(self.prepared),
                    configured=self.configured,
                    persona=self.persona(scratch),
                )
            except BadTestCommand as exc:
                raise UsageError(str(exc)) from exc
            return parts, mismatches(self.snapshot, tree)

    def _judge(self, spec: CheckSpec, decisive: Sequence[tuple[str, str]]) -> list[Judgement]:
        """Each of `decisive` (result id, node id) judged alone, each in a fresh sandbox over a
        fresh copy of the snapshot and the diff."""
        read = reader(self.snapshot.tree)
        cwd = spec.kind == "unittest" or "-m" in spec.argv[:3]
        found = plans(decisive, read, cwd_on_path=cwd)
        limits = replace(limits_for(self.config), timeout_seconds=spec.test_timeout_seconds + GRACE)

        def launch(
            argv: Sequence[str], env: Mapping[str, str], fds: Sequence[int], staged: Path
        ) -> Completed:
            with self.fresh_tree() as (tree, scratch):
                outputs = Path(tempfile.mkdtemp(prefix="fixbot-out-", dir=scratch.path))
                persona = self.persona(scratch)
                spec_ = RunSpec(
                    tree.root,
                    outputs,
                    tree.lower,
                    self.prepared,
                    list(self.snapshot.protected),
                    limits,
                    dict(env),
                    tuple(fds),
                    ((staged, JUDGE_MOUNT),),
                    persona,
                )
                return self.sandbox.run(argv, spec_)

        args = [*pytest_arguments(spec.argv), *plugin_options(self.prepared)]
        # pytest's configuration as the first judgement found it, where this run's tree is
        moved = self.persona(Scratch(Path("/"), capped=False)).workspace  # (only its path)
        args += config_pin(spec.argv, self.configured.get(spec.name), moved)
        args += ["-p", "no:cacheprovider"]
        return judge_all(
            found,
            launch,
            passes_fds=self.sandbox.passes_fds,
            python=interpreter_of(spec.argv),
            pytest_args=args,
            timeout=spec.test_timeout_seconds,
        )

    def first(self, baseline: CheckResult, selection: Selection) -> tuple[CheckResult, list[str]]:
        parts, tampered = self.run(set(selection), selection)
        sure = [p for p in parts if _readable(p, selection)]
        if reproduced(baseline, aggregate(sure, partial=True)):
            return aggregate(sure, partial=True), tampered  # failed early: never a pass
        kept = {p.run["name"]: p for p in sure if p.whole}
        rest, more = self.run({c.name for c in self.checks} - set(kept))
        return self.judged(
            baseline, aggregate(_in_order(self.checks, [*kept.values(), *rest]))
        ), tampered + more

    def judged(self, baseline: CheckResult, result: CheckResult) -> CheckResult:
        """The result, its decisive tests judged a second time where it would be a pass."""
        if problems(baseline, result):
            return result
        exists = lambda rel: _is_file(self.snapshot.tree, rel)  # noqa: E731
        digest = hashlib.sha256(self.patch_text.encode()).hexdigest()
        candidate = (str(self.snapshot.tree), self.snapshot.commit, digest)
        return rejudged(baseline, result, self.checks, exists, once_passed(candidate, self._judge))

    def rerun(self, selection: Selection) -> tuple[CheckResult, list[str]]:
        parts, tampered = self.run(set(selection), selection)
        sure = [p for p in parts if _readable(p, selection)]
        unread = set(selection) - {p.run["name"] for p in sure}
        if not unread:
            return aggregate(sure, partial=True), tampered
        whole, more = self.run(unread, dict.fromkeys(unread, ()))
        return aggregate(_in_order(self.checks, [*sure, *whole]), partial=True), tampered + more


def _configured(baseline: CheckResult) -> dict[str, list[str]]:
    return {r["name"]: r["configured"] for r in baseline.get("checks", []) if "configured" in r}


def _is_file(tree: Path, rel: str) -> bool:
    path = tree / rel
    return not path.is_symlink() and path.is_file()


def _readable(part: Part, selection: Selection) -> bool:
    """A narrowed pytest run that ran to its end with every node id it was given (a timeout, a
    memory kill or the process cap counts: the code was run, and it is the code's); any run of
    a whole check."""
    if part.whole:
        return True
    status = part.run["status"]
    if status in ("timeout", "memory_exceeded", "process_limit"):
        return True
    return status in COMPLETED and len(part.tests) >= len(selection[part.run["name"]])


def _in_order(checks: Sequence[CheckSpec], parts: Sequence[Part]) -> list[Part]:
    at = {spec.name: index for index, spec in enumerate(ordered(checks))}
    return sorted(parts, key=lambda part: at.get(part.run["name"], len(at)))
