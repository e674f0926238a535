"""The checks over one workspace, each by its kind, each in a fresh sandbox.

    run_suite    the configured checks (or a failing-first selection of them) -> their Parts
    run_checks   the legacy form (a test command and the two gates) -> one CheckResult

The checks that read the code and run none of it (ruff, ruff-format, mypy: tools.py) go first,
in their configured order, then the ones that run it (pytest, unittest, commands): nothing a
test writes into the workspace at run time (a fixed-up source file, a `ruff.toml`) can then
stand in for a finding check. The kinds:

    pytest        per test (gates.pytest_part, the one pytest path)
    unittest      per test (unittests.py)
    ruff, ruff-format, mypy
                  per finding (findings.py), run by fixbot from its own environment
    command       by exit status and output tail (gates.command_part); a legacy test command
                  that is ruff or mypy runs on fixbot's own Python, as those checks do (the
                  project's environment need not have them)
"""

from __future__ import annotations

import shlex
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from fixbot.checks.findings import read_mypy, read_ruff, read_ruff_format
from fixbot.checks.gates import TEST_ENV, BadTestCommand, Contained, command_part, pytest_part
from fixbot.checks.part import Part, aggregate
from fixbot.checks.pytest import SandboxLauncher, relocated_text
from fixbot.checks.selection import Selection
from fixbot.checks.tools import interpreter, report_file, tool_argv
from fixbot.checks.unittests import read_unittest, unittest_argv
from fixbot.commands import DEFAULT_TEST_TIMEOUT, CheckSpec, legacy_checks, tool_arguments
from fixbot.proc import Completed
from fixbot.records import FINDING_KINDS, CheckResult
from fixbot.sandbox import OUTPUTS, Limits, Persona, RunSpec, Sandbox
from fixbot.snapshot import Workspace, code_digests, read_inside

FINDINGS_OUTPUT_BYTES = 16 * 1024 * 1024  # mypy on a large tree: every error line is kept


def ordered(checks: Sequence[CheckSpec]) -> list[CheckSpec]:
    """The finding checks first, then the rest, each group in its configured order."""
    return [c for c in checks if c.kind in FINDING_KINDS] + [
        c for c in checks if c.kind not in FINDING_KINDS
    ]


