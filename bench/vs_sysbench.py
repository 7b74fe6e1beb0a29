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
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from _common import DOCS, SPARE_CONNECTIONS, common_facts, fmt, get_ready, start_server, write_docs
from _vs_before_after import before_after_table
from _vs_compare import goals
from _vs_floor import FLOOR, floor_binary, runs_floor
from _vs_report import BEGIN, END, SECTION, docs_block, per_txn_text, report
from _vs_run import Run, from_json
from _vs_server import enable_pg_stat_statements, pg_stat_statements_available
from _vs_tools import BEFORE, load_run_data, prepare_once, run_once, sysbench_version

from oltplab.servers import ManagedServer

TOOLS = ("oltplab", "sysbench")
# With --before: the oltplab before a change first in each pair, then this one, then sysbench.
TOOLS_WITH_BEFORE = (BEFORE, "oltplab", "sysbench")
DEFAULT_CONFIGS = ["oltp_point_select=8,64", "oltp_read_write=8,64", "oltp_read_only=1024,4096"]
QUICK_CONFIGS = ["oltp_point_select=4", "oltp_read_write=4", "oltp_read_only=64"]
# Run again over the server's Unix socket (both tools), beside loopback TCP.
DEFAULT_SOCKET_CONFIGS = ["oltp_point_select=8", "oltp_read_write=8"]
QUICK_SOCKET_CONFIGS = ["oltp_point_select=4"]
# Run again over loopback TCP with the client on one core and the server on the others.
DEFAULT_PINNED_CONFIGS = ["oltp_point_select=8"]
QUICK_PINNED_CONFIGS: list[str] = []
# The largest MariaDB accepts; sysbench prepares (statement kinds x tables + 2) per connection.
MAX_PREPARED_STMT_COUNT = 4_194_304
STATEMENT_KINDS = 10  # oltp_read_write's 9 kinds, rounded up


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
    ap.add_argument(
        "--socket-configs", nargs="*", default=None, metavar="WORKLOAD=N,N",
        help="also run these over the server's Unix socket; none without a value "
        f"[{' '.join(DEFAULT_SOCKET_CONFIGS)}]",
    )  # fmt: skip
    ap.add_argument(
        "--pinned-configs", nargs="*", default=None, metavar="WORKLOAD=N,N",
        help="also run these pinned apart (the client on core 0, the server on the others); "
        f"none without a value [{' '.join(DEFAULT_PINNED_CONFIGS)}]",
    )  # fmt: skip
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
    ap.add_argument(
        "--before", type=Path, metavar="DIR",
        help=f"also run the oltplab package in DIR (first on PYTHONPATH: a copy of python/oltplab "
        f"with the engine before a change) as tool {BEFORE!r}, first in each pair; prints "
        "this checkout's / its ratios",
    )  # fmt: skip
    ap.add_argument(
        "--before-env", nargs="+", default=[], metavar="NAME=VALUE",
        help="environment of the --before runs only: with --before python (this checkout's "
        "package), one build A/B'd against itself with a setting, e.g. TOKIO_WORKER_THREADS=16",
    )  # fmt: skip
    ap.add_argument(
        "--floor", action="store_true",
        help="also run the floor client (bench/floor/floor_client.c: one send and the recv of "
        "its reply per statement, nothing else) after sysbench in each pair of the "
        "oltp_point_select and oltp_read_only configurations",
    )  # fmt: skip
    ap.add_argument("--no-sysbench", action="store_true",
                    help="run oltplab only (with --before: before and after)")  # fmt: skip
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
        "socket_configs": QUICK_SOCKET_CONFIGS if quick else DEFAULT_SOCKET_CONFIGS,
        "pinned_configs": QUICK_PINNED_CONFIGS if quick else DEFAULT_PINNED_CONFIGS,
    }  # fmt: skip
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.before_env and not args.before:
        sys.exit("vs_sysbench.py: --before-env needs --before DIR (e.g. --before python)")
    if any("=" not in e for e in args.before_env):
        sys.exit("vs_sysbench.py: --before-env takes NAME=VALUE, e.g. TOKIO_WORKER_THREADS=4")
    if args.prepare_pairs is None:
        args.prepare_pairs = args.pairs
    tools = TOOLS_WITH_BEFORE if args.before else TOOLS
    args.tools = tuple(t for t in tools if not (args.no_sysbench and t == "sysbench"))
    if args.floor:
        args.tools += (FLOOR,)
        args.floor_binary = floor_binary(args.base_dir)
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


