"""The seccomp filter: the program itself (its verdict for every case, on an interpreter of the
opcodes it uses; its numbers against the kernel's headers), then in real sandboxes of both
backends and both bubblewrap modes, each refusal beside a control run without the filter, which
the kernel answers otherwise. The containment suite (test_containment.py) runs the same attacks
through the checks on both backends."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixbot.sandbox import BwrapSandbox, DockerSandbox, Limits, Sandbox, seccomp
from fixbot.sandbox.seccomp import ARCHES, AUDIT_ARCH_AARCH64, AUDIT_ARCH_X86_64, RET_ALLOW
from tests.conftest import ENGINE_PROBLEM
from tests.sandbox.confined import as_ordinary_user, attack, case_folder
from tests.sandbox.test_containment import REFUSED_CALLS

EPERM = seccomp.errno_ret(errno.EPERM)
ENOSYS = seccomp.errno_ret(errno.ENOSYS)
KILL = seccomp.RET_KILL_PROCESS
AUDIT_ARCH_I386, AUDIT_ARCH_ARM = 0x40000003, 0x40000028
CLONE_THREAD_FLAGS = 0x003D0F00  # what glibc's pthread_create passes to clone


def evaluate(program: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """Run a seccomp program on one seccomp_data, as the kernel would."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, *(list(args) + [0] * (6 - len(args))))
    insns = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    pc, acc = 0, 0
    for _ in range(len(insns) + 1):
        op, jt, jf, k = insns[pc]
        if op == seccomp.LD_W_ABS:
            (acc,) = struct.unpack_from("=I", data, k)
            pc += 1
        elif op == seccomp.JA:
            pc += 1 + k
        elif op == seccomp.RET:
            return k
        else:
            taken = {
                seccomp.JEQ: acc == k,
                seccomp.JGT: acc > k,
                seccomp.JGE: acc >= k,
                seccomp.JSET: bool(acc & k),
            }[op]
            pc += 1 + (jt if taken else jf)
    raise AssertionError("the program does not end")


@pytest.fixture(params=sorted(ARCHES))
def arch(request: pytest.FixtureRequest) -> seccomp.Arch:
    return ARCHES[request.param]


def test_every_denied_syscall_gets_eperm_and_ordinary_ones_pass(arch: seccomp.Arch) -> None:
    program = seccomp.build(arch)
    assert len(program) % 8 == 0 and len(program) // 8 < 200
    denied = [name for name in seccomp.DENIED if name in arch.numbers]
    assert {"unshare", "setns", "mount", "ptrace", "keyctl", "bpf", "io_uring_setup"} <= set(denied)
    for name in denied:
        assert evaluate(program, arch.numbers[name], arch.audit) == EPERM, name
    # read, write, openat, mmap, exit_group, futex, wait4 on both tables
    ordinary = {"x86_64": (0, 1, 257, 9, 231, 202, 61), "aarch64": (63, 64, 56, 222, 94, 98, 260)}
    for nr in ordinary[arch.name]:
        assert evaluate(program, nr, arch.audit) == RET_ALLOW, nr


def test_clone_is_refused_only_with_a_namespace_flag(arch: seccomp.Arch) -> None:
    program, clone = seccomp.build(arch), arch.numbers["clone"]
    assert evaluate(program, clone, arch.audit, (CLONE_THREAD_FLAGS,)) == RET_ALLOW
    assert evaluate(program, clone, arch.audit, (17,)) == RET_ALLOW  # fork
    for flag in (0x10000000, 0x00020000, 0x40000000, 0x20000000, 0x02000000, 0x04000000):
        assert evaluate(program, clone, arch.audit, (17 | flag,)) == EPERM, hex(flag)
    assert evaluate(program, clone, arch.audit, (1 << 40 | 17,)) == RET_ALLOW  # low 32 bits
    assert evaluate(program, arch.numbers["clone3"], arch.audit) == ENOSYS


