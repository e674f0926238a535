"""The hostile programs both backends' tests run, and the host-side looks that check them."""

from __future__ import annotations

import os
import sys
from pathlib import Path

CONNECT = """
import json, socket, sys
results = {}
for host, port in [("1.1.1.1", 80), ("127.0.0.1", int(sys.argv[1]))]:
    try:
        socket.create_connection((host, port), timeout=3).close()
        results[host] = "connected"
    except OSError as exc:
        results[host] = type(exc).__name__
print(json.dumps(results))
"""


ENVIRON = """
import json, os
mine = open('/proc/self/environ', 'rb').read().decode()
others = {}
for pid in os.listdir('/proc'):
    if pid.isdigit():
        try:
            others[pid] = open(f'/proc/{pid}/environ', 'rb').read().decode()
        except OSError as exc:
            others[pid] = type(exc).__name__
print(json.dumps({'environ': dict(os.environ), 'proc_self': mine, 'proc_all': others}))
"""


HOST_FILES = """
import json, os, sys
outcome = {}
for path in sys.argv[1:]:
    try:
        with open(path) as handle:
            handle.read(1)
        outcome[path] = "read"
    except OSError as exc:
        outcome[path] = type(exc).__name__
print(json.dumps(outcome))
"""


def host_root_entries() -> list[str]:
    """Files in the host's /root that are not on the way to the Python fixbot runs with."""
    if not os.path.isdir("/root"):
        return []
    python_route = {p for p in Path(sys.prefix).parents} | {Path(sys.prefix)}
    entries = []
    for name in sorted(os.listdir("/root")):
        path = Path("/root", name)
        if path not in python_route and path.is_file():
            entries.append(str(path))
    return entries


WRITE_ATTEMPTS = """
import json, os, sys
outcome = {}
for path in sys.argv[1:]:
    try:
        with open(path, "a") as handle:
            handle.write("pwned by the sandbox\\n")
        outcome[path] = "written"
    except OSError as exc:
        outcome[path] = type(exc).__name__
print(json.dumps(outcome))
"""


WORKSPACE_WRITES = """
import json, os
outcome = {}
def attempt(name, action):
    try:
        action()
        outcome[name] = "ok"
    except OSError as exc:
        outcome[name] = type(exc).__name__
attempt("new file", lambda: open("new.txt", "w").write("made in the sandbox\\n"))
attempt("edit source", lambda: open("src.py", "a").write("# edited\\n"))
attempt("edit readonly file", lambda: open("PROTECTED.txt", "a").write("tampered\\n"))
attempt("remove readonly file", lambda: os.remove("PROTECTED.txt"))
attempt("replace readonly file", lambda: os.replace("src.py", "PROTECTED.txt"))
attempt("edit file in readonly dir", lambda: open("tests/test_a.py", "a").write("tampered\\n"))
attempt("add file to readonly dir", lambda: open("tests/test_new.py", "w").write("x = 1\\n"))
attempt("remove readonly dir", lambda: os.rename("tests", "tests_gone"))
attempt("write outputs", lambda: open("/fixbot-out/report.txt", "w").write("report\\n"))
print(json.dumps(outcome))
"""


DAEMON = """
import os, sys, time
marker, pidfile, linger = sys.argv[1], sys.argv[2], float(sys.argv[3])
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        # The daemon: detached, its own session, its own argv to be found by on the host.
        os.execvp("python", ["python", "-c",
            f"open({pidfile!r}, 'w').write(str(__import__('os').getpid()));"
            "import time; time.sleep(3600)", marker])
    os._exit(0)
deadline = time.monotonic() + 10
while not os.path.exists(pidfile) and time.monotonic() < deadline:
    time.sleep(0.02)
time.sleep(linger)
"""


def host_pids_with(marker: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline.split(b"\0"):
                pids.append(int(entry.name))
    return pids


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in {"Z", "X"}
