import pytest

from backoff import delays


def test_delays_double() -> None:
    first, second = delays(2, base=1.0)
    assert 1.0 <= first < 2.0 and 2.0 <= second < 4.0


# Flaky on purpose: the bound is the jitter's average, so each case fails about half the time.
@pytest.mark.parametrize("trial", range(24))
def test_total_wait_stays_under_budget(trial: int) -> None:
    assert sum(delays(4, base=0.1)) <= 0.1 * (15 + 7.5)
