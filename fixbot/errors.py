"""One exception tree for everything fixbot refuses or cannot do.

    FixbotError
    ├── UsageError            bad command line or input                      (exit 2)
    │   └── ConfigError       .fixbot.yml: unknown key, wrong type, bad YAML (exit 2)
    └── EnvironmentProblem    the world is not as fixbot needs it            (exit 3)
        ├── NotAGitRepo
        ├── DirtyWorktree
        ├── SandboxUnavailable
        ├── SandboxFailed     the sandbox itself died (not the code in it)
        ├── SetupFailed       setup_command (the prepare step) failed or timed out
        ├── ModelUnreachable  the model endpoint failed after retries
        │   └── DeadlinePassed  (model/client.py) the run's wall clock ran out during a call
        ├── RunInProgress     (runs/store.py) another live process runs this thread
        ├── GitFailed         (forge/git.py) a git command of the publish step failed
        ├── PullRequestsNotPermitted (forge/port.py) the token may not open pull requests
        └── GitHubApiError    (forge/github/client.py) the GitHub API failed after retries

The subclasses marked with a module live beside the code that raises them. The exit codes
themselves are decided in one place: `report.exit_code` (via `report.error_kind`).
"""

from __future__ import annotations


class FixbotError(Exception):
    """Base of every error fixbot raises on purpose."""


class UsageError(FixbotError):
    """The user asked for something that cannot be done as asked."""


class ConfigError(UsageError):
    """A configuration file or value is invalid; the message names the key and the file."""

    def __init__(self, message: str, *, key: str | None = None, file: str | None = None) -> None:
        where = " ".join(part for part in (file and f"{file}:", key and f"'{key}':") if part)
        super().__init__(f"{where} {message}".strip())
        self.key = key
        self.file = file


class EnvironmentProblem(FixbotError):
    """Something outside the code under repair prevents a run."""


class NotAGitRepo(EnvironmentProblem):
    pass


class DirtyWorktree(EnvironmentProblem):
    pass


class SandboxUnavailable(EnvironmentProblem):
    pass


class SandboxFailed(EnvironmentProblem):
    pass


class SetupFailed(EnvironmentProblem):
    pass


class ModelUnreachable(EnvironmentProblem):
    pass
