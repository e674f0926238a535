"""Reach the internet by address and by name, over TCP, UDP and DNS."""

import socket
import urllib.request

from probe import attempt


def attack():
    for host, port in [("1.1.1.1", 80), ("8.8.8.8", 53), ("140.82.112.3", 443)]:
        attempt(f"tcp {host}", lambda h=host, p=port: socket.create_connection((h, p), 3).close())
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    attempt("udp 8.8.8.8", lambda: udp.sendto(b"\0" * 12, ("8.8.8.8", 53)) and None)
    attempt("resolve pypi.org", lambda: str(socket.getaddrinfo("pypi.org", 443)))
    attempt("tcp pypi.org", lambda: socket.create_connection(("pypi.org", 443), 3).close())
    attempt(
        "https pypi.org", lambda: urllib.request.urlopen("https://pypi.org/", timeout=3).close()
    )
    attempt(
        "ipv6 2606:4700:4700::1111",
        lambda: socket.create_connection(("2606:4700:4700::1111", 80), 3).close(),
    )
