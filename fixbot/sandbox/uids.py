"""A uid of its own for each concurrent sandbox, when fixbot runs as root.

The kernel counts RLIMIT_NPROC per real uid, and a handful of other pools with it: inotify
instances, pipe buffer pages, pending signals, message queue bytes, key quotas. With every
sandbox running as `nobody`, one run's fork bomb is every other run's "can't start new thread".
Each run therefore leases a uid from a range no one else uses:

- UID_BASE lies in the range systemd documents as unused (0x70000000-0x7FFDFFFF: above nspawn's
  container range, below the "foreign" range); 100000 would collide with the first /etc/subuid
  range, which rootless containers map their root to;
- a uid is held by an exclusive flock on LOCK_DIR/<uid> (0700, root's) for the run, dropped when
  it ends or when fixbot dies, whatever kills it;
- a uid with an /etc/passwd entry, in an /etc/subuid range, or still owning a process (a crashed
  run's leftover) is skipped.

Every sandbox shares one group, SANDBOX_GID (see host.share). As an ordinary user, each sandbox
runs in a user namespace of its own, where the kernel (5.14+) already counts processes per
namespace: no lease.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pwd
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from fixbot.errors import SandboxFailed
from fixbot.sandbox.host import NOBODY, SANDBOX_GID

UID_BASE = SANDBOX_GID  # 0x70010000; the sandboxes' uids start one above it
DEFAULT_COUNT = 256
LOCK_DIR = Path("/run/fixbot/uids")


@dataclass(frozen=True)
class Lease:
    uid: int
    gid: int = SANDBOX_GID
    identity: tuple[Path, Path] | None = None  # its /etc/passwd and /etc/group, as sandbox()


def subid_ranges(path: Path = Path("/etc/subuid")) -> list[range]:
    """The subordinate id ranges of /etc/subuid: `name:start:count` lines."""
    ranges = []
    with contextlib.suppress(OSError):
        for line in path.read_text().splitlines():
            parts = line.strip().split(":")
            if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                ranges.append(range(int(parts[1]), int(parts[1]) + int(parts[2])))
    return ranges


def _has_passwd_entry(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True


def uids_with_processes(uids: Iterable[int]) -> set[int]:
    """Those of `uids` that a process of the host runs as."""
    wanted, found = set(uids), set()
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                for line in Path(entry.path, "status").read_text().splitlines():
                    if line.startswith("Uid:"):
                        uid = int(line.split()[1])
                        found |= {uid} & wanted
                        break
    return found


class UidPool:
    """Leases uids base+1 ... base+count, one per sandbox run at a time."""

    def __init__(
        self,
        *,
        base: int = UID_BASE,
        count: int = DEFAULT_COUNT,
        lock_dir: Path = LOCK_DIR,
        taken: Callable[[int], bool] | None = None,
    ) -> None:
        subuids = subid_ranges()
        is_taken = taken or (lambda uid: _has_passwd_entry(uid) or any(uid in r for r in subuids))
        self.uids = [uid for uid in range(base + 1, base + 1 + count) if not is_taken(uid)]
        self.lock_dir = lock_dir
        if not self.uids:
            raise ValueError(f"every uid in {base + 1}...{base + count} is taken on this host")

    def describe(self) -> str:
        return f"uids {self.uids[0]}-{self.uids[-1]} ({len(self.uids)}), locks in {self.lock_dir}"

    def _folder(self) -> Path:
        """LOCK_DIR, made 0700 and checked to be this user's own real folder."""
        self.lock_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(self.lock_dir)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            raise SandboxFailed(f"{self.lock_dir} is not a folder of uid {os.geteuid()}")
        if info.st_mode & 0o077:
            os.chmod(self.lock_dir, 0o700)
        return self.lock_dir

    @contextlib.contextmanager
    def lease(self) -> Iterator[Lease]:
        """A uid no other sandbox holds and no process runs as, until the block ends."""
        folder = self._folder()
        busy: set[int] | None = None
        for uid in self.uids:
            flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
            fd = os.open(folder / str(uid), flags, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            if busy is None:  # one scan of /proc per lease, made once a lock is held
                busy = uids_with_processes(self.uids)
            if uid in busy:  # a leftover of a run whose fixbot died: leave it alone
                os.close(fd)
                continue
            try:
                yield Lease(uid)
            finally:
                os.close(fd)  # closing drops the flock
            return
        raise SandboxFailed(f"all {len(self.uids)} sandbox uids are in use: too many sandboxes")


@contextlib.contextmanager
def sandbox_user(pool: UidPool | None) -> Iterator[Lease]:
    """Who one run's command runs as, as root: a leased uid with its passwd and group files, or
    (no pool) nobody, in the sandboxes' group."""
    if pool is None:
        yield Lease(NOBODY)
        return
    with pool.lease() as lease, tempfile.TemporaryDirectory(prefix="fixbot-identity-") as folder:
        yield Lease(lease.uid, lease.gid, identity_files(lease, Path(folder)))


def identity_files(
    lease: Lease, folder: Path, name: str = "sandbox", home: str = "/tmp"
) -> tuple[Path, Path]:
    """An /etc/passwd and /etc/group for the sandbox naming the run's uid and group (`id`,
    `getpass` and `pwd` want an entry) `name`, at `home`, written into `folder`."""
    passwd, group = folder / "passwd", folder / "group"
    passwd.write_text(
        "root:x:0:0:root:/root:/usr/sbin/nologin\n"
        f"nobody:x:{NOBODY}:{NOBODY}:nobody:/nonexistent:/usr/sbin/nologin\n"
        f"{name}:x:{lease.uid}:{lease.gid}:{name}:{home}:/bin/sh\n"
    )
    group.write_text(f"root:x:0:\nnogroup:x:{NOBODY}:\n{name}:x:{lease.gid}:\n")
    for path in (folder, passwd, group):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return passwd, group
