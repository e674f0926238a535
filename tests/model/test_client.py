"""OpenAIModel against a real local HTTP server, through the real openai SDK (no mocks)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from fixbot.errors import EnvironmentProblem, ModelUnreachable
from fixbot.model.client import (
    ContextExceeded,
    DeadlinePassed,
    Model,
    OpenAIModel,
    Reply,
    backoff_delay,
)
from fixbot.model.window import ContextRefusal, ContextWindow
from tests.fake_openai import Fail, ScriptedOpenAI, ScriptEntry, unused_local_url

SECRET = "sk-fixbot-test-DISTINCTIVE-7f3a9c"
MESSAGES = [
    {"role": "system", "content": "You fix builds."},
    {"role": "user", "content": "The test fails."},
]


@contextmanager
def model_at(base_url: str, **kwargs: Any) -> Iterator[tuple[OpenAIModel, list[float]]]:
    """An OpenAIModel that records its backoff sleeps instead of sleeping."""
    sleeps: list[float] = []
    options: dict[str, Any] = {"api_key": None, "timeout_seconds": 5.0, **kwargs}
    with OpenAIModel(model="test-model", base_url=base_url, sleep=sleeps.append, **options) as m:
        yield m, sleeps


def test_reply_carries_text_model_and_server_usage() -> None:
    with ScriptedOpenAI(["here is a diff"]) as server, model_at(server.base_url) as (model, _):
        reply = model.complete(MESSAGES, temperature=0.2)

    assert reply == Reply(
        text="here is a diff",
        model="test-model",
        prompt_tokens=6,  # the fake counts words
        completion_tokens=4,
        estimated=False,
    )
    assert server.requests == [
        {
            "model": "test-model",
            "messages": MESSAGES,
            "temperature": 0.2,
            "max_tokens": 2048,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
    ]
    assert server.completions == 1


def test_temperature_is_omitted_when_not_given() -> None:
    with ScriptedOpenAI(["ok"]) as server, model_at(server.base_url) as (model, _):
        model.complete(MESSAGES)

    assert "temperature" not in server.requests[0]


def test_missing_usage_is_estimated_from_characters() -> None:
    with (
        ScriptedOpenAI(["12345"], usage=False) as server,
        model_at(server.base_url) as (model, _),
    ):
        reply = model.complete(MESSAGES)

    prompt_chars = len("You fix builds.") + len("The test fails.")  # 30
    assert (reply.prompt_tokens, reply.completion_tokens) == (-(-prompt_chars // 3), 2)
    assert reply.estimated


def test_empty_content_becomes_empty_text() -> None:
    with ScriptedOpenAI([""]) as server, model_at(server.base_url) as (model, _):
        assert model.complete(MESSAGES).text == ""


def test_rate_limit_and_server_error_are_retried_with_backoff() -> None:
    script: list[ScriptEntry] = [Fail(429, retry_after=7), Fail(500), "finally"]
    with (
        ScriptedOpenAI(script) as server,
        model_at(server.base_url, backoff_seconds=0.5) as (model, sleeps),
    ):
        reply = model.complete(MESSAGES)

    assert reply.text == "finally"
    assert len(server.requests) == 3
    assert sleeps == [7.0, 1.0]  # Retry-After honoured, then 0.5 * 2**1


def test_backoff_is_capped() -> None:
    assert [backoff_delay(n, backoff_seconds=1.0, retry_after=None) for n in range(7)] == [
        1.0,
        2.0,
        4.0,
        8.0,
        16.0,
        30.0,
        30.0,
    ]
    assert backoff_delay(0, backoff_seconds=1.0, retry_after=600) == 60.0


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_fail_at_once_naming_status_and_message(status: int) -> None:
    script: list[ScriptEntry] = [Fail(status, f"computer says no ({status})"), "never sent"]
    with (
        ScriptedOpenAI(script) as server,
        model_at(server.base_url) as (model, sleeps),
        pytest.raises(ModelUnreachable) as caught,
    ):
        model.complete(MESSAGES)

    assert len(server.requests) == 1
    assert sleeps == []
    assert f"HTTP {status}" in str(caught.value)
    assert f"computer says no ({status})" in str(caught.value)
    assert isinstance(caught.value, EnvironmentProblem)


def test_retries_spent_on_server_errors_name_endpoint_and_last_error() -> None:
    script = [Fail(503), Fail(502), Fail(500, "still broken")]
    with (
        ScriptedOpenAI(script) as server,
        model_at(server.base_url, max_retries=2) as (model, sleeps),
        pytest.raises(ModelUnreachable) as caught,
    ):
        model.complete(MESSAGES)

    assert len(server.requests) == 3
    assert len(sleeps) == 2
    assert server.base_url in str(caught.value)
    assert "HTTP 500: still broken" in str(caught.value)


def test_unreachable_endpoint_is_tried_max_retries_plus_one_times() -> None:
    url = unused_local_url()
    with model_at(url, max_retries=3) as (model, sleeps), pytest.raises(ModelUnreachable) as caught:
        model.complete(MESSAGES)

    assert sleeps == [1.0, 2.0, 4.0]  # three retries after the first attempt
    assert url in str(caught.value)
    assert "4 attempt" in str(caught.value)


def test_slow_server_times_out_is_retried_then_unreachable() -> None:
    with (
        ScriptedOpenAI(["too late", "too late"], delay_seconds=5.0) as server,
        model_at(server.base_url, timeout_seconds=0.2, max_retries=1) as (model, sleeps),
        pytest.raises(ModelUnreachable) as caught,
    ):
        model.complete(MESSAGES)

    assert len(server.requests) == 2
    assert server.completions == 0
    assert sleeps == [1.0]
    assert "timed out" in str(caught.value)


def test_api_key_never_appears_in_repr_or_errors() -> None:
    # A careless server that echoes the key back in its error message.
    script = [Fail(500, f"bad key {SECRET}"), Fail(401, f"Incorrect API key provided: {SECRET}")]
    with (
        ScriptedOpenAI(script) as server,
        model_at(server.base_url, api_key=SECRET) as (model, _),
        pytest.raises(ModelUnreachable) as caught,
    ):
        assert SECRET not in repr(model)
        model.complete(MESSAGES)

    assert "HTTP 401" in str(caught.value)
    assert SECRET not in str(caught.value)
    assert SECRET not in repr(caught.value)

    url = unused_local_url()
    with (
        model_at(url, api_key=SECRET, max_retries=0) as (model, _),
        pytest.raises(ModelUnreachable) as unreachable,
    ):
        model.complete(MESSAGES)
    assert SECRET not in str(unreachable.value)


def test_callable_script_entries_answer_from_the_request() -> None:
    def echo_last(body: dict[str, Any]) -> str | Fail:
        return str(body["messages"][-1]["content"]).upper()

    with ScriptedOpenAI([echo_last]) as server, model_at(server.base_url) as (model, _):
        assert model.complete(MESSAGES).text == "THE TEST FAILS."


def test_exhausted_script_is_a_client_error() -> None:
    with (
        ScriptedOpenAI([]) as server,
        model_at(server.base_url) as (model, _),
        pytest.raises(ModelUnreachable, match="script exhausted"),
    ):
        model.complete(MESSAGES)


def test_openai_model_satisfies_the_protocol() -> None:
    with model_at(unused_local_url()) as (model, _):
        typed: Model = model
        assert typed.name == "test-model"


def test_a_hanging_server_cannot_hold_a_call_past_the_deadline() -> None:
    import threading
    import time

    release = threading.Event()

    def hang(body: dict[str, Any]) -> str:
        release.wait(30)
        return "too late"

    with ScriptedOpenAI([hang, hang, hang]) as server:
        model = OpenAIModel(model="m", api_key="k", base_url=server.base_url, timeout_seconds=120)
        start = time.monotonic()
        try:
            with pytest.raises(DeadlinePassed, match="deadline passed"):
                model.complete([{"role": "user", "content": "hi"}], deadline=time.time() + 1.5)
        finally:
            release.set()
            model.close()
        assert time.monotonic() - start < 10  # not 120 s per try, not five tries


def test_a_deadline_already_past_makes_no_request() -> None:
    import time

    with ScriptedOpenAI(["never"]) as server:
        model = OpenAIModel(model="m", api_key="k", base_url=server.base_url)
        with pytest.raises(DeadlinePassed):
            model.complete([{"role": "user", "content": "hi"}], deadline=time.time() - 1)
        model.close()
        assert server.requests == []


@pytest.mark.parametrize("refusal", ["openai", "llama.cpp"])
def test_a_request_too_long_for_the_window_is_context_exceeded_never_unreachable(
    refusal: str,
) -> None:
    long = [{"role": "user", "content": "x" * 4_000}]  # 2,000 tokens to the fake, and 2,048
    with (
        ScriptedOpenAI(["never"], window=3_000, refusal=refusal) as server,
        model_at(server.base_url) as (model, sleeps),
        pytest.raises(ContextExceeded) as refused,
    ):
        model.complete(long)
    assert not isinstance(refused.value, ModelUnreachable)  # not an environment error, exit 3
    assert refused.value.refusal == ContextRefusal(3_000, 2_004)
    assert "too long for the model's context window" in str(refused.value)
    assert len(server.refused) == 1 and sleeps == []  # asked once: a retry as is cannot fit


def test_the_window_is_the_configured_one_else_what_the_endpoint_states() -> None:
    with ScriptedOpenAI([], model_card={"max_model_len": 4096}) as server:
        with model_at(server.base_url, context_tokens=16_384) as (configured, _):
            assert configured.window == ContextWindow(16_384, "configured")
        with model_at(server.base_url) as (model, _):
            assert model.window == ContextWindow()  # nothing asked yet: the default
            found = model.discover_window()
    assert found.tokens == 4096 and model.window is found
    assert found.source == "the endpoint (models)"


def test_an_endpoint_that_states_no_window_leaves_the_default() -> None:
    # /v1/models without a window field, /props and /api/show not there (404).
    with ScriptedOpenAI([]) as server, model_at(server.base_url) as (model, _):
        assert model.discover_window() == ContextWindow()
    with model_at(unused_local_url(), max_retries=0) as (nowhere, _):
        assert nowhere.discover_window() == ContextWindow()  # unreachable: the default too


def test_a_try_after_a_timeout_waits_twice_as_long() -> None:
    # The server takes 3 s; the first try may take 2 s, the second 4 s (a second wait of
    # 2 s, the per-call timeout, would time out again, and again on every retry).
    with (
        ScriptedOpenAI(["late", "in time"], delay_seconds=3.0) as server,
        model_at(server.base_url, timeout_seconds=2.0, max_retries=1) as (model, sleeps),
    ):
        reply = model.complete(MESSAGES)
    assert reply.text == "in time" and len(server.requests) == 2
    assert sleeps == [1.0]


def test_a_slow_reply_that_keeps_coming_is_waited_for_past_the_per_try_timeout() -> None:
    # Twelve words 0.25 s apart: 3 s in all, six times the 0.5 s timeout, but never silent
    # for 0.5 s. A slow CPU server answers so: asked once, never abandoned and asked again.
    text = "the fix is to return the sum of the two values, not their difference"
    with (
        ScriptedOpenAI([text], chunk_seconds=0.25) as server,
        model_at(server.base_url, timeout_seconds=0.5, max_retries=2) as (model, sleeps),
    ):
        reply = model.complete(MESSAGES)
    assert reply.text == text and not reply.estimated
    assert len(server.requests) == 1 and sleeps == [] and server.hung_up == 0


def test_a_reply_that_stops_coming_is_cut_and_asked_again_with_twice_the_patience() -> None:
    with (
        ScriptedOpenAI(["half of a reply and then", "a whole reply"], stall_after=3) as server,
        model_at(server.base_url, timeout_seconds=0.5, max_retries=1) as (model, sleeps),
    ):
        reply = model.complete(MESSAGES)
        hung_up = server.hung_up
    assert reply.text == "a whole reply"  # no word of the cut reply is kept
    assert len(server.requests) == 2 and sleeps == [1.0]
    assert hung_up == 1  # the abandoned stream was closed: the server can stop generating


def test_a_reply_that_stops_on_every_try_names_the_silence() -> None:
    with (
        ScriptedOpenAI(["one two three four"] * 2, stall_after=1) as server,
        model_at(server.base_url, timeout_seconds=0.3, max_retries=1) as (model, _),
        pytest.raises(ModelUnreachable, match=r"2 attempt\(s\); last error: timed out after 0.6 s"),
    ):
        model.complete(MESSAGES)


def test_a_trickling_reply_cannot_hold_a_call_past_the_deadline() -> None:
    import time

    with (
        ScriptedOpenAI(["word " * 200], chunk_seconds=0.2) as server,
        model_at(server.base_url, timeout_seconds=60.0) as (model, _),
    ):
        start = time.monotonic()
        with pytest.raises(DeadlinePassed):
            model.complete(MESSAGES, deadline=time.time() + 1.0)
        assert time.monotonic() - start < 3  # not the 40 s the whole reply would take


def test_a_server_that_ignores_max_tokens_cannot_grow_a_reply_without_end() -> None:
    # 5,000 words asked at most 100 tokens: the reply is cut at 16 characters a token, the
    # stream closed, and the tokens are estimated (the server's usage never came).
    import time

    with (
        ScriptedOpenAI(["word " * 5_000], chunk_seconds=0.002) as server,  # 10 s to send it all
        model_at(server.base_url) as (model, _),
    ):
        reply = model.complete(MESSAGES, max_tokens=100)
        waited = time.monotonic() + 3
        while not server.hung_up and time.monotonic() < waited:
            time.sleep(0.05)  # the server notices at its next write
        hung_up = server.hung_up
    assert reply.text == ("word " * 5_000)[:1_600]
    assert reply.estimated and reply.completion_tokens == 534
    assert hung_up == 1 and len(server.requests) == 1
