"""What every chart shares: the chart record, the config colour scale with its legend toggle,
compact data rows and the plain, print-friendly look."""

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import altair as alt

WIDTH = 680
FONT = "Helvetica, Arial, sans-serif"
# Significant digits kept in embedded data: far below the charts' resolution, a third of the size.
DIGITS = 5

Spec = alt.Chart | alt.LayerChart | alt.VConcatChart | alt.HConcatChart | alt.FacetChart


@dataclass(frozen=True)
class ReportChart:
    """One chart of a report: `name` is its file stem for --png/--svg, `caption` says what is
    drawn and how (intervals, decimation, scales)."""

    name: str
    title: str
    caption: str
    chart: Spec  # its layers name their data (alt.NamedData): the rows are in `datasets`
    datasets: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def spec(self) -> dict[str, Any]:
        """The Vega-Lite JSON with the data inline. Validation against the schema is left to
        the tests: it costs seconds on large timelines."""
        doc: dict[str, Any] = self.chart.to_dict(validate=False)
        doc["datasets"] = self.datasets
        doc["config"] = CONFIG
        return doc

    def altair(self) -> Spec:
        """The chart with its data attached, for altair's own display and save()."""
        return self.chart.properties(datasets=self.datasets, config=CONFIG)


class Datasets:
    """A chart's data, kept out of the Altair objects (which deep-copy every row whenever a
    chart is layered or configured) and attached as top-level `datasets` of the spec."""

    def __init__(self) -> None:
        self.values: dict[str, list[dict[str, Any]]] = {}

    def ref(self, name: str, records: Iterable[Mapping[Any, Any]]) -> alt.NamedData:
        self.values[name] = [{str(k): compact(v) for k, v in r.items()} for r in records]
        return alt.NamedData(name=name)


def compact(value: Any) -> Any:
    """A number rounded to DIGITS significant digits, NaN/inf as null."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return float(f"{value:.{DIGITS}g}")
    return value


def colour(configs: Sequence[str], palette: Mapping[str, str], title: str = "config") -> alt.Color:
    return alt.Color(
        "config:N",
        scale=alt.Scale(domain=list(configs), range=[palette[c] for c in configs]),
        legend=alt.Legend(title=title, orient="top", labelLimit=320),
    )


def legend_toggle() -> alt.Parameter:
    """Click a legend entry to show that config alone (shift-click: several)."""
    return alt.selection_point(fields=["config"], bind="legend")


def faded(selection: alt.Parameter) -> Any:
    return alt.condition(selection, alt.value(1.0), alt.value(0.12))


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
