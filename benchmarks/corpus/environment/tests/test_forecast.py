from forecast import daily_high


def test_daily_high_is_a_temperature() -> None:
    assert -90.0 < daily_high("test-station") < 60.0
