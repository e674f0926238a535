"""The model seam: a small `Model` protocol and its OpenAI-compatible implementation.

This is the only module that imports `openai` (and `httpx`, its transport). Every reply is
streamed, and the per-try timeout is how long the server may stay silent: before its first
token (the prompt's prefill) or between two. A slow server that keeps answering is waited for,
however long its whole reply takes (the run's deadline bounds it); one that stops is cut, and
the abandoned stream's connection is closed, so a server that notices stops generating. The
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

import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Protocol, cast

import httpx
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
    from openai.types.completion_usage import CompletionUsage

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Local OpenAI-compatible servers accept any key, but the SDK refuses to start without one.
PLACEHOLDER_API_KEY = "not-needed"
MAX_BACKOFF_SECONDS = 30.0
MAX_RETRY_AFTER_SECONDS = 60.0
# A reply streamed past max_tokens at this many characters a token (far above any tokenizer's
# average) is a server ignoring max_tokens: it is cut there.
REPLY_CHARS_PER_TOKEN = 16

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
    usage: CompletionUsage | None


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
        self._client = openai.OpenAI(
            api_key=api_key or PLACEHOLDER_API_KEY,
            base_url=self.base_url,
            timeout=timeout_seconds,
            max_retries=0,
        )

    def __repr__(self) -> str:
        return f"OpenAIModel(model={self.name!r}, base_url={self.base_url!r})"

    def close(self) -> None:
        self._client.close()

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
        streamed = self._create_with_retries(messages, temperature, deadline, cap)
        model = streamed.model or self.name
        usage = streamed.usage
        if usage is not None:
            return Reply(
                streamed.text, model, usage.prompt_tokens, usage.completion_tokens, estimated=False
            )
        prompt = "".join(message.get("content", "") for message in messages)
        tokens = estimate_tokens(prompt), estimate_tokens(streamed.text)
        return Reply(streamed.text, model, *tokens, estimated=True)

    def _create_with_retries(
        self,
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
            try:
                stream = self._client.chat.completions.create(
                    model=self.name,
                    messages=payload,
                    temperature=openai.omit if temperature is None else temperature,
                    max_tokens=max_tokens,
                    stream=True,
                    stream_options={"include_usage": True},
                    timeout=timeout,  # httpx's read timeout: the longest silence
                )
                return self._drain(stream, deadline, max_tokens * REPLY_CHARS_PER_TOKEN)
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

    def _drain(
        self, stream: Stream[ChatCompletionChunk], deadline: float | None, most: int
    ) -> _Streamed:
        """The streamed reply, read to its end or to `most` characters (a server that ignores
        `max_tokens` cannot grow it without end: what came is the reply, cut as a reply at its
        token cap is). The deadline closes the stream from a timer (a server sending a token
        now and then cannot hold the call past it); a silence longer than the try's timeout, a
        dropped connection or a reply that is no chat completion stream ends the try, as the
        SDK's timeout and connection errors do before the stream. It is closed however it ends."""
        watchdog = None
        if deadline is not None:
            watchdog = threading.Timer(max(0.0, deadline - time.time()), stream.close)
            watchdog.daemon = True
            watchdog.start()
        parts: list[str] = []
        model, usage, chunks, size = "", None, 0, 0
        try:
            for chunk in stream:
                chunks += 1
                model = chunk.model or model
                usage = chunk.usage or usage
                for choice in chunk.choices:
                    if choice.index == 0 and choice.delta.content:
                        parts.append(choice.delta.content)
                        size += len(choice.delta.content)
                if size > most:
                    log.warning("model_reply_cut", endpoint=self.base_url, characters=size)
                    parts, usage = ["".join(parts)[:most]], None  # its usage never came
                    break
        except httpx.TimeoutException:
            raise openai.APITimeoutError(stream.response.request) from None
        except (httpx.HTTPError, httpx.StreamError) as err:
            self._time_left(deadline)  # the watchdog closed it: the deadline's
            raise openai.APIConnectionError(
                message=f"the reply stream broke off: {err or type(err).__name__}",
                request=stream.response.request,
            ) from None
        finally:
            if watchdog is not None:
                watchdog.cancel()
            stream.close()
        self._time_left(deadline)  # closed by the watchdog as it ended: still the deadline's
        if not chunks:
            raise ModelUnreachable(
                f"model endpoint {self.base_url} gave an unusable reply: no chat completion "
                "chunks in the reply stream"
            )
        return _Streamed("".join(parts), model, usage)

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
        elif isinstance(err, openai.APITimeoutError):
            text = f"timed out after {self._timed_out_after:g} s"
        elif isinstance(err, openai.APIConnectionError) and err.__cause__ is not None:
            text = f"connection error: {err.__cause__}"
        else:
            text = err.message
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
        for method, url, body in asks:
            try:
                if method == "get":
                    answer = self._client.get(url, cast_to=object, options={"timeout": 5.0})
                else:
                    answer = self._client.post(
                        url, cast_to=object, body=body, options={"timeout": 5.0}
                    )
            except (openai.APIError, ValueError):
                continue
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
