"""Red-team round 2 on the streamed model client (fixbot/model/client.py), over real sockets
and real threads (a second helper given the rewritten client and the brief "break it",
2026-12-04). Each test passes only when the client's promise holds; each failed on the client
before this file (18 of 18)."""

from __future__ import annotations

import io
import json
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
import structlog

from fixbot import log as fixlog
from fixbot.errors import ModelUnreachable
from fixbot.model.client import OpenAIModel
from tests.redteam.test_model_stream import (
    DONE,
    MESSAGES,
    SSE_HEAD,
    Hostile,
    chunk,
    completion_chunk,
    event,
    model_at,
)

KEY = "sk-proj-RedTeamRound2Secret0123456789abcdef"


def outcome(fn: Callable[[], Any], wait: float = 8.0) -> tuple[float, Any]:
    """fn() in a daemon thread: (seconds, its result or exception; TimeoutError if it hung)."""
    box: dict[str, Any] = {}

    def go() -> None:
        try:
            box["r"] = fn()
        except BaseException as err:
            box["r"] = err

    start = time.monotonic()
    worker = threading.Thread(target=go, daemon=True)
    worker.start()
    worker.join(wait)
    return time.monotonic() - start, box.get("r", TimeoutError("still running"))


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def growth_while(fn: Callable[[], Any], enough: threading.Event, limit: int) -> tuple[int, Any]:
    """fn() in a thread while RSS is sampled; past `limit` bytes of growth, `enough` is set
    (the hostile server then stops sending, so the test itself stays bounded)."""
    base, peak = rss(), 0
    box: dict[str, Any] = {}

    def go() -> None:
        try:
            box["r"] = fn()
        except BaseException as err:
            box["r"] = err

    worker = threading.Thread(target=go, daemon=True)
    worker.start()
    while worker.is_alive():
        peak = max(peak, rss() - base)
        if peak > limit:
            enough.set()
        worker.join(0.005)
    return peak, box.get("r")


def endless(head: bytes, first: bytes, enough: threading.Event) -> Callable[[socket.socket], None]:
    def handler(conn: socket.socket) -> None:
        conn.sendall(head + chunk(first))
        block = chunk(b"x" * 1_000_000)
        while not enough.is_set():
            conn.sendall(block)

    return handler


def reply_of(body: bytes, **kw: Any) -> Any:
    def handler(conn: socket.socket) -> None:
        conn.sendall(SSE_HEAD + body + DONE)

    with (
        Hostile(handler) as server,
        OpenAIModel(model="m", api_key=KEY, base_url=server.base_url, max_retries=0) as model,
    ):
        try:
            return model.complete(MESSAGES, deadline=time.time() + 5, **kw)
        except Exception as err:
            return err


# --- 1. tracebacks from the stream reader --------------------------------------------------


@pytest.mark.parametrize("choice", ["x", 1, None, [0]], ids=["str", "int", "null", "list"])
def test_a_choice_that_is_not_an_object_is_model_unreachable_not_a_traceback(choice: Any) -> None:
    # `choice.get("index", 0)` runs on whatever the list holds: AttributeError escapes.
    got = reply_of(event(completion_chunk("ok ")) + event(completion_chunk(choices=[choice])))
    assert not isinstance(got, Exception) or isinstance(got, ModelUnreachable), repr(got)


@pytest.mark.parametrize("where", ["event", "choices"])
def test_a_deeply_nested_event_is_model_unreachable_not_a_recursion_error(where: str) -> None:
    # 5,000 levels is 10 KB, far inside the byte cap; json.loads raises RecursionError (not a
    # ValueError), which escapes the reader.
    deep = b"[" * 5000 + b"]" * 5000
    data = deep if where == "event" else b'{"choices":' + deep + b"}"
    got = reply_of(chunk(b"data: " + data + b"\n\n"))
    assert isinstance(got, ModelUnreachable), repr(got)


# --- 2. the API key in errors and logs -----------------------------------------------------


def test_a_mid_stream_error_that_echoes_the_key_never_carries_it() -> None:
    # _describe scrubs HTTP errors; the reader's own `the server's error mid-stream` does not.
    got = reply_of(event({"error": {"message": f"Incorrect API key provided: {KEY}"}}))
    assert isinstance(got, ModelUnreachable), repr(got)
    assert KEY[:16] not in str(got) and KEY[:16] not in repr(got), str(got)


