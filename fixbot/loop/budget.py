"""What model calls cost, from the token counts and the config's price table (pure).

A price is looked up by the model name fixbot asked for, then by the name the server answered
with, then by the longest configured name the answered one starts with (servers append dates:
gpt-4o-mini-2024-07-18). No price: the cost is unknown, which a money cap does not accept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from fixbot.config import Config, Price


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
