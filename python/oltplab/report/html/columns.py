"""Chart data as columns: built from data frames with numpy (a lab's timelines hold hundreds
of thousands of values: rows of Python dicts cost seconds), numbers kept to DIGITS significant
digits (far below a chart's resolution), and written into the page compactly: strings as
levels and codes, whole numbers without ".0". The page's loader (assets/loader.js) turns the
columns back into rows; `rows` does the same for vl-convert and the tests."""

import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

Columns = dict[str, list[Any]]

# Significant digits kept in embedded data: a third of the size of full doubles.
DIGITS = 5
# 10**k is exact in a double up to k = 22: beyond it (values near 1e-18 or 1e27) the
# string formatting decides.
_EXACT_POWERS = 22
_WHOLE_FLOAT = re.compile(r"\.0(?=[,\]])")


def compact(value: Any) -> Any:
    """One value as the page keeps it: a float rounded to DIGITS significant digits, NaN and
    infinity as None, anything else as it is."""
    if isinstance(value, float):
        return float(f"{value:.{DIGITS}g}") if math.isfinite(value) else None
    return value


def rounded(values: np.ndarray) -> np.ndarray:
    """compact() of every float, vectorised (the same values, NaN kept): scaled, rounded
    half-even, scaled back; the few values within a hair of a rounding tie, where scaling's
    own error could tip the result, take the exact string formatting of compact()."""
    out = values.astype(float)
    at = np.flatnonzero(np.isfinite(out) & (out != 0))
    decimals = DIGITS - 1 - np.floor(np.log10(np.abs(out[at]))).astype(int)
    extreme = np.abs(decimals) > _EXACT_POWERS
    at, decimals, rest = at[~extreme], decimals[~extreme], at[extreme]
    x, scale = out[at], 10.0 ** np.abs(decimals)
    up = decimals >= 0
    scaled = np.where(up, x * scale, x / scale)
    whole = np.round(scaled)
    out[at] = np.where(up, whole / scale, whole * scale)
    tied = np.abs(np.abs(scaled - np.trunc(scaled)) - 0.5) < 1e-6
    for i in np.concatenate((at[tied], rest)):
        out[i] = float(f"{values[i]:.{DIGITS}g}")
    return out


def from_frame(frame: pd.DataFrame) -> Columns:
    """The frame's columns, floats rounded (NaN as None)."""
    out: Columns = {}
    for name in frame.columns:
        column = frame[name]
        if pd.api.types.is_float_dtype(column.dtype):
            values = rounded(column.to_numpy(float, na_value=np.nan))
            listed = values.astype(object)
            listed[~np.isfinite(values)] = None
            out[str(name)] = listed.tolist()
        else:
            out[str(name)] = column.astype(object).where(column.notna(), None).tolist()
    return out


def from_records(records: Iterable[Mapping[Any, Any]]) -> Columns:
    """Rows (dicts) as columns; a key missing from a row is None there."""
    listed = list(records)
    keys = list(dict.fromkeys(str(k) for row in listed for k in row))
    return {k: [compact(row.get(k)) for row in listed] for k in keys}


def rows(columns: Columns) -> list[dict[str, Any]]:
    keys = list(columns)
    return [dict(zip(keys, values, strict=True)) for values in zip(*columns.values(), strict=True)]


def page_json(columns: Columns) -> str:
    """The columns as the page's JSON: strings as levels and codes (a timeline's rows repeat
    their run names), numbers as lists with whole floats written as integers."""
    parts = []
    for key, values in columns.items():
        kinds = {type(v) for v in values} - {type(None)}
        if kinds <= {str}:
            codes, levels = pd.factorize(pd.Series(values, dtype=object), use_na_sentinel=True)
            missing = len(levels)
            encoded = json.dumps(
                {
                    "levels": [*map(str, levels), None],
                    "codes": np.where(codes < 0, missing, codes).tolist(),
                },
                separators=(",", ":"),
            )
        elif kinds <= {int, float, bool}:
            encoded = _WHOLE_FLOAT.sub("", json.dumps(values, separators=(",", ":")))
        else:  # mixed: no string may be touched
            encoded = json.dumps(values, separators=(",", ":"))
        parts.append(f"{json.dumps(key)}:{encoded}")
    return "{" + ",".join(parts) + "}"
