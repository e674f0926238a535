"""A local OpenAI-compatible HTTP server with scripted replies.

The real `openai` SDK talks to it over a socket, so tests exercise the real wire format:

    with ScriptedOpenAI(["reply 1", Fail(429), "reply 2"]) as server:
        model = OpenAIModel(model="m", api_key=None, base_url=server.base_url)

Each POST /v1/chat/completions consumes the next script entry: a string is the assistant's
reply, a `Fail` is an HTTP error in OpenAI's error shape, and a callable is given the request
body and returns either. An exhausted script answers HTTP 400 "script exhausted", so tests
notice calls they did not expect.

A request with `"stream": true` is answered as a real server streams: server-sent events, a
first chunk with the role, the reply a word at a time (`chunk_seconds` apart), a last chunk
with the finish reason, the usage chunk when the request asks for it (`stream_options`), then
`[DONE]`; unstreamed, the reply comes when its last word would. `delay_seconds` is the wait
before the first byte (a prompt's prefill), and `stall_after=K` goes silent after K words,
until the client hangs up (`hung_up` counts them).

A server with a small window (`window=N`) counts each request as a real one would (its
messages at `chars_per_token` characters a token, a few tokens for each message's template,
plus `max_tokens`) and refuses one past N with HTTP 400 and the real message, without taking
a script entry: vLLM's and OpenAI's ("This model's maximum context length is ..."), or with
`refusal="llama.cpp"` llama.cpp's server's (`exceed_context_size_error`, the counts in the
error's body). `model_card` adds fields to the model's /v1/models entry (vLLM's
`max_model_len`, ...).
"""

from __future__ import annotations

import json
import math
import re
import select
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

SCRIPTED_MODEL = "scripted-model"


@dataclass
class Fail:
    """A scripted HTTP error."""

    status: int
    message: str = "scripted failure"
    retry_after: float | None = None
    kind: str = ""  # the error's type; "" for the usual one of its status
    extra: dict[str, Any] | None = None  # more fields of the error object


ScriptEntry = str | Fail | Callable[[dict[str, Any]], str | Fail]
TEMPLATE_TOKENS = 4  # what a chat template adds around each message

_ERROR_TYPES = {401: "invalid_request_error", 429: "requests"}
_ERROR_CODES = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}


