"""Assembles the self-contained HTML page: the Vega bundle inlined once, one JSON spec per
chart, the tables, a small sorter and a plain print-friendly style. The page requests
nothing from anywhere: no CDN, no font, no image."""

import functools
import hashlib
import html
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

import vl_convert

from oltplab._fsutil import write_text_atomic
from oltplab._version import __version__
from oltplab.report.html.charts.common import ReportChart
from oltplab.report.html.columns import page_json
from oltplab.report.html.export import VL_VERSION

# Exposes the libraries the page's loader uses as globals.
_BUNDLE_SNIPPET = "window.vegaEmbed = vegaEmbed; window.vega = vega;"


@dataclass(frozen=True)
class Section:
    anchor: str
    title: str
    intro: str  # HTML before the charts (tables, notes)
    charts: tuple[ReportChart, ...]


@functools.cache
def javascript_bundle() -> str:
    """Vega, Vega-Lite and vega-embed in one script (~0.9 MB). vl-convert takes 1.5-5 s to
    build it, so it is kept in the user's cache directory, keyed by the versions inside."""
    snippet = hashlib.sha1(_BUNDLE_SNIPPET.encode()).hexdigest()[:8]
    versions = f"{getattr(vl_convert, '__version__', 'unknown')}-vl{VL_VERSION}-{snippet}"
    cache = _cache_dir() / f"vega-bundle-{versions}.js"
    try:
        return cache.read_text(encoding="utf-8")
    except OSError:
        pass
    bundle: str = vl_convert.javascript_bundle(_BUNDLE_SNIPPET, vl_version=VL_VERSION)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(cache, bundle)
    except OSError:
        pass  # a read-only home: build it again next time
    return bundle


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "oltplab"


def _asset(name: str) -> str:
    """The page's own style and script (assets/)."""
    return (resources.files(__package__) / "assets" / name).read_text(encoding="utf-8")


def _script_safe(json_text: str) -> str:
    """JSON safe inside a <script> element."""
    return json_text.replace("</", "<\\/")


def render(title: str, subtitle: str, sections: Sequence[Section]) -> str:
    specs: list[str] = []
    body: list[str] = []
    for section in sections:
        body.append(
            f'<section id="{section.anchor}"><h2>{html.escape(section.title)}</h2>{section.intro}'
        )
        for chart in section.charts:
            index = len(specs)
            data = ",".join(
                f"{json.dumps(name)}:{page_json(columns)}"
                for name, columns in chart.datasets.items()
            )
            doc = (
                f'{{"spec":{json.dumps(chart.layout(), separators=(",", ":"))},"data":{{{data}}}}}'
            )
            specs.append(_script_safe(doc))
            body.append(
                f'<figure id="{html.escape(chart.name)}"><div class="chart" data-spec="{index}" '
                f'data-name="{html.escape(chart.name)}"></div>'
                f"<figcaption>{html.escape(chart.caption)}</figcaption></figure>"
            )
        body.append("</section>")
    nav = "".join(f'<a href="#{s.anchor}">{html.escape(s.title)}</a>' for s in sections)
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    spec_scripts = "".join(
        f'<script type="application/json" id="spec-{i}">{s}</script>' for i, s in enumerate(specs)
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{_asset('report.css')}</style></head><body>"
        f'<header><h1>{html.escape(title)}</h1><p class="sub">{html.escape(subtitle)} · '
        f"oltplab {html.escape(__version__)} · generated {generated}</p><nav>{nav}</nav></header>"
        f"<main>{''.join(body)}</main>{spec_scripts}"
        f"<script>{javascript_bundle()}</script><script>{_asset('loader.js')}</script></body></html>"
    )
