"""Helpers for closed integer-free intervals given as (start, end) pairs with start <= end."""


def merge_intervals(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Merge overlapping or touching intervals; the result is sorted by start.

    >>> merge_intervals([(5, 7), (1, 3), (2, 4), (7, 8)])
    [(1, 4), (5, 8)]
    """
    raise NotImplementedError


def total_covered(intervals: list[tuple[float, float]]) -> float:
    """The total length covered by the intervals, counting overlaps once."""
    return sum(end - start for start, end in merge_intervals(intervals))
