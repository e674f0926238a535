"""What model calls cost, and the one place that asks the model within the budgets.

`ask` makes every model call of the loop (the request built for the model's context window,
secrets redacted, the money cap's worst case checked first, the deadline bounding the call)
and returns what it cost, or why it was not made. A server that refuses the request as too
long for the window teaches the window it names: the request is built again for it and asked
once more; a second refusal is a reason, never "model unreachable".

A price is looked up by the model name fixbot asked for, then by the name the server answered
with, then by the longest configured name the answered one starts with (servers append dates:
gpt-4o-mini-2024-07-18). No price: the cost is unknown, which a money cap does not accept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from fixbot import log
from fixbot.config import Config, Price
from fixbot.loop.deps import Deps
from fixbot.loop.state import FixState
from fixbot.loop.stuck import STRIKES_TO_ESCALATE
from fixbot.model import MAX_REPLY_TOKENS, ContextExceeded, DeadlinePassed, Model, Reply
from fixbot.prompts import Message
from fixbot.records import EscalationKind
from fixbot.secrets import redact


def price_for(prices: Mapping[str, Price], *names: str) -> Price | None:
    for name in names:
        if name in prices:
            return prices[name]
    for name in names:
        starts = [known for known in prices if name.startswith(known)]
        if starts:
            return prices[max(starts, key=len)]
    return None


def dollars(price: Price | None, prompt_tokens: int, completion_tokens: int) -> float:
    if price is None:
        return 0.0
    return (prompt_tokens * price.prompt + completion_tokens * price.completion) / 1_000_000


def unpriced(config: Config, models: Iterable[str | None]) -> list[str]:
    """The models a money cap would need a price for and has none."""
    if config.budget.cost_usd is None:
        return []
    return [m for m in models if m and price_for(config.prices, m) is None]


def worst_prompt_tokens(text: str) -> int:
    """At most how many tokens a prompt may count: code runs nearer 3 characters a token than
    the 4 the local estimate assumes, so the money cap's check assumes 3."""
    return len(text) // 3 + 1


@dataclass(frozen=True)
class Asked:
    reply: Reply
    cost_usd: float  # what the call cost, from the price table (0 without a price)


@dataclass(frozen=True)
class Refused:
    reason: str  # why the call was not made: the money cap's worst case, or the deadline


def model_for(deps: Deps, attempts_so_far: int) -> Model:
    """The model, or the strong one once `strong_after` attempts have failed."""
    if deps.strong_model is not None and attempts_so_far >= deps.config.strong_after:
        return deps.strong_model
    return deps.model


Build = Callable[[int], list[Message]]  # the room (estimated tokens) -> the messages


def ask(
    state: FixState,
    deps: Deps,
    model: Model,
    build: Build,
    temperature: float | None = None,
    reply_tokens: int = MAX_REPLY_TOKENS,
) -> Asked | Refused:
    """One model call (its messages built for the model's window, secrets redacted, bounded
    by the deadline) and what it cost; or, instead of a call that could overspend the money
    cap or outlive the deadline, or one the window cannot hold, why not."""
    messages, reserve = _fitted(model, build, reply_tokens, deps)
    refused = _over_the_cap(state, deps, model, messages, reserve)
    if refused is not None:
        return refused
    try:
        reply = _call(state, model, messages, temperature, reserve)
    except ContextExceeded as exc:
        sent = sum(len(m["content"]) for m in messages)
        model.window = model.window.learned(exc.refusal, sent)
        log.get().warning(
            "context_refused",
            model=model.name,
            window=model.window.tokens,
            chars_per_token=round(model.window.chars_per_token, 2),
            error=str(exc),
        )
        messages, reserve = _fitted(model, build, reply_tokens, deps)
        try:
            reply = _call(state, model, messages, temperature, reserve)
        except ContextExceeded as again:
            return Refused(
                f"the model's context window ({model.window.tokens} tokens, from "
                f"{model.window.source}) cannot hold the shortest request: {again}"
            )
        except DeadlinePassed as late:
            return Refused(f"the wall clock: {late}")
    except DeadlinePassed as exc:
        return Refused(f"the wall clock: {exc}")
    price = price_for(deps.config.prices, model.name, reply.model)
    return Asked(reply, dollars(price, reply.prompt_tokens, reply.completion_tokens))


