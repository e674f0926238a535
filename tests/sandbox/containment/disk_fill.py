"""Fill the disk: one huge file in the workspace, then many large ones, then /tmp."""

from probe import CASE, MARKER, attempt, record

CHUNK = b"\0" * (1024 * 1024)


def fill(path, key, mb):
    written = 0
    with open(path, "wb") as handle:
        for _ in range(mb):
            handle.write(CHUNK)
            handle.flush()
            written += 1
            record(**{key: written})


def attack():
    attempt("big file", lambda: fill(f"big-{MARKER}.bin", "big_mb", CASE["big_mb"]))
    for n in range(CASE.get("ws_files", 0)):
        attempt(
            f"ws {n}", lambda n=n: fill(f"fill-{n}-{MARKER}.bin", f"ws_{n}_mb", CASE["ws_file_mb"])
        )
    for n in range(CASE["tmp_files"]):
        attempt(f"tmp {n}", lambda n=n: fill(f"/tmp/fill-{n}", f"tmp_{n}_mb", CASE["tmp_file_mb"]))
