#!/usr/bin/env python3
"""Side by side with sysbench: oltplab and sysbench 1.0.20 on the same server, data and load.

Starts a private MariaDB (and PostgreSQL) through oltplab.servers, times `prepare` of the
same tables by both tools, loads the run data once with oltplab (sysbench's tables, by
design), and then runs each configuration (workload x threads) with the two tools
alternately, oltplab then sysbench, --pairs times (A B A B). Each run is a subprocess measured
from outside: its CPU (user + sys, /proc) while the load ran, its peak RSS (VmHWM), the
connection set-up time, tps and p95 (run.json; sysbench's final report), and the server's
statement counters per transaction, which show that both tools did the same work. Reports
oltplab / sysbench ratios per pair and their medians against issue 6's goals; --write-docs
puts the tables into docs/performance.md ("Side by side with sysbench"), with the machine,
the versions, how busy the host was and the command.

    make build-release
    .venv/bin/python bench/vs_sysbench.py --quick                    # smoke test, ~3 min
    .venv/bin/python bench/vs_sysbench.py --write-docs               # MariaDB + PostgreSQL

See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from _common import (
    DOCS,
    SPARE_CONNECTIONS,
    Sampler,
    children,
    common_facts,
    cpu_s,
    cpu_times,
    cpu_user_kernel_s,
    fmt,
    get_ready,
    host_busy_pct,
    measured_on,
    oltplab_argv,
    per_txn_us,
    reproduce,
    start_server,
    table_head,
    wait_idle,
    write_docs,
)

from oltplab.servers import ManagedServer

SECTION = "## Side by side with sysbench"
BEGIN = "<!-- bench/vs_sysbench.py: begin (generated; edit the script, not this block) -->"
END = "<!-- bench/vs_sysbench.py: end -->"
TOOLS = ("oltplab", "sysbench")
SYSBENCH = "sysbench"
DEFAULT_CONFIGS = ["oltp_point_select=8,64", "oltp_read_write=8,64", "oltp_read_only=1024,4096"]
QUICK_CONFIGS = ["oltp_point_select=4", "oltp_read_write=4", "oltp_read_only=64"]
# The largest MariaDB accepts; sysbench prepares (statement kinds x tables + 2) per connection.
MAX_PREPARED_STMT_COUNT = 4_194_304
STATEMENT_KINDS = 10  # oltp_read_write's 9 kinds, rounded up
# MariaDB's counters of statements (SHOW GLOBAL STATUS), reported per transaction.
MARIADB_COUNTERS = (
    "Com_select", "Com_update", "Com_delete", "Com_insert", "Com_begin", "Com_commit",
    "Com_rollback", "Com_stmt_execute", "Com_stmt_prepare", "Questions",
)  # fmt: skip
PG_DATABASE_COUNTERS = (
    "xact_commit", "xact_rollback", "tup_fetched", "tup_inserted", "tup_updated", "tup_deleted",
)  # fmt: skip
PG_STAT_STATEMENTS_CONTROL = Path("/usr/share/postgresql")
# Shown per transaction in the table, in this order (the first word of the statement).
KINDS = ("select", "update", "delete", "insert", "begin", "commit")
# Statement counts per transaction match when they differ by less than this (retries after
# deadlocks and duplicate keys add a little to one tool or the other).
SAME_WORK_TOLERANCE = 0.02
# A run that has not ended this long after its --time is stopped (sysbench waits for ever
# on a server that stopped answering).
RUN_GRACE_S = 300.0


# -- one run -----------------------------------------------------------------------------------


@dataclass
class Run:
    """One run of a tool: `workload` is "prepare" for a timed prepare."""

    engine: str
    tool: str
    workload: str
    threads: int
    pair: int
    time_s: float
    ok: bool = False
    error: str | None = None
    transactions: int = 0
    tps: float = 0.0
    p95_ms: float | None = None
    errors: int = 0  # ignored errors + reconnects
    # Connection set-up: oltplab's run.json connect_s (opening and preparing every
    # connection, before the clock starts); sysbench: from its start to "Threads started!",
    # which it prints once every thread has connected and prepared its statements.
    setup_s: float | None = None
    start_to_started_s: float | None = None  # both tools: process start to "Threads started!"
    client_cpu_load_s: float | None = None  # /proc: from "Threads started!" to the report
    client_kernel_load_s: float | None = None  # its system (kernel) part
    load_wall_s: float | None = None
    client_cpu_total_s: float = 0.0  # wait4 rusage: the whole process, start-up to exit
    client_peak_rss_kb: int | None = None  # VmHWM, last sampled before it exited
    client_threads: int = 0
    server_cpu_s: float | None = None  # the server's CPU over the whole run, connect included
    host_busy_pct_before: float = 0.0  # all cores, this script's server idle
    host_busy_pct_load: float | None = None  # all cores, every process, while the load ran
    counters: dict[str, float] = field(default_factory=dict)  # server-side deltas
    argv: list[str] = field(default_factory=list)
    out_dir: str = ""
    tables: int = 0
    table_size: int = 0
    wall_s: float | None = None  # the process, start to exit

    @property
    def cpu_per_txn_us(self) -> float | None:
        return per_txn_us(self.client_cpu_load_s, self.transactions)

    @property
    def kernel_per_txn_us(self) -> float | None:
        return per_txn_us(self.client_kernel_load_s, self.transactions)

    @property
    def kernel_pct(self) -> float | None:
        cpu, kernel = self.client_cpu_load_s, self.client_kernel_load_s
        return None if cpu is None or kernel is None or cpu <= 0 else 100.0 * kernel / cpu

    @property
    def server_cpu_per_txn_us(self) -> float | None:
        return per_txn_us(self.server_cpu_s, self.transactions)

    @property
    def peak_rss_mb(self) -> float | None:
        return None if self.client_peak_rss_kb is None else self.client_peak_rss_kb / 1024

    def per_txn(self) -> dict[str, float]:
        """Server-side statement counts per transaction, by kind (see `statement_counts`)."""
        if not self.transactions:
            return {}
        return {k: v / self.transactions for k, v in statement_counts(self).items()}


def statement_counts(run: Run) -> dict[str, float]:
    """The server's statements of a run by kind (KINDS): MariaDB's Com_* counters;
    PostgreSQL's pg_stat_statements calls by first word (when loaded), else its commits."""
    c = run.counters
    if run.engine == "mariadb":
        return {k: c.get(f"Com_{k}", 0.0) for k in KINDS} | {
            "executes": c.get("Com_stmt_execute", 0.0)
        }
    # pg_stat_statements does not count BEGIN and COMMIT sent as prepared statements:
    # transactions are pg_stat_database's (an autocommit statement is one too).
    xact = {"commit": c.get("xact_commit", 0.0), "rollback": c.get("xact_rollback", 0.0)}
    if any(k.startswith("pgss_") for k in c):
        return {k: c.get(f"pgss_{k}", 0.0) for k in KINDS if k not in ("begin", "commit")} | xact
    return xact | {"tup_fetched": c.get("tup_fetched", 0.0)}


