"""The sandbox's seccomp filter: one policy, as a classic BPF program for bubblewrap
(`--seccomp FD`) and as a Docker seccomp profile.

An allow-by-default deny-list (the shape Flatpak and bubblewrap recommend), assembled here with
`struct` (no libseccomp binding ships for fixbot's Python):

- a syscall made under another ABI (i386 `int 0x80` or x32 on x86_64, AArch32 on arm64) kills
  the process: the table below is only right for the native numbers;
- new namespaces are refused: `unshare`, `setns`, and `clone` with any CLONE_NEW* flag get
  EPERM; `clone3` gets ENOSYS (its flags live in memory a filter cannot read), so libc falls
  back to `clone`, whose flags the filter reads;
- mount and the new mount API, `ptrace` and `process_vm_*`, the key-rings, `bpf`,
  `perf_event_open`, `userfaultfd`, io_uring, module and kexec loading, and a few calls only
  root could make get EPERM; `personality` only for Docker's harmless values;
- a number above the newest this table knows gets ENOSYS, as an older kernel would answer.

bubblewrap loads the program just before it execs the command, after no_new_privs; everything
the command starts inherits it.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import platform
import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_AARCH64 = 0xC00000B7
X32_SYSCALL_BIT = 0x40000000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
_NR, _ARCH, _ARG0_LOW = 0, 4, 16  # args[0]'s low half on a little-endian machine
# Classic BPF opcodes (linux/bpf_common.h).
LD_W_ABS, JA, JEQ, JGT, JGE, JSET, RET = 0x20, 0x05, 0x15, 0x25, 0x35, 0x45, 0x06
_MAX_INSNS = 4096

# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET (CLONE_NEWTIME overlaps
# clone()'s exit signal; only unshare and clone3 take it, and both are refused whole).
CLONE_NAMESPACES = 0x7E020000
# personality(2) values Docker's default profile allows: PER_LINUX, PER_LINUX32, UNAME26,
# UNAME26|PER_LINUX32, and the query. ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC... are refused.
ALLOWED_PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)
_WEAKENING_PERSONAS = (0x0040000, 0x0100000, 0x0200000, 0x0400000)

# Refused with EPERM; a name an architecture lacks (iopl on arm64) is skipped for it.
DENIED: tuple[str, ...] = (
    # namespaces: a new user namespace hands back every capability
    *("unshare", "setns"),
    # mounting, old and new API
    *("mount", "umount2", "pivot_root", "move_mount", "open_tree", "open_tree_attr"),
    *("fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr"),
    # other processes' memory
    *("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd"),
    # the kernel's key-rings (per uid, outside every namespace)
    *("keyctl", "add_key", "request_key"),
    # large kernel attack surfaces no test run needs
    *("bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter"),
    "io_uring_register",
    # root's business anyway: refused whatever capabilities a bug might leave
    *("kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module"),
    *("open_by_handle_at", "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd"),
    *("lookup_dcookie", "syslog", "iopl", "ioperm", "settimeofday", "clock_settime"),
    *("clock_adjtime", "vhangup"),
)
NOT_IMPLEMENTED: tuple[str, ...] = ("clone3",)  # ENOSYS: libc then uses clone
MAX_KNOWN_NR = 469  # file_setattr (Linux 6.17), the same number on both tables

# From the kernel's syscall tables (arch/x86/entry/syscalls/syscall_64.tbl, and
# include/uapi/asm-generic/unistd.h for arm64; from 424 on every architecture shares the
# numbers); tests check them against /usr/include.
_SHARED = """io_uring_setup 425 io_uring_enter 426 io_uring_register 427 open_tree 428
move_mount 429 fsopen 430 fsconfig 431 fsmount 432 fspick 433 clone3 435 pidfd_getfd 438
mount_setattr 442 quotactl_fd 443 open_tree_attr 467"""
_X86_64 = """clone 56 ptrace 101 syslog 103 personality 135 vhangup 153 pivot_root 155 acct 163
settimeofday 164 mount 165 umount2 166 swapon 167 swapoff 168 reboot 169 iopl 172 ioperm 173
init_module 175 delete_module 176 quotactl 179 lookup_dcookie 212 clock_settime 227
kexec_load 246 add_key 248 request_key 249 keyctl 250 unshare 272 perf_event_open 298
open_by_handle_at 304 clock_adjtime 305 setns 308 process_vm_readv 310 process_vm_writev 311
finit_module 313 kexec_file_load 320 bpf 321 userfaultfd 323"""
_AARCH64 = """lookup_dcookie 18 umount2 39 mount 40 pivot_root 41 vhangup 58 quotactl 60 acct 89
personality 92 unshare 97 kexec_load 104 init_module 105 delete_module 106 clock_settime 112
syslog 116 ptrace 117 reboot 142 settimeofday 170 add_key 217 request_key 218 keyctl 219
clone 220 swapon 224 swapoff 225 perf_event_open 241 open_by_handle_at 265 clock_adjtime 266
setns 268 process_vm_readv 270 process_vm_writev 271 finit_module 273 bpf 280
userfaultfd 282 kexec_file_load 294"""


def _table(*texts: str) -> dict[str, int]:
    words = " ".join(texts).split()
    return {name: int(number) for name, number in zip(words[::2], words[1::2], strict=True)}


@dataclass(frozen=True)
class Arch:
    name: str
    audit: int
    numbers: Mapping[str, int]
    docker: str  # the arch's name in a Docker profile
    x32_bit: bool = False  # whether X32_SYSCALL_BIT numbers reach this arch's filter


ARCHES: Mapping[str, Arch] = {
    "x86_64": Arch(
        "x86_64", AUDIT_ARCH_X86_64, _table(_X86_64, _SHARED), "SCMP_ARCH_X86_64", x32_bit=True
    ),
    "aarch64": Arch("aarch64", AUDIT_ARCH_AARCH64, _table(_AARCH64, _SHARED), "SCMP_ARCH_AARCH64"),
}
_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}


class Unsupported(RuntimeError):
    """No filter for this machine: the sandbox runs without one, and says so."""


def native_arch() -> Arch:
    machine = platform.machine().lower()
    found = ARCHES.get(_ALIASES.get(machine, machine))
    if found is None or struct.pack("=H", 1) != b"\x01\x00":
        raise Unsupported(f"no seccomp filter for {machine!r} (x86_64 and aarch64 only)")
    return found


def errno_ret(number: int) -> int:
    return RET_ERRNO | (number & 0xFFFF)


@dataclass
class _Assembler:
    """Classic BPF with symbolic jump targets, resolved (and range-checked) at the end."""

    code: list[tuple[int, int, str | None, str | None]] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def emit(self, op: int, k: int = 0, jt: str | None = None, jf: str | None = None) -> None:
        self.code.append((op, k & 0xFFFFFFFF, jt, jf))

    def assemble(self) -> bytes:
        if len(self.code) > _MAX_INSNS:
            raise ValueError(f"{len(self.code)} instructions, more than BPF_MAXINSNS")
        out = bytearray()
        for index, (op, k, jt, jf) in enumerate(self.code):
            if op == JA:  # an unconditional jump keeps its offset in k
                out += struct.pack("=HBBI", op, 0, 0, self._offset(index, jt))
            else:
                out += struct.pack("=HBBI", op, self._offset(index, jt), self._offset(index, jf), k)
        return bytes(out)

    def _offset(self, index: int, target: str | None) -> int:
        if target is None:
            return 0  # fall through to the next instruction
        offset = self.labels[target] - index - 1
        if not 0 <= offset <= 255:
            raise ValueError(f"jump to {target} out of range ({offset})")
        return offset


def build(arch: Arch | None = None) -> bytes:
    """The filter for `arch` (default: this machine's), as bwrap's `--seccomp` reads it."""
    arch = arch or native_arch()
    asm = _Assembler()
    asm.emit(LD_W_ABS, _ARCH)
    asm.emit(JEQ, arch.audit, jf="kill")
    asm.emit(LD_W_ABS, _NR)
    if arch.x32_bit:
        asm.emit(JGE, X32_SYSCALL_BIT, jt="kill")
    asm.emit(JGT, MAX_KNOWN_NR, jt="enosys")
    for name in DENIED:
        if name in arch.numbers:
            asm.emit(JEQ, arch.numbers[name], jt="eperm")
    for name in NOT_IMPLEMENTED:
        asm.emit(JEQ, arch.numbers[name], jt="enosys")
    asm.emit(JEQ, arch.numbers["clone"], jt="clone")
    asm.emit(JEQ, arch.numbers["personality"], jt="personality")
    asm.emit(RET, RET_ALLOW)
    asm.label("clone")  # clone(flags, ...): flags is args[0] on both arches
    asm.emit(LD_W_ABS, _ARG0_LOW)
    asm.emit(JSET, CLONE_NAMESPACES, jt="eperm", jf="allow")
    asm.label("personality")  # the kernel reads only the low 32 bits of the persona
    asm.emit(LD_W_ABS, _ARG0_LOW)
    for value in ALLOWED_PERSONALITIES:
        asm.emit(JEQ, value, jt="allow")
    asm.emit(JA, jt="eperm")
    asm.label("allow")
    asm.emit(RET, RET_ALLOW)
    asm.label("eperm")
    asm.emit(RET, errno_ret(errno.EPERM))
    asm.label("enosys")
    asm.emit(RET, errno_ret(errno.ENOSYS))
    asm.label("kill")
    asm.emit(RET, RET_KILL_PROCESS)
    return asm.assemble()


@contextlib.contextmanager
def program_fd(program: bytes | None) -> Iterator[int | None]:
    """A descriptor holding `program` from its start (None without one), for one bwrap run
    (which reads it to the end: each run needs its own), passed with pass_fds; closed after."""
    if program is None:
        yield None
        return
    fd = os.memfd_create("fixbot-seccomp", os.MFD_CLOEXEC)
    try:
        view = memoryview(program)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
        yield fd
    finally:
        os.close(fd)


def describe(arch: Arch) -> str:
    """One line for the evidence and `fixbot doctor`."""
    count = sum(name in arch.numbers for name in DENIED)
    return (
        f"seccomp ({arch.name}): no new namespaces, mount, ptrace, keyctl or bpf "
        f"({count} syscalls and namespace clones refused), other ABIs killed"
    )


def docker_profile(arch: Arch) -> str:
    """The same policy as a Docker seccomp profile (JSON, for `security_opt=["seccomp=..."]`).

    libseccomp compares one argument once per rule: clone gets a rule per namespace flag, and
    personality refuses each flag that weakens the address space instead of allowing a list
    (Docker's default profile does the same).
    Syscalls of another architecture than the one listed are refused by the engine.
    """

    def refuse(name: str, code: int, mask: int = 0, value: int = 0) -> dict[str, object]:
        rule: dict[str, object] = {"names": [name], "action": "SCMP_ACT_ERRNO", "errnoRet": code}
        if mask:
            rule["args"] = [
                {"index": 0, "value": mask, "valueTwo": value, "op": "SCMP_CMP_MASKED_EQ"}
            ]
        return rule

    denied = [name for name in DENIED if name in arch.numbers]
    namespace_bits = [1 << bit for bit in range(32) if CLONE_NAMESPACES >> bit & 1]
    rules = [
        {"names": denied, "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EPERM},
        *(refuse(name, errno.ENOSYS) for name in NOT_IMPLEMENTED),
        *(refuse("clone", errno.EPERM, bit, bit) for bit in namespace_bits),
        # The flag set and the top bit clear: the query (0xffffffff) stays allowed.
        *(refuse("personality", errno.EPERM, flag | 1 << 31, flag) for flag in _WEAKENING_PERSONAS),
    ]
    profile = {"defaultAction": "SCMP_ACT_ALLOW", "architectures": [arch.docker], "syscalls": rules}
    return json.dumps(profile, separators=(",", ":"))
