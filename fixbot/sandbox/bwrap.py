"""The bubblewrap backend: namespaces without a daemon.

As root, bwrap runs in privileged mode and `setpriv` drops the command to a uid of its own for
this run (uids.py), with no capabilities; as an ordinary user, a user namespace maps the command
to `nobody` inside, and nested user namespaces are disabled. Either way: no network namespace
peers, a new pid namespace (its init dying takes every descendant with it), system paths
read-only, only the workspace and the outputs folder writable, a seccomp filter (seccomp.py),
and, where a cgroup can be had, memory and processes capped for the whole sandbox (cgroups.py;
else per process, and `describe()` says so).

Layered workspaces need root: bubblewrap 0.8 (Debian 12) cannot mount an overlay itself, so
`unshare` gives the run a private mount namespace, a fixed `sh` script mounts the overlay there
(its arguments are paths fixbot made, never text from the repository) and execs bwrap, which
binds the merged tree at /workspace. The mount dies with the namespace, whatever happens.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from fixbot import proc
from fixbot.errors import SandboxFailed, SandboxUnavailable
from fixbot.proc import Completed
from fixbot.sandbox import seccomp
from fixbot.sandbox.bwrap_argv import Confinement, drop, open_parents, overlay, prefix, rlimits
from fixbot.sandbox.capwatch import held_cap
from fixbot.sandbox.cgroup_detect import detect
from fixbot.sandbox.cgroups import Hierarchy, NoCgroups
from fixbot.sandbox.host import NOBODY, give_to, hand_over, readonly_sources, share
from fixbot.sandbox.protocol import (
    DEFAULT_LIMITS,
    OOM_NOTE,
    OUTPUTS,
    PREPARED,
    SETUP_ENV,
    WORKSPACE,
    Limits,
    RunSpec,
    process_cap_note,
)
from fixbot.sandbox.uids import Lease, UidPool, sandbox_user

_PROBE = Limits(timeout_seconds=10)


class BwrapSandbox:
    name = "bwrap"
    passes_fds = True  # bwrap, setpriv and prlimit hand inherited descriptors down unchanged
    host_toolchain = True  # the host's toolchain is what it mounts

    def __init__(
        self,
        executable: str | None = None,
        *,
        cgroups: Hierarchy | None = None,
        uid_per_sandbox: bool = True,
        seccomp_filter: bool = True,
    ) -> None:
        """`cgroups` (default: what the host offers, cgroup_detect.detect()), a uid per sandbox
        (as root) and the seccomp filter: tests turn each off to show what it protects."""
        found = executable or shutil.which("bwrap")
        if not found:
            raise SandboxUnavailable(
                "bubblewrap (bwrap) is not installed: apt-get install -y bubblewrap"
            )
        self.executable = found
        self.privileged = os.geteuid() == 0
        self._version = proc.run([found, "--version"], timeout=10, env={}).output.strip()
        self._owned: set[Path] = set()
        self._sh = shutil.which("sh") or "/bin/sh"
        self.notes: list[str] = []  # what this host could not give, and why (`fixbot doctor`)
        self.cgroups: Hierarchy = NoCgroups("not tried")
        self.uids = UidPool() if self.privileged and uid_per_sandbox else None
        self.disable_userns = not self.privileged  # privileged bwrap refuses it (no userns)
        self.layered = False
        self._filter: bytes | None = None
        self._arch: seccomp.Arch | None = None
        if seccomp_filter:
            try:
                self._arch = seccomp.native_arch()
                self._filter = seccomp.build(self._arch)
            except seccomp.Unsupported as exc:
                self.notes.append(str(exc))
        self._probe(cgroups)
        self.layered = self.privileged and self._probe_layers()

    def close(self) -> None:
        """Nothing to release: every run's processes are gone when it returns."""

    def describe(self) -> str:
        """The backend and what contains a run here, in stable words (the evidence; the
        prepared environment's cache key): where, and what is missing, is containment()."""
        layers = ", overlay workspaces" if self.layered else ""
        return (
            f"{self._version} ({self._mode()}{layers}; {self.cgroups.summary()}; {self._seccomp()})"
        )

    def containment(self) -> str:
        """What contains a run here, where the caps live, and what this host could not give
        (`fixbot doctor`)."""
        caps = f"{self.cgroups.summary()} [{self.cgroups.details()}]"
        uids = f" [{self.uids.describe()}]" if self.uids else ""
        notes = "".join(f"; {note}" for note in self.notes)
        return f"{self._mode()}{uids}; {caps}; {self._seccomp()}{notes}"

    def _mode(self) -> str:
        if self.privileged:
            user = "a uid of its own per sandbox" if self.uids else "the shared nobody user"
            return f"privileged, setpriv to {user}"
        return "user namespace" + (", no nested ones" if self.disable_userns else "")

    def _seccomp(self) -> str:
        return seccomp.describe(self._arch) if self._filter and self._arch else "no seccomp filter"

    def _probe(self, cgroups: Hierarchy | None) -> None:
        """A sandbox must start here. The filter and the userns lock are each dropped (and
        noted) where this bwrap or kernel refuses them, and so are the cgroups: never the
        sandbox itself."""
        if self._start_fails():
            program, self._filter = self._filter, None
            wanted, self.disable_userns = self.disable_userns, False
            if failed := self._start_fails():
                raise SandboxUnavailable(f"bubblewrap cannot create a sandbox here: {failed}")
            self.disable_userns = wanted
            if wanted and (failed := self._start_fails()):
                self.disable_userns = False
                self.notes.append(f"bubblewrap refuses --disable-userns here: {failed}")
            self._filter = program
            if program is not None and (failed := self._start_fails()):
                self._filter = None
                self.notes.append(f"bubblewrap refuses the seccomp filter here: {failed}")
        self.cgroups = cgroups if cgroups is not None else detect()
        self.cgroups.reap()
        if not self.privileged and not self.cgroups.capped and _kernel() < (5, 14):
            self.notes.append("Linux < 5.14: RLIMIT_NPROC counts all of this user's sandboxes")
        if self.cgroups.capped and (failed := self._start_fails()):
            self.notes.append(f"cgroup {self.cgroups.kind} refused a sandbox: {failed}")
            self.cgroups = NoCgroups(f"a sandbox failed to start in its cgroup: {failed}")

    def _start_fails(self) -> str:
        """Why `true` does not run in a sandbox made as every run's is ("" when it does)."""
        root = Path(tempfile.mkdtemp(prefix="fixbot-probe-"))
        try:
            for name in ("ws", "out"):
                (root / name).mkdir()
            done = self.run(["true"], RunSpec(root / "ws", root / "out", limits=_PROBE))
            return "" if done.returncode == 0 else done.tail(500).strip() or "it failed"
        except SandboxFailed as exc:
            return str(exc)[-500:]
        finally:
            shutil.rmtree(root, ignore_errors=True)

    def _probe_layers(self) -> bool:
        """Whether this host lets fixbot lay a workspace over a snapshot (overlayfs)."""
        if not (shutil.which("unshare") and shutil.which("mount")):
            return False
        root = Path(tempfile.mkdtemp(prefix="fixbot-probe-"))
        try:
            for name in ("lower", "upper", "out"):
                (root / name).mkdir()
            (root / "lower" / "seen").write_text("")
            spec = RunSpec(root / "upper", root / "out", lower=root / "lower", limits=_PROBE)
            self.layered = True
            return self.run(["test", "-e", f"{WORKSPACE}/seen"], spec).returncode == 0
        except (OSError, SandboxFailed):
            return False
        finally:
            self.layered = False
            shutil.rmtree(root, ignore_errors=True)

    @contextlib.contextmanager
    def _user(self) -> Iterator[Lease]:
        if not self.privileged:
            yield Lease(NOBODY, NOBODY)  # nobody inside the run's own user namespace
            return
        with sandbox_user(self.uids) as lease:
            yield lease

    def run(self, argv: Sequence[str], spec: RunSpec) -> Completed:
        lower = spec.lower
        if lower is not None and not self.layered:
            raise ValueError("this bubblewrap sandbox cannot lay a workspace over another tree")
        with self._user() as user:
            if self.privileged:
                hand_over(spec.workspace, spec.outputs, lower, self._owned, user.uid)
            tree, readonly, prepared = spec.workspace, spec.readonly, spec.prepared
            attached = (spec.fds, spec.mounts)
            if lower is None:
                plan = _Plan(tree, spec.outputs, tree, readonly, prepared, False, *attached)
                return self._run(argv, [], plan, spec.limits, spec.env, user)
            with overlay(tree, lower) as (launcher, merged):
                plan = _Plan(merged, spec.outputs, lower, readonly, prepared, False, *attached)
                return self._run(argv, launcher, plan, spec.limits, spec.env, user)

    def prepare(
        self,
        argv: Sequence[str],
        *,
        workspace: Path,
        env_dir: Path,
        limits: Limits = DEFAULT_LIMITS,
        env: Mapping[str, str] | None = None,
        mounts: Sequence[tuple[Path, str]] = (),
    ) -> Completed:
        outputs = Path(tempfile.mkdtemp(prefix="fixbot-prepare-out-"))
        try:
            with self._user() as user:
                if self.privileged:
                    for path in (workspace, env_dir, outputs):
                        give_to(path, user.uid, user.gid)
                plan = _Plan(workspace, outputs, workspace, (), env_dir, True, mounts=tuple(mounts))
                try:
                    return self._run(argv, [], plan, limits, {**SETUP_ENV, **(env or {})}, user)
                finally:
                    if self.privileged:
                        share(env_dir)  # every later run, whatever its uid, reads it
        finally:
            shutil.rmtree(outputs, ignore_errors=True)

    def _run(
        self,
        argv: Sequence[str],
        launcher: Sequence[str],
        plan: _Plan,
        limits: Limits,
        env: Mapping[str, str] | None,
        user: Lease,
    ) -> Completed:
        memory = limits.memory_mb * 1024 * 1024
        with (
            self.cgroups.sandbox(memory, limits.pids) as group,
            seccomp.program_fd(self._filter) as seccomp_fd,
            tempfile.TemporaryFile() as status,
        ):
            confinement = Confinement(seccomp_fd, self.disable_userns, user.identity)
            prepared = plan.prepared is not None
            # The cgroup launcher first: the overlay's helper runs inside the cgroup too.
            args = [*(group.launcher(self._sh) if group else []), *launcher]
            args += prefix(
                self.executable,
                limits,
                privileged=self.privileged,
                confinement=confinement,
                network=plan.setup,
                prepared=prepared,
            )
            args += ["--bind", str(plan.tree), WORKSPACE, "--bind", str(plan.outputs), OUTPUTS]
            if plan.prepared is not None:
                args += ["--bind" if plan.setup else "--ro-bind", str(plan.prepared), PREPARED]
            for rel, source in readonly_sources(plan.pristine, plan.readonly):
                args += ["--ro-bind", source, f"{WORKSPACE}/{rel}"]
            for host, target in plan.mounts:  # fixbot's own: the staged plugin, index settings
                args += [*open_parents(target), "--ro-bind", str(host), target]
            for key, value in (env or {}).items():
                args += ["--setenv", key, value]
            # bwrap reports an exit code only for a command it got to run.
            args += ["--json-status-fd", str(status.fileno()), "--chdir", WORKSPACE, "--"]
            args += drop(user.uid, user.gid) if self.privileged else []
            args += [*rlimits(limits, per_process_caps=group is None), *argv]
            fds = [status.fileno(), *([] if seccomp_fd is None else [seccomp_fd]), *plan.fds]
            # The group kill after the timeout (or a held process cap) reaches bwrap;
            # --die-with-parent, the pid namespace and the cgroup's kill take the rest down.
            # Not even bwrap gets fixbot's environment: as an ordinary user, the sandbox's pid
            # 1 is bwrap itself, and /proc/1/environ would show it.
            with held_cap(group) as cap:
                limit, cap_bytes = limits.timeout_seconds, limits.output_bytes
                result = proc.run(args, timeout=limit, output_cap=cap_bytes, pass_fds=fds, env={})
            status.seek(0)
            started = b'"exit-code"' in status.read()
            killed_for_memory = group is not None and group.oom_kills() > 0
        if cap is not None and cap.ended:
            return replace(result, output=result.output + process_cap_note(limits.pids))
        if not started and not result.timed_out:
            raise SandboxFailed(f"bubblewrap failed: {result.tail(500).strip()}")
        if killed_for_memory:
            return replace(result, output=result.output + OOM_NOTE)
        return result


def _kernel() -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", os.uname().release)[:2])


@dataclass(frozen=True)
class _Plan:
    tree: Path  # bound at WORKSPACE
    outputs: Path
    pristine: Path  # where the read-only paths are bound from
    readonly: Sequence[str]
    prepared: Path | None  # the prepared environment, at PREPARED
    setup: bool  # fixbot's prepare step: network, and the environment writable
    fds: tuple[int, ...] = ()  # inherited by the command, at the same numbers
    mounts: tuple[tuple[Path, str], ...] = ()  # fixbot's own, read-only: (host, target)