def test_personality_newer_syscalls_and_other_abis(arch: seccomp.Arch) -> None:
    program, persona = seccomp.build(arch), arch.numbers["personality"]
    for value in (0, 8, 0x20000, 0x20008, 0xFFFFFFFF):
        assert evaluate(program, persona, arch.audit, (value,)) == RET_ALLOW, value
    for value in (0x0040000, 0x0400000, 0x0040008):
        assert evaluate(program, persona, arch.audit, (value,)) == EPERM, value
    assert evaluate(program, seccomp.MAX_KNOWN_NR + 1, arch.audit) == ENOSYS
    assert evaluate(program, seccomp.MAX_KNOWN_NR, arch.audit) == RET_ALLOW
    other = {AUDIT_ARCH_X86_64: AUDIT_ARCH_I386, AUDIT_ARCH_AARCH64: AUDIT_ARCH_ARM}[arch.audit]
    assert evaluate(program, 20, other) == KILL
    if arch.x32_bit:
        assert evaluate(program, seccomp.X32_SYSCALL_BIT | 39, arch.audit) == KILL


@pytest.mark.parametrize(
    ("name", "header", "pattern"),
    [
        ("x86_64", "/usr/include/x86_64-linux-gnu/asm/unistd_64.h", r"#define __NR_(\w+) (\d+)"),
        ("aarch64", "/usr/include/asm-generic/unistd.h", r"#define __NR(?:3264)?_(\w+) (\d+)"),
    ],
)
def test_the_tables_match_the_kernel_headers(name: str, header: str, pattern: str) -> None:
    if not Path(header).exists():
        pytest.skip(f"{header} is not installed (linux-libc-dev)")
    numbers = {m[1]: int(m[2]) for m in re.finditer(pattern, Path(header).read_text())}
    table = ARCHES[name].numbers
    checked = [n for n in table if n in numbers]
    assert len(checked) >= len(table) - 3  # the headers may predate a few new calls
    assert {n: table[n] for n in checked} == {n: numbers[n] for n in checked}
    assert max(numbers.values()) <= seccomp.MAX_KNOWN_NR


def test_the_docker_profile_is_the_same_policy(arch: seccomp.Arch) -> None:
    profile = json.loads(seccomp.docker_profile(arch))
    assert profile["defaultAction"] == "SCMP_ACT_ALLOW"
    assert profile["architectures"] == [arch.docker]
    names = {name for rule in profile["syscalls"] for name in rule["names"]}
    assert names == {n for n in seccomp.DENIED if n in arch.numbers} | {"clone", "clone3"} | {
        "personality"
    }


# -- in real sandboxes, against a control without the filter --------------------------------

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


def _calls(sandbox: Sandbox) -> dict[str, str]:
    with case_folder("kernel_calls") as root:
        probe, output = attack(sandbox, root)
    assert "getpid" in probe, output
    return dict(probe)


def _assert_filtered(control: dict[str, str], filtered: dict[str, str]) -> None:
    for name in REFUSED_CALLS:
        assert control[name] != "EPERM", f"{name}: the control must reach the kernel"
        assert filtered[name] == "EPERM", f"{name}: {filtered[name]}"
    assert control["clone3(NULL, 0)"] != "ENOSYS" and filtered["clone3(NULL, 0)"] == "ENOSYS"
    if "x32 getpid" in control:
        assert control["x32 getpid"] != "signal:31" and filtered["x32 getpid"] == "signal:31"
    assert filtered["getpid"] == control["getpid"] == "ok"


@needs_bwrap
def test_bwrap_as_root_refuses_what_the_kernel_would_allow() -> None:
    if os.geteuid() != 0:
        pytest.skip("privileged bubblewrap needs root")
    _assert_filtered(_calls(BwrapSandbox(seccomp_filter=False)), _calls(BwrapSandbox()))


@needs_bwrap
def test_bwrap_as_an_ordinary_user_refuses_what_the_kernel_would_allow() -> None:
    with case_folder("kernel_calls") as root:
        control = as_ordinary_user(root, seccomp_filter=False)["probe"]
    with case_folder("kernel_calls") as root:
        filtered = as_ordinary_user(root)["probe"]
    _assert_filtered(control, filtered)


