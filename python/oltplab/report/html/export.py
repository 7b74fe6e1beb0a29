"""PNG and SVG of every chart, rendered from the same Vega-Lite specs as the HTML page by
vl-convert (no browser, no network)."""

from collections.abc import Sequence
from pathlib import Path

import vl_convert

from oltplab.exceptions import ConfigError
from oltplab.report.html.charts.common import ReportChart

# The Vega-Lite version of Altair's specs: the HTML bundle and the images must agree.
VL_VERSION = "6.4"
PNG_SCALE = 2  # 2x pixels: sharp on high-density screens and in print


def write_images(charts: Sequence[ReportChart], out: Path, kind: str) -> list[Path]:
    """Writes <out>/<chart name>.<kind> for every chart; returns the paths."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(
            f"cannot create {out} for the {kind.upper()} files: {e.strerror or e}"
        ) from e
    written = []
    for chart in charts:
        path = out / f"{chart.name}.{kind}"
        spec = chart.spec()
        if kind == "png":
            path.write_bytes(
                vl_convert.vegalite_to_png(spec, vl_version=VL_VERSION, scale=PNG_SCALE)
            )
        else:
            path.write_text(
                vl_convert.vegalite_to_svg(spec, vl_version=VL_VERSION), encoding="utf-8"
            )
        written.append(path)
    return written
