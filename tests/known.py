"""`known(x)`: a document value that may be null (a latency, a summary), asserted present, so
that a test reads it typed without an `assert ... is not None` line of its own each time."""

from typing import TypeVar

T = TypeVar("T")


def known(value: T | None) -> T:
    assert value is not None
    return value