# -- talking to the tools ----------------------------------------------------------------------


def sysbench_db_args(server: ManagedServer) -> list[str]:
    """sysbench's own connection options for the server's benchmark account, over TCP."""
    driver, prefix = ("mysql", "mysql") if server.engine == "mariadb" else ("pgsql", "pgsql")
    return [
        f"--db-driver={driver}", f"--{prefix}-host={server.host}", f"--{prefix}-port={server.port}",
        f"--{prefix}-user={server.user}", f"--{prefix}-password={server.password}",
        f"--{prefix}-db={server.database}",
    ]  # fmt: skip


def data_args(tables: int, table_size: int) -> list[str]:
    return [f"--tables={tables}", f"--table-size={table_size}"]


def sysbench_version() -> str:
    try:
        done = subprocess.run([SYSBENCH, "--version"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"vs_sysbench.py: cannot run {SYSBENCH} ({e}); `make deps` installs it")
    return done.stdout.strip()


# sysbench's final report (1.0.20).
SB_TRANSACTIONS = re.compile(r"^\s*transactions:\s+(\d+)\s+\(([\d.]+) per sec\.\)", re.MULTILINE)
SB_P95 = re.compile(r"^\s*95th percentile:\s+([\d.]+)", re.MULTILINE)
SB_ERRORS = re.compile(r"^\s*(?:ignored errors|reconnects):\s+(\d+)", re.MULTILINE)


def parse_sysbench(report: str, run: Run) -> None:
    """tps, transactions, p95 and errors from sysbench's final report (a regex: the report's
    lines are fixed in 1.0.20)."""
    found = SB_TRANSACTIONS.search(report)
    if found is None:
        return
    run.transactions, run.tps = int(found.group(1)), float(found.group(2))
    p95 = SB_P95.search(report)
    run.p95_ms = float(p95.group(1)) if p95 else None
    run.errors = sum(int(n) for n in SB_ERRORS.findall(report))
    run.ok = run.transactions > 0


def parse_oltplab(run_dir: Path, run: Run) -> None:
    manifest_path = run_dir / "run.json"
    if not manifest_path.exists():
        return
    manifest = json.loads(manifest_path.read_text())
    summary = manifest["summary"]
    run.setup_s = summary.get("connect_s")
    run.transactions = summary["transactions"]
    run.tps = summary["tps"]
    run.p95_ms = summary["latency_ms"]["p95"]
    run.errors = summary["errors"]["total"] + summary.get("reconnects", 0)
    run.ok = bool(manifest.get("complete")) and run.transactions > 0
    if manifest.get("error"):
        run.error = str(manifest["error"])


# -- the server's side -------------------------------------------------------------------------


def server_counters(server: ManagedServer, pgss: bool) -> dict[str, float]:
    """Cumulative statement counters of the benchmark database (read when no client is
    connected: PostgreSQL's backends flush their counts when they exit)."""
    if server.engine == "mariadb":
        names = ", ".join(f"'{n}'" for n in MARIADB_COUNTERS)
        rows = server.query(f"SHOW GLOBAL STATUS WHERE Variable_name IN ({names})")
        return {name: float(value) for name, value in rows}
    cols = ", ".join(PG_DATABASE_COUNTERS)
    row = server.query(f"SELECT {cols} FROM pg_stat_database WHERE datname = '{server.database}'")
    out = {n: float(v) for n, v in zip(PG_DATABASE_COUNTERS, row[0], strict=True)} if row else {}
    if pgss:
        rows = server.query(
            "SELECT lower(split_part(ltrim(s.query), ' ', 1)), sum(s.calls) "
            "FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
            f"WHERE d.datname = '{server.database}' GROUP BY 1"
        )
        out |= {f"pgss_{kind}": float(calls) for kind, calls in rows}
    return out


def counter_deltas(before: Mapping[str, float], after: Mapping[str, float]) -> dict[str, float]:
    return {k: after[k] - before.get(k, 0.0) for k in after}


def server_cpu_total_s(server: ManagedServer) -> float | None:
    """The server's CPU so far: MariaDB's process; PostgreSQL's postmaster with its exited
    children (cutime + cstime) and its live ones."""
    pid = server.pid()
    if pid is None:
        return None
    if server.engine == "mariadb":
        return cpu_s(pid)
    own = cpu_s(pid, with_children=True) or 0.0
    return own + sum(cpu_s(child) or 0.0 for child in children(pid))


def enable_pg_stat_statements(server: ManagedServer) -> bool:
    try:
        server.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        server.query("SELECT pg_stat_statements_reset()")
    except Exception as e:  # the library is not loaded: fall back to pg_stat_database
        print(f"vs_sysbench.py: no pg_stat_statements ({e})", file=sys.stderr)
        return False
    return True


def pg_stat_statements_available() -> bool:
    return any(PG_STAT_STATEMENTS_CONTROL.glob("*/extension/pg_stat_statements.control"))


# -- running a client --------------------------------------------------------------------------


@dataclass
class Observed:
    """What watching a client process from outside gives."""

    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    started_s: float | None  # process start to "Threads started!"
    cpu_at_started: tuple[float, float] | None  # user, kernel
    cpu_at_report: tuple[float, float] | None
    report_s: float | None  # process start to the final report
    busy_load_pct: float | None
    cpu_total_s: float
    peak_rss_kb: int | None
    threads: int


def watch(argv: Sequence[str], timeout_s: float) -> Observed:
    """Runs `argv`, reading its output as it comes: the CPU of the process is read from /proc
    the moment it prints "Threads started!" and the moment its final report begins ("SQL
    statistics:", both tools), so the CPU in between is the load's alone."""
    env = os.environ | {"PYTHONUNBUFFERED": "1"}
    t0 = time.monotonic()
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    sampler = Sampler(proc.pid, server=None)
    sampler.start()
    killer = threading.Timer(timeout_s, proc.kill)
    killer.start()
    err: list[str] = []
    drain = threading.Thread(target=lambda: err.append(proc.stderr.read() if proc.stderr else ""))
    drain.start()
    started = cpu_started = report = cpu_report = None
    host0: tuple[int, int] | None = None
    busy = None
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        now = time.monotonic()
        lines.append(line)
        if started is None and line.startswith("Threads started!"):
            started, cpu_started, host0 = now - t0, cpu_user_kernel_s(proc.pid), cpu_times()
        elif report is None and line.startswith("SQL statistics:"):
            report, cpu_report = now - t0, cpu_user_kernel_s(proc.pid)
            if host0 is not None:
                busy1, total1 = cpu_times()
                busy = 100.0 * (busy1 - host0[0]) / max(total1 - host0[1], 1)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    killer.cancel()
    drain.join()
    sampler.done.set()
    sampler.join()
    return Observed(
        returncode=proc.returncode, stdout="".join(lines), stderr="".join(err), wall_s=wall,
        started_s=started, cpu_at_started=cpu_started, cpu_at_report=cpu_report,
        report_s=report, busy_load_pct=busy, cpu_total_s=usage.ru_utime + usage.ru_stime,
        peak_rss_kb=max((s.hwm_kb for s in sampler.samples), default=None),
        threads=max((s.threads for s in sampler.samples), default=0),
    )  # fmt: skip


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def run_once(
    server: ManagedServer,
    tool: str,
    workload: str,
    threads: int,
    pair: int,
    args: argparse.Namespace,
    pgss: bool,
) -> Run:
    run = Run(server.engine, tool, workload, threads, pair, args.time,
              tables=args.tables, table_size=args.table_size)  # fmt: skip
    wait_idle(server)
    run.host_busy_pct_before = host_busy_pct(args.busy_window)
    common = [
        *data_args(args.tables, args.table_size), f"--threads={threads}", f"--time={args.time:g}",
        "--report-interval=0", "--percentile=95",
    ]  # fmt: skip
    out_dir = args.base_dir / "runs" / f"{server.engine}-{workload}-{threads}-{pair}-{tool}"
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    run.out_dir = str(out_dir)
    if tool == "oltplab":
        argv = oltplab_argv("run", workload, f"--db={server.url}", *common, f"--out={out_dir}")
    else:
        argv = [SYSBENCH, workload, *sysbench_db_args(server), *common, "run"]
    run.argv = [a.replace(server.password, "***") for a in argv]
    before = server_counters(server, pgss)
    server_cpu0 = server_cpu_total_s(server)
    seen = watch(argv, args.time + RUN_GRACE_S)
    wait_idle(server)  # PostgreSQL's backends count their statements when they exit
    server_cpu1 = server_cpu_total_s(server)
    run.counters = counter_deltas(before, server_counters(server, pgss))
    if server_cpu0 is not None and server_cpu1 is not None:
        run.server_cpu_s = server_cpu1 - server_cpu0
    run.client_cpu_total_s, run.wall_s = seen.cpu_total_s, seen.wall_s
    run.client_peak_rss_kb = seen.peak_rss_kb
    run.client_threads = seen.threads
    run.start_to_started_s = seen.started_s
    run.host_busy_pct_load = seen.busy_load_pct
    if seen.cpu_at_started is not None and seen.cpu_at_report is not None:
        (user0, kernel0), (user1, kernel1) = seen.cpu_at_started, seen.cpu_at_report
        run.client_cpu_load_s = (user1 + kernel1) - (user0 + kernel0)
        run.client_kernel_load_s = kernel1 - kernel0
    if seen.started_s is not None and seen.report_s is not None:
        run.load_wall_s = seen.report_s - seen.started_s
    if tool == "oltplab":
        parse_oltplab(out_dir, run)
    else:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "stdout.txt").write_text(seen.stdout)
        parse_sysbench(seen.stdout, run)
        run.setup_s = seen.started_s
    if seen.returncode != 0 or not run.ok:
        run.ok = False
        reason = last_line(seen.stderr) or last_line(seen.stdout) or f"exit {seen.returncode}"
        run.error = run.error or reason.replace(server.password, "***")
    return run


