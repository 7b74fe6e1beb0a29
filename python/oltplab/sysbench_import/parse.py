"""sysbench 1.0.x's text output (`run`), read back into numbers: the inverse of
report/sysbench_text.py (reference/sysbench.md §2.5-2.7).

Only what the text holds is kept; a field the log does not print is None, never a guess.
Lines that are not part of the report (warnings, --debug lines, a shell prompt) are skipped.
"""

import re
from dataclasses import dataclass, fields, replace
from typing import Any

from oltplab.exceptions import ConfigError

_NUM = r"(-?(?:\d+(?:\.\d*)?|inf|nan))"
_INT = r"(\d+)"
_T = r"^\[ (\d+(?:\.\d+)?)s \] "

_BANNER = re.compile(r"^sysbench (\d+\.\d+(?:\.\d+)?\S*)(?: \(.*\))?\s*$")
_THREADS = re.compile(r"^Number of threads: " + _INT + "$")
_RATE = re.compile(r"^Target transaction rate: " + _NUM + "/sec$")
_REPORT_INTERVAL = re.compile(r"^Report intermediate results every " + _NUM + r" second\(s\)$")
_SEED = re.compile(r"^Initializing random number generator from seed \(" + _INT + r"\)\.$")
_WARMUP = re.compile(r"^Warm(?:ing )?-?up (?:time: |for )" + _NUM + r" ?s", re.IGNORECASE)
_INTERVAL = re.compile(
    _T + r"thds: " + _INT + r" tps: " + _NUM + r" qps: " + _NUM
    + r" \(r/w/o: " + _NUM + "/" + _NUM + "/" + _NUM + r"\) lat \(ms," + _NUM + r"%\): " + _NUM
    + r" err/s:? " + _NUM + r" reconn/s: " + _NUM + r"\s*$"
)  # fmt: skip
_QUEUE = re.compile(_T + r"queue length: " + _INT + r", concurrency: " + _INT + r"\s*$")
_HISTOGRAM_TITLE = "Latency histogram (values are in milliseconds)"
_HISTOGRAM_ROW = re.compile(r"^\s*" + _NUM + r" \|\**\s* " + _INT + r"$")
_FATAL = re.compile(r"^FATAL: (.*)$")

# Final report lines: regex -> the keys of its numbers.
_COUNTER = r":\s+" + _INT + r"\s+\(" + _NUM + r" per sec\.\)$"
_REPORT: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = tuple(
    (re.compile(pattern), keys)
    for pattern, keys in (
        (r"^\s+read:\s+" + _INT + "$", ("reads",)),
        (r"^\s+write:\s+" + _INT + "$", ("writes",)),
        (r"^\s+other:\s+" + _INT + "$", ("other",)),
        (r"^\s+total:\s+" + _INT + "$", ("queries_total",)),
        (r"^\s+transactions" + _COUNTER, ("transactions", "tps")),
        (r"^\s+queries" + _COUNTER, ("queries", "qps")),
        (r"^\s+ignored errors" + _COUNTER, ("errors", "errors_per_s")),
        (r"^\s+reconnects" + _COUNTER, ("reconnects", "reconnects_per_s")),
        (r"^\s+total time:\s+" + _NUM + "s$", ("total_time_s",)),
        (r"^\s+total number of events:\s+" + _INT + "$", ("events",)),
        (r"^\s+min:\s+" + _NUM + "$", ("latency_min_ms",)),
        (r"^\s+avg:\s+" + _NUM + "$", ("latency_avg_ms",)),
        (r"^\s+max:\s+" + _NUM + "$", ("latency_max_ms",)),
        (r"^\s+" + _NUM + r"th percentile:\s+" + _NUM + "$", ("percentile", "latency_pct_ms")),
        (r"^\s+sum:\s+" + _NUM + "$", ("latency_sum_ms",)),
        (r"^\s+events \(avg/stddev\):\s+" + _NUM + "/" + _NUM + "$", ("events_avg", "events_sd")),
        (
            r"^\s+execution time \(avg/stddev\):\s+" + _NUM + "/" + _NUM + "$",
            ("time_avg_s", "time_sd_s"),
        ),
    )
)
_PERCENTILE_DISABLED = re.compile(r"^\s+percentile stats:\s+disabled$")


@dataclass(frozen=True)
class Preamble:
    """What sysbench prints before "Threads started!"; None where the log does not say."""

    banner: str | None  # the first line, e.g. "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)"
    version: str | None  # "1.0.20"
    threads: int | None
    rate_per_s: float | None  # 0 when the preamble is there without a rate line
    report_interval_s: float | None  # the same
    rand_seed: int | None  # None when seeded from the clock
    warmup_s: float | None  # sysbench master's warm-up line; 1.0.x has none


@dataclass(frozen=True)
class IntervalLine:
    t_s: float  # end of the interval, as printed
    threads: int
    tps: float
    qps: float
    reads_per_s: float
    writes_per_s: float
    other_per_s: float
    percentile: float  # the rank in "lat (ms,95%)"
    latency_pct_ms: float
    errors_per_s: float
    reconnects_per_s: float
    queue_length: int | None = None  # rate mode's second line
    concurrency: int | None = None