def run_suite(
    sandbox: Sandbox,
    workspace: Path,
    checks: Sequence[CheckSpec],
    *,
    lower: Path | None = None,
    prepared: Path | None = None,
    readonly: Sequence[str] = (),
    limits: Limits,
    scratch: Path | None = None,
    selection: Selection | None = None,
    pytest_options: Sequence[str] = (),
    configured: Mapping[str, Sequence[str]] | None = None,
    persona: Persona | None = None,
) -> list[Part]:
    """Run the checks (with a selection, only the checks it names, narrowed as it says) over
    one workspace, in order(); the outputs folder and pytest's staged plugin are made in
    `scratch` (the attempt's capped folder); `configured`: by check name, the configuration a
    pytest check is pinned to (the baseline's); `pytest_options` are appended to every pytest
    check (the prepared environment's plugins); `persona`: the host's facts the project's
    commands run under (fixbot's own ruff and mypy never do), their output read as at
    WORKSPACE. Raises BadTestCommand for a check whose command is empty."""
    outputs = Path(tempfile.mkdtemp(prefix="fixbot-out-", dir=scratch))
    root = lower if lower is not None else workspace
    # The code files of the tree as fixbot laid it, before any check runs: the pytest plugin
    # names each one Python runs with other bytes (checks/verdict.py: written_code).
    laid = code_digests(Workspace(workspace, lower))

    def read(rel: str) -> str | None:
        return read_inside(root, rel)

    try:

        def run_spec(
            env: dict[str, str] | None = None,
            output_bytes: int = 0,
            own: bool = False,
            tool: bool = False,
        ) -> RunSpec:
            room = replace(limits, output_bytes=max(limits.output_bytes, output_bytes))
            env_dir = None if own else prepared
            spec = RunSpec(workspace, outputs, lower, env_dir, list(readonly), room, env)
            # ruff and mypy (fixbot's, over the project's environment) run no project code
            return spec if own or tool else replace(spec, persona=persona)

        def tool_run(
            argv: list[str], env: dict[str, str] | None = None, *, output_bytes: int = 0
        ) -> Completed:
            return sandbox.run(argv, run_spec(env, output_bytes, tool=True))

        def contained(
            argv: list[str], env: dict[str, str] | None = None, *, output_bytes: int = 0
        ) -> Completed:
            done = sandbox.run(argv, run_spec(env, output_bytes))
            if persona is None:
                return done
            return replace(done, output=relocated_text(done.output, persona.workspace))

        def on_fixbots(
            argv: list[str], env: dict[str, str] | None = None, *, output_bytes: int = 0
        ) -> Completed:
            return sandbox.run(argv, run_spec(env, output_bytes, own=True))

        python = interpreter(sandbox.host_toolchain)
        parts = []
        for spec in ordered(checks):
            if selection is not None and spec.name not in selection:
                continue
            if not spec.argv:
                raise BadTestCommand(f"the check {spec.name!r} has an empty command")
            only = selection.get(spec.name, ()) if selection is not None else ()
            if spec.kind in FINDING_KINDS:
                argv = tool_argv(spec, python=python, read=read, prepared=prepared is not None)
                parts.append(_finding(spec, argv, outputs, tool_run))
            elif spec.kind == "pytest":
                launcher = SandboxLauncher(sandbox, run_spec(dict(TEST_ENV)))
                pin = (configured or {}).get(spec.name)
                part = pytest_part(
                    spec,
                    launcher,
                    only,
                    scratch=scratch,
                    options=pytest_options,
                    configured=pin,
                    laid=laid,
                )
                parts.append(part)
            elif spec.kind == "unittest":
                argv = unittest_argv(spec.argv)
                done = contained(argv)
                parts.append(read_unittest(spec, done, shlex.join(argv), limits.output_bytes))
            else:
                tool = bool(tool_arguments(spec.argv))  # a legacy `ruff check .`, `mypy src`
                parts.append(command_part(spec, on_fixbots if tool else contained, limits))
        return parts
    finally:
        shutil.rmtree(outputs, ignore_errors=True)


def _finding(spec: CheckSpec, argv: list[str], outputs: Path, contained: Contained) -> Part:
    command = shlex.join(argv)
    if spec.kind == "mypy":
        return read_mypy(spec, contained(argv, output_bytes=FINDINGS_OUTPUT_BYTES), command)
    if spec.kind == "ruff-format":
        return read_ruff_format(spec, contained(argv), command)
    report = outputs / report_file(spec.name).removeprefix(OUTPUTS + "/")
    report.unlink(missing_ok=True)
    return read_ruff(spec, contained(argv), report, command)


def run_checks(
    sandbox: Sandbox,
    workspace: Path,
    *,
    lower: Path | None = None,
    prepared: Path | None = None,
    test_command: str,
    lint: bool,
    types: bool,
    readonly: list[str],
    limits: Limits,
    scratch: Path | None = None,
    pytest_options: Sequence[str] = (),
    test_timeout: int = DEFAULT_TEST_TIMEOUT,
) -> CheckResult:
    """The legacy form: the enabled gates, then the test command, as one result
    (`test_timeout`: seconds per phase of one test, when the command is pytest)."""
    checks = legacy_checks(test_command, lint=lint, types=types, test_timeout=test_timeout)
    parts = run_suite(
        sandbox,
        workspace,
        checks,
        lower=lower,
        prepared=prepared,
        readonly=readonly,
        limits=limits,
        scratch=scratch,
        pytest_options=pytest_options,
    )
    return aggregate(parts)
