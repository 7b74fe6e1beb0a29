"""Reports the HTML tests share: synthesised runs of two configs at two connection counts,
repeated (a small lab's shape, with server.csv metrics and a stall), plus a real SQLite run."""

from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import oltplab
from oltplab.report.html import Report, build_report
from tests.report.synthetic_runs import Shape, write_run, write_server_csv

CONFIGS = (("one-thread-per-connection", 1.0, 60.0), ("pool-of-threads", 1.15, 0.0))
THREADS = (8, 32, 128)
STALL = (70.0, 3.0)  # the first config's first run at 32 threads stalls here (s, length)


@dataclass(frozen=True)
class Built:
    runs: tuple[Path, ...]
    report: Report
    html: Path


def make_runs(root: Path) -> tuple[Path, ...]:
    runs = []
    for label, speed, saw in CONFIGS:
        for threads in THREADS:
            for repeat in (1, 2):
                stalls = (STALL,) if (saw and threads == 32 and repeat == 1) else ()
                shape = Shape(
                    tps=1000 * speed * (1 + threads / 40) / (1 + threads / 400),
                    seconds=120,
                    sawtooth_period_s=saw,
                    stalls=stalls,
                    seed=threads * 7 + repeat + int(saw),
                )
                path = write_run(
                    root / f"{label}-{threads}-{repeat}",
                    shape,
                    label=label,
                    threads=threads,
                    variables={"thread_handling": label, "innodb_buffer_pool_size": "1073741824"},
                )
                if saw:
                    write_server_csv(path, shape)
                runs.append(path)
    db = f"sqlite://{root / 'sb.db'}"
    oltplab.prepare("oltp_point_select", db, table_size=1000)
    real = root / "sqlite-point-select"
    oltplab.run("oltp_point_select", db, out=real, threads=2, time=3, report_interval=0.25)
    return (*runs, real)


def build(root: Path) -> Built:
    runs = make_runs(root / "runs")
    report = build_report(runs)
    html = report.write_html(root / "report.html")
    return Built(runs, report, html)


class Tables(HTMLParser):
    """Every table's rows as lists of (data-value or text) per cell."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._table: str | None = None
        self._cell: list[str] | None = None
        self._value: str | None = None
        self._in_body = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self._table = a.get("id") or ""
            self.tables[self._table] = []
        elif tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body and self._table is not None:
            self.tables[self._table].append([])
        elif tag == "td" and self._in_body:
            self._cell, self._value = [], a.get("data-value")

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None and self._table is not None:
            text = "".join(self._cell).strip()
            self.tables[self._table][-1].append(self._value if self._value is not None else text)
            self._cell = None
        elif tag == "tbody":
            self._in_body = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
