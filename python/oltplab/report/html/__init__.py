"""The HTML report (`oltplab report`): one self-contained offline page and PNG/SVG of every
chart, drawn from one set of Vega-Lite chart definitions (docs/reports.md).

    report = build_report(["runs/a", "runs/b"])   # or a lab directory
    report.charts                                   # ReportChart objects (altair charts inside)
    report.write_html(Path("report.html")); report.write_images(Path("png"), "png")

Needs the `report` extra (altair, vl-convert-python); `require_plotting()` says so in one
line when it is missing."""

from oltplab.report.html._deps import INSTALL_HINT, require_plotting
from oltplab.report.html.build import Report, build_report, write_lab_report

__all__ = ["INSTALL_HINT", "Report", "build_report", "require_plotting", "write_lab_report"]
