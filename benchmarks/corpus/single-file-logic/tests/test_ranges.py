from ranges import merge_ranges, total_length


def test_overlapping_ranges_merge() -> None:
    assert merge_ranges([(5, 8), (1, 4), (3, 6)]) == [(1, 8)]


def test_touching_ranges_merge() -> None:
    assert merge_ranges([(1, 3), (3, 5)]) == [(1, 5)]


def test_disjoint_ranges_stay_apart() -> None:
    assert merge_ranges([(7, 9), (1, 2)]) == [(1, 2), (7, 9)]


def test_total_length_counts_touching_ranges_once() -> None:
    assert total_length([(0, 2), (2, 4), (10, 11)]) == 5