def test_ignored_usage_logged_never_carries_a_prefix_of_the_key() -> None:
    # The log's redactor replaces the whole key; `bad_usage[:200]` cuts it first, so a key
    # placed across the 200th character is logged all but its last character.
    pad = 200 - len('{"prompt_tokens": "') - len(KEY) + 1
    usage = {"prompt_tokens": "p" * pad + KEY, "completion_tokens": 1}
    stream = io.StringIO()
    fixlog.configure(fmt="json", secrets=[KEY], stream=stream)
    try:
        got = reply_of(event(completion_chunk("hi", usage=usage)))
    finally:
        structlog.reset_defaults()
    assert not isinstance(got, Exception), repr(got)
    logged = stream.getvalue()
    assert "model_usage_ignored" in logged
    assert KEY[:16] not in logged, logged


# --- 3. one call's abandon breaks another call on the same model --------------------------


def slow_reply(words: int) -> Callable[[socket.socket], None]:
    """A healthy reply of `words` words, one every 0.1 s."""

    def handler(conn: socket.socket) -> None:
        conn.sendall(SSE_HEAD)
        for i in range(words):
            conn.sendall(event(completion_chunk(f"w{i} ")))
            time.sleep(0.1)
        conn.sendall(DONE)

    return handler


def test_an_abandoned_call_never_breaks_a_concurrent_call_on_the_same_model() -> None:
    # Parallel candidates share one model. A's deadline abandons it and closes the model's
    # client, which B is reading from: B's retry then hits the closed client and httpx's
    # RuntimeError("Cannot send a request, as the client has been closed.") escapes.
    with (
        Hostile(slow_reply(15)) as server,
        model_at(server.base_url, timeout_seconds=60.0, max_retries=2) as model,
    ):
        box: dict[str, Any] = {}

        def b() -> None:
            try:
                box["b"] = model.complete(MESSAGES, deadline=time.time() + 6)
            except BaseException as err:
                box["b"] = err

        worker = threading.Thread(target=b, daemon=True)
        worker.start()
        time.sleep(0.2)
        with pytest.raises(ModelUnreachable):
            model.complete(MESSAGES, deadline=time.time() + 0.2)
        worker.join(8)
    got = box.get("b")
    assert not isinstance(got, Exception), f"B, healthy, got {got!r}"
    assert "w14" in got.text


def test_a_retired_client_is_closed_by_the_last_call_using_it_and_never_before() -> None:
    # The fix for the break above must not leak instead: the client A's abandon retired is
    # closed once B, the last call on it, ends (a socket per abandoned call would pile up over
    # a long run), and not while B still reads from it.
    with Hostile(slow_reply(10)) as server:
        model = model_at(server.base_url, timeout_seconds=60.0, max_retries=0)
        first = model._shared.client
        worker = threading.Thread(
            target=lambda: model.complete(MESSAGES, deadline=time.time() + 6), daemon=True
        )
        worker.start()
        time.sleep(0.2)
        with pytest.raises(ModelUnreachable):
            model.complete(MESSAGES, deadline=time.time() + 0.2)
        assert model._shared.client is not first, "later calls must take a fresh client"
        assert not first.is_closed(), "closed under a call still reading from it"
        worker.join(8)
        assert first.is_closed(), "the retired client outlived its last call"
        model.close()
        assert model._shared.client.is_closed()


# --- 4. unbounded memory: a body the SDK reads whole ---------------------------------------


def test_an_endless_error_body_is_not_buffered_without_bound() -> None:
    # A 500 whose body never ends: the SDK reads the whole error body before fixbot sees the
    # status (~1 GB/s here), until the deadline: a 30-minute run deadline is an OOM kill.
    enough = threading.Event()
    head = (
        b"HTTP/1.1 500 Oops\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    with (
        Hostile(endless(head, b'{"error":{"message":"', enough)) as server,
        model_at(server.base_url) as model,
    ):
        peak, got = growth_while(
            lambda: model.complete(MESSAGES, deadline=time.time() + 4, max_tokens=10),
            enough,
            limit=300_000_000,
        )
    assert peak < 300_000_000, f"RSS grew {peak / 1e6:.0f} MB for a 74 KiB stream cap: {got!r}"
    assert isinstance(got, ModelUnreachable), repr(got)


