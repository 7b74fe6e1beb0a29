"""Turns the engine's events into what the `oltplab` command prints.

stdout carries sysbench's text (preamble, interval lines, reports) so that existing
parsers keep working; stderr carries the live status line and oltplab's own notes.
"""

from typing import Any, TextIO

from oltplab import percentiles
from oltplab._types import Json
from oltplab._version import __version__
from oltplab.cli.progress import StatusLine, prepare_status, run_status
from oltplab.report import oltplab_text, sysbench_text
from oltplab.rundir.intervals import NS_PER_MS, IntervalRow
from oltplab.runner import RunResult

# An interval shorter than this share of --report-interval is the run's last, partial
# one: it goes to intervals.csv, but sysbench, which reports on a timer, prints no line.
_PRINTED_SHARE = 0.9  # the engine's script/reports.rs calls the hook on the same intervals

# A script's report hooks, which replace sysbench's interval lines and final report.
REPORT_INTERMEDIATE, REPORT_CUMULATIVE = "report_intermediate", "report_cumulative"


def banner() -> str:
    return f"oltplab {__version__}"


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


class RunDisplay:
    def __init__(
        self,
        out: TextIO,
        status: StatusLine | None,
        options: Json,
        *,
        header: str | None = None,
        summary: bool = True,
        replaced: frozenset[str] = frozenset(),
        sql: bool = True,
    ) -> None:
        """`options`: every option value (Catalog.resolve), for the preamble and the lines.

        `status` None draws no status line; `header` replaces the preamble's first line
        (oltplab's banner); `summary` False prints sysbench's report without oltplab's;
        `replaced`: the sysbench report hooks a script sets (`report_intermediate`: no interval
        lines; `report_cumulative`: no final report), which print their own. `sql` False: a
        script's run, which reports SQL statistics once it creates sysbench's SQL driver (the
        "sql_driver" event), as sysbench does.
        """
        self._out = out
        self._status = status
        self._header = banner() if header is None else header
        self._summary = summary
        self._interval_lines = REPORT_INTERMEDIATE not in replaced
        self._final_report = REPORT_CUMULATIVE not in replaced
        self._report_interval_s = _float(options.get("report_interval"))
        self._percentile = percentiles.first(options.get("percentile"))
        self._time_s = _float(options.get("time"))
        self._rate = _float(options.get("rate"))
        # sysbench's queue line is for rate mode; a rate plan is open loop too.
        self._open_loop = self._rate > 0 or bool(str(options.get("rate_steps") or "").strip())
        self._rand_seed = int(_float(options.get("rand_seed")))
        self._decimals = sysbench_text.timestamp_decimals(self._report_interval_s)
        self._errors = 0
        self._sql = sql

    def _print(self, text: str) -> None:
        if self._status is not None:
            self._status.clear()
        self._out.write(text)
        self._out.flush()

    def on_event(self, event: Json) -> None:
        kind = event.get("event")
        if kind == "started":
            # The engine knows the whole length: warm-up, and the step plan's steps.
            self._time_s = _float(event.get("planned_s", self._time_s))
            self._print(
                sysbench_text.preamble(
                    self._header,
                    threads=int(event["threads"]),
                    report_interval_s=self._report_interval_s,
                    rate_per_s=self._rate,
                    rand_seed=self._rand_seed,
                )
                + sysbench_text.THREADS_STARTED
            )
        elif kind == "interval":
            self._on_interval(event)
        elif kind == "message":
            self._print(f"{event['text']}\n")
        elif kind == "sql_driver":
            self._sql = True

    def _on_interval(self, event: Json) -> None:
        row = IntervalRow.from_event(event)
        self._errors += row.errors
        ri = self._report_interval_s
        if ri > 0 and row.interval_s >= _PRINTED_SHARE * ri and self._interval_lines:
            pct_ms = (event.get("latency_ns") or {}).get("pct", 0) / NS_PER_MS
            line = sysbench_text.interval_line(
                row,
                percentile=self._percentile,
                latency_pct_ms=pct_ms,
                decimals=self._decimals,
                sql=self._sql,
            )
            if self._open_loop:
                in_flight = int(event.get("in_flight", 0))
                line += "\n" + sysbench_text.queue_line(
                    row, in_flight=in_flight, decimals=self._decimals
                )
            self._print(line + "\n")
        if self._status is not None:
            self._status.show(run_status(row, time_limit_s=self._time_s, errors_total=self._errors))

    def finish(self, result: RunResult) -> None:
        """The reports: sysbench's (unless the run failed, as sysbench), then oltplab's."""
        if self._status is not None:
            self._status.clear()
        doc = result.doc
        text = ""
        if doc.stop_reason != "error" and doc.summary is not None:
            if doc.summary.histogram_ms is not None:
                text += sysbench_text.histogram_block(doc.summary.histogram_ms)
            if self._final_report:
                stats = sysbench_text.CumulativeStats.from_manifest(doc)
                text += sysbench_text.final_report(stats, sql=self._sql)
        if self._summary:
            text += oltplab_text.summary_text(doc, result.path)
        self._print(text)


class PrepareDisplay:
    """Prints prepare's messages and draws a progress bar of the rows loaded (on `status`;
    None prints the messages only)."""

    def __init__(self, out: TextIO, status: StatusLine | None) -> None:
        self._out = out
        self._status = status
        self._rows: dict[int, tuple[int, int]] = {}
        self._header: str | None = None

    def announce(self, header: str) -> None:
        """Prints `header` before the first event: not at all if the engine rejects the
        options before starting, so that bad input still gives one line."""
        self._header = header

    def on_event(self, event: Json) -> None:
        if self._header is not None:
            self._out.write(self._header + "\n")
            self._header = None
        kind = event.get("event")
        if kind == "message":
            self.done()
            self._out.write(f"{event['text']}\n")
            self._out.flush()
        elif kind == "rows" and self._status is not None:
            self._rows[int(event["table"])] = (int(event["done"]), int(event["total"]))
            self._status.show(prepare_status(self._rows))

    def done(self) -> None:
        if self._status is not None:
            self._status.clear()