@dataclass(frozen=True)
class FinalReport:
    reads: int
    writes: int
    other: int
    queries_total: int
    transactions: int
    tps: float
    queries: int
    qps: float
    errors: int
    errors_per_s: float
    reconnects: int
    reconnects_per_s: float
    total_time_s: float
    events: int
    latency_min_ms: float
    latency_avg_ms: float
    latency_max_ms: float
    latency_sum_ms: float
    percentile: float | None  # None: "percentile stats: disabled"
    latency_pct_ms: float | None
    events_avg: float
    events_sd: float
    time_avg_s: float
    time_sd_s: float


@dataclass(frozen=True)
class SysbenchLog:
    preamble: Preamble
    intervals: tuple[IntervalLine, ...]
    histogram_ms: tuple[tuple[float, int], ...] | None  # --histogram's (value, count) rows
    report: FinalReport | None  # None: the log ends before the final report is complete
    fatal: str | None  # the first "FATAL: ..." message

    @property
    def complete(self) -> bool:
        return self.report is not None


_INT_FIELDS = {f.name for f in fields(FinalReport) if f.type is int}


def _preamble(lines: list[str]) -> Preamble:
    found: dict[str, str] = {}
    started = False
    for line in lines:
        if line.startswith("Threads started!") or line.startswith("["):
            break
        started = started or line.startswith("Running the test with following options:")
        for key, pattern in (
            ("banner", _BANNER),
            ("threads", _THREADS),
            ("rate", _RATE),
            ("report_interval", _REPORT_INTERVAL),
            ("seed", _SEED),
            ("warmup", _WARMUP),
        ):
            if key not in found and (m := pattern.match(line)):
                found[key] = line if key == "banner" else m.group(1)
    banner = _BANNER.match(found.get("banner", ""))
    absent = 0.0 if started else None  # the options block omits these lines when they are 0

    def num(key: str) -> float | None:
        return float(found[key]) if key in found else absent

    return Preamble(
        banner=found.get("banner"),
        version=banner.group(1) if banner else None,
        threads=int(found["threads"]) if "threads" in found else None,
        rate_per_s=num("rate"),
        report_interval_s=num("report_interval"),
        rand_seed=int(found["seed"]) if "seed" in found else None,
        warmup_s=float(found["warmup"]) if "warmup" in found else None,
    )


def _intervals(lines: list[str]) -> tuple[IntervalLine, ...]:
    rows: list[IntervalLine] = []
    for line in lines:
        if m := _INTERVAL.match(line):
            t, thds, tps, qps, r, w, o, rank, pct, err, reconn = map(float, m.groups())
            rows.append(IntervalLine(t, int(thds), tps, qps, r, w, o, rank, pct, err, reconn))
        elif (m := _QUEUE.match(line)) and rows and rows[-1].t_s == float(m.group(1)):
            rows[-1] = replace(rows[-1], queue_length=int(m.group(2)), concurrency=int(m.group(3)))
    return tuple(rows)


def _histogram(lines: list[str]) -> tuple[tuple[float, int], ...] | None:
    if _HISTOGRAM_TITLE not in lines:
        return None
    rows = []
    for line in lines[lines.index(_HISTOGRAM_TITLE) + 1 :]:
        if m := _HISTOGRAM_ROW.match(line):
            rows.append((float(m.group(1)), int(m.group(2))))
        elif not line.lstrip().startswith("value"):
            break
    return tuple(rows)


def _report(lines: list[str]) -> FinalReport | None:
    if "SQL statistics:" not in lines:
        return None
    values: dict[str, float | None] = {}
    for line in lines[lines.index("SQL statistics:") :]:
        if _PERCENTILE_DISABLED.match(line):
            values |= {"percentile": None, "latency_pct_ms": None}
            continue
        for pattern, keys in _REPORT:
            if (m := pattern.match(line)) and keys[0] not in values:
                values |= {k: float(g) for k, g in zip(keys, m.groups(), strict=True)}
                break
    if any(f.name not in values for f in fields(FinalReport)):
        return None  # a line is missing: the log was cut inside the report
    typed: dict[str, Any] = {
        k: int(v) if k in _INT_FIELDS and v is not None else v for k, v in values.items()
    }
    return FinalReport(**typed)


def parse_log(text: str, source: str) -> SysbenchLog:
    """Reads sysbench's `run` output; ConfigError when `text` is not sysbench's output."""
    lines = text.replace("\r\n", "\n").split("\n")
    log = SysbenchLog(
        preamble=_preamble(lines),
        intervals=_intervals(lines),
        histogram_ms=_histogram(lines),
        report=_report(lines),
        fatal=next((m.group(1) for line in lines if (m := _FATAL.match(line))), None),
    )
    if log.preamble.banner is None and not log.intervals and log.report is None:
        raise ConfigError(
            f"{source} is not sysbench output: it has no sysbench banner, no interval line "
            "and no final report"
        )
    return log
