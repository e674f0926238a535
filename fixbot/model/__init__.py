"""The model seam: the `Model` protocol, its one OpenAI-compatible client (client.py, the only
`openai` import), and the context window a request must fit (window.py, pure).

    Model / OpenAIModel / Reply       a chat call and what it answered (tokens, cost)
    ContextExceeded / DeadlinePassed  a request the server refused as too long; no time left
    ContextWindow / estimate_tokens   the window's size and the safe-side count of a prompt
"""

from __future__ import annotations

from fixbot.model.client import ContextExceeded, DeadlinePassed, Model, OpenAIModel, Reply
from fixbot.model.window import CHARS_PER_TOKEN, MAX_REPLY_TOKENS, estimate_tokens

__all__ = [
    "CHARS_PER_TOKEN",
    "MAX_REPLY_TOKENS",
    "ContextExceeded",
    "DeadlinePassed",
    "Model",
    "OpenAIModel",
    "Reply",
    "estimate_tokens",
]
