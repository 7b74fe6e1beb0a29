"""Chart data as columns (report/html/columns.py): the vectorised rounding keeps exactly what
the per-value one keeps, ties and extremes included, and the page's JSON turns back into the
same rows the loader builds (levels and codes, whole numbers, missing values)."""

import json
from typing import Any

import numpy as np
import pandas as pd

from oltplab.report.html.columns import compact, from_frame, from_records, page_json, rows


def test_vectorised_rounding_equals_the_per_value_one() -> None:
    rng = np.random.default_rng(3)
    values = np.concatenate(
        [
            rng.lognormal(5, 3, 50_000),
            -rng.lognormal(2, 2, 5_000),
            np.round(rng.uniform(0, 2000, 20_000), 3),  # many rounding ties at 5 digits
            np.arange(0, 100, 0.005),
            [0.0, -0.0, 1e-300, 5e300, 99_999.5, 999_995.0, 0.000123455, np.nan, np.inf, -np.inf],
        ]
    )
    frame = pd.DataFrame({"v": values})
    assert from_frame(frame)["v"] == [compact(float(v)) for v in values]


def loader_rows(page: str) -> list[dict[str, Any]]:
    """What assets/loader.js's rows() makes of a dataset's JSON."""
    columns = json.loads(page)
    n = max(len(c) if isinstance(c, list) else len(c["codes"]) for c in columns.values())
    return [
        {k: c[i] if isinstance(c, list) else c["levels"][c["codes"][i]] for k, c in columns.items()}
        for i in range(n)
    ]


def test_page_json_gives_back_the_rows() -> None:
    frame = pd.DataFrame(
        {
            "run": ["a", "b", None, "a"],
            "t_s": [1.0, 2.5, np.nan, 4.0],
            "count": [1, 2, 3, 4],
        }
    )
    columns = from_frame(frame)
    page = page_json(columns)
    assert '"t_s":[1,2.5,null,4]' in page  # whole floats as integers, NaN as null
    assert loader_rows(page) == rows(columns)
    assert rows(columns)[2] == {"run": None, "t_s": None, "count": 3}
    records = [{"kind": "x.0,1]", "n": 1.0}, {"kind": "y", "n": 2.25, "extra": True}]
    listed = from_records(records)
    assert loader_rows(page_json(listed)) == rows(listed)
    assert rows(listed)[0] == {"kind": "x.0,1]", "n": 1.0, "extra": None}
