"""Stopping a listening socket that a thread of the test serves, so that nothing outlives it.

`close()` alone neither wakes a thread blocked in `accept()` nor stops one about to enter it:
the freed descriptor number goes to the next socket the process opens (the next test's fake
GitHub, say), and the old thread then accepts that server's connections and answers them its
own way (seen in CI: a slowloris handler holding PyGithub's request for good). Shutting the
socket down wakes the `accept()` with an error; the thread is joined before the number is freed.
"""

from __future__ import annotations

import contextlib
import socket
import threading


def stop_listening(sock: socket.socket, thread: threading.Thread) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    thread.join(timeout=10)
    if thread.is_alive():
        raise AssertionError("the accepting thread did not stop; its socket stays open")
    sock.close()
