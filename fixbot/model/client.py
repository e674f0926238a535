"""The model seam: a small `Model` protocol and its OpenAI-compatible implementation.

This is the only module that imports `openai`. Every reply is streamed, and the per-try
timeout is how long the server may stay silent: before its first token (the prompt's prefill)
or between two. A slow server that keeps answering is waited for, however long its whole reply
takes; one that stops is cut, and the abandoned stream's connection is closed, so a server that
notices stops generating. The run's deadline bounds the whole call from outside (the call runs
in a worker thread that the caller stops waiting for), whatever the server does: headers a byte
at a time, redirects (never followed), a silence begun just before the deadline. fixbot reads
the stream itself, bounded: at most `max_tokens` x 16 characters of reply and x 1 KiB of stream
in all (a line without end included), every event checked (JSON, its shape, the usage counts:
believed only as whole numbers in range, else estimated); a stream it cannot read is a
`ModelUnreachable`, never a traceback. The
SDK's own retries are switched off so that the retry policy is ours and pinned: 429, 5xx,
connection errors and timeouts are retried with exponential backoff (or the server's
`Retry-After`), a try after a timeout with twice the time (a slow server may still be busy with
the try that timed out); any other 4xx fails at once. A request the
server refuses as too long for the model's window is `ContextExceeded` (with the window and the
count the server named), never retried as is: the caller rebuilds the prompt for that window.
Every other failure that reaches the caller is a `ModelUnreachable`, and no message or repr
ever carries the API key.

Each model knows its context window (`window`): configured, else stated by the endpoint
(`discover_window`: vLLM's and LM Studio's /v1/models, llama.cpp's /props, Ollama's
/api/show), else 8,192 tokens; a refusal teaches the caller a smaller one.
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

import openai
import structlog

from fixbot.errors import FixbotError, ModelUnreachable
from fixbot.model.window import (
    MAX_REPLY_TOKENS,
    ContextRefusal,
    ContextWindow,
    context_refusal,
    estimate_tokens,
    window_in,
)
from fixbot.secrets import is_placeholder

if TYPE_CHECKING:
    from openai import Stream
    from openai.types.chat import ChatCompletionChunk, ChatCompletionMessageParam

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Local OpenAI-compatible servers accept any key, but the SDK refuses to start without one.
PLACEHOLDER_API_KEY = "not-needed"
MAX_BACKOFF_SECONDS = 30.0
MAX_RETRY_AFTER_SECONDS = 60.0
# A reply streamed past max_tokens at this many characters a token (far above any tokenizer's
# average) is a server ignoring max_tokens: it is cut there.
REPLY_CHARS_PER_TOKEN = 16
# The whole stream (its events' JSON around the reply, reasoning a server streams beside it, a
# line that never ends) may carry this many bytes a token of max_tokens, and the base besides: a
# chunk's JSON around its token is some hundreds of bytes.
STREAM_BYTES_PER_TOKEN = 1024
STREAM_BYTES_BASE = 64 * 1024
# Token counts a server reports are believed only as whole numbers from 0 to this; other counts
# (negative, fractional, NaN, text) are ignored and the reply's tokens estimated.
MAX_REPORTED_TOKENS = 10_000_000
# How long past the deadline the caller waits for a call's own DeadlinePassed before it stops
# waiting for the call at all.
DEADLINE_GRACE_SECONDS = 0.25
# How long the window discovery may take in all (its asks are best-effort: failures ignored).
DISCOVERY_SECONDS = 5.0
# Any response body is cut here (the SDK reads an error reply or a discovery answer whole; a
# reply stream is cut by fixbot's reader well before: at most 2.1 MiB at 2,048 tokens).
RESPONSE_BYTES_MOST = 4 << 20

_T = TypeVar("_T")

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Reply:
    text: str
    model: str  # the model name the server reports (fallback: the requested one)
    prompt_tokens: int
    completion_tokens: int
    estimated: bool  # True when the token counts are local estimates, not the server's


class Model(Protocol):
    name: str
    window: ContextWindow  # what fixbot knows of the model's context window

    def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        temperature: float | None = None,
        deadline: float | None = None,
        max_tokens: int | None = None,
    ) -> Reply:
        """One reply of at most `max_tokens` (default and most: the client's cap);
        DeadlinePassed when `deadline` (epoch seconds) comes first, retries and waits included:
        a hanging server cannot hold a run past its wall clock."""
        ...


__all__ = ["MAX_REPLY_TOKENS", "estimate_tokens"]  # kept here too for the model's callers


def backoff_delay(retry: int, *, backoff_seconds: float, retry_after: float | None) -> float:
    """Seconds to wait before retry number `retry` (0-based)."""
    if retry_after is not None:
        return min(retry_after, MAX_RETRY_AFTER_SECONDS)
    return min(backoff_seconds * 2.0**retry, MAX_BACKOFF_SECONDS)


class DeadlinePassed(ModelUnreachable):
    """The run's wall clock ran out while a model call (or its retries) was pending."""


class ContextExceeded(FixbotError):
    """The server refused the request as too long for the model's context window: not a
    model that is unreachable, a prompt to rebuild for the window the refusal names."""

    def __init__(self, message: str, refusal: ContextRefusal) -> None:
        super().__init__(message)
        self.refusal = refusal


@dataclass(frozen=True)
class _Streamed:
    text: str
    model: str  # "" when no chunk named it
    usage: tuple[int, int] | None  # (prompt, completion) as the server counted, when believable


@dataclass
class _Shared:
    """A client and the calls using it: a client the model has replaced (retired) is closed
    when the last call using it ends, never under a call still reading from it."""

    client: openai.OpenAI
    users: int = 0
    retired: bool = False


@dataclass
class _Call:
    """One call's client and the response it is reading: what the caller closes when it stops
    waiting for the call at its deadline (its response; its client too where no other call is
    using it, else the last one to end closes it)."""

    shared: _Shared
    response: Closeable | None = None
    abandoned: bool = False

    @property
    def client(self) -> openai.OpenAI:
        return self.shared.client

    def abandon(self) -> None:
        self.abandoned = True
        if self.response is not None:
            with contextlib.suppress(Exception):
                self.response.close()


class Closeable(Protocol):
    def close(self) -> None: ...


class OpenAIModel:
    """A `Model` served by any OpenAI-compatible chat-completions endpoint."""

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None,
        base_url: str | None,
        timeout_seconds: float = 120.0,
        max_retries: int = 4,
        backoff_seconds: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
        max_tokens: int = MAX_REPLY_TOKENS,
        context_tokens: int | None = None,
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.name = model
        # Explicit, so the SDK never falls back to OPENAI_BASE_URL behind the composition root.
        self.base_url = base_url or DEFAULT_BASE_URL
        self.timeout_seconds = timeout_seconds
        self.max_retries = max_retries
        self.backoff_seconds = backoff_seconds
        self.max_tokens = max_tokens  # a reply is a diagnosis and a diff: cap runaway output
        self._sleep = sleep
        self._secret = "" if not api_key or is_placeholder(api_key) else api_key
        self._timed_out_after = timeout_seconds  # the last try that timed out, for its error
        self.window = (
            ContextWindow(context_tokens, "configured") if context_tokens else ContextWindow()
        )
        self._api_key = api_key or PLACEHOLDER_API_KEY
        self._lock = threading.Lock()
        self._shared = _Shared(self._new_client())

    def _new_client(self) -> openai.OpenAI:
        # Redirects are never followed: each hop would be a fresh wait, and an endpoint that
        # moved is the user's to configure (the error names where it points).
        return openai.OpenAI(
            api_key=self._api_key,
            base_url=self.base_url,
            timeout=self.timeout_seconds,
            max_retries=0,
            http_client=_capped_http_client(RESPONSE_BYTES_MOST),
        )

    def __repr__(self) -> str:
        return f"OpenAIModel(model={self.name!r}, base_url={self.base_url!r})"

    def close(self) -> None:
        """Close the client now, or, where a call is still using it, when that call ends."""
        with self._lock:
            shared = self._shared
            shared.retired = True
            idle = shared.users == 0
        if idle:
            _close_quietly(shared.client)

    def _begin(self) -> _Call:
        """A call on the current client, counted as one of its users until `_end`."""
        with self._lock:
            if self._shared.retired:  # closed before: a fresh client for a call after close
                self._shared = _Shared(self._new_client())
            self._shared.users += 1
            return _Call(self._shared)

    def _end(self, call: _Call) -> None:
        """The call no longer uses its client: a retired client is closed by its last user."""
        with self._lock:
            shared = call.shared
            shared.users -= 1
            idle = shared.retired and shared.users == 0
        if idle:
            _close_quietly(shared.client)

    def _retire(self, call: _Call) -> None:
        """The call was abandoned: later calls take a fresh client; the abandoned call's is
        closed now where no other call uses it (which ends a read that no response close
        reaches, a header sent a byte at a time), else by the last of them."""
        with self._lock:
            shared = call.shared
            if self._shared is shared:
                self._shared = _Shared(self._new_client())
            shared.retired = True
            idle = shared.users <= 1  # the abandoned call alone: its worker's _end follows
        if idle:
            _close_quietly(shared.client)

    def __enter__(self) -> OpenAIModel:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        temperature: float | None = None,
        deadline: float | None = None,
        max_tokens: int | None = None,
    ) -> Reply:
        cap = self.max_tokens if max_tokens is None else min(max_tokens, self.max_tokens)
        call = self._begin()
        streamed = self._within(
            deadline,
            call,
            lambda: self._create_with_retries(call, messages, temperature, deadline, cap),
        )
        model = streamed.model or self.name
        if streamed.usage is not None:
            return Reply(streamed.text, model, *streamed.usage, estimated=False)
        prompt = "".join(message.get("content", "") for message in messages)
        tokens = estimate_tokens(prompt), estimate_tokens(streamed.text)
        return Reply(streamed.text, model, *tokens, estimated=True)

    def _within(self, deadline: float | None, call: _Call, work: Callable[[], _T]) -> _T:
        """`work()`, in a worker thread that the caller stops waiting for at the deadline
        (what blocks it, a socket read or a header a byte at a time, cannot hold the caller):
        the call's response and client are then closed, so the worker ends at its next read,
        and the next call gets a fresh client."""
        if deadline is None:
            try:
                return work()
            finally:
                self._end(call)
        box: dict[str, object] = {}
        done = threading.Event()

        def run() -> None:
            try:
                box["value"] = work()
            except BaseException as err:  # handed to the caller, or dropped when abandoned
                box["error"] = err
            finally:
                self._end(call)
                done.set()

        threading.Thread(target=run, name="fixbot-model-call", daemon=True).start()
        if done.wait(max(0.0, deadline - time.time()) + DEADLINE_GRACE_SECONDS):
            if "error" in box:
                raise cast(BaseException, box["error"])
            return cast(_T, box["value"])
        call.abandon()
        self._retire(call)
        log.warning("model_call_abandoned", endpoint=self.base_url)
        raise DeadlinePassed(
            f"the run's wall-clock deadline passed while waiting for {self.base_url}"
        )

    def _create_with_retries(
        self,
        call: _Call,
        messages: Sequence[Mapping[str, str]],
        temperature: float | None,
        deadline: float | None,
        max_tokens: int,
    ) -> _Streamed:
        payload = cast("list[ChatCompletionMessageParam]", [dict(m) for m in messages])
        attempts = self.max_retries + 1
        patience = self.timeout_seconds
        for attempt in range(attempts):
            timeout = self._time_left(deadline, patience)
            if call.abandoned:
                raise DeadlinePassed("the call was abandoned at the run's deadline")
            try:
                stream = call.client.chat.completions.create(
                    model=self.name,
                    messages=payload,
                    temperature=openai.omit if temperature is None else temperature,
                    max_tokens=max_tokens,
                    stream=True,
                    stream_options={"include_usage": True},
                    timeout=timeout,  # httpx's read timeout: the longest silence
                )
                call.response = stream
                return self._read(stream, max_tokens)
            except openai.APIStatusError as err:
                refusal = context_refusal(_message(err), _body(err))
                if refusal is not None:
                    raise ContextExceeded(
                        f"model endpoint {self.base_url} refused the request as too long "
                        f"for the model's context window: {self._describe(err)}",
                        refusal,
                    ) from None
                if not _is_retryable_status(err.status_code):
                    raise ModelUnreachable(
                        f"model endpoint {self.base_url} refused the request: {self._describe(err)}"
                    ) from None
                last_error: openai.APIError = err
                retry_after = _retry_after_seconds(err.response.headers.get("retry-after"))
            except openai.APIConnectionError as err:  # includes APITimeoutError
                last_error, retry_after = err, None
                if isinstance(err, openai.APITimeoutError):
                    # A slow server is most often busy with the try that timed out: the next
                    # one waits twice as long instead of queueing behind it again and again.
                    self._timed_out_after = timeout
                    patience *= 2
            except openai.APIError as err:  # a reply the SDK could not make sense of
                raise ModelUnreachable(
                    f"model endpoint {self.base_url} gave an unusable reply: {self._describe(err)}"
                ) from None
            except Exception as err:
                if not _is_transport_error(err):
                    raise
                # the transport's own error where the SDK did not wrap it (an error reply's
                # body that breaks off): a connection error, as the SDK's would be
                last_error = openai.APIConnectionError(
                    message=f"the reply broke off: {err or type(err).__name__}",
                    request=cast("Any", getattr(err, "request", None)),
                )
                retry_after = None
            if attempt + 1 < attempts:
                delay = backoff_delay(
                    attempt, backoff_seconds=self.backoff_seconds, retry_after=retry_after
                )
                log.warning(
                    "model_retry",
                    endpoint=self.base_url,
                    attempt=attempt + 1,
                    of=attempts,
                    delay_seconds=delay,
                    error=self._describe(last_error),
                )
                if deadline is not None:
                    delay = min(delay, self._time_left(deadline))
                self._sleep(delay)
        self._time_left(deadline)  # a last try cut by the deadline is the deadline's
        raise ModelUnreachable(
            f"model endpoint {self.base_url} failed after {attempts} attempt(s); "
            f"last error: {self._describe(last_error)}"
        )

    def _read(self, stream: Stream[ChatCompletionChunk], max_tokens: int) -> _Streamed:
        """The streamed reply, read by fixbot to its end (`[DONE]` or the stream's close) or to
        its bounds: `max_tokens` x REPLY_CHARS_PER_TOKEN characters of reply, x
        STREAM_BYTES_PER_TOKEN bytes of stream (what came is the reply, cut as one at its token
        cap is). A silence longer than the try's timeout or a dropped connection ends the try,
        as the SDK's timeout and connection errors do before the stream; a stream that is no
        chat completion stream is a ModelUnreachable. It is closed however it ends."""
        response = stream.response
        reader = _StreamReader(
            most_chars=max_tokens * REPLY_CHARS_PER_TOKEN,
            most_bytes=STREAM_BYTES_BASE + max_tokens * STREAM_BYTES_PER_TOKEN,
            endpoint=self.base_url,
            scrub=self._scrub,
        )
        try:
            for piece in _transport_reads(response.iter_bytes(), response.request):
                if reader.feed(piece):
                    break
            else:
                reader.finish()
        finally:
            stream.close()
        if reader.cut:
            log.warning(
                "model_reply_cut",
                endpoint=self.base_url,
                characters=reader.size,
                bytes=reader.received,
            )
        if not reader.chunks:
            kind = response.headers.get("content-type", "none")
            raise ModelUnreachable(
                f"model endpoint {self.base_url} gave an unusable reply: no chat completion "
                f"chunks in the reply stream (content-type: {kind})"
            )
        if reader.bad_usage:
            log.warning(
                "model_usage_ignored",
                endpoint=self.base_url,
                usage=self._scrub(reader.bad_usage)[:200],
            )
        usage = None if reader.cut else reader.usage  # a cut reply's usage never came
        return _Streamed(reader.text(), reader.model, usage)

    def _time_left(self, deadline: float | None, patience: float | None = None) -> float:
        """Seconds this try may take: `patience` (the per-call timeout, doubled after each
        try that timed out), or less before the deadline."""
        wanted = self.timeout_seconds if patience is None else patience
        if deadline is None:
            return wanted
        left = deadline - time.time()
        if left <= 0:
            raise DeadlinePassed(
                f"the run's wall-clock deadline passed while waiting for {self.base_url}"
            )
        return min(wanted, left)

    def _describe(self, err: openai.APIError) -> str:
        """One line about `err`, with the API key scrubbed in case a server echoed it."""
        if isinstance(err, openai.APIStatusError):
            text = f"HTTP {err.status_code}: {_message(err)}"
            if 300 <= err.status_code < 400:
                where = err.response.headers.get("location", "elsewhere")
                text = (
                    f"HTTP {err.status_code}: a redirect to {where} "
                    "(never followed: set base_url there)"
                )
        elif isinstance(err, openai.APITimeoutError):
            text = f"timed out after {self._timed_out_after:g} s"
        elif isinstance(err, openai.APIConnectionError) and err.__cause__ is not None:
            text = f"connection error: {err.__cause__}"
        else:
            text = err.message
        return self._scrub(text)

    def _scrub(self, text: str) -> str:
        """`text` without the API key (a server may echo it), scrubbed before any cut."""
        return text.replace(self._secret, "[redacted]") if self._secret else text

    def discover_window(self) -> ContextWindow:
        """The window the endpoint states for this model (its /v1/models entry, llama.cpp's
        /props, Ollama's /api/show; each asked once, briefly, failures ignored), kept as
        `window`; the default when none says."""
        root = self.base_url.rstrip("/").removesuffix("/v1")
        asks: list[tuple[str, str, dict[str, str] | None]] = [
            ("get", f"{self.base_url.rstrip('/')}/models", None),
            ("get", f"{root}/props", None),
            ("post", f"{root}/api/show", {"model": self.name}),
        ]
        deadline = time.time() + DISCOVERY_SECONDS
        for method, url, body in asks:
            call = self._begin()

            def ask(
                method: str = method, url: str = url, body: object = body, call: _Call = call
            ) -> object:
                if method == "get":
                    return call.client.get(url, cast_to=object, options={"timeout": 5.0})
                return call.client.post(url, cast_to=object, body=body, options={"timeout": 5.0})

            try:  # at most DISCOVERY_SECONDS an ask, whatever the endpoint sends
                answer = self._within(deadline, call, ask)
            except (openai.APIError, ModelUnreachable, ValueError, RecursionError):
                continue
            except Exception as err:
                if _is_transport_error(err):
                    continue
                raise
            tokens = window_in(answer, self.name)
            if tokens:
                self.window = ContextWindow(tokens, f"the endpoint ({url.rsplit('/', 1)[-1]})")
                break
        log.info(
            "model_window", model=self.name, tokens=self.window.tokens, source=self.window.source
        )
        return self.window


