"""The model's context window: its size, what a request is estimated to take of it, and what a
server says when it refuses a request as too long. Pure: the model client (client.py) asks the
endpoint; this module only reads what it answered.

    ContextWindow     the window's size and where it was learned, the reply reserve, the room
                      a prompt has, and the window a refusal teaches
    estimate_tokens   the safe-side count for a tokenizer fixbot does not know: 3 characters a
                      token (code and numbers run nearer 3 than the 4 of English prose)
    context_refusal   a server's error -> the window and the prompt tokens it names, or None
    window_in         an endpoint's metadata (/v1/models, /props, /api/show) -> its window
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

DEFAULT_CONTEXT_TOKENS = 8192  # a window nothing said otherwise about: llama.cpp's and vLLM's usual
OLLAMA_DEFAULT_CONTEXT = 2048  # what Ollama gives a model whose Modelfile sets no num_ctx
MAX_REPLY_TOKENS = 2048  # a reply is a diagnosis and an edit; the most a call asks for
MIN_REPLY_TOKENS = 256
CHARS_PER_TOKEN = 3.0
MESSAGE_TOKENS = 8  # the chat template's own tokens around each message
MARGIN = 0.05  # of the window, for what the estimate misses


def estimate_tokens(text: str) -> int:
    """At most how many tokens `text` takes, for a tokenizer fixbot does not know."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class ContextRefusal:
    """What a server's "too long" error says: the window, and the prompt tokens it counted
    (None where it does not say)."""

    window: int | None
    prompt_tokens: int | None