# --- 5. discover_window: no bound on time, memory, or tracebacks ---------------------------


def json_200(body: bytes) -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
        % len(body)
        + body
    )


def test_discover_window_survives_deeply_nested_json() -> None:
    # Called when clients open (runs/clients.py): `except (openai.APIError, ValueError)` lets
    # json's RecursionError through, and the run dies at start-up.
    def deep(conn: socket.socket) -> None:
        conn.sendall(json_200(b"[" * 100_000 + b"]" * 100_000))

    with Hostile(deep) as server, model_at(server.base_url) as model:
        _, got = outcome(model.discover_window)
    assert not isinstance(got, BaseException), repr(got)


def test_discover_window_is_brief_against_a_slowloris_endpoint() -> None:
    # "each asked once, briefly": the 5 s timeout is per read, and a byte every 0.5 s never
    # lets one time out; nothing else bounds the ask (no deadline, no worker thread).
    def slowloris(conn: socket.socket) -> None:
        for byte in b"HTTP/1.1 200 OK\r\nX-Padding: " + b"a" * 10_000:
            conn.sendall(bytes([byte]))
            time.sleep(0.5)

    with Hostile(slowloris) as server, model_at(server.base_url) as model:
        elapsed, got = outcome(model.discover_window, wait=7.0)
    assert not isinstance(got, TimeoutError), f"still asking after {elapsed:.1f} s"


def test_discover_window_does_not_buffer_an_endless_body() -> None:
    # /v1/models answering forever: the SDK reads it whole into memory (MemoryError or the
    # OOM killer), since nothing caps a discovery answer's size.
    enough = threading.Event()
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    with (
        Hostile(endless(head, b'{"data":"', enough)) as server,
        model_at(server.base_url) as model,
    ):
        peak, got = growth_while(model.discover_window, enough, limit=300_000_000)
    assert peak < 300_000_000, f"RSS grew {peak / 1e6:.0f} MB on a discovery answer: {got!r}"


# --- 6. SSE the reader misreads --------------------------------------------------------------


def sse_event(content: str, end: bytes) -> bytes:
    data = json.dumps(completion_chunk(content)).encode()
    return chunk(b"data: " + data + end + end)


def test_cr_only_line_endings_are_read() -> None:
    # SSE allows CR, LF or CRLF line ends; the reader splits on LF only, so a CR-only stream
    # is one line, "not JSON", and a good reply is refused as unreachable.
    got = reply_of(sse_event("hello ", b"\r") + sse_event("world", b"\r"))
    assert not isinstance(got, Exception), repr(got)
    assert got.text == "hello world"


def test_a_leading_bom_does_not_lose_the_first_event() -> None:
    # SSE strips one leading U+FEFF; unstripped, the first field is "\ufeffdata" and dropped.
    got = reply_of(b"" + chunk(b"\xef\xbb\xbf") + sse_event("hello", b"\n"))
    assert not isinstance(got, Exception), repr(got)
    assert got.text == "hello"


@pytest.mark.parametrize("status", [b"400 Bad Request", b"429 Too Many", b"500 Oops"])
def test_an_error_status_whose_body_breaks_off_is_model_unreachable(status: bytes) -> None:
    # The SDK reads an error's body before raising its APIStatusError; a body cut mid-chunk
    # raises httpx.RemoteProtocolError from inside create(), which no `except` catches.
    def cut(conn: socket.socket) -> None:
        conn.sendall(
            b"HTTP/1.1 " + status + b"\r\ncontent-type: application/json\r\n"
            b"transfer-encoding: chunked\r\n\r\n" + chunk(b'{"error":{"message":"')
        )

    with Hostile(cut) as server, model_at(server.base_url) as model:
        _, got = outcome(lambda: model.complete(MESSAGES, deadline=time.time() + 5))
    assert isinstance(got, ModelUnreachable), repr(got)
