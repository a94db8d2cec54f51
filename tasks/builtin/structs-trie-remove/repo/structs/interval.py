"""Helpers for closed integer-free intervals given as (start, end) pairs with start <= end."""


def merge_intervals(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Merge overlapping or touching intervals; the result is sorted by start.

    >>> merge_intervals([(5, 7), (1, 3), (2, 4), (7, 8)])
    [(1, 4), (5, 8)]
    """
    merged: list[tuple[float, float]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def total_covered(intervals: list[tuple[float, float]]) -> float:
    """The total length covered by the intervals, counting overlaps once."""
    return sum(end - start for start, end in merge_intervals(intervals))
