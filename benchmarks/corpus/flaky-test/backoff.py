"""Retry delays: exponential backoff with random jitter."""

import random


def delays(retries: int, base: float = 0.1) -> list[float]:
    """Each delay doubles, plus up to as much again of random jitter."""
    return [base * 2**n * (1 + random.random()) for n in range(retries)]
