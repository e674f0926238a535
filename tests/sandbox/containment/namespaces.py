"""A fresh user namespace gives back every capability: try for one, and for the others."""

import ctypes
import errno
import os
import subprocess

from probe import attempt

CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWNET, SIGCHLD = 0x10000000, 0x00020000, 0x40000000, 17
libc = ctypes.CDLL(None, use_errno=True)


def unshare(*args):
    done = subprocess.run(["unshare", *args, "id", "-u"], capture_output=True, timeout=10)
    if done.returncode != 0:
        raise OSError(done.stderr.decode(errors="replace").strip()[-200:])
    return f"uid {done.stdout.decode().strip()}"


def in_child(call):
    """The raw call in a child of its own (an unshared namespace must not leak into the rest):
    its errno's name, or ok."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        ctypes.set_errno(0)
        answer = "ok" if call() != -1 else errno.errorcode.get(ctypes.get_errno(), "?")
        os.write(write, answer.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        answer = pipe.read().decode()
    os.waitpid(pid, 0)
    if answer != "ok":
        raise OSError(answer)


def clone_newuser():
    pid = libc.syscall(
        56 if os.uname().machine == "x86_64" else 220, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0
    )
    if pid == 0:
        os._exit(0)
    if pid > 0:
        os.waitpid(pid, 0)
    return pid


def attack():
    for args in (["-U"], ["-Ur"], ["-Urm"], ["-Urn"], ["-m"], ["-n"]):
        attempt(f"unshare {' '.join(args)}", lambda args=args: unshare(*args))
    attempt("unshare(NEWUSER)", lambda: in_child(lambda: libc.unshare(CLONE_NEWUSER)))
    attempt("unshare(NEWNS)", lambda: in_child(lambda: libc.unshare(CLONE_NEWNS)))
    attempt("unshare(NEWNET)", lambda: in_child(lambda: libc.unshare(CLONE_NEWNET)))
    attempt("clone(NEWUSER)", lambda: in_child(clone_newuser))
