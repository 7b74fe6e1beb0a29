"""From directories to a Report: the data (model.py), the charts (charts/), the tables and
the page (page.py), in the order a reader wants them."""

import html
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from oltplab._fsutil import write_text_atomic
from oltplab.exceptions import ConfigError
from oltplab.report.html import model
from oltplab.report.html.charts.common import ReportChart
from oltplab.report.html.charts.distribution import boxplot_chart
from oltplab.report.html.charts.latency_throughput import latency_throughput_chart
from oltplab.report.html.charts.scaling import scaling_charts
from oltplab.report.html.charts.spectrum import spectrum_chart
from oltplab.report.html.charts.statements import statement_chart
from oltplab.report.html.charts.timeline import timeline_chart
from oltplab.report.html.export import write_images
from oltplab.report.html.inputs import resolve
from oltplab.report.html.page import Section, render
from oltplab.report.html.setup import setup_section, warnings_of
from oltplab.report.html.tables import (
    comparison_html,
    relative_html,
    runs_table,
    stalls_table,
    sweep_table,
)
from oltplab.report.html.tpcc import tpcc_tables

REPORT_FILE = "report.html"


@dataclass(frozen=True)
class Report:
    data: model.ReportData
    sections: tuple[Section, ...]
    title: str
    subtitle: str

    @property
    def charts(self) -> list[ReportChart]:
        return [c for s in self.sections for c in s.charts]

    def html(self) -> str:
        return render(self.title, self.subtitle, self.sections)

    def write_html(self, path: Path) -> Path:
        try:
            write_text_atomic(path, self.html())
        except OSError as e:
            raise ConfigError(
                f"cannot write the report to {path}: {e.strerror or e}; choose another -o"
            ) from e
        return path

    def write_images(self, out: Path, kind: str) -> list[Path]:
        """kind: "png" or "svg"."""
        return write_images(self.charts, out, kind)


def build_report(paths: Sequence[str | Path], *, level: float = 0.95) -> Report:
    """Analyses the runs of `paths` (run or lab directories) and lays out the report."""
    inputs = resolve(paths)
    data = model.load(inputs, level)
    configs = list(data.configs)
    sections = [
        _what_ran(data),
        _tables(data),
        _scaling(data, configs),
        Section(
            "timelines",
            "Timelines",
            "",
            tuple(timeline_chart(g, configs, data.colours) for g in data.groups),
        ),
        _distributions(data, configs),
    ]
    statements = [c for g in data.groups if (c := statement_chart(g, configs, data.colours))]
    if statements:
        kinds = "statement kind" + (" and transaction type" if "tpcc" in data.workloads else "")
        sections.append(Section("statements", f"Latency per {kinds}", "", tuple(statements)))
    sections = [s for s in sections if s.intro or s.charts]
    # Notes gathered while building (charts left out) go to the warnings at the top.
    sections[0] = _what_ran(data)
    compared = " vs ".join(configs) if 1 < len(configs) <= 4 else ", ".join(configs[:4])
    if inputs.lab_dirs:
        title = f"Lab {', '.join(doc.lab.name for _, doc in inputs.labs)}: {compared}"
    else:
        title = f"{', '.join(data.workloads)}: {compared}"
    subtitle = (
        f"{len(data.runs)} run(s), {len(configs)} config(s), {len(data.groups)} load point(s)"
    )
    return Report(data, tuple(sections), title, subtitle)


def write_lab_report(lab_dir: str | Path, *, level: float = 0.95) -> Path:
    """`oltplab lab run`'s last step (and after each resume): DIR/report.html of the lab."""
    lab = Path(lab_dir)
    return build_report([lab], level=level).write_html(lab / REPORT_FILE)


def _what_ran(data: model.ReportData) -> Section:
    warnings = warnings_of(data)
    listed = (
        '<h3>Warnings</h3><ul class="warnings">'
        + "".join(f"<li>{html.escape(w)}</li>" for w in warnings)
        + "</ul>"
        if warnings
        else '<p class="note">No warnings from the analysis.</p>'
    )
    return Section("setup", "What ran", setup_section(data) + listed, ())


def _tables(data: model.ReportData) -> Section:
    parts = [runs_table(data), stalls_table(data), tpcc_tables(data)]
    parts += [sweep_table(w, s, data.level) for w, s in data.sweeps.items()]
    if data.relative is not None:
        parts.append(relative_html(data.relative))
    base = data.configs[0]
    parts += [comparison_html(c, base, found) for c, found in data.comparisons.items()]
    return Section("tables", "Results", "".join(parts), ())


def _scaling(data: model.ReportData, configs: list[str]) -> Section:
    charts = []
    for workload, found in data.sweeps.items():
        charts += scaling_charts(workload, found, configs, data.colours, data.level)
    for workload, points in data.rate_sweeps.items():
        closed = data.closed_points(workload)
        charts.append(latency_throughput_chart(workload, points, closed, configs, data.colours))
    intro = (
        ""
        if charts
        else '<p class="note">One connection count (or rate) per workload: no scaling chart.</p>'
    )
    return Section("scaling", "Scaling", intro, tuple(charts))


def _distributions(data: model.ReportData, configs: list[str]) -> Section:
    charts: list[ReportChart] = []
    for group in data.groups:
        charts.append(boxplot_chart(group, configs, data.colours))
        spectrum = spectrum_chart(group, configs, data.colours)
        if spectrum is not None:
            charts.append(spectrum)
        else:
            data.notes.append(f"{group.title}: no latency histograms; no percentile spectrum")
    return Section("distributions", "Distributions", "", tuple(charts))
