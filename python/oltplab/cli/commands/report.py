"""`oltplab report RUN_DIR|LAB_DIR... [-o report.html] [--png DIR] [--svg DIR]`: one
self-contained offline HTML report, and the same charts as PNG/SVG files."""

import time
from pathlib import Path

from oltplab.cli import exitcodes
from oltplab.cli.commands.analysis_args import AnalysisParser, confidence_level
from oltplab.exceptions import ConfigError
from oltplab.extras import require_plotting


def main(args: list[str]) -> int:
    p = AnalysisParser(
        prog="oltplab report",
        description="Offline HTML report (and PNG/SVG charts) of runs and labs.",
    )
    p.add_argument("dirs", nargs="+", metavar="RUN_DIR|LAB_DIR")
    p.add_argument(
        "-o", "--output", type=Path, default=Path("report.html"), help="HTML file [report.html]"
    )
    p.add_argument(
        "--png", type=Path, metavar="DIR", help="also write every chart as DIR/<chart>.png"
    )
    p.add_argument(
        "--svg", type=Path, metavar="DIR", help="also write every chart as DIR/<chart>.svg"
    )
    p.add_argument(
        "--level", type=confidence_level, default=0.95, help="confidence level of intervals [0.95]"
    )
    ns = p.parse_args(args)
    _check_outputs(ns.output, {"--png": ns.png, "--svg": ns.svg})
    require_plotting()
    from oltplab.report.html import build_report

    started = time.monotonic()
    report = build_report(ns.dirs, level=ns.level)
    report.write_html(ns.output)
    size_mb = ns.output.stat().st_size / 1e6
    print(
        f"{ns.output}: {len(report.charts)} charts of {len(report.data.runs)} run(s), "
        f"{size_mb:.1f} MB, {time.monotonic() - started:.1f} s"
    )
    for kind, out in (("png", ns.png), ("svg", ns.svg)):
        if out is not None:
            written = report.write_images(out, kind)
            print(f"{out}: {len(written)} {kind.upper()} files")
    for note in report.data.notes:
        print(f"note: {note}")
    return exitcodes.OK


def _check_outputs(html: Path, image_dirs: dict[str, Path | None]) -> None:
    """Bad output paths fail before the runs are read, not after the HTML is written."""
    if html.is_dir():
        raise ConfigError(
            f"-o {html} is a directory; give the HTML file's path, e.g. {html}/report.html"
        )
    if not html.parent.is_dir():
        raise ConfigError(
            f"cannot write the report to {html}: {html.parent} does not exist; create it or "
            "choose another -o"
        )
    for flag, out in image_dirs.items():
        if out is not None and out.exists() and not out.is_dir():
            raise ConfigError(f"{flag} {out} is a file; give a directory for the images")
