"""The bubblewrap command line of one run, piece by piece, as plain argv:

    [cgroup launcher] [overlay launcher] bwrap OPTIONS --seccomp FD ... -- [setpriv to the run's
    uid] prlimit [per-file, CPU, open files; address space and processes only when no cgroup caps
    the run] argv

The launchers are fixed `sh` scripts whose arguments are only paths fixbot made, never text from
the repository (cgroups.ENTER, MOUNT_THEN_EXEC).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fixbot.errors import SandboxFailed
from fixbot.sandbox.host import NOBODY, SYSTEM_DIRS, overlay_options, python_prefixes
from fixbot.sandbox.protocol import BASE_ENV, Limits, Persona, prepared_env

ETC_FILES = (
    "/etc/nsswitch.conf",
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/etc/alternatives",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/hosts",  # every machine has one: its absence would tell a sandbox
)
# Only the prepare step has a network, and with it the host's resolver settings.
NETWORK_FILES = ("/etc/resolv.conf",)
# $1: mount, $2: the overlay's options, $3: where to mount it; then the bwrap command line.
MOUNT_THEN_EXEC = '"$1" -t overlay -o "$2" fixbot-overlay "$3" && shift 3 && exec "$@"'


@dataclass(frozen=True)
class Confinement:
    """What a run's command line applies beyond its namespaces."""

    seccomp_fd: int | None = None  # the filter's descriptor (passed with pass_fds)
    disable_userns: bool = False  # as an ordinary user: no nested user namespace either
    identity: tuple[Path, Path] | None = None  # a passwd and group naming the run's uid


def root_links() -> Iterator[str]:
    """Recreate /bin, /lib, ... as the host has them (usually symlinks into /usr on Debian 12)."""
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            yield from ("--symlink", os.readlink(path), str(path))
        elif path.is_dir():
            yield from ("--ro-bind", str(path), str(path))


def prefix(
    executable: str,
    limits: Limits,
    *,
    privileged: bool,
    confinement: Confinement = Confinement(),
    network: bool = False,
    prepared: bool = False,
    persona: Persona | None = None,
) -> list[str]:
    """bwrap and its options, up to the run's own mounts; `persona`: the host's facts in place
    of the sandbox's (its name, an empty home folder, CI)."""
    args = [executable, "--die-with-parent", "--new-session"]
    if privileged:
        args += [] if network else ["--unshare-net"]
        args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    else:
        args += ["--unshare-all", "--uid", str(NOBODY), "--gid", str(NOBODY)]
        args += ["--share-net"] if network else []
        # --unshare-all only *tries* a user namespace: --disable-userns wants it explicit.
        args += ["--unshare-user", "--disable-userns"] if confinement.disable_userns else []
    for path in SYSTEM_DIRS:
        if Path(path).exists():
            args += ["--ro-bind", path, path]
    # The sandbox's own /tmp first: a toolchain under the host's /tmp (a virtualenv pip put
    # there) is then bound over it, where it is, instead of hidden by it.
    size = str(limits.tmp_size_mb * 1024 * 1024)
    args += ["--perms", "1777", "--size", size, "--tmpfs", "/tmp"]
    if persona is not None:  # an empty home where the host has it; its interpreters bound over
        args += [*open_parents(persona.home), "--perms", "1777", "--size", size]
        args += ["--tmpfs", persona.home]
    for path in python_prefixes():
        args += [*open_parents(path), "--ro-bind", path, path]
    args += list(root_links())
    args += ["--perms", "0755", "--dir", "/etc"]  # as root, bwrap would make it 0700
    passwd, group = confinement.identity or ("/etc/passwd", "/etc/group")
    args += ["--ro-bind", str(passwd), "/etc/passwd", "--ro-bind", str(group), "/etc/group"]
    for path in (*ETC_FILES, *(NETWORK_FILES if network else ())):
        if Path(path).exists():
            args += ["--ro-bind", path, path]
    args += ["--proc", "/proc", "--dev", "/dev"]
    # bwrap's own /dev/shm is root's 0755 in privileged mode: every POSIX semaphore (any
    # multiprocessing Lock, Queue or Pool) would fail for the sandbox's user.
    args += ["--perms", "1777", "--size", size, "--tmpfs", "/dev/shm"]
    args += ["--hostname", persona.hostname if persona else "sandbox", "--clearenv"]
    if confinement.seccomp_fd is not None:
        args += ["--seccomp", str(confinement.seccomp_fd)]
    path_dirs = [str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]
    base = persona.environment() if persona else BASE_ENV
    environment = {**base, "PATH": ":".join(dict.fromkeys(path_dirs))}
    if prepared:
        environment.update(prepared_env(environment["PATH"]))
    for key, value in environment.items():
        args += ["--setenv", key, value]
    return args


def open_parents(path: str) -> list[str]:
    """bwrap would copy the modes of the host's parents (/root is 0700): open them up; the
    sandbox's /tmp (mode 1777) is left as it is."""
    args: list[str] = []
    for parent in reversed(Path(path).parents[:-1]):
        if parent != Path("/tmp"):
            args += ["--perms", "0755", "--dir", str(parent)]
    return args


def drop(uid: int, gid: int) -> list[str]:
    """As root: the command runs as `uid`, with no capability and no_new_privs."""
    return [
        "setpriv",
        f"--reuid={uid}",
        f"--regid={gid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
    ]


def rlimits(limits: Limits, *, per_process_caps: bool, persona: Persona | None = None) -> list[str]:
    """prlimit's line. Address space and processes only where no cgroup caps the sandbox as a
    whole: a per-process RLIMIT_AS caps nothing in all and breaks runtimes that reserve address
    space, and RLIMIT_NPROC counts every process of the uid, not the sandbox's."""
    cpu_seconds = int(limits.timeout_seconds * max(limits.cpus, 1)) + 1
    args = ["prlimit"]
    if per_process_caps:
        args += [f"--as={limits.memory_mb * 1024 * 1024}", f"--nproc={limits.pids}"]
    file_size = persona.file_size if persona else limits.file_size_mb * 1024 * 1024
    args += [f"--fsize={file_size}"] if file_size is not None else []
    args += [
        f"--cpu={cpu_seconds}",
        "--core=0",
        "--nofile=1024",
        "--",
    ]
    return args


@contextmanager
def overlay(upper: Path, lower: Path) -> Iterator[tuple[list[str], Path]]:
    """(the launcher that mounts upper over lower in a private namespace, the mount point)."""
    unshare, mount = shutil.which("unshare"), shutil.which("mount")
    if not (unshare and mount):
        raise SandboxFailed("overlay workspaces need util-linux's unshare and mount")
    work = Path(tempfile.mkdtemp(prefix=".overlay-work-", dir=upper.parent))
    merged = Path(tempfile.mkdtemp(prefix=".overlay-", dir=upper.parent))
    try:
        options = overlay_options(upper, lower, work)
        launcher = [unshare, "--mount", "--propagation", "private", "--"]
        launcher += ["sh", "-c", MOUNT_THEN_EXEC, "fixbot-overlay", mount, options, str(merged)]
        yield launcher, merged
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(merged, ignore_errors=True)