@needs_bwrap
@pytest.mark.parametrize("mode", ["root", "ordinary user"])
def test_unshare_works_without_the_filter_and_not_with_it(mode: str) -> None:
    if mode == "root" and os.geteuid() != 0:
        pytest.skip("privileged bubblewrap needs root")
    probes = []
    for options in ({"seccomp_filter": False}, {}):
        with case_folder("namespaces") as root:
            if mode == "root":
                probes.append(attack(BwrapSandbox(**options), root)[0])
            else:
                probes.append(as_ordinary_user(root, **options)["probe"])
    control, filtered = probes
    if mode == "root":  # as an ordinary user, bwrap's own --disable-userns refuses it too
        assert control["unshare -Ur"] == "uid 0", control  # the gap: root in a new namespace
        assert control["unshare(NEWUSER)"] == "ok"
    steps = [k for k in filtered if k.startswith(("unshare", "clone"))]
    assert len(steps) == 10 and all(filtered[k].startswith("OSError") for k in steps), filtered


@needs_bwrap
def test_as_an_ordinary_user_bubblewrap_also_forbids_nesting_on_its_own() -> None:
    """--disable-userns is a second lock, independent of the filter: without the filter, a
    nested user namespace still fails (the namespace's limit is 0: ENOSPC)."""
    with case_folder("namespaces") as root:
        found = as_ordinary_user(root, seccomp_filter=False)
    if "no nested ones" not in found["describe"]:
        pytest.skip(f"this bubblewrap has no --disable-userns: {found['describe']}")
    assert "No space left on device" in found["probe"]["unshare -Ur"], found["probe"]


@needs_bwrap
@pytest.mark.parametrize("mode", ["root", "ordinary user"])
def test_ordinary_work_still_runs(mode: str) -> None:
    """Threads, subprocesses, fork and spawn pools, a multiprocessing Queue (a semaphore in
    /dev/shm, which bubblewrap leaves root's in privileged mode), asyncio, fork."""
    with case_folder("ordinary_work") as root:
        if mode == "root":
            if os.geteuid() != 0:
                pytest.skip("privileged bubblewrap needs root")
            probe, output = attack(BwrapSandbox(), root)
        else:
            found = as_ordinary_user(root)
            probe, output = found["probe"], found["output"]
    steps = ["threads", "subprocess", "fork pool", "spawn pool", "queue", "asyncio subprocess"]
    assert {step: probe.get(step) for step in [*steps, "fork"]} == dict.fromkeys(
        [*steps, "fork"], "ok"
    ), output


@pytest.fixture(scope="module")
def docker_sandboxes() -> Iterator[tuple[DockerSandbox, DockerSandbox]]:
    if ENGINE_PROBLEM is not None:
        pytest.skip(f"{ENGINE_PROBLEM}; CI starts one with .ci/docker-setup.sh")
    with DockerSandbox(seccomp_filter=False) as default, DockerSandbox() as fixbots:
        yield default, fixbots


def test_docker_refuses_what_its_default_profile_lets_through(
    docker_sandboxes: tuple[DockerSandbox, DockerSandbox],
) -> None:
    """The engine's default profile lets ptrace (and, before moby 25, io_uring) through:
    fixbot's own replaces it, and refuses the same as on bubblewrap."""
    default, fixbots = docker_sandboxes
    control, filtered = _calls(default), _calls(fixbots)
    assert control["ptrace(TRACEME)"] == "ok", control
    for name in REFUSED_CALLS:
        assert filtered[name] == "EPERM", f"{name}: {filtered[name]}"
    assert filtered["clone3(NULL, 0)"] == "ENOSYS"
    if "x32 getpid" in filtered:
        assert filtered["x32 getpid"] == filtered["int 0x80 getpid"] == "signal:31"
    with case_folder("ordinary_work") as root:
        probe, output = attack(fixbots, root, Limits(timeout_seconds=60))
    assert probe.get("spawn pool") == probe.get("queue") == probe.get("fork") == "ok", output


def test_the_descriptor_holds_the_program_from_its_start() -> None:
    program = seccomp.build()
    with seccomp.program_fd(program) as fd:
        assert os.read(fd, 1 << 16) == program
        assert os.get_inheritable(fd) is False  # pass_fds makes it inheritable in bwrap only
    with pytest.raises(OSError, match="Bad file descriptor"):
        os.fstat(fd)


@needs_bwrap
def test_describe_says_which_filter_applies() -> None:
    assert "seccomp (" in BwrapSandbox().describe()
    assert "no seccomp filter" in BwrapSandbox(seccomp_filter=False).describe()
