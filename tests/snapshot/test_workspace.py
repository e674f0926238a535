"""Attempt workspaces: a layer over the snapshot (overlayfs) or a full copy, in a capped scratch.

The layered kind is what fixbot uses as root (CI runs as root); both are exercised with real
files, real whiteouts and real sandboxes on both backends.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixbot import edits as diff
from fixbot.checks import run_trial
from fixbot.config import Config, Gates
from fixbot.sandbox import BwrapSandbox, Limits, RunSpec, Sandbox, attempt_scratch
from fixbot.sandbox.host import pid_namespace
from fixbot.sandbox.scratch import reap
from fixbot.snapshot import (
    Snapshot,
    mismatches,
    prepare,
    put_back_protected,
    read_inside,
    take_snapshot,
)
from fixbot.snapshot.workspace import Workspace
from tests.conftest import ENGINE_PROBLEM, make_repo

ROOT_ONLY = pytest.mark.skipif(
    os.geteuid() != 0, reason="overlay workspaces and capped scratch need root; CI runs as root"
)
FAST = Limits(timeout_seconds=60, memory_mb=512, cpus=1.0)


def _snapshot(tmp_path: Path, files: dict[str, str]) -> Snapshot:
    empty = tmp_path / "empty"
    empty.mkdir()
    repo = make_repo(tmp_path / "repo", files, source=empty)
    (tmp_path / "work").mkdir()
    return take_snapshot(repo, ["tests/**", "pyproject.toml"], tmp_path / "work", "HEAD")


def _patch(snapshot: Snapshot, text: str) -> diff.Patch:
    return diff.plan_patch(text, lambda rel: read_inside(snapshot.tree, rel))


EDIT = """\
--- a/calc/ops.py
+++ b/calc/ops.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""
ADD = """\
--- /dev/null
+++ b/calc/extra/new.py
@@ -0,0 +1 @@
+VALUE = 1
"""
DELETE = """\
--- a/calc/old.py
+++ /dev/null
@@ -1 +0,0 @@
-OLD = True
"""
FILES = {
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a - b\n",
    "calc/old.py": "OLD = True\n",
    "tests/test_ops.py": (
        "from calc.ops import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    ),
}


@ROOT_ONLY
def test_a_layer_holds_only_the_diff_and_reads_back_merged(tmp_path: Path) -> None:
    snapshot = _snapshot(tmp_path, {**FILES, "run.sh": "#!/bin/sh\n"})
    (snapshot.tree / "run.sh").chmod(0o755)
    script = "--- a/run.sh\n+++ b/run.sh\n@@ -1 +1,2 @@\n #!/bin/sh\n+echo hi\n"
    patch = _patch(snapshot, EDIT + ADD + DELETE + script)
    ws = prepare(snapshot, tmp_path / "attempt", layered=True, patch=patch)
    assert ws.lower == snapshot.tree
    layer = sorted(p.relative_to(ws.root).as_posix() for p in ws.root.rglob("*"))
    assert layer == [
        "calc",
        "calc/extra",
        "calc/extra/new.py",
        "calc/old.py",
        "calc/ops.py",
        "run.sh",
    ]
    whiteout = os.lstat(ws.root / "calc/old.py")
    assert stat.S_ISCHR(whiteout.st_mode) and whiteout.st_rdev == 0
    assert ws.locate("calc/old.py") is None
    assert ws.locate("calc/ops.py") == ws.root / "calc/ops.py"
    assert ws.locate("calc/__init__.py") == snapshot.tree / "calc/__init__.py"
    assert ws.locate("nothing/here.py") is None
    assert (ws.root / "run.sh").stat().st_mode & 0o777 == 0o755
    # The snapshot is untouched.
    assert (snapshot.tree / "calc/ops.py").read_text().endswith("a - b\n")
    assert (snapshot.tree / "calc/old.py").exists()


@ROOT_ONLY
def test_a_diff_through_a_link_of_the_snapshot_gets_a_full_copy(tmp_path: Path) -> None:
    snapshot = _snapshot(tmp_path, FILES)
    (snapshot.tree / "pkg").symlink_to("calc")
    patch = diff.Patch(changes=(diff.FileChange("pkg/ops.py", "", "x = 1\n"),), diff="")
    ws = prepare(snapshot, tmp_path / "attempt", layered=True, patch=patch)
    assert ws.lower is None
    assert (ws.root / "calc/ops.py").read_text() == "x = 1\n"  # as a checkout would have it


@ROOT_ONLY
def test_protected_paths_are_put_back_and_checked_through_the_layer(tmp_path: Path) -> None:
    snapshot = _snapshot(tmp_path, FILES)
    ws = prepare(snapshot, tmp_path / "attempt", layered=True, patch=None)
    assert mismatches(snapshot, ws) == []
    # What a command could leave in the layer: an edit, a whiteout, a file where a folder was.
    (ws.root / "tests").mkdir()
    (ws.root / "tests/test_ops.py").write_text("def test_add():\n    pass\n")
    assert mismatches(snapshot, ws) == ["tests/test_ops.py"]
    (ws.root / "tests/test_ops.py").unlink()
    os.mknod(ws.root / "tests/test_ops.py", stat.S_IFCHR, os.makedev(0, 0))
    assert mismatches(snapshot, ws) == ["tests/test_ops.py"]
    shutil.rmtree(ws.root / "tests")
    (ws.root / "tests").write_text("not a folder")
    assert mismatches(snapshot, ws) == ["tests/test_ops.py"]
    put_back_protected(snapshot, ws)
    assert mismatches(snapshot, ws) == []
    # An opaque folder hides the snapshot's files under it.
    (ws.root / "tests").mkdir()
    os.setxattr(ws.root / "tests", "trusted.overlay.opaque", b"y")
    assert mismatches(snapshot, ws) == ["tests/test_ops.py"]
    put_back_protected(snapshot, ws)
    assert mismatches(snapshot, ws) == []


def test_without_layers_the_workspace_is_a_full_copy(tmp_path: Path) -> None:
    snapshot = _snapshot(tmp_path, FILES)
    ws = prepare(snapshot, tmp_path / "attempt", layered=False, patch=_patch(snapshot, DELETE))
    assert ws.lower is None
    assert not (ws.root / "calc/old.py").exists() and (ws.root / "calc/ops.py").is_file()
    (ws.root / "tests/test_ops.py").write_text("")
    assert mismatches(snapshot, ws) == ["tests/test_ops.py"]
    put_back_protected(snapshot, ws)
    assert mismatches(snapshot, ws) == []


@pytest.fixture(params=["bwrap", "docker"])
def layered_sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    if os.geteuid() != 0:
        pytest.skip("overlay workspaces need root; CI runs as root")
    if request.param == "bwrap":
        if shutil.which("bwrap") is None:
            pytest.skip("bubblewrap (bwrap) is not installed here; CI installs it")
        sandbox: Sandbox = BwrapSandbox()
    else:
        if ENGINE_PROBLEM is not None:
            pytest.skip(f"{ENGINE_PROBLEM}; CI starts one with .ci/docker-setup.sh")
        from fixbot.sandbox import DockerSandbox

        sandbox = DockerSandbox()
    try:
        assert sandbox.layered, f"{sandbox.describe()} cannot layer a workspace here"
        yield sandbox
    finally:
        sandbox.close()


def test_a_command_edits_the_layer_never_the_snapshot(
    layered_sandbox: Sandbox, tmp_path: Path
) -> None:
    snapshot = _snapshot(tmp_path, FILES)
    before = {p: p.read_bytes() for p in snapshot.tree.rglob("*") if p.is_file()}
    ws = prepare(snapshot, tmp_path / "attempt", layered=True, patch=_patch(snapshot, EDIT))
    (tmp_path / "out").mkdir()
    code = (
        "import os, pathlib\n"
        "pathlib.Path('calc/__init__.py').write_text('EDITED = 1\\n')\n"  # in place, copied up
        "os.remove('calc/old.py')\n"
        "pathlib.Path('made.txt').write_text('new')\n"
        "print(pathlib.Path('calc/ops.py').read_text().strip().splitlines()[-1])\n"
        "open('tests/test_ops.py', 'a').write('x')\n"
    )
    spec = RunSpec(
        ws.root, tmp_path / "out", lower=ws.lower, readonly=["tests/test_ops.py"], limits=FAST
    )
    done = layered_sandbox.run(["python", "-c", code], spec)
    assert "return a + b" in done.output  # the diff's file, seen through the merge
    assert done.returncode != 0 and "Read-only file system" in done.output
    assert {p: p.read_bytes() for p in snapshot.tree.rglob("*") if p.is_file()} == before
    init = ws.locate("calc/__init__.py")
    assert init is not None and init.read_text() == "EDITED = 1\n"
    assert ws.locate("calc/old.py") is None
    made = ws.locate("made.txt")
    assert made is not None and made.read_text() == "new"
    assert mismatches(snapshot, ws) == []


def test_run_trial_on_layers_fixes_and_keeps_the_snapshot(
    layered_sandbox: Sandbox, tmp_path: Path
) -> None:
    snapshot = _snapshot(tmp_path, FILES)
    config = Config(gates=Gates(lint=False, types=False))
    failing, _ = run_trial(layered_sandbox, snapshot, config, "")
    assert failing["status"] == "tests_failed"
    passing, tampered = run_trial(layered_sandbox, snapshot, config, EDIT)
    assert passing["status"] == "passed" and tampered == []
    assert (snapshot.tree / "calc/ops.py").read_text().endswith("a - b\n")
    mine = f" fixbot-scratch-{os.getpid()}-"
    assert not [m for m in Path("/proc/self/mountinfo").read_text().splitlines() if mine in m]


@ROOT_ONLY
def test_the_scratch_is_capped_and_unmounted(tmp_path: Path) -> None:
    with attempt_scratch(16) as scratch:
        assert scratch.capped and scratch.path.is_mount()
        with (scratch.path / "fill").open("wb") as handle, pytest.raises(OSError) as full:
            for _ in range(32):
                handle.write(b"\0" * 1024 * 1024)
                handle.flush()
        assert full.value.errno == errno.ENOSPC
    assert not scratch.path.exists()


@ROOT_ONLY
def test_a_crashed_owners_scratch_is_reaped(tmp_path: Path) -> None:
    target = tmp_path / "left-behind"
    target.mkdir()
    dead = f"fixbot-scratch-{pid_namespace()}-999999999-1"  # no such process in this namespace
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", dead, str(target)], check=True)
    try:
        assert str(target) in reap()
        assert not target.is_mount()
    finally:
        if target.is_mount():
            subprocess.run(["umount", "--lazy", str(target)], check=False)


@ROOT_ONLY
def test_a_scratch_of_another_pid_namespace_is_left_alone(tmp_path: Path) -> None:
    """Its owner's pid means another process here (a containerised run's, seen from the host):
    it cannot be judged dead from here, so it is never taken."""
    target = tmp_path / "left-behind"
    target.mkdir()
    dead = "fixbot-scratch-1-999999999-1"  # namespace 1: no pid namespace's inode
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", dead, str(target)], check=True)
    try:
        assert str(target) not in reap()
        assert target.is_mount()
    finally:
        if target.is_mount():
            subprocess.run(["umount", "--lazy", str(target)], check=False)


def test_workspace_locate_without_layers(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("x")
    ws = Workspace(tmp_path, None)
    assert ws.locate("a") == tmp_path / "a" and ws.locate("b") is None