def _fitted(model: Model, build: Build, reply_tokens: int, deps: Deps) -> tuple[list[Message], int]:
    """The messages built for the model's window (secrets redacted), and the reply reserve."""
    reserve = min(reply_tokens, model.window.reply_tokens)
    messages = build(model.window.room(reserve, messages=4))
    for message in messages:
        message["content"] = redact(message["content"], known=deps.known_secrets)
    return messages, reserve


def _over_the_cap(
    state: FixState, deps: Deps, model: Model, messages: list[Message], reserve: int
) -> Refused | None:
    """The worst this call can cost (its prompt, counted generously, and a reply of the most
    tokens it asks for) must fit what is left: never a call that could overspend."""
    if not state["cost_budget"]:
        return None
    price = price_for(deps.config.prices, model.name)
    worst = dollars(price, prompt_tokens(messages), reserve)
    left = state["cost_budget"] - state["cost_used"]
    if worst <= left:
        return None
    return Refused(
        f"the next call could cost up to ${worst:.4f}; ${left:.4f} is left "
        f"of ${state['cost_budget']:.4f}"
    )


def _call(
    state: FixState,
    model: Model,
    messages: list[Message],
    temperature: float | None,
    reserve: int,
) -> Reply:
    return model.complete(
        messages, temperature=temperature, deadline=state["deadline"], max_tokens=reserve
    )


def prompt_tokens(messages: Sequence[Message]) -> int:
    """At most how many tokens these messages count (the money cap's generous estimate)."""
    return sum(worst_prompt_tokens(m["content"]) for m in messages)


def round_size(state: FixState, deps: Deps, messages: Sequence[Message]) -> int:
    """How many candidates the next round asks for at once: `parallel.candidates`, fewer when
    the attempts left or the budgets left cannot pay for that many worst cases (the round's
    prompt, `messages`, counted generously, and the longest reply), and 1 (one at a time) when
    not even two fit."""
    wanted = min(deps.config.parallel.candidates, state["max_iterations"] - state["attempt"])
    if wanted < 2:
        return 1
    prompt = prompt_tokens(messages)
    tokens, spent, fits = state["tokens_used"], state["cost_used"], 0
    for slot in range(wanted):
        model = model_for(deps, state["attempt"] + slot)
        tokens += prompt + MAX_REPLY_TOKENS
        spent += dollars(price_for(deps.config.prices, model.name), prompt, MAX_REPLY_TOKENS)
        if tokens > state["token_budget"] or (
            state["cost_budget"] and spent > state["cost_budget"]
        ):
            break
        fits += 1
    return fits if fits >= 2 else 1


@dataclass(frozen=True)
class Limit:
    """A bound the run reached: what kind, and a sentence for the human (never parsed)."""

    kind: EscalationKind
    reason: str


def limit_reached(state: FixState, now: float) -> Limit | None:
    """The first bound this state has reached (stuck, attempts, tokens, money, wall clock),
    or None: the router asks before every retry, and the escalation names what it found."""
    if state["strikes"] >= STRIKES_TO_ESCALATE:
        return Limit("stuck", f"stuck: {state['stuck_reason']}")
    if state["attempt"] >= state["max_iterations"]:
        return Limit(
            "iterations",
            f"iterations: {state['attempt']} of {state['max_iterations']} attempts used",
        )
    if state["tokens_used"] >= state["token_budget"]:
        return Limit(
            "budget", f"budget: {state['tokens_used']} of {state['token_budget']} tokens used"
        )
    if state["cost_budget"] and state["cost_used"] >= state["cost_budget"]:
        return Limit(
            "budget", f"budget: ${state['cost_used']:.4f} of ${state['cost_budget']:.4f} spent"
        )
    if now >= state["deadline"]:
        return Limit("budget", "budget: the wall-clock deadline passed")
    return None
