"""The HTML report (`oltplab report`): one self-contained offline page and PNG/SVG of every
chart, drawn from one set of Vega-Lite chart definitions (docs/reports.md).

    report = build_report(["runs/a", "runs/b"])   # or a lab directory
    report.charts                                   # ReportChart objects (altair charts inside)
    report.write_html(Path("report.html")); report.write_images(Path("png"), "png")

Importing it imports altair and vl-convert (default dependencies); `oltplab.extras.
require_plotting()` checks for them without importing this package."""

from oltplab.report.html.build import Report, build_report, write_lab_report

__all__ = ["Report", "build_report", "write_lab_report"]