def bench_server(
    engine: str, largest: int, args: argparse.Namespace, facts: dict[str, Any]
) -> tuple[ManagedServer, bool]:
    """A private server for `largest` connections (and the timed prepare's), its settings
    recorded in `facts`; whether pg_stat_statements counts its statements."""
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
    facts["servers"][server.display_name] = server.version
    facts["server_settings"][engine] = {"max_connections": max_conn, **extra}
    return server, pgss


def run_engine(
    engine: str,
    configs: Sequence[tuple[str, int, str]],
    args: argparse.Namespace,
    facts: dict[str, Any],
    runs: list[Run],
    prepares: list[Run],
) -> None:
    server, pgss = bench_server(engine, max(n for _, n, _ in configs), args, facts)
    try:
        for pair in range(1, args.prepare_pairs + 1):
            for tool in args.tools:
                p = prepare_once(server, tool, pair, args)
                prepares.append(p)
                print(f"{engine} prepare {tool} pair {pair}: {fmt(p.wall_s, '.1f')} s"
                      f"{'' if p.ok else ' FAILED: ' + str(p.error)}", file=sys.stderr)  # fmt: skip
        loaded = load_run_data(server, args)
        if pgss:
            pgss = enable_pg_stat_statements(server)
        print(f"{server.display_name} {server.version}: run data loaded in {loaded:.1f} s",
              file=sys.stderr)  # fmt: skip
        for workload, threads, transport in configs:
            for pair in range(1, args.pairs + 1):
                for tool in args.tools:
                    if tool == FLOOR and not runs_floor(workload):
                        continue
                    r = run_once(server, tool, workload, threads, pair, args, pgss, transport)
                    runs.append(r)
                    print(
                        f"{engine} {workload} {threads} {transport} pair {pair} {tool}: "
                        f"tps {r.tps:.0f}, "
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


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.from_json:
        runs, prepares, facts = from_json(args.from_json)
    else:
        runs, prepares, facts = measure(args, argv)
    # Before the report: a report that fails must not lose the measurements.
    if args.json:
        doc = {
            "facts": facts,
            "runs": [asdict(r) | {"cpu_per_txn_us": r.cpu_per_txn_us,
                                  "statements_per_txn": r.per_txn()} for r in runs],
            "prepares": [asdict(p) for p in prepares],
            "goals": [asdict(g) | {"met": g.met} for g in goals(runs, prepares)],
        }  # fmt: skip
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
    text = report(runs, prepares)
    if any(r.tool == BEFORE for r in runs):
        text += "\n" + before_after_table(runs)
    print(text)
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
    other_transports = [(w, n, "socket") for w, n in parse_configs(args.socket_configs)]
    other_transports += [(w, n, "pinned") for w, n in parse_configs(args.pinned_configs)]
    configs_for = {
        e: [
            (w, n, "tcp")
            for w, n in parse_configs(
                args.pg_configs if e == "postgresql" and args.pg_configs else args.configs
            )
        ]
        + other_transports
        for e in engines
    }
    largest = max(n for cs in configs_for.values() for _, n, _ in cs)
    get_ready(largest, args.base_dir)
    facts = common_facts(args, argv) | {
        "sysbench": sysbench_version(),
        "pairs": args.pairs,
        "floor": args.floor,
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
