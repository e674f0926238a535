"""Red-team attacks on the streamed model client (fixbot/model/client.py), over real sockets
(a helper given the source and the brief "break it", 2026-12-04).

Each test passes only when the client's promise holds; each failed on the client before this file.
"""

from __future__ import annotations

import json
import math
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from fixbot.errors import FixbotError, ModelUnreachable
from fixbot.model.client import DeadlinePassed, OpenAIModel
from tests.listening import stop_listening

MESSAGES = [{"role": "user", "content": "hi"}]


class Hostile:
    """A raw-socket HTTP server: each connection's request is read, then `handler(conn)` does
    whatever it likes with the socket."""

    def __init__(self, handler: Callable[[socket.socket], None]) -> None:
        self.handler = handler
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.base_url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.requests = 0
        self.stop = threading.Event()

    def __enter__(self) -> Hostile:
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        stop_listening(self.sock, self.thread)

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.requests += 1
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        try:
            data = b""
            while b"\r\n\r\n" not in data:
                got = conn.recv(65536)
                if not got:
                    return
                data += got
            head, _, body = data.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                key, _, value = line.partition(b":")
                if key.strip().lower() == b"content-length":
                    length = int(value)
            while len(body) < length:
                body += conn.recv(65536)
            self.handler(conn)
        except OSError:
            pass
        finally:
            conn.close()


SSE_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
)


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def event(obj: Any) -> bytes:
    return chunk(b"data: " + json.dumps(obj).encode() + b"\n\n")


def completion_chunk(content: str | None = "hi", **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}],
    }
    base.update(extra)
    return base


DONE = chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n"


def model_at(url: str, **kw: Any) -> OpenAIModel:
    kw.setdefault("max_retries", 0)
    kw.setdefault("backoff_seconds", 0.01)
    return OpenAIModel(model="m", api_key=None, base_url=url, **kw)


def timed_call(model: OpenAIModel, **kw: Any) -> tuple[float, BaseException | None]:
    """Run complete() in a daemon thread, so that a hang fails the test instead of holding it."""
    box: dict[str, BaseException | None] = {"err": None}

    def go() -> None:
        try:
            model.complete(MESSAGES, **kw)
        except BaseException as err:
            box["err"] = err

    start = time.monotonic()
    worker = threading.Thread(target=go, daemon=True)
    worker.start()
    worker.join(8.0)
    return time.monotonic() - start, (box["err"] if not worker.is_alive() else TimeoutError())


# --- 1. the deadline is not enforced before the response headers are in -------------------


def test_slowloris_headers_cannot_hold_a_call_past_the_deadline() -> None:
    # The status line, then a header a byte every 0.1 s: no single read is ever silent for
    # the try's timeout, and the watchdog only starts once create() returned (headers in).
    def slowloris(conn: socket.socket) -> None:
        for byte in b"HTTP/1.1 200 OK\r\nX-Padding: " + b"a" * 10_000:
            conn.sendall(bytes([byte]))
            time.sleep(0.1)

    with Hostile(slowloris) as server, model_at(server.base_url, timeout_seconds=1.0) as model:
        elapsed, err = timed_call(model, deadline=time.time() + 1.5)
    assert isinstance(err, DeadlinePassed), f"after {elapsed:.1f} s: {err!r}"
    assert elapsed < 3.0


def test_a_redirect_chain_cannot_hold_a_call_past_the_deadline() -> None:
    # Each hop answers 307 after 0.3 s, well inside the try's read timeout. Followed, each hop
    # is a fresh wait (httpx follows up to 20: ~6 s, past a 5 s deadline); fixbot follows none,
    # and says where the endpoint points (the deadline leaves a slow machine room for one hop).
    def slow_redirect(conn: socket.socket) -> None:
        time.sleep(0.3)
        conn.sendall(
            b"HTTP/1.1 307 Temporary Redirect\r\nlocation: /v1/chat/completions\r\n"
            b"content-length: 0\r\n\r\n"
        )

    with Hostile(slow_redirect) as server, model_at(server.base_url, timeout_seconds=5.0) as model:
        elapsed, err = timed_call(model, deadline=time.time() + 5.0)
    assert isinstance(err, ModelUnreachable), f"after {elapsed:.1f} s: {err!r}"
    assert "a redirect to /v1/chat/completions (never followed" in str(err)
    assert server.requests == 1
    assert elapsed < 4.0, f"one hop took {elapsed:.1f} s ({server.requests} hops)"


# --- 2. the watchdog's close does not wake a reader already blocked in recv ----------------


