"""The record-and-replay proxy (benchmarks/replay.py), between fixbot's own streamed model
client and a scripted OpenAI-compatible server, over sockets; and the evidence comparison."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from fixbot.model.client import OpenAIModel
from tests.conftest import ROOT
from tests.fake_openai import Fail, ScriptedOpenAI, unused_local_url

sys.path.insert(0, str(ROOT / "benchmarks"))

import replay

ASK = [{"role": "user", "content": "fix solution.py"}]
OTHER = [{"role": "user", "content": "fix calc.py"}]


@contextmanager
def proxy_at(store: Path, upstream: str, *, replaying: bool) -> Iterator[tuple[replay.Proxy, str]]:
    proxy = replay.Proxy(store, upstream, replaying)
    server = replay.serve(proxy)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield proxy, replay.base_url(server)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def ask(url: str, messages: list[dict[str, str]], temperature: float) -> str:
    with OpenAIModel(model="m", api_key=None, base_url=url, timeout_seconds=5.0) as model:
        return model.complete(messages, temperature=temperature).text


def test_a_replay_answers_each_request_as_recorded_in_order_and_sends_only_new_ones_on(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store.jsonl"
    script = ["first sample", "second sample", "the other task"]
    with ScriptedOpenAI(script) as server:
        with proxy_at(store, server.base_url, replaying=False) as (_, url):
            recorded = [ask(url, ASK, 0.8), ask(url, ASK, 0.8), ask(url, OTHER, 0.0)]
        assert recorded == ["first sample", "second sample", "the other task"]
        assert len(server.requests) == 3
        rows = [json.loads(line) for line in store.read_text().splitlines()]
        assert [row["status"] for row in rows] == [200, 200, 200]

    with ScriptedOpenAI(["a new sample"]) as upstream:
        with proxy_at(store, upstream.base_url, replaying=True) as (proxy, url):
            # The same requests, in another order across keys: each key's n-th is its n-th.
            assert ask(url, OTHER, 0.0) == "the other task"
            assert ask(url, ASK, 0.8) == "first sample"
            assert ask(url, ASK, 0.8) == "second sample"
            assert (proxy.hits, proxy.misses) == (3, 0)
            # A third identical request, and one at another temperature, go to the model.
            assert ask(url, ASK, 0.5) == "a new sample"
            assert proxy.misses == 1
        assert len(upstream.requests) == 1 and upstream.requests[0]["temperature"] == 0.5
    # Replaying stores nothing: the record stays one run's.
    assert len(store.read_text().splitlines()) == 3


def test_an_upstream_error_is_replayed_as_recorded_an_unreachable_upstream_never(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store.jsonl"
    body = json.dumps({"messages": ASK}).encode()
    proxy = replay.Proxy(store, unused_local_url(), replay=False)
    response = proxy.answer("/v1/chat/completions", body)
    assert response.status == 502 and b"the upstream failed" in response.body
    assert not store.exists()
    with ScriptedOpenAI([Fail(429, "slow down")]) as server:
        proxy = replay.Proxy(store, server.base_url, replay=False)
        assert proxy.answer("/v1/chat/completions", body).status == 429
    proxy = replay.Proxy(store, unused_local_url(), replay=True)
    proxy.load()
    response = proxy.answer("/v1/chat/completions", body)
    assert response.status == 429 and b"slow down" in response.body and proxy.hits == 1


def test_a_path_outside_v1_is_asked_at_the_upstreams_root() -> None:
    upstream = "http://127.0.0.1:8011/v1"
    assert replay.upstream_url(upstream, "/v1/chat/completions") == (
        "http://127.0.0.1:8011/v1/chat/completions"
    )
    assert replay.upstream_url(upstream, "/api/show") == "http://127.0.0.1:8011/api/show"
    assert replay.upstream_url(upstream + "/", "/props") == "http://127.0.0.1:8011/props"


def test_the_key_is_the_body_whatever_its_key_order_and_the_path() -> None:
    one = json.dumps({"a": 1, "b": [1, 2]}).encode()
    same = json.dumps({"b": [1, 2], "a": 1}).encode()
    assert replay.request_key("/v1/x", one) == replay.request_key("/v1/x", same)
    assert replay.request_key("/v1/x", one) != replay.request_key("/v1/y", one)
    assert replay.request_key("/v1/x", one) != replay.request_key("/v1/x", b'{"a": 2}')


def evidence(folder: Path, task: str, status: str, attempts: list[dict[str, Any]]) -> None:
    out = folder / task / "fixbot-out"
    out.mkdir(parents=True)
    (out / "evidence.json").write_text(json.dumps({"status": status, "attempts": attempts}))


def attempt(reply: str, verdict: str = "fail", problems: list[str] | None = None) -> dict[str, Any]:
    return {"reply": reply, "problems": problems or [], "verdict": verdict, "diff": "", "n": 1}


def test_compare_names_each_tasks_first_difference_and_counts(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    evidence(a, "Python_2", "fixed", [attempt("x"), attempt("y", "pass")])
    evidence(b, "Python_2", "fixed", [attempt("x"), attempt("y", "pass")])
    evidence(a, "Python_10", "escalated", [attempt("x"), attempt("z", problems=["no change"])])
    evidence(b, "Python_10", "fixed", [attempt("x"), attempt("z", "pass")])
    evidence(a, "Python_3", "escalated", [attempt("x")])
    evidence(b, "Python_3", "escalated", [attempt("x"), attempt("w")])
    evidence(a, "Python_4", "fixed", [attempt("x", "pass")])  # b lacks it: not compared

    lines = replay.compare(a, b)

    assert lines[:3] == [
        "Python_2: fixed vs fixed",
        "Python_3: escalated vs escalated; first differs at attempt 2: only one side made it",
        "Python_10: escalated vs fixed; first differs at attempt 2: problems, verdict",
    ]
    assert lines[3] == f"compared 3: identical 1, diverged 2; fixed 1 ({a}) vs 2 ({b})"


def test_the_cli_refuses_a_replay_without_a_store_and_a_missing_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        replay.main(["serve", "--replay", "--store", str(tmp_path / "none.jsonl")])
    assert exited.value.code == 2
    assert "does not exist (record it first)" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        replay.main(["compare", str(tmp_path), str(tmp_path / "gone")])
    assert exited.value.code == 2
    assert "gone: no such folder" in capsys.readouterr().err