def _message(err: openai.APIStatusError) -> str:
    body = err.body
    message = body.get("message") if isinstance(body, Mapping) else None
    return message if isinstance(message, str) else err.message


def _body(err: openai.APIStatusError) -> Mapping[str, object] | None:
    return err.body if isinstance(err.body, Mapping) else None


def _is_retryable_status(status: int) -> bool:
    return status == 429 or status >= 500


def _retry_after_seconds(header: str | None) -> float | None:
    """`Retry-After` in seconds; the HTTP-date form and nonsense are ignored."""
    if header is None:
        return None
    try:
        seconds = float(header)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _close_quietly(client: openai.OpenAI) -> None:
    with contextlib.suppress(Exception):
        client.close()


def _capped_http_client(most: int) -> Any:
    """openai's default HTTP client (redirects off), every response body cut at `most` bytes
    with the library's own ReadError: whichever HTTP library the SDK uses (httpx, httpx2: the
    one its default client is made of), as fixbot imports neither."""
    library: Any = sys.modules[openai.DefaultHttpxClient.__mro__[1].__module__.split(".")[0]]

    class Capped(library.SyncByteStream):  # type: ignore[misc]
        def __init__(self, stream: Any) -> None:
            self._stream = stream

        def __iter__(self) -> Iterator[bytes]:
            seen = 0
            for piece in self._stream:
                seen += len(piece)
                if seen > most:
                    raise library.ReadError(f"the response passed {most} bytes: cut there")
                yield piece

        def close(self) -> None:
            self._stream.close()

    class Transport(library.BaseTransport):  # type: ignore[misc]
        def __init__(self) -> None:
            self._inner = library.HTTPTransport()

        def handle_request(self, request: Any) -> Any:
            response = self._inner.handle_request(request)
            response.stream = Capped(response.stream)
            return response

        def close(self) -> None:
            self._inner.close()

    return openai.DefaultHttpxClient(follow_redirects=False, transport=Transport())


