"""The kernel's riskier doors: ptrace, key-rings, bpf, mount and the new mount API, io_uring,
perf, userfaultfd, another process's memory, a personality that turns ASLR off, and syscalls of
another ABI. Each is tried in a child of its own, with arguments for which the kernel itself
(with no filter in the way) answers something other than EPERM: EPERM is the filter's answer.
Recorded: "ok", an errno name, or "signal:N" when the child was killed."""

import ctypes
import errno
import mmap
import os
import platform

from probe import record

libc = ctypes.CDLL(None, use_errno=True)
X86_64 = platform.machine() == "x86_64"
TABLES = {
    "x86_64": """mount 165 umount2 166 open_tree 428 ptrace 101 process_vm_readv 310 keyctl 250
        add_key 248 request_key 249 bpf 321 perf_event_open 298 userfaultfd 323 personality 135
        io_uring_setup 425 pidfd_getfd 438 setns 308 clone3 435 getpid 39""",
    "aarch64": """mount 40 umount2 39 open_tree 428 ptrace 117 process_vm_readv 270 keyctl 219
        add_key 217 request_key 218 bpf 280 perf_event_open 241 userfaultfd 282 personality 92
        io_uring_setup 425 pidfd_getfd 438 setns 268 clone3 435 getpid 172""",
}
WORDS = TABLES[platform.machine()].split()
NR = {name: int(number) for name, number in zip(WORDS[::2], WORDS[1::2], strict=True)}
PATH = ctypes.c_char_p(b"/")


def syscall(name, *args):
    return libc.syscall(ctypes.c_long(NR[name]), *(ctypes.c_long(a) for a in args))


def path():
    return ctypes.cast(PATH, ctypes.c_void_p).value or 0


def int80_getpid():
    """getpid through the i386 entry (int 0x80): the compat ABI."""
    code = bytes([0xB8, 20, 0, 0, 0, 0xCD, 0x80, 0xC3])  # mov eax, 20; int 0x80; ret
    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(code)
    return ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))()


CALLS = {
    "ptrace(TRACEME)": lambda: syscall("ptrace", 0, 0, 0, 0),
    "ptrace(bad request, parent)": lambda: syscall("ptrace", 0xDEAD, os.getppid(), 0, 0),
    "process_vm_readv(parent)": lambda: syscall("process_vm_readv", os.getppid(), 0, 0, 0, 0, 0),
    "pidfd_getfd(bad fd)": lambda: syscall("pidfd_getfd", -1, 0, 0),
    "keyctl(bad op)": lambda: syscall("keyctl", 9999, 0, 0, 0, 0),
    "add_key(NULL)": lambda: syscall("add_key", 0, 0, 0, 0, 0),
    "request_key(NULL)": lambda: syscall("request_key", 0, 0, 0, 0),
    "bpf(bad cmd)": lambda: syscall("bpf", 9999, 0, 0),
    "mount(bad type)": lambda: syscall("mount", 0, 0, 1, 0, 0),
    "umount2(bad flags)": lambda: syscall("umount2", path(), 0xFFFF),
    "open_tree(bad flags)": lambda: syscall("open_tree", -100, path(), 0xFFFFFFF0),
    "setns(-1)": lambda: syscall("setns", -1, 0),
    "perf_event_open(NULL)": lambda: syscall("perf_event_open", 0, 0, -1, -1, 0),
    "userfaultfd(USER_MODE_ONLY)": lambda: syscall("userfaultfd", 1),
    "io_uring_setup(0, NULL)": lambda: syscall("io_uring_setup", 0, 0),
    "personality(ADDR_NO_RANDOMIZE)": lambda: syscall("personality", 0x0040000),
    "clone3(NULL, 0)": lambda: syscall("clone3", 0, 0),
    "personality(query)": lambda: syscall("personality", 0xFFFFFFFF),
    "getpid": lambda: syscall("getpid"),
}
if X86_64:
    CALLS["x32 getpid"] = lambda: libc.syscall(ctypes.c_long(0x40000000 | 39))
    CALLS["int 0x80 getpid"] = int80_getpid


def in_child(call):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        ctypes.set_errno(0)
        result = call()
        answer = "ok" if result != -1 else errno.errorcode.get(ctypes.get_errno(), "?")
        os.write(write, answer.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        answer = pipe.read().decode()
    _, status = os.waitpid(pid, 0)
    return f"signal:{os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else answer


def attack():
    record(**{name: in_child(call) for name, call in CALLS.items()})
