"""Allocate and touch memory, 16 MB at a time, until something stops it."""

from probe import CASE, attempt, record

CHUNK = 16 * 1024 * 1024


def attack():
    hoard = []

    def grab():
        while len(hoard) * 16 < CASE["up_to_mb"]:
            block = bytearray(CHUNK)
            block[::4096] = b"x" * len(block[::4096])  # touched, so it is really there
            hoard.append(block)
            record(allocated_mb=len(hoard) * 16)

    attempt("grab", grab)