def _is_transport_error(err: BaseException) -> bool:
    """An error of the SDK's HTTP library (httpx or httpx2: HTTPError, StreamError), by the
    classes it is made of: fixbot imports neither."""
    return any(
        kind.__name__ in ("HTTPError", "StreamError", "TransportError")
        and kind.__module__.split(".")[0].startswith("httpx")
        for kind in type(err).__mro__
    )


def _transport_reads(pieces: Iterator[bytes], request: Any) -> Iterator[bytes]:
    """The response's bytes; the transport's errors while reading them (whichever HTTP library
    the SDK uses) as the SDK's own: a read that waited out the try's timeout is an
    APITimeoutError, anything else that broke the stream an APIConnectionError."""
    while True:
        try:
            piece = next(pieces)
        except StopIteration:
            return
        except Exception as err:
            if isinstance(err, TimeoutError) or any(
                kind.__name__ == "TimeoutException" for kind in type(err).__mro__
            ):
                raise openai.APITimeoutError(request=request) from None
            raise openai.APIConnectionError(
                message=f"the reply stream broke off: {err or type(err).__name__}",
                request=request,
            ) from None
        yield piece


@dataclass
class _StreamReader:
    """A chat completion stream (server-sent events), fed as it comes, bounded: `feed` says
    when to stop reading (the stream's `[DONE]`, or a bound reached: `cut`)."""

    most_chars: int
    most_bytes: int
    endpoint: str
    scrub: Callable[[str], str] = str
    received: int = 0
    size: int = 0
    chunks: int = 0
    model: str = ""
    usage: tuple[int, int] | None = None
    bad_usage: str = ""
    cut: bool = False
    _parts: list[str] = field(default_factory=list)
    _buffer: bytearray = field(default_factory=bytearray)
    _data: list[bytes] = field(default_factory=list)

    def feed(self, piece: bytes) -> bool:
        if not self.received and piece.startswith(b"\xef\xbb\xbf"):
            piece = piece[3:]  # a byte order mark before the first line (SSE allows one)
        self.received += len(piece)
        self._buffer += piece
        for line in self._lines(final=False):
            if self._line(line):
                return True
        if self.received > self.most_bytes:
            self.cut = True
        return self.cut

    def finish(self) -> None:
        """The stream ended: an event its server did not end with a blank line still counts."""
        for line in self._lines(final=True):
            if self._line(line):
                return
        if self._buffer:
            self._line(bytes(self._buffer))
        self._line(b"")

    def _lines(self, *, final: bool) -> Iterator[bytes]:
        """The complete lines in the buffer, each ended by CRLF, LF or CR (SSE allows all
        three; a CR at the buffer's end waits for the next piece, which may bring its LF)."""
        while True:
            ends = [i for i in (self._buffer.find(b"\n"), self._buffer.find(b"\r")) if i >= 0]
            if not ends:
                return
            end = min(ends)
            width = 1
            if self._buffer[end : end + 1] == b"\r":
                if end + 1 == len(self._buffer) and not final:
                    return
                if self._buffer[end + 1 : end + 2] == b"\n":
                    width = 2
            line = bytes(self._buffer[:end])
            del self._buffer[: end + width]
            yield line

    def text(self) -> str:
        return "".join(self._parts)[: self.most_chars]

    def _line(self, line: bytes) -> bool:
        if not line:
            data, self._data = b"\n".join(self._data), []
            return self._event(data) if data else False
        name, _, value = line.partition(b":")
        if name == b"data":
            self._data.append(value[1:] if value.startswith(b" ") else value)
        return False  # a comment (`: ping`), `event:`, `id:`, `retry:`: nothing to read

    def _event(self, data: bytes) -> bool:
        if data.strip() == b"[DONE]":
            return True
        try:
            event = json.loads(data)
        except (ValueError, RecursionError):  # not UTF-8, not JSON, or nested past any reply
            raise self._unusable("an event that is not JSON") from None
        if not isinstance(event, dict):
            raise self._unusable("an event that is not a JSON object")
        error = event.get("error")
        if error:
            message = error.get("message") if isinstance(error, dict) else error
            raise self._unusable(f"the server's error mid-stream: {self.scrub(str(message))[:300]}")
        choices = event.get("choices") or []
        if not isinstance(choices, list):
            raise self._unusable("an event whose choices are not a list")
        self.chunks += 1
        model = event.get("model")
        if isinstance(model, str) and model:
            self.model = model[:200]
        if event.get("usage") is not None:
            self._read_usage(event["usage"])
        for choice in choices:
            if not isinstance(choice, dict):
                raise self._unusable("a choice that is not a JSON object")
            delta = choice.get("delta")
            content = delta.get("content") if isinstance(delta, dict) else None
            if choice.get("index", 0) == 0 and isinstance(content, str) and content:
                self._parts.append(content)
                self.size += len(content)
        self.cut = self.size > self.most_chars
        return self.cut

    def _read_usage(self, usage: object) -> None:
        counts = (
            [usage.get("prompt_tokens"), usage.get("completion_tokens")]
            if isinstance(usage, dict)
            else []
        )
        if len(counts) == 2 and all(_believable(count) for count in counts):
            self.usage = (cast(int, counts[0]), cast(int, counts[1]))
        else:
            self.usage, self.bad_usage = None, json.dumps(usage, default=str)

    def _unusable(self, what: str) -> ModelUnreachable:
        return ModelUnreachable(
            f"model endpoint {self.endpoint} gave an unusable reply: {what} in the reply stream"
        )


def _believable(count: object) -> bool:
    return (
        isinstance(count, int) and not isinstance(count, bool) and 0 <= count <= MAX_REPORTED_TOKENS
    )
