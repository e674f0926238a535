"""The bubblewrap backend: namespaces without a daemon.

As root, bwrap runs in privileged mode and `setpriv` drops the command to the real `nobody` user
with no capabilities; as an ordinary user, a user namespace maps the command to `nobody` inside.
Either way: no network namespace peers, a new pid namespace (its init dying takes every
descendant with it), system paths read-only, only the workspace and the outputs folder writable.

Layered workspaces need root: bubblewrap 0.8 (Debian 12) cannot mount an overlay itself, so
`unshare` gives the run a private mount namespace, a fixed `sh` script mounts the overlay there
(its arguments are paths fixbot made, never text from the repository) and execs bwrap, which
binds the merged tree at /workspace. The mount dies with the namespace, whatever happens.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fixbot import proc
from fixbot.errors import SandboxFailed, SandboxUnavailable
from fixbot.proc import Completed
from fixbot.sandbox.host import (
    NOBODY,
    SYSTEM_DIRS,
    give_to_nobody,
    hand_over,
    overlay_options,
    python_prefixes,
    readonly_sources,
)
from fixbot.sandbox.protocol import (
    BASE_ENV,
    DEFAULT_LIMITS,
    OUTPUTS,
    PREPARED,
    SETUP_ENV,
    WORKSPACE,
    Limits,
    RunSpec,
    prepared_env,
)

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


# Only the prepare step has a network, and with it the host's resolver settings.
_NETWORK_FILES = ("/etc/resolv.conf", "/etc/hosts")
# $1: mount, $2: the overlay's options, $3: where to mount it; then the bwrap command line.
_MOUNT_THEN_EXEC = '"$1" -t overlay -o "$2" fixbot-overlay "$3" && shift 3 && exec "$@"'


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
        self._owned: set[Path] = set()
        self._probe()
        self.layered = self.privileged and self._probe_layers()

    def close(self) -> None:
        """Nothing to release: every run's processes are gone when it returns."""

    def describe(self) -> str:
        mode = "privileged, setpriv to nobody" if self.privileged else "user namespace"
        layers = ", overlay workspaces" if self.layered else ""
        return f"{self._version} ({mode}{layers})"

    def _probe_layers(self) -> bool:
        """Whether this host lets fixbot lay a workspace over a snapshot (overlayfs)."""
        if not (shutil.which("unshare") and shutil.which("mount")):
            return False
        root = Path(tempfile.mkdtemp(prefix="fixbot-probe-"))
        try:
            (root / "lower").mkdir()
            (root / "upper").mkdir()
            (root / "lower" / "seen").write_text("")
            with _overlay(root / "upper", root / "lower") as (launcher, merged):
                args = [*launcher, *self._prefix(Limits(timeout_seconds=10))]
                args += ["--bind", str(merged), WORKSPACE, "--", "test", "-e", "/workspace/seen"]
                return proc.run(args, timeout=20, env={}).returncode == 0
        except (OSError, SandboxFailed):
            return False
        finally:
            shutil.rmtree(root, ignore_errors=True)

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

    def _prefix(
        self, limits: Limits, *, network: bool = False, prepared: bool = False
    ) -> list[str]:
        args = [self.executable, "--die-with-parent", "--new-session"]
        if self.privileged:
            args += [] if network else ["--unshare-net"]
            args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        else:
            args += ["--unshare-all", "--uid", str(NOBODY), "--gid", str(NOBODY)]
            args += ["--share-net"] if network else []
        for path in SYSTEM_DIRS:
            if Path(path).exists():
                args += ["--ro-bind", path, path]
        for path in python_prefixes():
            # bwrap would copy the modes of the host's parents (/root is 0700): open them up.
            for parent in reversed(Path(path).parents[:-1]):
                args += ["--perms", "0755", "--dir", str(parent)]
            args += ["--ro-bind", path, path]
        args += list(_root_links())
        args += ["--perms", "0755", "--dir", "/etc"]  # as root, bwrap would make it 0700
        for path in (*_ETC_FILES, *(_NETWORK_FILES if network else ())):
            if Path(path).exists():
                args += ["--ro-bind", path, path]
        args += ["--proc", "/proc", "--dev", "/dev"]
        size = str(limits.tmp_size_mb * 1024 * 1024)
        args += ["--perms", "1777", "--size", size, "--tmpfs", "/tmp"]
        args += ["--hostname", "sandbox", "--clearenv"]
        path_dirs = [str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]
        environment = {**BASE_ENV, "PATH": ":".join(dict.fromkeys(path_dirs))}
        if prepared:
            environment.update(prepared_env(environment["PATH"]))
        for key, value in environment.items():
            args += ["--setenv", key, value]
        return args

    def run(self, argv: Sequence[str], spec: RunSpec) -> Completed:
        lower = spec.lower
        if lower is not None and not self.layered:
            raise ValueError("this bubblewrap sandbox cannot lay a workspace over another tree")
        if self.privileged:
            hand_over(spec.workspace, spec.outputs, lower, self._owned)
        tree, readonly, prepared = spec.workspace, spec.readonly, spec.prepared
        if lower is None:
            plan = _Plan(tree, spec.outputs, tree, readonly, prepared, setup=False)
            return self._run(argv, [], plan, spec.limits, spec.env)
        with _overlay(tree, lower) as (launcher, merged):
            plan = _Plan(merged, spec.outputs, lower, readonly, prepared, setup=False)
            return self._run(argv, launcher, plan, spec.limits, spec.env)

    def prepare(
        self,
        argv: Sequence[str],
        *,
        workspace: Path,
        env_dir: Path,
        limits: Limits = DEFAULT_LIMITS,
    ) -> Completed:
        if self.privileged:
            give_to_nobody(workspace)
            give_to_nobody(env_dir)
        outputs = Path(tempfile.mkdtemp(prefix="fixbot-prepare-out-"))
        try:
            if self.privileged:
                give_to_nobody(outputs)
            plan = _Plan(workspace, outputs, workspace, (), env_dir, setup=True)
            return self._run(argv, [], plan, limits, SETUP_ENV)
        finally:
            shutil.rmtree(outputs, ignore_errors=True)

    def _run(
        self,
        argv: Sequence[str],
        launcher: Sequence[str],
        plan: _Plan,
        limits: Limits,
        env: Mapping[str, str] | None,
    ) -> Completed:
        prepared = plan.prepared is not None
        args = [*launcher, *self._prefix(limits, network=plan.setup, prepared=prepared)]
        args += ["--bind", str(plan.tree), WORKSPACE, "--bind", str(plan.outputs), OUTPUTS]
        if plan.prepared is not None:
            args += ["--bind" if plan.setup else "--ro-bind", str(plan.prepared), PREPARED]
        for rel, source in readonly_sources(plan.pristine, plan.readonly):
            args += ["--ro-bind", source, f"{WORKSPACE}/{rel}"]
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


@dataclass(frozen=True)
class _Plan:
    tree: Path  # bound at WORKSPACE
    outputs: Path
    pristine: Path  # where the read-only paths are bound from
    readonly: Sequence[str]
    prepared: Path | None  # the prepared environment, at PREPARED
    setup: bool  # fixbot's prepare step: network, and the environment writable


@contextmanager
def _overlay(upper: Path, lower: Path) -> Iterator[tuple[list[str], Path]]:
    """(the launcher that mounts upper over lower in a private namespace, the mount point)."""
    unshare, mount = shutil.which("unshare"), shutil.which("mount")
    if not (unshare and mount):
        raise SandboxFailed("overlay workspaces need util-linux's unshare and mount")
    work = Path(tempfile.mkdtemp(prefix=".overlay-work-", dir=upper.parent))
    merged = Path(tempfile.mkdtemp(prefix=".overlay-", dir=upper.parent))
    try:
        options = overlay_options(upper, lower, work)
        launcher = [unshare, "--mount", "--propagation", "private", "--"]
        launcher += ["sh", "-c", _MOUNT_THEN_EXEC, "fixbot-overlay", mount, options, str(merged)]
        yield launcher, merged
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(merged, ignore_errors=True)


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