def prepare_once(server: ManagedServer, tool: str, pair: int, args: argparse.Namespace) -> Run:
    """One timed `prepare` of --prepare-tables x --prepare-table-size on an empty database."""
    p = Run(server.engine, tool, "prepare", args.prepare_threads, pair, 0.0,
            tables=args.prepare_tables, table_size=args.prepare_table_size)  # fmt: skip
    server.recreate_database()  # drops the previous prepare's tables
    wait_idle(server)
    p.host_busy_pct_before = host_busy_pct(args.busy_window)
    common = [*data_args(p.tables, p.table_size), f"--threads={p.threads}"]
    workload = "oltp_read_write"
    if tool == "oltplab":
        argv = oltplab_argv("prepare", workload, f"--db={server.url}", *common)
    else:
        argv = [SYSBENCH, workload, *sysbench_db_args(server), *common, "prepare"]
    p.argv = [a.replace(server.password, "***") for a in argv]
    seen = watch(argv, RUN_GRACE_S * 4)
    p.wall_s, p.client_cpu_total_s = seen.wall_s, seen.cpu_total_s
    p.client_peak_rss_kb = seen.peak_rss_kb
    p.ok = seen.returncode == 0
    if not p.ok:
        p.error = (last_line(seen.stderr) or last_line(seen.stdout)).replace(server.password, "***")
    return p


