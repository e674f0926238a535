"""The bubblewrap backend: namespaces without a daemon.

As root, bwrap runs in privileged mode and `setpriv` drops the command to the real `nobody` user
with no capabilities; as an ordinary user, a user namespace maps the command to `nobody` inside.
Either way: no network namespace peers, a new pid namespace (its init dying takes every
descendant with it), system paths read-only, only the workspace and the outputs folder writable.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from fixbot import proc
from fixbot.errors import SandboxFailed, SandboxUnavailable
from fixbot.proc import Completed
from fixbot.sandbox import BASE_ENV, DEFAULT_LIMITS, OUTPUTS, WORKSPACE, Limits

NOBODY = 65534
_SYSTEM_DIRS = ("/usr", "/opt")
_ETC_FILES = (
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/etc/alternatives",
    "/etc/ssl",
    "/etc/ca-certificates",
)


def python_prefixes() -> list[str]:
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    return sorted(p for p in prefixes if not any(p.startswith(s + "/") for s in _SYSTEM_DIRS))


def _root_links() -> Iterator[str]:
    """Recreate /bin, /lib, ... as the host has them (usually symlinks into /usr on Debian 12)."""
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            yield from ("--symlink", os.readlink(path), str(path))
        elif path.is_dir():
            yield from ("--ro-bind", str(path), str(path))


class BwrapSandbox:
    name = "bwrap"

    def __init__(self, executable: str | None = None) -> None:
        found = executable or shutil.which("bwrap")
        if not found:
            raise SandboxUnavailable(
                "bubblewrap (bwrap) is not installed: apt-get install -y bubblewrap"
            )
        self.executable = found
        self.privileged = os.geteuid() == 0
        self._version = proc.run([found, "--version"], timeout=10, env={}).output.strip()
        self._probe()

    def close(self) -> None:
        """Nothing to release: every run's processes are gone when it returns."""

    def describe(self) -> str:
        mode = "privileged, setpriv to nobody" if self.privileged else "user namespace"
        return f"{self._version} ({mode})"

    def _probe(self) -> None:
        result = proc.run(
            [*self._prefix(Limits(timeout_seconds=10)), "--", *self._drop(), "true"],
            timeout=20,
            env={},
        )
        if result.returncode != 0:
            raise SandboxUnavailable(
                f"bubblewrap cannot create a sandbox here: {result.tail(500).strip()}"
            )

    def _drop(self) -> list[str]:
        if not self.privileged:
            return []
        return [
            "setpriv",
            f"--reuid={NOBODY}",
            f"--regid={NOBODY}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]

    def _prefix(self, limits: Limits) -> list[str]:
        args = [self.executable, "--die-with-parent", "--new-session"]
        if self.privileged:
            args += ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
            args += ["--unshare-cgroup-try"]
        else:
            args += ["--unshare-all", "--uid", str(NOBODY), "--gid", str(NOBODY)]
        for path in _SYSTEM_DIRS:
            if Path(path).exists():
                args += ["--ro-bind", path, path]
        for path in python_prefixes():
            # bwrap would copy the modes of the host's parents (/root is 0700): open them up.
            for parent in reversed(Path(path).parents[:-1]):
                args += ["--perms", "0755", "--dir", str(parent)]
            args += ["--ro-bind", path, path]
        args += list(_root_links())
        for path in _ETC_FILES:
            if Path(path).exists():
                args += ["--ro-bind", path, path]
        args += ["--proc", "/proc", "--dev", "/dev"]
        size = str(limits.tmp_size_mb * 1024 * 1024)
        args += ["--perms", "1777", "--size", size, "--tmpfs", "/tmp"]
        args += ["--hostname", "sandbox", "--clearenv"]
        path_dirs = [str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]
        for key, value in {**BASE_ENV, "PATH": ":".join(dict.fromkeys(path_dirs))}.items():
            args += ["--setenv", key, value]
        return args

    def run(
        self,
        argv: Sequence[str],
        *,
        workspace: Path,
        outputs: Path,
        readonly: Sequence[str] = (),
        limits: Limits = DEFAULT_LIMITS,
        env: Mapping[str, str] | None = None,
    ) -> Completed:
        if self.privileged:
            give_to_nobody(workspace)
            give_to_nobody(outputs)
        args = self._prefix(limits)
        args += ["--bind", str(workspace), WORKSPACE, "--bind", str(outputs), OUTPUTS]
        for rel in readonly:
            if (workspace / rel).exists():
                target = f"{WORKSPACE}/{rel}"
                args += ["--ro-bind", str(workspace / rel), target]
        for key, value in (env or {}).items():
            args += ["--setenv", key, value]
        with tempfile.TemporaryFile() as status:
            # bwrap reports an exit code only for a command it got to run.
            args += ["--json-status-fd", str(status.fileno())]
            args += ["--chdir", WORKSPACE, "--", *self._drop(), *_rlimits(limits), *argv]
            # The group kill after the timeout reaches bwrap; --die-with-parent and the pid
            # namespace take the rest down with it.
            result = proc.run(
                args,
                timeout=limits.timeout_seconds,
                output_cap=limits.output_bytes,
                pass_fds=(status.fileno(),),
                # Not even bwrap gets fixbot's environment: as an ordinary user, the sandbox's
                # pid 1 is bwrap itself, and /proc/1/environ would show it to the command.
                env={},
            )
            status.seek(0)
            started = b'"exit-code"' in status.read()
        if not started and not result.timed_out:
            raise SandboxFailed(f"bubblewrap failed: {result.tail(500).strip()}")
        return result


def _rlimits(limits: Limits) -> list[str]:
    memory = limits.memory_mb * 1024 * 1024
    cpu_seconds = int(limits.timeout_seconds * max(limits.cpus, 1)) + 1
    return [
        "prlimit",
        f"--as={memory}",
        f"--nproc={limits.pids}",
        f"--fsize={limits.file_size_mb * 1024 * 1024}",
        f"--cpu={cpu_seconds}",
        "--core=0",
        "--nofile=1024",
        "--",
    ]


def give_to_nobody(root: Path) -> None:
    """The command runs as nobody, so nobody owns the places it may write."""
    os.chown(root, NOBODY, NOBODY)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in (*dirnames, *filenames):
            os.chown(os.path.join(dirpath, name), NOBODY, NOBODY, follow_symlinks=False)
