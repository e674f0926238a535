"""The plugin is package data: it ships in the wheel, and an installed fixbot stages it from
its own files (a fresh folder, a random module name, readable by the sandbox, writable by no
one else)."""

from __future__ import annotations

import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from fixbot.checks.pytest.channel import PLUGIN_SOURCE, open_channel, stage_plugin
from fixbot.errors import SandboxFailed

ROOT = Path(__file__).resolve().parents[3]


def test_the_plugin_ships_in_the_wheel_and_stages_from_an_installed_fixbot(
    tmp_path: Path,
) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "fixbot", source / "fixbot", ignore=shutil.ignore_patterns("__pycache__")
    )
    wheels = tmp_path / "wheels"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = wheels.glob("fixbot-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read("fixbot/checks/pytest/plugin.py") == PLUGIN_SOURCE.read_bytes()
    site = tmp_path / "site"
    subprocess.run(
        [*pip, "install", "--no-deps", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "from fixbot.checks.pytest.channel import PLUGIN_SOURCE, stage_plugin; "
        "staged = stage_plugin(); print(PLUGIN_SOURCE); "
        "copy = staged.folder / (staged.module + '.py'); "
        "print(copy.read_text() == PLUGIN_SOURCE.read_text()); staged.cleanup()"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(site)],
        cwd=tmp_path,  # not the checkout: the installed copy is the one imported
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    where, same = done.stdout.split()
    assert where == str(site / "fixbot" / "checks" / "pytest" / "plugin.py")
    assert same == "True"


def test_a_staged_plugin_is_its_own_read_only_module(tmp_path: Path) -> None:
    first, second = stage_plugin(tmp_path), stage_plugin(tmp_path)
    try:
        assert first.module != second.module and first.module.startswith("fixbot_harness_")
        files = sorted(first.folder.iterdir(), key=lambda f: f.name)
        assert [f.name for f in files] == [f"{first.module}.py", "sitecustomize.py"]
        assert stat.S_IMODE(first.folder.stat().st_mode) == 0o755
        assert all(stat.S_IMODE(f.stat().st_mode) == 0o644 for f in files)
    finally:
        first.cleanup()
        second.cleanup()
    assert not first.folder.exists()


def test_a_socket_path_too_long_for_unix_is_a_sandbox_failure_not_a_crash(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 120)
    deep.mkdir()
    staged = stage_plugin(deep)
    try:
        with (
            pytest.raises(SandboxFailed, match="cannot listen for the report channel"),
            open_channel("unix", staged, "/fixbot-harness"),
        ):
            pass
    finally:
        staged.cleanup()
