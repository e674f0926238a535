from calc import add, clamp, mean


def test_add() -> None:
    assert add(2, 3) == 5


def test_mean() -> None:
    assert mean([1.0, 2.0, 3.0]) == 2.0


def test_mean_single() -> None:
    assert mean([4.0]) == 4.0


def test_clamp() -> None:
    assert clamp(15, 0, 10) == 10
