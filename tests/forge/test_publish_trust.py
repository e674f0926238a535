"""The publish phase trusts nothing it did not decide: through `fixbot action --phase publish`,
a recorded result whose fix.diff has a shape fixbot never renders, touches a path no fix may
change, or does not hash to the fix job's own `diff-sha256` output is refused (exit 2), and
nothing is pushed, opened or commented."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from fixbot.edits import FileChange, render_diff
from tests.forge.conftest import BROKEN, FIXED, Run, World, git

CALC = render_diff([FileChange("calc.py", BROKEN, FIXED)])


def added(path: str, text: str = "x = 1\n") -> str:
    return render_diff([FileChange(path, None, text)])


SHAPES: dict[str, tuple[str, str]] = {
    "symlink": (
        "diff --git a/link b/link\nnew file mode 120000\n--- /dev/null\n+++ b/link\n"
        "@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n",
        "adds a symbolic link",
    ),
    "mode-change": (
        "diff --git a/calc.py b/calc.py\nold mode 100644\nnew mode 100755\n",
        "changes a file's mode",
    ),
    "executable-new-file": (
        added("run.sh", "#!/bin/sh\nid\n").replace("new file mode 100644", "new file mode 100755"),
        "a mode other than 100644",
    ),
    "submodule": (
        "diff --git a/sub b/sub\nnew file mode 160000\nindex 0000000..1234567\n--- /dev/null\n"
        "+++ b/sub\n@@ -0,0 +1 @@\n+Subproject commit " + "1" * 40 + "\n",
        "adds a submodule",
    ),
    "rename": (
        "diff --git a/calc.py b/lib.py\nsimilarity index 100%\nrename from calc.py\n"
        "rename to lib.py\n",
        "names two different paths",
    ),
    "binary-patch": (
        "diff --git a/x.bin b/x.bin\nnew file mode 100644\nindex 0000000..e69de29\n"
        "GIT binary patch\nliteral 0\nHcmV?d00001\n\nliteral 0\nHcmV?d00001\n\n",
        "names blobs",
    ),
    "binary-files-differ": (
        "diff --git a/x.bin b/x.bin\nBinary files a/x.bin and b/x.bin differ\n",
        "changes a binary file",
    ),
    "gitmodules": (added(".gitmodules", '[submodule "s"]\n'), "'.gitmodules': CI, git's"),
    "gitattributes": (added(".gitattributes", "* filter=evil\n"), "'.gitattributes': CI, git's"),
    "ci-in-another-case": (added(".GitHub/workflows/x.yml", "on: push\n"), "CI, git's"),
    "ci-files": (added(".github/workflows/ci.yml", "on: push\n"), "CI, git's"),
    "fixbot-config-in-another-case": (added(".FIXBOT.yml", "policy: 'off'\n"), "CI, git's"),
    "a-test-edit": (
        render_diff([FileChange("tests/test_calc.py", "def test_add():\n    pass\n", "x = 1\n")]),
        "'tests/test_calc.py': a test",
    ),
    "a-test-in-another-case": (added("Tests/Test_Calc.py"), "a test"),
    "a-nested-gate-config": (
        added("pkg/pyproject.toml", '[tool.ruff.lint]\nignore = ["ALL"]\n'),
        "'pkg/pyproject.toml': a test, or test or gate configuration",
    ),
    "a-pth-file": (added("lib/zz.pth", "import os\n"), "a test, or test or gate configuration"),
    "parent-folder": (added("../outside.py"), "not a plain relative path"),
    "a-stray-line-after-a-hunk": (CALC + "+import os\n", "is not a canonical diff's file header"),
    "a-hunk-that-miscounts": (
        CALC.replace("@@ -1,2 +1,2 @@", "@@ -1,2 +1,1 @@"),
        "is not a canonical diff's file header",
    ),
}


def recorded(world: World) -> Path:
    """The fix job's artifact for a verified fix of calc.py."""
    fixed = world.run("workflow_run", world.failed_run(), phase="fix")
    assert fixed.outputs["status"] == "fixed", fixed.logs
    return Path(fixed.outputs["diff-path"]).parent


