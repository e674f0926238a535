"""Compare two fixbots on the same model replies: a record-and-replay proxy, and the comparison.

A sampled model makes two runs differ even where the code does not: at temperature 0.5 or 0.8
the same prompt gets another answer. To learn whether a change to fixbot changes what it does,
record one run's model traffic and replay it to the other fixbot. A request sent byte for byte
as before (the same messages, temperature, max_tokens, ...) gets the recorded response, its
raw bytes (a stream's server-sent events as the server sent them); only a request the other
fixbot sends differently goes to the model, and that is the point where the two diverge.

    python benchmarks/replay.py serve --store S.jsonl [--replay] [--upstream URL] [--port P]
    python benchmarks/fixrate.py --split design --sides fixbot --fixbot-root A \\
        --base-url <the URL serve printed> --out EVIDENCE_A ...
    (then serve --replay with the same store, and fixrate with --fixbot-root B, --out EVIDENCE_B)
    python benchmarks/replay.py compare EVIDENCE_A EVIDENCE_B

`serve` prints the base URL, then answers until stopped. Recording, every request goes to the
upstream model and its response is appended to the store (the n-th identical request keeps
the n-th response; an HTTP error's is kept too, an unreachable upstream's never). Replaying,
the n-th identical request gets the n-th recorded response; any other request goes upstream
(not stored) and is logged as a miss. GET requests (/v1/models, /props) always go upstream.
A response is sent whole once the upstream has finished, so the fixbot behind it needs a long
request timeout (fixrate sets request_timeout_seconds: 1800). A design-split tool: rows
measured through it carry its base URL; the held-out split is measured against the model
itself, never a replay.

`compare` reads two fixrate evidence folders (`--out`: TASK/fixbot-out/evidence.json) and
prints, per task, each side's status and its first attempt whose reply, problems, verdict or
diff differ; then the counts: tasks compared, identical, diverged, fixed on each side.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

UPSTREAM = "http://127.0.0.1:8011/v1"
UPSTREAM_SECONDS = 3600.0
COMPARED = ("reply", "problems", "verdict", "diff")


def request_key(path: str, body: bytes) -> str:
    """What makes two requests the same: the path and the JSON body, keys in order."""
    try:
        canonical = json.dumps(json.loads(body), sort_keys=True)
    except ValueError:
        canonical = body.decode("utf-8", errors="replace")
    return hashlib.sha256(f"{path}\n{canonical}".encode()).hexdigest()


@dataclass
class Response:
    status: int
    content_type: str
    body: bytes
    unanswered: bool = False  # the upstream could not be reached: this proxy's own 502


@dataclass
class Proxy:
    """The store a recording appends to; replaying, its responses by request key (`load`)
    and what the replay found."""

    store: Path
    upstream: str
    replay: bool
    recorded: dict[str, list[Response]] = field(default_factory=dict)
    served: dict[str, int] = field(default_factory=dict)  # per key, how many replayed so far
    hits: int = 0
    misses: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def load(self) -> None:
        if not self.store.is_file():
            return
        for line in self.store.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            response = Response(row["status"], row["content_type"], row["body"].encode())
            self.recorded.setdefault(row["key"], []).append(response)

    def answer(self, path: str, body: bytes) -> Response:
        """The recorded response when replaying a request seen before, else the upstream's
        (one request upstream at a time: a local server serves one client well)."""
        key = request_key(path, body)
        with self.lock:
            if self.replay:
                n = self.served.get(key, 0)
                known = self.recorded.get(key, [])
                if n < len(known):
                    self.served[key] = n + 1
                    self.hits += 1
                    return known[n]
                self.misses += 1
                print(f"replay: miss {self.misses} ({key[:12]}): asking the model", flush=True)
            response = forward(self.upstream, path, body)
            if not self.replay and not response.unanswered:
                with self.store.open("a", encoding="utf-8") as out:
                    row = {"key": key, "path": path, "status": response.status}
                    row |= {"content_type": response.content_type}
                    row |= {"body": response.body.decode("utf-8", errors="replace")}
                    out.write(json.dumps(row) + "\n")
            return response


def upstream_url(upstream: str, path: str) -> str:
    """Where `path` is upstream: /v1/... under the upstream's base URL, any other path (a
    server's /props, /api/show) at its root."""
    base = upstream.rstrip("/")
    if path.startswith("/v1/"):
        return base + path.removeprefix("/v1")
    parts = urllib.parse.urlsplit(base)
    return f"{parts.scheme}://{parts.netloc}{path}"