def load_run_data(server: ManagedServer, args: argparse.Namespace) -> float:
    """The data every run uses, loaded once by oltplab (sysbench's tables and rows)."""
    server.recreate_database()
    t0 = time.monotonic()
    subprocess.run(
        oltplab_argv(
            "prepare", "oltp_read_write", f"--db={server.url}",
            *data_args(args.tables, args.table_size), f"--threads={min(args.tables, 8)}",
        ),
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return time.monotonic() - t0


# -- comparing ---------------------------------------------------------------------------------


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def median(values: Sequence[float | None]) -> float | None:
    have = [v for v in values if v is not None]
    return statistics.median(have) if have else None


# (label, how to read it from a run, format, what issue 6 wants of the ratio)
METRICS: list[tuple[str, Callable[[Run], float | None], str]] = [
    ("tps", lambda r: r.tps if r.ok else None, ".0f"),
    ("client CPU/txn µs", lambda r: r.cpu_per_txn_us if r.ok else None, ".1f"),
    ("peak RSS MB", lambda r: r.peak_rss_mb if r.ok else None, ".0f"),
    ("set-up s", lambda r: r.setup_s if r.ok else None, ".2f"),
    ("p95 ms", lambda r: r.p95_ms if r.ok else None, ".2f"),
]


@dataclass
class Goal:
    what: str
    engine: str
    target: str
    value: float | None
    note: str = ""

    @property
    def met(self) -> bool | None:
        if self.value is None:
            return None
        op, limit = self.target.split()
        return self.value >= float(limit) if op == "≥" else self.value <= float(limit)

    def verdict(self) -> str:
        return {None: "not measured", True: "**met**", False: "**not met**"}[self.met]


def pairs_of(
    runs: Sequence[Run], engine: str, workload: str, threads: int
) -> list[tuple[Run, Run]]:
    mine = [r for r in runs if (r.engine, r.workload, r.threads) == (engine, workload, threads)]
    by_pair: dict[int, dict[str, Run]] = {}
    for r in mine:
        by_pair.setdefault(r.pair, {})[r.tool] = r
    return [(d["oltplab"], d["sysbench"]) for _, d in sorted(by_pair.items()) if len(d) == 2]


def configs_of(runs: Sequence[Run]) -> list[tuple[str, str, int]]:
    return list(dict.fromkeys((r.engine, r.workload, r.threads) for r in runs))


def median_ratio(
    pairs: Sequence[tuple[Run, Run]], get: Callable[[Run], float | None]
) -> float | None:
    return median([ratio(get(o), get(s)) for o, s in pairs])


def same_work(o: Run, s: Run) -> tuple[bool | None, float]:
    """Whether the server did the same statements per transaction for both tools, and the
    largest relative difference. Within SAME_WORK_TOLERANCE plus the larger of the two
    tools' retry rates: a retried transaction (deadlock, duplicate key) sends statements
    again, and retries are the server's doing, not the tool's."""
    a, b = o.per_txn(), s.per_txn()
    if not a or not b:
        return None, 0.0
    retries = max(o.errors / max(o.transactions, 1), s.errors / max(s.transactions, 1))
    kinds = set(a) | set(b)
    if o.engine == "postgresql" and "select" in kinds:
        # PostgreSQL's transactions include every connection's set-up (each prepare's Sync
        # is one), many per run transaction at thousands of connections: compare the
        # statements that pg_stat_statements counts.
        kinds -= {"commit", "rollback"}
    worst = 0.0
    for k in kinds:
        x, y = a.get(k, 0.0), b.get(k, 0.0)
        if max(x, y) < 0.01:
            continue  # a kind neither sends
        worst = max(worst, abs(x - y) / max(x, y))
    return worst <= SAME_WORK_TOLERANCE + retries, worst


def per_txn_text(run: Run) -> str:
    pt = run.per_txn()
    if not pt:
        return "-"
    kinds = [k for k in (*KINDS, "rollback") if k in pt] or list(pt)
    return "/".join(f"{pt[k]:.2f}".rstrip("0").rstrip(".") for k in kinds)


def goals(runs: Sequence[Run], prepares: Sequence[Run]) -> list[Goal]:
    out = []
    for engine in dict.fromkeys(r.engine for r in runs):
        for _, workload, threads in [c for c in configs_of(runs) if c[0] == engine]:
            pairs = pairs_of(runs, engine, workload, threads)
            label = f"{workload} at {threads:,} threads"
            if threads == 8:
                cpu = median_ratio(pairs, METRICS[1][1])
                out.append(Goal(f"client CPU/txn, {label}", engine, "≤ 0.5", cpu,
                                kernel_floor(pairs)))  # fmt: skip
            if threads == 8 and workload == "oltp_point_select":
                tps = median_ratio(pairs, METRICS[0][1])
                out.append(Goal(f"throughput, {label}", engine, "≥ 1.05", tps))
            if threads == 4096:
                out += [
                    Goal(f"client CPU/txn, {label}", engine, "≤ 0.2",
                         median_ratio(pairs, METRICS[1][1]), kernel_floor(pairs)),
                    Goal(f"peak client RSS, {label}", engine, "≤ 0.1",
                         median_ratio(pairs, METRICS[2][1])),
                    Goal(f"connection set-up, {label}", engine, "≤ 0.2",
                         median_ratio(pairs, METRICS[3][1])),
                ]  # fmt: skip
    for engine in dict.fromkeys(p.engine for p in prepares):
        out.append(Goal("prepare time", engine, "≤ 0.5", prepare_ratio(prepares, engine)))
    return out


def kernel_floor(pairs: Sequence[tuple[Run, Run]]) -> str:
    """oltplab's kernel time per transaction over sysbench's whole CPU per transaction: the
    ratio oltplab would reach if its user-space code cost nothing."""
    ok = [(o, s) for o, s in pairs if o.ok and s.ok]
    floor = median([ratio(o.kernel_per_txn_us, s.cpu_per_txn_us) for o, s in ok])
    if floor is None:
        return ""
    return f"oltplab's kernel time alone: {floor:.2f} of sysbench's CPU/txn"


def prepare_ratio(prepares: Sequence[Run], engine: str) -> float | None:
    return median([ratio(o.wall_s, s.wall_s) for o, s in prepare_pairs(prepares, engine)])


def prepare_pairs(prepares: Sequence[Run], engine: str) -> list[tuple[Run, Run]]:
    by_pair: dict[int, dict[str, Run]] = {}
    for p in prepares:
        if p.engine == engine and p.ok:
            by_pair.setdefault(p.pair, {})[p.tool] = p
    return [(d["oltplab"], d["sysbench"]) for _, d in sorted(by_pair.items()) if len(d) == 2]


LEGEND = [
    "- *tps*, *p95*: run.json's summary; sysbench's final report.",
    "- *client CPU/txn*: user + system CPU of the client process (all threads, /proc) from its "
    '"Threads started!" line to its final report, over the transactions: the load alone, '
    "not start-up, connecting or the report. *client kernel %*: its system-time share.",
    "- *client peak RSS*: VmHWM of the client process, sampled every 50 ms until it exits "
    "(not wait4's ru_maxrss, which counts the pages a child shares with this script).",
    "- *set-up*: oltplab's `connect_s` (opening and preparing every connection); sysbench: "
    'from its start to "Threads started!", printed once every thread has connected and '
    "prepared its statements.",
    "- *server CPU/txn*: the server's CPU over the whole run (connecting included; "
    "PostgreSQL: the postmaster and its backends) over the transactions.",
    "- *statements/txn*: the server's own counts over the transactions. MariaDB: SHOW GLOBAL "
    "STATUS Com_select/update/delete/insert/begin/commit; PostgreSQL: pg_stat_statements' "
    "calls of select/update/delete/insert, then pg_stat_database's xact_commit/xact_rollback. "
    "*same work*: every count within 2 % (plus the retry rate: a retried transaction sends "
    "its statements again) between the tools; on PostgreSQL the statements only, since its "
    "transaction counts include each connection's set-up (every prepare is one).",
]


# -- tables ------------------------------------------------------------------------------------


def cell(o: float | None, s: float | None, spec: str, r: float | None = None) -> str:
    """`o / s (**ratio**)`; the ratio is o / s unless given (a median of ratios)."""
    r = ratio(o, s) if r is None else r
    return f"{fmt(o, spec)} / {fmt(s, spec)} (**{fmt(r, '.2f')}**)"


def summary_table(runs: Sequence[Run]) -> str:
    """Medians over the pairs: oltplab / sysbench (ratio = median of the pairs' ratios)."""
    head = table_head(
        ["server", "workload", "threads", "pairs", "tps", "client CPU/txn µs",
         "client kernel % oltplab · sysbench", "client peak RSS MB", "set-up s", "p95 ms",
         "server CPU/txn µs",
         "statements/txn oltplab · sysbench", "same work"], left=2,
    )  # fmt: skip
    rows = []
    for engine, workload, threads in configs_of(runs):
        pairs = pairs_of(runs, engine, workload, threads)
        ok = [(o, s) for o, s in pairs if o.ok and s.ok]
        cells = []
        for label, get, spec in METRICS:
            med_o = median([get(o) for o, _ in ok])
            med_s = median([get(s) for _, s in ok])
            cells.append(cell(med_o, med_s, spec, median_ratio(ok, get)))
            if label == "client CPU/txn µs":  # how much of it is the kernel's
                k_o = median([o.kernel_pct for o, _ in ok])
                k_s = median([s.kernel_pct for _, s in ok])
                cells.append(f"{fmt(k_o, '.0f')} · {fmt(k_s, '.0f')}")
        srv_o = median([o.server_cpu_per_txn_us for o, _ in ok])
        srv_s = median([s.server_cpu_per_txn_us for _, s in ok])
        work = [same_work(o, s) for o, s in ok]
        verdicts = {w for w, _ in work}
        worst = max((d for _, d in work), default=0.0)
        same = "-" if None in verdicts or not work else (
            f"yes (±{100 * worst:.1f} %)" if verdicts == {True} else f"NO (±{100 * worst:.1f} %)"
        )  # fmt: skip
        stmts = f"{per_txn_text(ok[0][0])} · {per_txn_text(ok[0][1])}" if ok else "-"
        failed = [r for o, s in pairs for r in (o, s) if not r.ok]
        note = f" ({len(failed)} failed)" if failed else ""
        rows.append(
            f"| {engine} | {workload} | {threads:,} | {len(ok)}{note} | " + " | ".join(cells)
            + f" | {fmt(srv_o, '.0f')} / {fmt(srv_s, '.0f')} | {stmts} | {same} |"
        )  # fmt: skip
    return head + "\n".join(rows) + "\n"


def pairs_table(runs: Sequence[Run]) -> str:
    """Every pair: the ratios, and how busy the host was before each run."""
    head = table_head(
        ["server", "workload", "threads", "pair", "tps", "CPU/txn", "peak RSS", "set-up", "p95",
         "host busy before: oltplab, sysbench", "host busy during load", "errors"], left=2,
    )  # fmt: skip
    rows = []
    for engine, workload, threads in configs_of(runs):
        for o, s in pairs_of(runs, engine, workload, threads):
            ratios = " | ".join(fmt(ratio(get(o), get(s)), ".2f") for _, get, _ in METRICS)
            fail = "; ".join(f"{r.tool}: {r.error}" for r in (o, s) if not r.ok)
            rows.append(
                f"| {engine} | {workload} | {threads:,} | {o.pair} | {ratios} "
                f"| {o.host_busy_pct_before:.0f} %, {s.host_busy_pct_before:.0f} % "
                f"| {fmt(o.host_busy_pct_load, '.0f')} %, {fmt(s.host_busy_pct_load, '.0f')} % "
                f"| {o.errors}, {s.errors}{'; ' + fail if fail else ''} |"
            )
    return head + "\n".join(rows) + "\n"


def prepare_table(prepares: Sequence[Run]) -> str:
    if not prepares:
        return ""
    head = table_head(
        ["server", "tables x rows", "threads", "pair", "wall s oltplab / sysbench (ratio)",
         "client CPU s", "client peak RSS MB", "host busy before"], left=2,
    )  # fmt: skip
    rows = []
    for engine in dict.fromkeys(p.engine for p in prepares):
        mine = [p for p in prepares if p.engine == engine]
        for o, s in prepare_pairs(mine, engine):
            rss_o = None if o.client_peak_rss_kb is None else o.client_peak_rss_kb / 1024
            rss_s = None if s.client_peak_rss_kb is None else s.client_peak_rss_kb / 1024
            rows.append(
                f"| {engine} | {o.tables} x {o.table_size:,} | {o.threads} | {o.pair} "
                f"| {cell(o.wall_s, s.wall_s, '.1f')} "
                f"| {o.client_cpu_total_s:.1f} / {s.client_cpu_total_s:.1f} "
                f"| {fmt(rss_o, '.0f')} / {fmt(rss_s, '.0f')} | {o.host_busy_pct_before:.0f} %, "
                f"{s.host_busy_pct_before:.0f} % |"
            )
        med = prepare_ratio(mine, engine)
        rows.append(f"| {engine} | median | | | **{fmt(med, '.2f')}** | | | |")
        for p in mine:
            if not p.ok:
                rows.append(f"| {engine} | {p.tool} pair {p.pair} failed: {p.error} | | | | | | |")
    return head + "\n".join(rows) + "\n"


def goals_lines(gs: Sequence[Goal]) -> list[str]:
    return [
        f"- {g.engine}: {g.what} {g.target} of sysbench's: {fmt(g.value, '.2f')} — {g.verdict()}"
        + (f" ({g.note})" if g.note else "")
        for g in gs
    ]


def report(runs: Sequence[Run], prepares: Sequence[Run]) -> str:
    parts = [
        "Medians of the pairs: oltplab / sysbench (**ratio**, the median of the pairs' ratios)",
        "",
        summary_table(runs),
        *LEGEND,
        "",
        "Issue 6's goals (oltplab / sysbench, medians of the pairs):",
        "",
        *goals_lines(goals(runs, prepares)),
        "",
        "Every pair (oltplab / sysbench ratios):",
        "",
        pairs_table(runs),
    ]
    if prepares:
        parts += ["Run:", "", prepare_table(prepares)]
    return "\n".join(parts)


def docs_block(runs: Sequence[Run], prepares: Sequence[Run], facts: dict[str, Any]) -> str:
    versions = ", ".join(f"{k} {v}" for k, v in facts["servers"].items())
    lines = [
        BEGIN,
        "",
        f"{measured_on(facts)}; "
        f"{facts['sysbench']}; {versions}. Run data: {facts['tables']} x "
        f"{facts['table_size']:,}-row tables loaded once per server; {facts['time_s']:g} s per "
        f"run, {facts['pairs']} pairs (oltplab then sysbench) per configuration, loopback TCP, "
        f"prepared statements, every other option at its default (both tools: the same). Server "
        f"settings: {facts['server_settings']}. Host CPU busy (all processes; 100 % = every "
        f"core) in the {facts['busy_window_s']:g} s before each run and while its load ran: in "
        "the per-pair table.",
        "",
        report(runs, prepares),
        *reproduce(facts["command"], END),
    ]
    return "\n".join(lines)


# -- main --------------------------------------------------------------------------------------


def parse_configs(items: Sequence[str]) -> list[tuple[str, int]]:
    out = []
    for item in items:
        workload, _, threads = item.partition("=")
        if not workload or not threads:
            sys.exit(f"vs_sysbench.py: --configs takes WORKLOAD=N,N..., not {item!r}")
        out += [(workload, int(n)) for n in threads.split(",") if n.strip()]
    return out


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--engines", default="mariadb,postgresql", help="[mariadb,postgresql]")
    ap.add_argument(
        "--configs", nargs="+", default=None, metavar="WORKLOAD=N,N",
        help=f"workloads and their thread counts [{' '.join(DEFAULT_CONFIGS)}]",
    )  # fmt: skip
    ap.add_argument("--pg-configs", nargs="+", default=None, metavar="WORKLOAD=N,N",
                    help="PostgreSQL's, when they differ [--configs]")  # fmt: skip
    ap.add_argument("--pairs", type=int, default=None, help="A B pairs per configuration [2]")
    ap.add_argument("--time", type=float, default=None, help="seconds of load per run [15]")
    ap.add_argument("--tables", type=int, default=None, help="run data: tables [4]")
    ap.add_argument("--table-size", type=int, default=None, help="run data: rows per table [10000]")
    ap.add_argument("--prepare-tables", type=int, default=None, help="timed prepare: tables [4]")
    ap.add_argument("--prepare-table-size", type=int, default=None,
                    help="timed prepare: rows per table [1000000]")  # fmt: skip
    ap.add_argument("--prepare-threads", type=int, default=4, help="timed prepare: threads [4]")
    ap.add_argument("--prepare-pairs", type=int, default=None,
                    help="timed prepare pairs; 0 skips it [--pairs]")  # fmt: skip
    ap.add_argument("--busy-window", type=float, default=2.0,
                    help="seconds of host CPU measured before each run [2]")  # fmt: skip
    ap.add_argument(
        "--server-var", action="append", default=[], metavar="ENGINE:NAME=VALUE",
        help="a server variable (repeatable), e.g. mariadb:innodb_buffer_pool_size=4G "
        "[mariadb:innodb_buffer_pool_size=2G: the timed prepare's 1.1 GB fits]",
    )  # fmt: skip
    ap.add_argument("--no-pg-stat-statements", action="store_true",
                    help="count PostgreSQL's commits only (pg_stat_database)")  # fmt: skip
    ap.add_argument(
        "--quick", action="store_true",
        help="smoke test: 1 pair, 3 s runs, small data, small thread counts",
    )  # fmt: skip
    ap.add_argument(
        "--base-dir", type=Path, default=Path("/var/tmp/oltplab-bench-vs-sysbench"),
        help="where the servers and run directories live (not under a 0700 directory)",
    )  # fmt: skip
    ap.add_argument("--engine-source", default=None,
                    help="where the engine under test was built from, for the report "
                    "[this checkout's `git describe --dirty`]")  # fmt: skip
    ap.add_argument("--keep-servers", action="store_true", help="leave the servers running")
    ap.add_argument("--json", type=Path, help="also write every measurement here")
    ap.add_argument(
        "--from-json", type=Path, metavar="FILE",
        help="measure nothing: report (and --write-docs) the runs of an earlier --json FILE",
    )  # fmt: skip
    ap.add_argument("--write-docs", action="store_true", help=f"update {DOCS.name} in docs/")
    args = ap.parse_args(argv)
    quick = args.quick
    defaults: dict[str, Any] = {
        "pairs": 1 if quick else 2, "time": 3.0 if quick else 15.0,
        "tables": 2 if quick else 4, "table_size": 1000 if quick else 10_000,
        "prepare_tables": 2 if quick else 4,
        "prepare_table_size": 20_000 if quick else 1_000_000,
        "configs": QUICK_CONFIGS if quick else DEFAULT_CONFIGS,
    }  # fmt: skip
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.prepare_pairs is None:
        args.prepare_pairs = args.pairs
    return args


def server_vars(args: argparse.Namespace, engine: str) -> dict[str, str | int]:
    out: dict[str, str | int] = {}
    if engine == "mariadb":
        out["innodb_buffer_pool_size"] = "2G"
    for item in args.server_var:
        which, _, assignment = item.partition(":")
        name, _, value = assignment.partition("=")
        if not name or not value:
            sys.exit(f"vs_sysbench.py: --server-var takes ENGINE:NAME=VALUE, not {item!r}")
        if which == engine:
            out[name] = value
    return out


def run_engine(
    engine: str,
    configs: Sequence[tuple[str, int]],
    args: argparse.Namespace,
    facts: dict[str, Any],
    runs: list[Run],
    prepares: list[Run],
) -> None:
    largest = max(n for _, n in configs)
    max_conn = max(largest, args.prepare_threads) + SPARE_CONNECTIONS
    extra = server_vars(args, engine)
    if engine == "mariadb":
        # sysbench prepares every statement on every connection (GH-217).
        need = max_conn * (STATEMENT_KINDS * max(args.tables, args.prepare_tables) + 2)
        extra.setdefault("max_prepared_stmt_count", min(MAX_PREPARED_STMT_COUNT, max(need, 16382)))
    pgss = engine == "postgresql" and not args.no_pg_stat_statements
    pgss = pgss and pg_stat_statements_available()
    if pgss:
        extra.setdefault("shared_preload_libraries", "pg_stat_statements")
    server = start_server(engine, args.base_dir, max_conn, extra)
    try:
        facts["servers"][server.display_name] = server.version
        facts["server_settings"][engine] = {"max_connections": max_conn, **extra}
        for pair in range(1, args.prepare_pairs + 1):
            for tool in TOOLS:
                p = prepare_once(server, tool, pair, args)
                prepares.append(p)
                print(f"{engine} prepare {tool} pair {pair}: {fmt(p.wall_s, '.1f')} s"
                      f"{'' if p.ok else ' FAILED: ' + str(p.error)}", file=sys.stderr)  # fmt: skip
        loaded = load_run_data(server, args)
        if pgss:
            pgss = enable_pg_stat_statements(server)
        print(f"{server.display_name} {server.version}: run data loaded in {loaded:.1f} s",
              file=sys.stderr)  # fmt: skip
        for workload, threads in configs:
            for pair in range(1, args.pairs + 1):
                for tool in TOOLS:
                    r = run_once(server, tool, workload, threads, pair, args, pgss)
                    runs.append(r)
                    print(
                        f"{engine} {workload} {threads} pair {pair} {tool}: tps {r.tps:.0f}, "
                        f"CPU/txn {fmt(r.cpu_per_txn_us, '.1f')} µs, peak RSS "
                        f"{fmt(r.peak_rss_mb, '.0f')} MB, set-up {fmt(r.setup_s, '.2f')} s, "
                        f"p95 {fmt(r.p95_ms, '.2f')} ms, statements/txn {per_txn_text(r)}, "
                        f"host busy before {r.host_busy_pct_before:.0f} %"
                        + ("" if r.ok else f" FAILED: {r.error}"),
                        file=sys.stderr,
                    )
    finally:
        if not args.keep_servers:
            server.stop()


def run_from(doc: Mapping[str, Any]) -> Run:
    """A Run from a --json file (earlier versions of this script wrote prepares with
    `client_cpu_s` and no workload)."""
    known = {f.name for f in fields(Run)}
    values = dict(doc)
    if "client_cpu_s" in values:
        values["client_cpu_total_s"] = values.pop("client_cpu_s")
    values.setdefault("workload", "prepare")
    values.setdefault("time_s", 0.0)
    return Run(**{k: v for k, v in values.items() if k in known})


def from_json(path: Path) -> tuple[list[Run], list[Run], dict[str, Any]]:
    doc = json.loads(path.read_text())
    runs = [run_from(r) for r in doc["runs"]]
    return runs, [run_from(p) for p in doc["prepares"]], doc["facts"]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.from_json:
        runs, prepares, facts = from_json(args.from_json)
    else:
        runs, prepares, facts = measure(args, argv)
    text = report(runs, prepares)
    print(text)
    if args.json:
        doc = {
            "facts": facts,
            "runs": [asdict(r) | {"cpu_per_txn_us": r.cpu_per_txn_us,
                                  "statements_per_txn": r.per_txn()} for r in runs],
            "prepares": [asdict(p) for p in prepares],
            "goals": [asdict(g) | {"met": g.met} for g in goals(runs, prepares)],
        }  # fmt: skip
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
    if args.write_docs:
        settings = facts["server_settings"]
        if isinstance(settings, dict):
            facts["server_settings"] = "; ".join(
                f"{e}: " + ", ".join(f"{k}={v}" for k, v in s.items()) for e, s in settings.items()
            )
        write_docs(docs_block(runs, prepares, facts), SECTION, BEGIN, END)
        print(f"wrote {DOCS}", file=sys.stderr)
    return 0 if all(r.ok for r in runs) and all(p.ok for p in prepares) else 1


def measure(
    args: argparse.Namespace, argv: Sequence[str] | None
) -> tuple[list[Run], list[Run], dict[str, Any]]:
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    configs_for = {
        e: parse_configs(args.pg_configs if e == "postgresql" and args.pg_configs else args.configs)
        for e in engines
    }
    largest = max(n for cs in configs_for.values() for _, n in cs)
    get_ready(largest, args.base_dir)
    facts = common_facts(args, argv) | {
        "sysbench": sysbench_version(),
        "pairs": args.pairs,
        "busy_window_s": args.busy_window,
        "server_settings": {},
    }
    runs: list[Run] = []
    prepares: list[Run] = []
    t0 = time.monotonic()
    for engine in engines:
        run_engine(engine, configs_for[engine], args, facts, runs, prepares)
    facts["total_s"] = round(time.monotonic() - t0)
    return runs, prepares, facts


if __name__ == "__main__":
    sys.exit(main())
