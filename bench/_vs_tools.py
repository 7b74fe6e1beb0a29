"""Running each tool the same way (a timed run, a timed prepare, the run data) and reading
what it reports: oltplab's run.json, sysbench's final report."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from contextlib import nullcontext
from pathlib import Path

from _common import host_busy_pct, oltplab_argv, wait_idle
from _vs_floor import FLOOR, floor_args, parse_floor
from _vs_pin import client_prefix, pinned_apart
from _vs_run import Run
from _vs_server import counter_deltas, server_counters, server_cpu_total_s
from _vs_watch import last_line, watch

from oltplab.exceptions import ConfigError
from oltplab.rundir import load_run
from oltplab.servers import ManagedServer
from oltplab.sysbench_import.parse import parse_log

SYSBENCH = "sysbench"
# A run that has not ended this long after its --time is stopped (sysbench waits for ever
# on a server that stopped answering).
RUN_GRACE_S = 300.0


def sysbench_db_args(server: ManagedServer, transport: str = "tcp") -> list[str]:
    """sysbench's own connection options for the server's benchmark account, over loopback
    TCP (pinned or not) or the server's Unix socket (`--mysql-socket`; libpq takes a
    directory as its host)."""
    driver = "mysql" if server.engine == "mariadb" else "pgsql"
    if transport != "socket":
        where = [f"--{driver}-host={server.host}", f"--{driver}-port={server.port}"]
    elif driver == "mysql":
        where = [f"--mysql-socket={server.socket_path}"]
    else:
        where = [f"--pgsql-host={server.socket_path.parent}", f"--pgsql-port={server.port}"]
    return [
        f"--db-driver={driver}", *where, f"--{driver}-user={server.user}",
        f"--{driver}-password={server.password}", f"--{driver}-db={server.database}",
    ]  # fmt: skip


def oltplab_url(server: ManagedServer, transport: str) -> str:
    return server.socket_url if transport == "socket" else server.url


def data_args(tables: int, table_size: int) -> list[str]:
    return [f"--tables={tables}", f"--table-size={table_size}"]


# A second oltplab, the one before a change: its package is found first on PYTHONPATH (--before).
BEFORE = "oltplab-before"
# bench/lua_vs_sysbench.py: a workload that is a path to a .lua file is that script, run by
# oltplab and sysbench alike; NATIVE is oltplab's native workload of the script's name (the
# copies are named SCRIPT_PREFIX + a built-in's name, so that the script itself runs).
NATIVE = "oltplab-native"
SCRIPT_PREFIX = "lua_"


def is_script(workload: str) -> bool:
    return workload.endswith(".lua")


def native_of(script: str) -> str:
    return Path(script).stem.removeprefix(SCRIPT_PREFIX)


def oltplab_for(tool: str, args: argparse.Namespace, *oltplab_args: str) -> list[str]:
    """The command line of `tool`, "oltplab" (this checkout's) or BEFORE."""
    argv = oltplab_argv(*oltplab_args)
    if tool != BEFORE:
        return argv
    return ["env", f"PYTHONPATH={args.before}", *args.before_env, *argv]


def sysbench_version() -> str:
    try:
        done = subprocess.run([SYSBENCH, "--version"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"vs_sysbench.py: cannot run {SYSBENCH} ({e}); `make deps` installs it")
    return done.stdout.strip()


def parse_sysbench(stdout: str, run: Run) -> None:
    """tps, transactions, p95 and errors from sysbench's final report, read by `oltplab
    import`'s parser; a report cut short (the run was killed) leaves them unset."""
    try:
        found = parse_log(stdout, SYSBENCH).report
    except ConfigError:  # not sysbench's output: it failed before printing anything
        return
    if found is None:
        return
    run.transactions, run.tps = found.transactions, found.tps
    run.p95_ms = found.latency_pct_ms if found.percentile == 95 else None
    run.errors = found.errors + found.reconnects
    run.ok = run.transactions > 0


def parse_oltplab(run_dir: Path, run: Run) -> None:
    manifest_path = run_dir / "run.json"
    if not manifest_path.exists():
        return
    doc = load_run(run_dir).doc
    if doc.summary is None:
        run.error = doc.error or "no summary"
        return
    summary = doc.summary
    run.setup_s = summary.connect_s
    run.transactions = summary.transactions
    run.tps = summary.tps
    run.p95_ms = summary.latency_ms.p95
    run.errors = summary.errors.total + summary.reconnects
    run.ok = doc.complete and run.transactions > 0
    if doc.error:
        run.error = doc.error


def run_once(
    server: ManagedServer,
    tool: str,
    workload: str,
    threads: int,
    pair: int,
    args: argparse.Namespace,
    pgss: bool,
    transport: str = "tcp",
) -> Run:
    run = Run(server.engine, tool, workload, threads, pair, args.time,
              tables=args.tables, table_size=args.table_size, transport=transport)  # fmt: skip
    wait_idle(server)
    run.host_busy_pct_before = host_busy_pct(args.busy_window)
    common = [
        *data_args(args.tables, args.table_size), f"--threads={threads}", f"--time={args.time:g}",
        "--report-interval=0", "--percentile=95",
    ]  # fmt: skip
    over = "" if transport == "tcp" else f"-{transport}"
    name = Path(workload).stem
    out_dir = args.base_dir / "runs" / f"{server.engine}-{name}-{threads}{over}-{pair}-{tool}"
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    run.out_dir = str(out_dir)
    if tool == SYSBENCH:
        argv = [SYSBENCH, workload, *sysbench_db_args(server, transport), *common, "run"]
    elif tool == FLOOR:  # sysbench's options: it takes them
        argv = [str(args.floor_binary), workload, *sysbench_db_args(server, transport), *common,
                *floor_args(threads)]  # fmt: skip
    else:
        url = oltplab_url(server, transport)
        what = native_of(workload) if tool == NATIVE else workload
        argv = oltplab_for(tool, args, "run", what, f"--db={url}", *common, f"--out={out_dir}")
    pinned = transport == "pinned"
    argv = [*client_prefix(), *argv] if pinned else argv
    run.argv = [a.replace(server.password, "***") for a in argv]
    before = server_counters(server, pgss)
    server_cpu0 = server_cpu_total_s(server)
    with pinned_apart(server) if pinned else nullcontext():
        seen = watch(argv, args.time + RUN_GRACE_S, server.pid())
    wait_idle(server)  # PostgreSQL's backends count their statements when they exit
    server_cpu1 = server_cpu_total_s(server)
    run.counters = counter_deltas(before, server_counters(server, pgss))
    if server_cpu0 is not None and server_cpu1 is not None:
        run.server_cpu_s = server_cpu1 - server_cpu0
    run.client_cpu_total_s, run.wall_s = seen.cpu_total_s, seen.wall_s
    run.client_peak_rss_kb = seen.peak_rss_kb
    run.client_threads = seen.threads
    run.start_to_started_s = seen.started_s
    run.server_setup_cpu_s = seen.server_setup_cpu_s
    if seen.cpu_at_started is not None:
        run.client_setup_cpu_s = sum(seen.cpu_at_started)
    run.host_busy_pct_load = seen.busy_load_pct
    if seen.cpu_at_started is not None and seen.cpu_at_report is not None:
        (user0, kernel0), (user1, kernel1) = seen.cpu_at_started, seen.cpu_at_report
        run.client_cpu_load_s = (user1 + kernel1) - (user0 + kernel0)
        run.client_kernel_load_s = kernel1 - kernel0
    if seen.started_s is not None and seen.report_s is not None:
        run.load_wall_s = seen.report_s - seen.started_s
    if tool in (SYSBENCH, FLOOR):
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "stdout.txt").write_text(seen.stdout)
        (parse_sysbench if tool == SYSBENCH else parse_floor)(seen.stdout, run)
        run.setup_s = seen.started_s
    else:
        parse_oltplab(out_dir, run)
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
    if tool != SYSBENCH:
        argv = oltplab_for(tool, args, "prepare", workload, f"--db={server.url}", *common)
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
