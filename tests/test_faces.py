"""Each package's face, pinned: a name added to (or dropped from) a package's __all__ is a visible
change to this file, as httpx pins its public surface. A face is what other packages use; the
modules behind it are the package's own business (tests may import them directly)."""

from __future__ import annotations

import importlib

import pytest

# Faces above about 20 names, and why:
#   fixbot.forge   the Publisher port with its data types (pull requests, comments, pushes, jobs)
#                  and the publish steps, used by forge/github and the CLI alike
#   fixbot.runs    the one assembly of a run (clients, requests, state) and run/resume/fork/verify,
#                  which every root (cli, the Action, the server, the bench) uses
#   fixbot.sandbox the Sandbox port with its run specification (limits, persona, scratch) and
#                  both backends, which the checks, doctor and the roots each use a part of
#   fixbot.snapshot  the pinned commit (find, pin, resolve), its copies (fresh, a workspace,
#                  protected files put back) and its protection (protect, manifests), which the
#                  checks, the loop, the forge and the roots each use a part of
FACES: dict[str, set[str]] = {
    "fixbot.checks": {
        "AUTOFIX_MODEL",
        "IndexSettings",
        "Mode",
        "as_rerun",
        "classify",
        "generated_paths",
        "imports_checked",
        "index_settings",
        "limits_for",
        "network_probe",
        "problems",
        "prune_environments",
        "reader",
        "reproduced",
        "require_completed",
        "ruff_diff",
        "ruff_failing",
        "run_trial",
        "tampered_problems",
        "with_quarantine",
    },
    "fixbot.checks.prepare": {
        "IndexSettings",
        "PINNED",
        "PYTEST_PIN",
        "checks_environment",
        "environment_record",
        "index_settings",
        "lay_generated",
        "plugin_options",
        "prepared_environment",
        "prune_environments",
        "shared_built",
        "shared_environment",
    },
    "fixbot.checks.rejudge": {
        "GRACE",
        "JUDGE_MOUNT",
        "Judgement",
        "interpreter_of",
        "judge_all",
        "once_passed",
        "plans",
        "rejudged",
    },
    "fixbot.checks.pytest": {
        "Launcher",
        "SandboxLauncher",
        "TestRun",
        "junit_id",
        "out_of_memory",
        "relocated_text",
        "run_pytest",
        "tree_of",
    },
    "fixbot.cli": {
        "build_parser",
        "main",
    },
    "fixbot.commands": {
        "Check",
        "CheckKind",
        "CheckSpec",
        "DEFAULT_TEST_TIMEOUT",
        "Ignored",
        "Install",
        "InvalidCheck",
        "Line",
        "PYTHON",
        "Script",
        "command_lines",
        "gate_config",
        "gate_files",
        "is_ruff",
        "legacy_checks",
        "map_command",
        "resolve_checks",
        "setup_words",
        "split_words",
        "tool_arguments",
    },
    "fixbot.edits": {
        "DiffRejected",
        "FileChange",
        "NO_CHANGE",
        "Patch",
        "changed_paths",
        "header_path",
        "hunks",
        "parse_reply",
        "placeable",
        "plan_patch",
        "render_diff",
        "repo_path",
        "summary",
        "without",
        "write_changes",
    },
    "fixbot.forge": {
        "Cleanup",
        "Command",
        "Comment",
        "Git",
        "JobSummary",
        "Published",
        "Publisher",
        "PullInfo",
        "PullRequest",
        "PullRequestExists",
        "PullRequestsNotPermitted",
        "Push",
        "REFUSAL_MARKER",
        "Skip",
        "Trigger",
        "cleanup",
        "may_trigger",
        "moved_comment",
        "moved_since",
        "pending_thread",
        "publish",
        "refusal_comment",
        "runlog",
        "upsert_comment",
    },
    "fixbot.forge.github": {
        "ActionEnv",
        "Derived",
        "FixJob",
        "Left",
        "PHASES",
        "connect",
        "derive",
        "parse_workflow",
        "proposed_checks",
        "proposed_setup",
        "run_action",
        "secrets_of",
    },
    "fixbot.loop": {
        "Deps",
        "FixState",
        "Update",
        "build_graph",
        "initial_state",
        "lessons",
        "recorded_checks",
        "recursion_limit",
        "unpriced",
        "validate",
    },
    "fixbot.model": {
        "CHARS_PER_TOKEN",
        "ContextExceeded",
        "DeadlinePassed",
        "MAX_REPLY_TOKENS",
        "Model",
        "OpenAIModel",
        "Reply",
        "estimate_tokens",
    },
    "fixbot.prompts": {
        "Ask",
        "Message",
        "definitions_to_return",
        "diagnosis_messages",
        "failing",
        "feedback",
        "file_to_return",
        "names_a_test",
        "read_verdict",
        "resume_note",
        "review_messages",
        "rewritable",
        "task_messages",
    },
    "fixbot.report": {
        "EXIT_ENVIRONMENT",
        "EXIT_NOT_FIXED",
        "EXIT_OK",
        "EXIT_USAGE",
        "FixResult",
        "error_kind",
        "error_result",
        "exit_code",
        "load_result",
        "render_markdown",
        "write_outputs",
    },
    "fixbot.runs": {
        "FixRequest",
        "NO_MODEL",
        "answer",
        "checkpointer_for",
        "recorded_at",
        "choose_sandbox",
        "deps_for",
        "fork_fix",
        "fork_id",
        "judged_by",
        "load_evidence",
        "open_clients",
        "prune_threads",
        "request_for",
        "resume_fix",
        "reverify",
        "run_fix",
        "secrets_in",
        "start_state",
        "store_for",
        "thread_id",
        "unanswerable",
    },
    "fixbot.sandbox": {
        "Backend",
        "BwrapSandbox",
        "DEFAULT_LIMITS",
        "DockerSandbox",
        "LOCAL_IMAGE",
        "Limits",
        "OUTPUTS",
        "PREPARED",
        "Persona",
        "RunSpec",
        "Sandbox",
        "Scratch",
        "WORKSPACE",
        "attempt_scratch",
        "can_mount",
        "choose",
        "evacuate_root",
        "hit_process_cap",
        "host_persona",
        "python_prefixes",
        "sdk_version",
        "unreadable_toolchain",
    },
    "fixbot.screen": {
        "never_editable",
        "recorded_problems",
        "salvage",
        "screen",
        "unpublishable",
        "unread_sources",
    },
    "fixbot.snapshot": {
        "Workspace",
        "NO_PROGRAMS",
        "Snapshot",
        "apply_to_worktree",
        "code_digests",
        "config_args",
        "find_root",
        "fresh_copy",
        "is_protected",
        "manifest_digest",
        "mismatches",
        "pin_commit",
        "prepare",
        "protect",
        "put_back_protected",
        "read_inside",
        "repo_files",
        "repository_identity",
        "resolve_commit",
        "take_snapshot",
        "tree_bytes",
        "unprotect",
    },
}


@pytest.mark.parametrize("module", sorted(FACES))
def test_each_face_is_what_it_is_pinned_to(module: str) -> None:
    face = importlib.import_module(module)
    assert set(face.__all__) == FACES[module]
    assert len(face.__all__) == len(set(face.__all__)), "a name is listed twice"
    missing = [name for name in face.__all__ if not hasattr(face, name)]
    assert missing == [], f"{module} lists names it does not bind: {missing}"


def test_every_package_has_a_pinned_face() -> None:
    from pathlib import Path

    package = Path(__file__).resolve().parent.parent / "fixbot"
    found = {
        ".".join(init.parent.relative_to(package.parent).parts)
        for init in package.rglob("__init__.py")
        if init.parent != package
    }
    assert found == set(FACES)


def test_no_face_is_wider_than_about_twenty_names_without_a_stated_reason() -> None:
    wide = {module for module, names in FACES.items() if len(names) > 20}
    assert wide <= {"fixbot.forge", "fixbot.runs", "fixbot.sandbox", "fixbot.snapshot"}, wide
