"""A GitHub Actions workflow file -> its jobs and steps, and the steps a failed run names.

Pure: YAML text in, data out; nothing is run. GitHub shows a step by its `name:`, else an
unnamed `run:` step as "Run <the command's first line>" and an unnamed `uses:` step as
"Run <action>"; a job by its `name:` (which may hold `${{ }}` expressions), else by its id, and
a matrix job with its values in parentheses: "test (3.11, ubuntu-24.04)". The jobs API gives
those names, so `steps_named` matches them against the file's templates.

The file is read from the trusted checkout (the default branch the Action runs on), never from
the head of a pull request: what it says becomes checks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from fixbot.errors import UsageError

_EXPRESSION = re.compile(r"\$\{\{.*?\}\}", re.DOTALL)


class WorkflowError(UsageError):
    """A workflow file that is not YAML, or not shaped like a workflow."""


@dataclass(frozen=True)
class Step:
    job: str  # the job's id
    number: int  # 1-based among the job's steps
    name: str  # as written; "" when the step has none
    run: str  # "" for a `uses:` step
    uses: str
    shell: str  # the step's, else the job's or the workflow's default
    working_directory: str

    @property
    def shown(self) -> str:
        """The name GitHub shows (and the jobs API returns) for this step."""
        if self.name:
            return self.name
        if self.run:
            first = next((line for line in self.run.splitlines() if line.strip()), "")
            return f"Run {first.strip()}"
        return f"Run {self.uses}"


@dataclass(frozen=True)
class Job:
    id: str
    name: str  # as written; "" when the job has none
    matrix: bool
    steps: tuple[Step, ...]
    uses: str = ""  # a reusable workflow it calls (its steps are in another file)

    def shown_as(self, api_name: str) -> bool:
        """Whether the jobs API's `api_name` is this job (matrix values, expressions)."""
        template = self.name or self.id
        pattern = _template(template)
        if self.matrix:
            pattern += r"( \(.*\))?"
        if self.uses:
            pattern += r"( / .*)?"  # "caller / the called workflow's job"
        return re.fullmatch(pattern, _normal(api_name), re.DOTALL) is not None


@dataclass(frozen=True)
class Workflow:
    path: str
    name: str
    jobs: tuple[Job, ...]

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(step for job in self.jobs for step in job.steps)


def parse_workflow(text: str, path: str) -> Workflow:
    """The workflow in `text` (the file at `path`); WorkflowError naming the file and why."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise WorkflowError(f"{path}: not valid YAML{where}") from None
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), dict):
        raise WorkflowError(f"{path}: not a workflow (no `jobs:` mapping)")
    shell, directory = _run_defaults(data, path, "")
    jobs = []
    for job_id, job in data["jobs"].items():
        if not isinstance(job, dict):
            raise WorkflowError(f"{path}: job {job_id!r} is not a mapping")
        jobs.append(_job(str(job_id), job, path, shell, directory))
    return Workflow(path=path, name=str(data.get("name") or path), jobs=tuple(jobs))


def _job(job_id: str, job: Mapping[str, Any], path: str, shell: str, directory: str) -> Job:
    job_shell, job_directory = _run_defaults(job, path, f"job {job_id!r}: ")
    steps = job.get("steps") or []
    if not isinstance(steps, list):
        raise WorkflowError(f"{path}: job {job_id!r}: `steps` is not a list")
    strategy = job.get("strategy")
    matrix = isinstance(strategy, dict) and strategy.get("matrix") is not None
    parsed = []
    for number, step in enumerate(steps, 1):
        if not isinstance(step, dict):
            raise WorkflowError(f"{path}: job {job_id!r}: step {number} is not a mapping")
        parsed.append(
            Step(
                job=job_id,
                number=number,
                name=_text(step.get("name")),
                run=_text(step.get("run")),
                uses=_text(step.get("uses")),
                shell=_text(step.get("shell")) or job_shell or shell,
                working_directory=_text(step.get("working-directory"))
                or job_directory
                or directory,
            )
        )
    name = _text(job.get("name"))
    return Job(job_id, name, matrix, tuple(parsed), uses=_text(job.get("uses")))


def _run_defaults(section: Mapping[str, Any], path: str, where: str) -> tuple[str, str]:
    defaults = section.get("defaults") or {}
    run = defaults.get("run") if isinstance(defaults, dict) else None
    if run is None:
        return "", ""
    if not isinstance(run, dict):
        raise WorkflowError(f"{path}: {where}`defaults.run` is not a mapping")
    return _text(run.get("shell")), _text(run.get("working-directory"))


def _text(value: object) -> str:
    return "" if value is None else str(value)


def steps_named(
    workflow: Workflow, job_name: str, step_names: Sequence[str]
) -> list[tuple[Step, ...] | str]:
    """For each name the jobs API gave a failed step of job `job_name`: every step of the
    workflow shown so (two steps may share a name: either may be the one that failed), or the
    name itself when no step of the file is shown so. A job the file does not show by that name
    (a reusable workflow's, a renamed one) is looked for in every job."""
    jobs = _jobs_shown(workflow, job_name)
    return [_matching(jobs, name) or name for name in step_names]


def may_have_failed(workflow: Workflow, failed: Sequence[tuple[str, Sequence[str]]]) -> set[Step]:
    """The steps that may be the failed ones, for each (job name, failed step names) the jobs
    API gave: every step a failed name shows, and every step of a job with a failed step that
    no step of the file shows (renamed since: it may be any of them) or with no step named
    failed at all. Only the other steps are known not to have failed."""
    found: set[Step] = set()
    for job_name, step_names in failed:
        jobs = _jobs_shown(workflow, job_name)
        if not step_names:  # failed with no step named failed: any step may be the cause
            found |= {step for job in jobs for step in job.steps}
        for name in step_names:
            found |= set(_matching(jobs, name) or (s for job in jobs for s in job.steps))
    return found


def _jobs_shown(workflow: Workflow, job_name: str) -> list[Job]:
    return [job for job in workflow.jobs if job.shown_as(job_name)] or list(workflow.jobs)


def _matching(jobs: Sequence[Job], step_name: str) -> tuple[Step, ...]:
    return tuple(step for job in jobs for step in job.steps if _shows(step, step_name))


def _shows(step: Step, api_name: str) -> bool:
    return re.fullmatch(_template(step.shown), _normal(api_name), re.DOTALL) is not None


def _template(shown: str) -> str:
    """A shown name as a pattern: literal text, each `${{ }}` expression any text."""
    parts = _EXPRESSION.split(_normal(shown))
    return ".*?".join(re.escape(part) for part in parts)


def _normal(text: str) -> str:
    return " ".join(text.split())