def test_a_reply_that_goes_silent_just_before_the_deadline_is_cut_at_the_deadline() -> None:
    # Keep-alive comments every 0.1 s until just before the deadline, then silence: the
    # watchdog closes the stream at the deadline, but the reading thread stays blocked until
    # its read timeout (min(request timeout, time left when the try began)) runs out.
    def trickle_then_silence(conn: socket.socket) -> None:
        conn.sendall(SSE_HEAD)
        end = time.time() + 2.8
        while time.time() < end:
            conn.sendall(chunk(b": ping\n"))
            time.sleep(0.1)
        time.sleep(20)

    with (
        Hostile(trickle_then_silence) as server,
        model_at(server.base_url, timeout_seconds=60.0) as model,
    ):
        elapsed, err = timed_call(model, deadline=time.time() + 3.0)
    assert isinstance(err, DeadlinePassed), f"after {elapsed:.1f} s: {err!r}"
    assert elapsed < 4.0, f"a 3 s deadline held for {elapsed:.1f} s"


# --- 3. garbage in the stream escapes as a raw exception, not ModelUnreachable -------------

GARBAGE = {
    "invalid utf-8": chunk(b"data: \xff\xfe\n\n"),
    "invalid json": chunk(b"data: {not json\n\n"),
    "choices null": event(completion_chunk(choices=None)),
    "delta null": event(completion_chunk(choices=[{"index": 0, "delta": None}])),
    "a bare string": event("hello"),
}


@pytest.mark.parametrize("kind", list(GARBAGE))
def test_a_garbled_stream_is_model_unreachable_never_a_traceback(kind: str) -> None:
    def garbled(conn: socket.socket) -> None:
        conn.sendall(SSE_HEAD + event(completion_chunk("ok ")) + GARBAGE[kind] + DONE)

    with Hostile(garbled) as server, model_at(server.base_url) as model:
        try:
            model.complete(MESSAGES, deadline=time.time() + 5)
        except FixbotError as err:
            assert isinstance(err, ModelUnreachable)
        except Exception as err:
            pytest.fail(f"{kind}: escaped as {type(err).__name__}: {err}")


# --- 4. usage that lies is trusted as is ---------------------------------------------------

LIES = {
    "negative": b'{"prompt_tokens": -1000000000, "completion_tokens": -5, "total_tokens": 0}',
    "NaN": b'{"prompt_tokens": NaN, "completion_tokens": 3, "total_tokens": 0}',
    "infinite": b'{"prompt_tokens": 1e999, "completion_tokens": 3, "total_tokens": 0}',
    "a string": b'{"prompt_tokens": 5, "completion_tokens": "lots", "total_tokens": 0}',
}


@pytest.mark.parametrize("kind", list(LIES))
def test_usage_that_lies_is_never_trusted_as_a_token_count(kind: str) -> None:
    usage = (
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
        b'"choices":[],"usage":' + LIES[kind] + b"}\n\n"
    )

    def liar(conn: socket.socket) -> None:
        conn.sendall(SSE_HEAD + event(completion_chunk("a reply")) + chunk(usage) + DONE)

    with Hostile(liar) as server, model_at(server.base_url) as model:
        try:
            reply = model.complete(MESSAGES, deadline=time.time() + 5)
        except ModelUnreachable:
            return  # refusing the reply is a defence too
    for count in (reply.prompt_tokens, reply.completion_tokens):
        assert isinstance(count, int) and not isinstance(count, bool), reply
        assert 0 <= count < 10**9, reply
        assert math.isfinite(count)


# --- 5. the reply cap counts only choice 0's `content` -------------------------------------


@pytest.mark.parametrize(
    "delta",
    [
        {"index": 0, "delta": {"reasoning_content": "x" * 100_000}},
        {"index": 0, "delta": {"reasoning": "x" * 100_000}},
        {"index": 1, "delta": {"content": "x" * 100_000}},
    ],
    ids=["reasoning_content", "reasoning", "choice-1 content"],
)
def test_a_server_streaming_endlessly_outside_content_is_cut_at_the_reply_cap(
    delta: dict[str, Any],
) -> None:
    # max_tokens=10: the cap is 160 characters; the server streams 100,000 a chunk, forever.
    def endless(conn: socket.socket) -> None:
        conn.sendall(SSE_HEAD)
        while True:
            conn.sendall(event(completion_chunk(None, choices=[delta])))

    with Hostile(endless) as server, model_at(server.base_url) as model:
        elapsed, err = timed_call(model, deadline=time.time() + 6, max_tokens=10)
    assert elapsed < 3.0, f"held {elapsed:.1f} s (until the deadline): {err!r}"


def test_an_endless_line_is_cut_at_the_reply_cap_not_buffered_until_the_deadline() -> None:
    # One `data:` line that never ends: the SSE decoder buffers it without limit (~100 MB/s
    # here), and the cap is only checked on whole events, so memory grows until the deadline.
    def endless_line(conn: socket.socket) -> None:
        conn.sendall(SSE_HEAD + chunk(b'data: {"choices":[{"index":0,"delta":{"content":"'))
        block = chunk(b"x" * 1_000_000)
        while True:
            conn.sendall(block)

    with Hostile(endless_line) as server, model_at(server.base_url) as model:
        elapsed, err = timed_call(model, deadline=time.time() + 6, max_tokens=10)
    assert elapsed < 3.0, f"held {elapsed:.1f} s (until the deadline), buffering: {err!r}"
