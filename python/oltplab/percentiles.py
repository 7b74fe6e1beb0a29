"""`--percentile` takes one rank (95) or a list (50,95,99,99.9); 0 disables it."""

from typing import Any


def ranks(value: Any) -> list[float]:
    """The ranks asked for, in order; an empty list when disabled or unreadable."""
    items = value if isinstance(value, list | tuple) else str(value or "").split(",")
    out = []
    for item in items:
        try:
            rank = float(item)
        except (TypeError, ValueError):
            continue
        if 0 < rank <= 100:
            out.append(rank)
    return out


def first(value: Any) -> float:
    """The rank sysbench's interval line and single percentile line show (0: disabled)."""
    found = ranks(value)
    return found[0] if found else 0.0


def key_of(rank: float) -> str:
    """The key a rank has in run.json's latency objects and the analysis: 95 -> "p95",
    99.9 -> "p99.9"."""
    return f"p{rank:g}"
