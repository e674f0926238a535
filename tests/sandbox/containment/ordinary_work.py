"""Not an attack: what ordinary test suites do, which the containment must leave working."""

import asyncio
import multiprocessing
import os
import subprocess
import threading

from probe import attempt


def threads():
    started = [threading.Thread(target=lambda: None) for _ in range(50)]
    for thread in started:
        thread.start()
    for thread in started:
        thread.join()


def piped():
    done = subprocess.run(["sh", "-c", "echo sub | cat"], capture_output=True, text=True)
    assert done.stdout == "sub\n", done


def pool(method):
    with multiprocessing.get_context(method).Pool(2) as workers:
        assert workers.map(abs, [-1, -2]) == [1, 2]


def queue():
    found = multiprocessing.Queue()  # a POSIX semaphore in /dev/shm
    found.put(7)
    assert found.get(timeout=5) == 7


async def child():
    process = await asyncio.create_subprocess_exec("true")
    return await process.wait()


def forked():
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 7


def attack():
    attempt("threads", threads)
    attempt("subprocess", piped)
    attempt("fork pool", lambda: pool("fork"))
    attempt("spawn pool", lambda: pool("spawn"))
    attempt("queue", queue)
    attempt("asyncio subprocess", lambda: asyncio.run(child()) or None)
    attempt("fork", forked)