def forward(upstream: str, path: str, body: bytes | None) -> Response:
    """The upstream's whole response to `path`, an HTTP error's too."""
    url = upstream_url(upstream, path)
    headers = {"Content-Type": "application/json"} if body is not None else {}
    request = urllib.request.Request(url, data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=UPSTREAM_SECONDS) as got:
            return Response(got.status, got.headers.get("Content-Type", ""), got.read())
    except urllib.error.HTTPError as exc:
        return Response(exc.code, exc.headers.get("Content-Type", ""), exc.read())
    except (urllib.error.URLError, OSError) as exc:
        message = json.dumps({"error": {"message": f"replay: the upstream failed: {exc}"}})
        return Response(502, "application/json", message.encode(), unanswered=True)


def handler_for(proxy: Proxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._send(forward(proxy.upstream, self.path, None))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self._send(proxy.answer(self.path, self.rfile.read(length)))

        def _send(self, response: Response) -> None:
            self.send_response(response.status)
            self.send_header("Content-Type", response.content_type or "application/json")
            self.send_header("Content-Length", str(len(response.body)))
            self.end_headers()
            self.wfile.write(response.body)

    return Handler


def serve(proxy: Proxy, port: int = 0) -> ThreadingHTTPServer:
    """The proxy listening on 127.0.0.1:`port` (0: a free one); serve_forever is the caller's."""
    proxy.load()
    return ThreadingHTTPServer(("127.0.0.1", port), handler_for(proxy))


def base_url(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{host!s}:{port}/v1"


# --- compare ---


def attempts_of(folder: Path, task: str) -> tuple[str, list[tuple[Any, ...]]] | None:
    found = folder / task / "fixbot-out" / "evidence.json"
    if not found.is_file():
        return None
    evidence = json.loads(found.read_text(encoding="utf-8"))
    rows = [tuple(a.get(k) for k in COMPARED) for a in evidence.get("attempts") or []]
    return str(evidence.get("status") or "error"), rows


def first_difference(a: list[tuple[Any, ...]], b: list[tuple[Any, ...]]) -> str:
    """Where two runs' attempts first differ: 'attempt N: reply, verdict', or '' if nowhere."""
    for number, (x, y) in enumerate(zip(a, b, strict=False), 1):
        if x != y:
            fields = (n for n, u, v in zip(COMPARED, x, y, strict=True) if u != v)
            return f"attempt {number}: " + ", ".join(fields)
    if len(a) != len(b):
        return f"attempt {min(len(a), len(b)) + 1}: only one side made it"
    return ""


def compare(a: Path, b: Path) -> list[str]:
    """The comparison's lines: one per task both folders hold, then the counts."""
    lines: list[str] = []
    tasks = sorted(
        {p.name for p in a.iterdir() if p.is_dir()} & {p.name for p in b.iterdir() if p.is_dir()},
        key=lambda name: (len(name), name),
    )
    compared = identical = fixed_a = fixed_b = 0
    for task in tasks:
        left, right = attempts_of(a, task), attempts_of(b, task)
        if left is None or right is None:
            continue
        compared += 1
        where = first_difference(left[1], right[1])
        identical += not where
        fixed_a += left[0] == "fixed"
        fixed_b += right[0] == "fixed"
        lines.append(
            f"{task}: {left[0]} vs {right[0]}" + (f"; first differs at {where}" if where else "")
        )
    lines.append(
        f"compared {compared}: identical {identical}, diverged {compared - identical}; "
        f"fixed {fixed_a} ({a}) vs {fixed_b} ({b})"
    )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    serving = commands.add_parser("serve", help="record, or replay, a model's responses")
    serving.add_argument("--store", type=Path, required=True)
    serving.add_argument("--replay", action="store_true", help="answer from the store")
    serving.add_argument("--upstream", default=UPSTREAM)
    serving.add_argument("--port", type=int, default=0)
    comparing = commands.add_parser("compare", help="two fixrate evidence folders")
    comparing.add_argument("a", type=Path)
    comparing.add_argument("b", type=Path)
    args = parser.parse_args(argv)
    if args.command == "compare":
        for folder in (args.a, args.b):
            if not folder.is_dir():
                parser.error(f"{folder}: no such folder (fixrate's --out)")
        print("\n".join(compare(args.a, args.b)))
        return 0
    if args.replay and not args.store.is_file():
        parser.error(f"--replay: {args.store} does not exist (record it first)")
    proxy = Proxy(args.store, args.upstream, args.replay)
    server = serve(proxy, args.port)
    print(base_url(server), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        if args.replay:
            print(f"replay: {proxy.hits} recorded responses, {proxy.misses} misses", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