def unused_local_url() -> str:
    """A base_url on 127.0.0.1 where nothing listens (the port was free a moment ago)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class ScriptedOpenAI:
    """with ScriptedOpenAI(["reply 1", Fail(429), "reply 2"]) as server: server.base_url"""

    def __init__(
        self,
        script: Sequence[ScriptEntry],
        *,
        usage: bool = True,
        delay_seconds: float = 0.0,
        window: int | None = None,
        chars_per_token: float = 2.0,
        refusal: str = "openai",
        model_card: dict[str, Any] | None = None,
        chunk_seconds: float = 0.0,
        stall_after: int | None = None,
    ) -> None:
        self.script = list(script)
        self.usage = usage
        self.delay_seconds = delay_seconds
        self.window = window
        self.chars_per_token = chars_per_token
        self.refusal = refusal
        self.model_card = dict(model_card or {})
        self.chunk_seconds = chunk_seconds
        self.stall_after = stall_after
        self.hung_up = 0  # streams the client closed before their end
        self.requests: list[dict[str, Any]] = []
        self.refused: list[dict[str, Any]] = []  # requests refused as too long for the window
        self.base_url = ""
        self._completions = 0
        self._next = 0
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def completions(self) -> int:
        """How many chat-completion requests got a successful (200) reply."""
        with self._lock:
            return self._completions

    def __enter__(self) -> ScriptedOpenAI:
        self._server = _Server(("127.0.0.1", 0), _handler_for(self))
        host, port = self._server.server_address[:2]
        self.base_url = f"http://{host!s}:{port}/v1"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._closing.set()  # wakes handlers still "thinking" under delay_seconds
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        """What the request's messages count, as this server's tokenizer would."""
        messages = _messages(body)
        chars = sum(len(str(m.get("content", ""))) for m in messages)
        return math.ceil(chars / self.chars_per_token) + TEMPLATE_TOKENS * len(messages)

    def _too_long(self, body: dict[str, Any]) -> Fail | None:
        """The real refusal of a request past the window, or None when it fits."""
        if self.window is None:
            return None
        prompt = self.prompt_tokens(body)
        completion = int(body.get("max_tokens") or 0)
        if prompt + completion <= self.window:
            return None
        if self.refusal == "llama.cpp":
            return Fail(
                400,
                "the request exceeds the available context size. try increasing the context "
                "size or enable context shift",
                kind="exceed_context_size_error",
                extra={"n_prompt_tokens": prompt, "n_ctx": self.window},
            )
        return Fail(
            400,
            f"This model's maximum context length is {self.window} tokens. However, you "
            f"requested {prompt + completion} tokens ({prompt} in the messages, {completion} "
            "in the completion). Please reduce the length of the messages or completion.",
        )

    def _take(self, body: dict[str, Any]) -> str | Fail:
        """Records the request and returns its scripted answer."""
        refused = self._too_long(body)
        if refused is not None:
            with self._lock:
                self.refused.append(body)
            return refused
        with self._lock:
            self.requests.append(body)
            if self._next >= len(self.script):
                return Fail(400, "script exhausted")
            entry = self.script[self._next]
            self._next += 1
        return entry(body) if callable(entry) else entry

    def _usage(self, body: dict[str, Any], text: str) -> dict[str, int]:
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in _messages(body))
        completion_tokens = len(text.split())
        return {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }

    def _chunks(self, body: dict[str, Any], text: str) -> list[dict[str, Any] | None]:
        """The stream of `text`'s reply: its chunks in order, None where it stalls."""
        with self._lock:
            self._completions += 1
            number = self._completions
        head = {
            "id": f"chatcmpl-scripted-{number}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", SCRIPTED_MODEL),
        }

        def chunk(delta: dict[str, str], finish: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            return {**head, "choices": [choice]}

        words = re.findall(r"\s*\S+\s*", text) or ([text] if text else [])
        chunks: list[dict[str, Any] | None] = [chunk({"role": "assistant", "content": ""})]
        for k, word in enumerate(words):
            if k == self.stall_after:
                chunks.append(None)
            chunks.append(chunk({"content": word}))
        chunks.append(chunk({}, "stop"))
        options = body.get("stream_options")
        if self.usage and isinstance(options, dict) and options.get("include_usage"):
            chunks.append({**head, "choices": [], "usage": self._usage(body, text)})
        return chunks

    def _completion(self, body: dict[str, Any], text: str) -> dict[str, Any]:
        with self._lock:
            self._completions += 1
            number = self._completions
        reply: dict[str, Any] = {
            "id": f"chatcmpl-scripted-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", SCRIPTED_MODEL),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
        }
        if self.usage:
            reply["usage"] = self._usage(body, text)
        return reply


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def _error_body(status: int, message: str, fail: Fail | None = None) -> dict[str, Any]:
    kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    error = {
        "message": message,
        "type": (fail.kind if fail and fail.kind else kind),
        "param": None,
        "code": _ERROR_CODES.get(status),
    }
    return {"error": {**error, **((fail.extra or {}) if fail else {})}}


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def server_activate(self) -> None:
        super().server_activate()
        # accept() never blocks the serving thread: a connection the selector saw that another
        # thread accepted first would otherwise hold serve_forever, and with it shutdown(), for
        # good (seen in CI: a test's leftover accept thread on a reused descriptor; those
        # threads are now stopped before their socket closes, tests/listening.py).
        self.socket.settimeout(0.5)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out and hung up is part of the script, not a test failure.
        pass


def _handler_for(server: ScriptedOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                model = {"id": SCRIPTED_MODEL, "object": "model", "created": 0, "owned_by": "tests"}
                model |= server.model_card
                self._send_json(200, {"object": "list", "data": [model]})
            else:
                self._send_json(404, _error_body(404, f"no route GET {self.path}"))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send_json(404, _error_body(404, f"no route POST {self.path}"))
                return
            try:
                body = json.loads(raw)
            except ValueError:
                self._send_json(400, _error_body(400, "request body is not JSON"))
                return
            answer = server._take(body)
            if server.delay_seconds and server._closing.wait(server.delay_seconds):
                return  # shutting down: the client has long given up
            if isinstance(answer, Fail):
                headers = {}
                if answer.retry_after is not None:
                    headers["Retry-After"] = f"{answer.retry_after:g}"
                body_out = _error_body(answer.status, answer.message, answer)
                self._send_json(answer.status, body_out, headers)
            elif body.get("stream"):
                self._send_stream(server._chunks(body, answer))
            else:  # unstreamed: nothing comes until the whole reply is generated
                generating = server.chunk_seconds * max(0, len(answer.split()) - 1)
                if generating and server._closing.wait(generating):
                    return
                self._send_json(200, server._completion(body, answer))

        def _send_stream(self, chunks: list[dict[str, Any] | None]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()  # HTTP/1.0: the body ends when the connection closes
            try:
                for k, chunk in enumerate(chunks):
                    if chunk is None:  # stalled: silent until the client hangs up
                        while not server._closing.is_set():
                            readable, _, _ = select.select([self.connection], [], [], 0.05)
                            if readable and not self.connection.recv(1, socket.MSG_PEEK):
                                raise ConnectionResetError  # the client closed its end
                        return
                    if k and server.chunk_seconds and server._closing.wait(server.chunk_seconds):
                        return
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                with server._lock:
                    server.hung_up += 1

        def _send_json(
            self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
        ) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler
