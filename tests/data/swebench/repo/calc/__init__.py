"""A tiny package with two bugs, the repository of the SWE-bench fixture."""


def add(a, b):
    return a + b


def mean(values):
    return sum(values) / len(values)


def clamp(x, low, high):
    return max(low, x)
