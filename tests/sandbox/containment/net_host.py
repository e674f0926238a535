"""Knock on the host: its loopback, its own addresses, an abstract Unix socket, the engine."""

import socket

from probe import CASE, attempt


def connect_unix(address):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(3)
    sock.connect(address)
    sock.close()


def attack():
    for host in CASE["host_addresses"]:
        attempt(
            f"tcp {host}", lambda h=host: socket.create_connection((h, CASE["port"]), 3).close()
        )
    attempt("abstract unix socket", lambda: connect_unix("\0" + CASE["abstract"]))
    for path in CASE["engine_sockets"]:
        attempt(f"unix {path}", lambda p=path: connect_unix(p))