@dataclass(frozen=True)
class ContextWindow:
    """The model's window as fixbot knows it, and how fixbot's estimate compares with the
    server's count (`chars_per_token`: what a refusal showed, never more than the estimate's)."""

    tokens: int = DEFAULT_CONTEXT_TOKENS
    source: str = "default"  # configured | the endpoint's metadata | a refusal | default
    chars_per_token: float = CHARS_PER_TOKEN

    @property
    def reply_tokens(self) -> int:
        """The reply reserve (`max_tokens`): a quarter of the window, within bounds."""
        return max(MIN_REPLY_TOKENS, min(MAX_REPLY_TOKENS, self.tokens // 4))

    def room(self, reply_tokens: int, messages: int = 2) -> int:
        """How many tokens, as `estimate_tokens` counts them, the messages of a request may
        take in all when `reply_tokens` are reserved for the reply."""
        real = self.tokens - reply_tokens - messages * MESSAGE_TOKENS
        real -= math.ceil(self.tokens * MARGIN)
        return max(0, int(real * self.chars_per_token / CHARS_PER_TOKEN))

    def learned(self, refusal: ContextRefusal, sent_chars: int) -> ContextWindow:
        """The window a refusal of a request of `sent_chars` characters teaches: the size it
        names (else a quarter smaller), and the characters per token its count shows."""
        tokens = refusal.window or self.tokens * 3 // 4
        ratio = self.chars_per_token
        if refusal.prompt_tokens:
            ratio = min(ratio, sent_chars / refusal.prompt_tokens)
        elif refusal.window is not None and refusal.window >= self.tokens:
            tokens = self.tokens * 3 // 4  # it names the window we assumed: our count was off
        return replace(self, tokens=max(256, tokens), source="a refusal", chars_per_token=ratio)


# --- what a refusal says --------------------------------------------------------------------

_SAYS_TOO_LONG = re.compile(
    r"context (?:length|window|size)|maximum context|too many tokens|prompt is too long"
    r"|exceed_context_size|context_length_exceeded|exceeds? (?:the )?(?:model'?s? )?(?:max|limit)",
    re.IGNORECASE,
)
# OpenAI, vLLM and llama-cpp-python: "This model's maximum context length is 8192 tokens.
# However, you requested 16000 tokens (13945 in the messages, 2048 in the completion)" or
# (vLLM) "... However, your request has 9000 input tokens" / "... and your request has 1210
# input tokens (8192 > 8192 - 1210)".
_OPENAI = re.compile(
    r"maximum context length is (?P<window>\d+) tokens.*?(?:requested|request has) "
    r"(?P<requested>\d+) (?P<input>input )?tokens(?: \((?P<messages>\d+) in the messages)?",
    re.IGNORECASE | re.DOTALL,
)
_WINDOW_ONLY = re.compile(r"maximum context length is (?P<window>\d+)", re.IGNORECASE)
# llama.cpp's server: "request (4390 tokens) exceeds the available context size (4096 tokens)"
# (older: "the request exceeds the available context size", the counts in the error's body);
# llama-cpp-python itself: "Requested tokens (2285) exceed context window of 2048";
# Anthropic: "prompt is too long: 210000 tokens > 200000 maximum".
_COUNTS = (
    re.compile(
        r"request \((?P<prompt>\d+) tokens\) exceeds the available context size \((?P<window>\d+)"
    ),
    re.compile(r"Requested tokens \((?P<prompt>\d+)\) exceed context window of (?P<window>\d+)"),
    re.compile(r"prompt is too long: (?P<prompt>\d+) tokens > (?P<window>\d+)"),
)


def context_refusal(message: str, body: Mapping[str, Any] | None = None) -> ContextRefusal | None:
    """What a server's error says about a request too long for the model, or None when the
    error is about something else. `body`: the error object, where llama.cpp puts its counts."""
    fields = body or {}
    kind = " ".join(str(fields.get(k, "")) for k in ("type", "code"))
    if not _SAYS_TOO_LONG.search(message) and not _SAYS_TOO_LONG.search(kind):
        return None
    found = _OPENAI.search(message)
    if found:
        messages = found["messages"] or (found["requested"] if found["input"] else None)
        return ContextRefusal(int(found["window"]), _number(messages))
    for pattern in _COUNTS:
        counted = pattern.search(message)
        if counted:
            return ContextRefusal(int(counted["window"]), int(counted["prompt"]))
    window = _WINDOW_ONLY.search(message)
    return ContextRefusal(
        _number(fields.get("n_ctx")) or (int(window["window"]) if window else None),
        _number(fields.get("n_prompt_tokens")),
    )


def _number(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value > 0:
        return value
    if isinstance(value, str) and value.isdigit() and int(value) > 0:
        return int(value)
    return None


# --- what an endpoint's metadata says ----------------------------------------------------

# The fields servers state a served model's window in: vLLM's /v1/models `max_model_len`,
# LM Studio's `loaded_context_length` (then `max_context_length`), OpenRouter-like
# `context_length`, llama.cpp's /props `n_ctx` (top level, or its default generation settings).
_WINDOW_KEYS = ("max_model_len", "loaded_context_length", "context_length", "context_window")
_FALLBACK_KEYS = ("max_context_length",)
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


def window_in(payload: object, model: str) -> int | None:
    """The window an endpoint's answer states for `model`: a /v1/models list (its entry for
    the model, or its only entry), llama.cpp's /props, or Ollama's /api/show; None if none."""
    if not isinstance(payload, Mapping):
        return None
    if isinstance(payload.get("data"), list):
        entries = [e for e in payload["data"] if isinstance(e, Mapping)]
        named = [e for e in entries if e.get("id") == model] or entries[:1] * (len(entries) == 1)
        return next((w for w in map(_stated, named) if w), None)
    if "model_info" in payload or "parameters" in payload:
        return _ollama(payload)
    return _stated(payload)


def _stated(entry: Mapping[str, Any]) -> int | None:
    for key in (*_WINDOW_KEYS, "n_ctx", *_FALLBACK_KEYS):
        found = _number(entry.get(key))
        if found:
            return found
    settings = entry.get("default_generation_settings")
    return _number(settings.get("n_ctx")) if isinstance(settings, Mapping) else None


def _ollama(payload: Mapping[str, Any]) -> int:
    """Ollama serves the window its Modelfile's num_ctx says, else its own small default
    (whatever the model was trained for), and silently cuts a longer prompt."""
    parameters = payload.get("parameters")
    num_ctx = _NUM_CTX.search(parameters) if isinstance(parameters, str) else None
    info = payload.get("model_info")
    trained = [
        found
        for key, value in (info.items() if isinstance(info, Mapping) else ())
        if str(key).endswith(".context_length") and (found := _number(value))
    ]
    served = int(num_ctx[1]) if num_ctx else OLLAMA_DEFAULT_CONTEXT
    return min([served, *trained])
