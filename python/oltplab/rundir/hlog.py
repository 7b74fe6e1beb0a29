"""latency.hlog: a standard HdrHistogram interval log (format 1.3), written and read
without an HdrHistogram library.

Each interval contributes one untagged line (the transaction histogram) and one
`Tag=<kind>,` line per statement kind. Timestamps are seconds relative to BaseTime,
which is the load's start (also StartTime); Interval_Max is in milliseconds, as Java's
HistogramLogWriter writes nanosecond histograms by default (outputValueUnitRatio 1e6).
"""

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oltplab._types import Json

FORMAT_VERSION = "1.3"
LEGEND = '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"'
MAX_VALUE_UNIT_RATIO = 1e6  # ns -> ms for Interval_Max
# The histograms' range; readers need it to build a reference histogram.
LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS = 1, 3_600_000_000_000, 3

_START = re.compile(r"#\[StartTime: *([\d.]+)")
_BASE = re.compile(r"#\[BaseTime: *([\d.]+)")
_BAD_TAG_CHARS = re.compile(r"[\s,]")


def header_lines(start_epoch_s: float, logged_with: str) -> list[str]:
    date = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(start_epoch_s))
    return [
        f"#[Logged with {logged_with}; values in nanoseconds; "
        "untagged: transactions (response time), Tag=service: service time (open loop), "
        "Tag=<kind>: statements of that kind]",
        f"#[Histogram log format version {FORMAT_VERSION}]",
        f"#[StartTime: {start_epoch_s:.3f} (seconds since epoch), {date}]",
        f"#[BaseTime: {start_epoch_s:.3f} (seconds since epoch)]",
        LEGEND,
    ]


def interval_line(histogram: Json) -> str:
    """One log line from an interval event's histogram entry (see _core.pyi)."""
    tag = histogram.get("tag")
    prefix = f"Tag={_BAD_TAG_CHARS.sub('_', tag)}," if tag else ""
    max_ms = histogram["max_ns"] / MAX_VALUE_UNIT_RATIO
    return (
        f"{prefix}{histogram['start_s']:.3f},{histogram['interval_s']:.3f},"
        f"{max_ms:.3f},{histogram['encoded']}"
    )


@dataclass(frozen=True)
class HlogEntry:
    tag: str | None  # None: transactions
    start_s: float  # relative to the log's BaseTime (the load's start in our logs)
    interval_s: float
    max_ms: float
    encoded: str  # V2 compressed HdrHistogram, base64; values in nanoseconds

    def decode(self) -> Any:
        """The histogram as an `hdrh.histogram.HdrHistogram` (needs `pip install hdrhistogram`)."""
        try:
            from hdrh.histogram import HdrHistogram
        except ImportError as e:
            raise ImportError(
                "decoding histograms needs the hdrhistogram package: pip install hdrhistogram"
            ) from e
        return HdrHistogram.decode(self.encoded)


@dataclass(frozen=True)
class Hlog:
    start_time_s: float | None  # epoch seconds
    base_time_s: float | None
    entries: list[HlogEntry] = field(default_factory=list)

    def tagged(self, tag: str | None) -> list[HlogEntry]:
        return [e for e in self.entries if e.tag == tag]

    @property
    def tags(self) -> list[str]:
        return sorted({e.tag for e in self.entries if e.tag is not None})


def read_hlog(path: Path) -> Hlog:
    start = base = None
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            if m := _START.match(line):
                start = float(m.group(1))
            elif m := _BASE.match(line):
                base = float(m.group(1))
            continue
        tag = None
        if line.startswith("Tag="):
            tag, _, line = line[4:].partition(",")
        parts = line.split(",", 3)
        if len(parts) != 4 or line.startswith('"'):
            continue  # the legend, or a blank line
        start_s, interval_s, max_ms, encoded = parts
        entries.append(HlogEntry(tag, float(start_s), float(interval_s), float(max_ms), encoded))
    return Hlog(start, base, entries)
