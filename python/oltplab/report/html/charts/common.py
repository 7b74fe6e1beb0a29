"""What every chart shares: the chart record, the config colour scale with its legend toggle,
chart data and the plain, print-friendly look."""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import altair as alt
import pandas as pd

from oltplab.report.html.columns import Columns, from_frame, from_records, rows

WIDTH = 680
FONT = "Helvetica, Arial, sans-serif"

Spec = alt.Chart | alt.LayerChart | alt.VConcatChart | alt.HConcatChart | alt.FacetChart


@dataclass(frozen=True)
class ReportChart:
    """One chart of a report: `name` is its file stem for --png/--svg, `caption` says what is
    drawn and how (intervals, decimation, scales)."""

    name: str
    title: str
    caption: str
    chart: Spec  # its layers name their data (alt.NamedData): the values are in `datasets`
    datasets: dict[str, Columns] = field(default_factory=dict)  # by name, as columns

    def layout(self) -> dict[str, Any]:
        """The Vega-Lite JSON without its data. Validation against the schema is left to the
        tests: it costs seconds on large timelines."""
        doc: dict[str, Any] = self.chart.to_dict(validate=False)
        doc["config"] = CONFIG
        return doc

    def spec(self) -> dict[str, Any]:
        """The Vega-Lite JSON with the data inline, as rows."""
        return self.layout() | {"datasets": self.rows()}

    def rows(self) -> dict[str, list[dict[str, Any]]]:
        return {name: rows(columns) for name, columns in self.datasets.items()}

    def altair(self) -> Spec:
        """The chart with its data attached, for altair's own display and save()."""
        return self.chart.properties(datasets=self.rows(), config=CONFIG)


class Datasets:
    """A chart's data, kept out of the Altair objects (which deep-copy every row whenever a
    chart is layered or configured) and attached as top-level `datasets` of the spec."""

    def __init__(self) -> None:
        self.values: dict[str, Columns] = {}

    def ref(self, name: str, data: pd.DataFrame | Iterable[Mapping[Any, Any]]) -> alt.NamedData:
        """Keeps `data` (a frame, or rows) under `name`; returns the reference layers use."""
        self.values[name] = (
            from_frame(data) if isinstance(data, pd.DataFrame) else from_records(data)
        )
        return alt.NamedData(name=name)


def colour(configs: Sequence[str], palette: Mapping[str, str], title: str = "config") -> alt.Color:
    return alt.Color(
        "config:N",
        scale=alt.Scale(domain=list(configs), range=[palette[c] for c in configs]),
        legend=alt.Legend(title=title, orient="top", labelLimit=320),
    )


def legend_toggle() -> alt.Parameter:
    """Click a legend entry to show that config alone (shift-click: several)."""
    return alt.selection_point(fields=["config"], bind="legend")


def faded(selection: alt.Parameter) -> alt.OpacityValue:
    """Full opacity where `selection` holds, faded elsewhere. A channel object rather than
    alt.condition's dict: Altair turns dicts (and "field:type" strings) into channels through
    a schema lookup that costs ~10 ms per encode() call."""
    return alt.OpacityValue(
        value=0.12,
        condition=alt.ConditionalParameterValueDefnumberExprRef(param=selection.name, value=1.0),
    )


def x_zoom() -> alt.Parameter:
    """Drag to pan, wheel to zoom along x; double-click resets."""
    return alt.selection_interval(bind="scales", encodings=["x"])


# The look: plain, readable in print, light grid, no frame. Set on the spec's top level when
# it is written out (configuring Altair objects deep-copies them, once per call).
CONFIG: dict[str, Any] = {
    "font": FONT,
    "background": "white",
    "view": {"stroke": None},
    "axis": {
        "gridColor": "#e6e6e6",
        "domainColor": "#888888",
        "tickColor": "#888888",
        "labelColor": "#222222",
        "titleColor": "#222222",
        "labelFontSize": 11,
        "titleFontSize": 12,
        "titleFontWeight": "normal",
    },
    "legend": {
        "labelFontSize": 12,
        "titleFontSize": 12,
        "titleFontWeight": "normal",
        "symbolStrokeWidth": 3,
    },
    "title": {
        "fontSize": 15,
        "subtitleFontSize": 12,
        "subtitleColor": "#555555",
        "fontWeight": "bold",
    },
}


def finish(chart: Spec, title: str) -> Spec:
    """The chart with its title (the look comes from CONFIG)."""
    return chart.properties(title=alt.Title(title, anchor="start"))
