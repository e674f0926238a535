"""Daily highs from the weather station's feed."""

import stationfeed


def daily_high(station: str) -> float:
    readings = stationfeed.readings(station, hours=24)
    return max(r.temperature for r in readings)