def rewrite(artifact: Path, diff: str) -> str:
    """Replace the artifact's diff consistently (fix.diff and evidence.json's hash), as whoever
    holds the artifact can; the SHA-256 of the new diff."""
    digest = hashlib.sha256(diff.encode()).hexdigest()
    (artifact / "fix.diff").write_text(diff)
    evidence = json.loads((artifact / "evidence.json").read_text())
    evidence.update(diff=diff, diff_sha256=digest)
    (artifact / "evidence.json").write_text(json.dumps(evidence))
    return digest


def publish(world: World, artifact: Path, digest: str | None) -> Run:
    extra = {} if digest is None else {"FIXBOT_DIFF_SHA256": digest}
    return world.run(
        "workflow_run", world.failed_run(), phase="publish", result_dir=artifact, **extra
    )


def assert_nothing_published(world: World, run: Run, reason: str) -> None:
    assert run.code == 2, run.logs
    assert run.outputs["status"] == "error"
    assert "refusing to publish" in run.logs and reason in run.logs, run.logs
    assert world.writes() == []  # no PR, no comment, no label, no deleted branch
    assert git(world.bare, "branch", "--list", "fixbot/*") == ""


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_a_recorded_diff_fixbot_would_not_publish_is_refused(world: World, name: str) -> None:
    diff, reason = SHAPES[name]
    artifact = recorded(world)
    digest = rewrite(artifact, diff)  # even a fix job that reported this very diff
    assert_nothing_published(world, publish(world, artifact, digest), reason)


def test_the_trusted_configs_own_protected_globs_apply(world: World) -> None:
    (world.workspace / ".fixbot.yml").write_text("protected_paths: ['docs/**']\n")
    artifact = recorded(world)
    digest = rewrite(artifact, added("docs/guide.md", "hi\n"))
    assert_nothing_published(world, publish(world, artifact, digest), "'docs/guide.md'")


def test_a_consistently_rewritten_artifact_is_caught_by_the_fix_jobs_own_hash(
    world: World,
) -> None:
    artifact = recorded(world)
    reported = hashlib.sha256((artifact / "fix.diff").read_bytes()).hexdigest()
    sneaky = render_diff([FileChange("calc.py", BROKEN, "import os\nos.system('id')\n")])
    rewrite(artifact, sneaky)  # evidence.json agrees with the new diff: only the output does not
    run = publish(world, artifact, reported)
    assert_nothing_published(world, run, "the artifact was changed")


def test_no_hash_from_the_fix_job_refuses(world: World) -> None:
    artifact = recorded(world)
    assert_nothing_published(world, publish(world, artifact, None), "got no diff-sha256")


def test_the_fix_jobs_hash_is_its_step_output_and_a_clean_result_publishes(world: World) -> None:
    fixed = world.run("workflow_run", world.failed_run(), phase="fix")
    artifact = Path(fixed.outputs["diff-path"]).parent
    digest = hashlib.sha256((artifact / "fix.diff").read_bytes()).hexdigest()
    assert fixed.outputs["diff-sha256"] == digest
    run = publish(world, artifact, digest)
    assert run.code == 0, run.logs
    assert len(world.fake.fixbot_pulls()) == 1


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("tokens", "lots"),
        ("attempts", [{"number": "one", "prompt_tokens": "x"}]),
        ("baseline", {"tests": {"t": "not a case"}}),
        ("cost_usd", "free"),
        ("resumes", True),
        ("forged_field", 1),
    ],
)
def test_an_evidence_of_the_wrong_shape_is_refused_and_nothing_is_published(
    world: World, field: str, value: object
) -> None:
    """The artifact is data another job wrote: a field of the wrong type (or one fixbot never
    writes) is refused (exit 2) before anything is rendered or published."""
    artifact = recorded(world)
    digest = hashlib.sha256((artifact / "fix.diff").read_bytes()).hexdigest()
    evidence = json.loads((artifact / "evidence.json").read_text())
    evidence[field] = value
    (artifact / "evidence.json").write_text(json.dumps(evidence))
    run = publish(world, artifact, digest)
    assert run.code == 2, run.logs
    assert run.outputs["status"] == "error" and "no readable fixbot result" in run.logs
    assert world.writes() == [] and git(world.bare, "branch", "--list", "fixbot/*") == ""
