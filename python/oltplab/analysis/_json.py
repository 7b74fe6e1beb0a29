"""JSON helpers: statistics can be NaN or infinite (one interval, a zero mean), JSON cannot."""

import math
from dataclasses import asdict
from typing import Any


def finite(value: float | None) -> float | None:
    """A statistic as the documents hold it: None when not defined (NaN, infinite)."""
    return value if value is not None and math.isfinite(value) else None


def plain(value: Any) -> Any:
    """`value` with NaN/±inf floats as None and tuples as lists, recursively."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


def dataclass_json(obj: Any) -> dict[str, Any]:
    """A dataclass as a JSON-ready dict of plain floats, ints, bools and lists."""
    doc: dict[str, Any] = plain(asdict(obj))
    return doc


class JsonDataclass:
    """Mixin for the result dataclasses: `to_json()` is `dataclass_json(self)`."""

    def to_json(self) -> dict[str, Any]:
        return dataclass_json(self)
