"""model/window.py: what servers say about their context window, in their own words, and the
window a refusal teaches."""

from __future__ import annotations

import pytest

from fixbot.model.window import (
    DEFAULT_CONTEXT_TOKENS,
    MAX_REPLY_TOKENS,
    OLLAMA_DEFAULT_CONTEXT,
    ContextRefusal,
    ContextWindow,
    context_refusal,
    estimate_tokens,
    window_in,
)

# The messages real servers answer a request too long for the model with.
REFUSALS = [
    (  # OpenAI, vLLM (older), llama-cpp-python's server
        "This model's maximum context length is 8192 tokens. However, you requested 16000 "
        "tokens (13945 in the messages, 2048 in the completion). Please reduce the length of "
        "the messages or completion.",
        None,
        ContextRefusal(8192, 13945),
    ),
    (  # vLLM
        "This model's maximum context length is 4096 tokens. However, your request has 5000 "
        "input tokens. Please reduce the length of the input messages.",
        None,
        ContextRefusal(4096, 5000),
    ),
    (  # vLLM, a reply reserve too large for what is left
        "'max_tokens' or 'max_completion_tokens' is too large: 8192. This model's maximum "
        "context length is 8192 tokens and your request has 1210 input tokens "
        "(8192 > 8192 - 1210).",
        None,
        ContextRefusal(8192, 1210),
    ),
    (  # llama.cpp's server: the counts in the error object
        "the request exceeds the available context size. try increasing the context size "
        "or enable context shift",
        {"type": "exceed_context_size_error", "n_prompt_tokens": 14429, "n_ctx": 8192},
        ContextRefusal(8192, 14429),
    ),
    (  # llama.cpp's server, newer
        "request (4390 tokens) exceeds the available context size (4096 tokens), try increasing it",
        {"type": "exceed_context_size_error"},
        ContextRefusal(4096, 4390),
    ),
    ("Requested tokens (2285) exceed context window of 2048", None, ContextRefusal(2048, 2285)),
    ("prompt is too long: 210000 tokens > 200000 maximum", None, ContextRefusal(200000, 210000)),
    ("Context size has been exceeded.", {"type": "server_error"}, ContextRefusal(None, None)),
]


@pytest.mark.parametrize(("message", "body", "expected"), REFUSALS)
def test_a_refusal_names_the_window_and_the_count(
    message: str, body: dict[str, object] | None, expected: ContextRefusal
) -> None:
    assert context_refusal(message, body) == expected


@pytest.mark.parametrize(
    "message",
    ["The model `gpt-9` does not exist", "Invalid API key", "script exhausted", "rate limited"],
)
def test_other_errors_are_not_refusals(message: str) -> None:
    assert context_refusal(message, {"type": "invalid_request_error"}) is None


def test_the_estimate_errs_on_the_safe_side_for_code() -> None:
    code = "def f(xs):\n    return [x * 2 for x in xs if x > 0]\n"
    assert estimate_tokens(code) == -(-len(code) // 3)  # three characters a token, not four


def test_the_reply_reserve_is_a_quarter_of_a_small_window_and_2048_at_most() -> None:
    assert ContextWindow(8192).reply_tokens == MAX_REPLY_TOKENS
    assert ContextWindow(2048).reply_tokens == 512
    assert ContextWindow(128_000).reply_tokens == MAX_REPLY_TOKENS


def test_the_room_leaves_the_reply_the_template_and_a_margin() -> None:
    assert ContextWindow(8192).room(2048, messages=4) == 8192 - 2048 - 4 * 8 - 410
    assert ContextWindow(2048).room(2048) == 0  # nothing left is nothing, never negative


def test_a_refusal_teaches_the_window_and_the_real_characters_per_token() -> None:
    sent = 30_000  # characters: the server counted 12,000 tokens of them, 2.5 a token
    learned = ContextWindow(16_384).learned(ContextRefusal(8192, 12_000), sent)
    assert (learned.tokens, learned.source) == (8192, "a refusal")
    assert learned.chars_per_token == pytest.approx(2.5)
    # The room is counted in the estimate's tokens (3 characters): 2.5/3 of the real room.
    assert learned.room(2048, 4) == int((8192 - 2048 - 32 - 410) * 2.5 / 3)
    # A refusal that says nothing: a quarter smaller.
    assert ContextWindow(8192).learned(ContextRefusal(None, None), sent).tokens == 6144
    # One naming the window we assumed and no count: our count was off, a quarter smaller.
    assert ContextWindow(8192).learned(ContextRefusal(8192, None), sent).tokens == 6144


# The metadata endpoints state the window in their own fields.
def test_vllm_and_lm_studio_list_their_window_in_v1_models() -> None:
    vllm = {"object": "list", "data": [{"id": "qwen", "max_model_len": 32768}]}
    assert window_in(vllm, "qwen") == 32768
    other = {"data": [{"id": "a", "max_model_len": 4096}, {"id": "b", "max_model_len": 8192}]}
    assert window_in(other, "b") == 8192 and window_in(other, "c") is None
    lm_studio = {"data": [{"id": "m", "loaded_context_length": 4096, "max_context_length": 32768}]}
    assert window_in(lm_studio, "m") == 4096  # what is loaded, not what the model could take
    silent = {"data": [{"id": "fixbot-local", "object": "model", "owned_by": "me"}]}
    assert window_in(silent, "fixbot-local") is None  # llama-cpp-python says nothing


def test_llama_cpp_states_its_window_in_props() -> None:
    assert window_in({"default_generation_settings": {"n_ctx": 4096}}, "m") == 4096
    assert window_in({"n_ctx": 65536, "total_slots": 4}, "m") == 65536


def test_ollama_serves_its_num_ctx_else_its_small_default() -> None:
    shown = {
        "parameters": "num_ctx 8192\nstop <|im_end|>",
        "model_info": {"qwen2.context_length": 32768},
    }
    assert window_in(shown, "qwen2.5-coder") == 8192
    default = {"parameters": "stop <|im_end|>", "model_info": {"qwen2.context_length": 32768}}
    assert window_in(default, "qwen2.5-coder") == OLLAMA_DEFAULT_CONTEXT  # it cuts silently


def test_nothing_stated_is_the_default() -> None:
    assert ContextWindow().tokens == DEFAULT_CONTEXT_TOKENS == 8192
    assert window_in("not json", "m") is None and window_in({"error": "no"}, "m") is None
