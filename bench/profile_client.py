#!/usr/bin/env python3
"""Where a benchmark client's CPU goes, per transaction (issue 22): oltplab or sysbench against
a server that is already running and prepared, the same load for both.

For one tool, workload and thread count it runs the client three times, `--time` seconds each:

1. plain: user and system CPU per transaction of the whole client process (/proc, from its
   "Threads started!" line to its report, as bench/vs_sysbench.py measures it);
2. `perf record -g` (cpu-clock, user and kernel) attached to it during its load (start-up,
   connecting and the report left out): the samples grouped by what the code
   does (kernel, protocol encode/parse, driver futures and caches, row and value allocation,
   runtime scheduling, workload code, recorders, ...), in % of the client's CPU and in µs per
   transaction;
3. `strace -c -f` attached the same way: system calls per transaction, by call (the
   transactions of the window estimated from the run's, in proportion to the time);
4. `perf stat` attached the same way: per transaction, the CPU (task-clock), context switches,
   the wake-ups the client makes (sched:sched_wakeup) and the socket and polling calls;
5. the readiness waits' batches, attached the same way (perf's syscall exit tracepoints):
   how many sockets each `epoll_wait` (sysbench: `poll`) returns ready, and the reads that
   found nothing (`EAGAIN`), per transaction.

With `--server-pid` (the server's process: MariaDB's, or PostgreSQL's postmaster) the plain
run also splits the set-up (from the client's start to "Threads started!") into the client's
CPU and the server's.

    .venv/bin/python bench/profile_client.py --tool oltplab --db mysql://sb:PW@127.0.0.1:3306/sb \\
        --workload oltp_point_select --threads 8 --time 10 --tables 1 --table-size 10000
    .venv/bin/python bench/profile_client.py --tool sysbench --db ... (the same)

The figures are of one run each: on a shared host, alternate the tools and repeat. See
docs/performance-engine.md ("Issue 22: the profile").
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from _common import oltplab_argv
from _vs_tools import SYSBENCH
from _vs_watch import watch

# What each group's symbols look like (the first rule that matches takes the sample).
GROUP_PATTERNS = [
    ("kernel", r"^\[kernel|\[k\]"),
    ("recorders (histograms, counters)", r"hdrhistogram|oltplab_engine::stats"),
    ("workload code (statements, random numbers)", r"oltplab_engine::(workload|rand)|lj_|luaL?_"),
    ("executor (events, clock, schedule)", r"oltplab_engine::exec|clock_gettime"),
    (
        "runtime scheduling (tasks, wake-ups, epoll)",
        r"tokio::(runtime|sync|task|time)|mio::|parking_lot|std::sys::.*(futex|thread)"
        r"|pthread_|__lll_|futex|sb_(timer|barrier)|sb_thread",
    ),
    (
        "row and value allocation (malloc, Row, Value)",
        r"malloc|_int_free|\bfree\b|cfree|realloc|alloc::|mysql_common::(value|row)"
        r"|driver::Value|tcache|arena",
    ),
    (
        "driver futures and caches",
        r"mysql_async|tokio_postgres|crossbeam|\blru\b|futures_util|twox|tokio_util"
        r"|oltplab_engine::driver::(mod|Conn)|core::future|Pin<",
    ),
    (
        "protocol encode/parse",
        r"mysql_common|postgres_protocol|oltplab_engine::driver|bytes::|mysql_|mthd_|ma_"
        r"|net_|my_|libmariadb|libmysqlclient|libpq|pq[A-Z]|PQ|memcpy|memmove|memchr|memset",
    ),
    ("Python", r"libpython|_Py|Py[A-Z]"),
    ("libc, other", r"libc[.-]|__libc|__GI_"),
]
GROUPS = [(name, re.compile(pattern)) for name, pattern in GROUP_PATTERNS]
# perf stat's events: the client's CPU, its switches, the wake-ups it makes, its socket calls.
STAT_EVENTS = (
    "task-clock", "context-switches", "cpu-migrations", "sched:sched_wakeup",
    *(f"syscalls:sys_enter_{call}" for call in ("sendto", "recvfrom", "epoll_wait", "poll",
                                                "ppoll", "futex", "read", "write")),
)  # fmt: skip
OTHER = "other (unresolved symbols)"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--tool", choices=["oltplab", "sysbench"], required=True)
    ap.add_argument("--db", required=True, help="mysql://... or postgresql://... (?socket= too)")
    ap.add_argument("--workload", default="oltp_point_select")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--time", type=float, default=10.0, help="seconds of load per run [10]")
    ap.add_argument("--tables", type=int, default=1)
    ap.add_argument("--table-size", type=int, default=10_000)
    ap.add_argument("--skip", default="", help="comma-separated: plain, perf, strace, stat, batch")
    ap.add_argument("--server-pid", type=int, help="the server's pid: its CPU during the set-up")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    return ap.parse_args(argv)


def sysbench_args(url: str) -> list[str]:
    """sysbench's connection options for a oltplab --db URL."""
    u = urlsplit(url)
    params = {k: v[0] for k, v in parse_qs(u.query).items()}
    user, password = unquote(u.username or ""), unquote(u.password or "")
    db = u.path.lstrip("/")
    if u.scheme.startswith("mysql") or u.scheme == "mariadb":
        where = ([f"--mysql-socket={params['socket']}"] if "socket" in params
                 else [f"--mysql-host={u.hostname}", f"--mysql-port={u.port or 3306}"])  # fmt: skip
        return ["--db-driver=mysql", *where, f"--mysql-user={user}",
                f"--mysql-password={password}", f"--mysql-db={db}"]  # fmt: skip
    host = params.get("socket", u.hostname or "127.0.0.1")
    return ["--db-driver=pgsql", f"--pgsql-host={host}", f"--pgsql-port={u.port or 5432}",
            f"--pgsql-user={user}", f"--pgsql-password={password}", f"--pgsql-db={db}"]  # fmt: skip


def client_argv(args: argparse.Namespace, out: Path) -> list[str]:
    common = [
        f"--tables={args.tables}", f"--table-size={args.table_size}",
        f"--threads={args.threads}", f"--time={args.time:g}", "--report-interval=0",
    ]  # fmt: skip
    if args.tool == "oltplab":
        return oltplab_argv("run", args.workload, f"--db={args.db}", *common, f"--out={out}")
    return [SYSBENCH, args.workload, *sysbench_args(args.db), *common, "run"]


def transactions(args: argparse.Namespace, stdout: str, out: Path) -> int:
    if args.tool == "oltplab":
        return int(json.loads((out / "run.json").read_text())["summary"]["transactions"])
    found = re.search(r"transactions:\s+(\d+)", stdout)
    return int(found.group(1)) if found else 0


def plain(args: argparse.Namespace, tmp: Path) -> dict[str, float]:
    out = tmp / "plain"
    seen = watch(client_argv(args, out), args.time + 300, args.server_pid)
    txns = transactions(args, seen.stdout, out)
    if seen.cpu_at_started is None or seen.cpu_at_report is None or not txns:
        sys.exit(f"profile_client.py: the run failed: {seen.stderr[-500:]}")
    (u0, k0), (u1, k1) = seen.cpu_at_started, seen.cpu_at_report
    return {"transactions": txns, "user_us_per_txn": 1e6 * (u1 - u0) / txns,
            "kernel_us_per_txn": 1e6 * (k1 - k0) / txns,
            "setup_s": seen.started_s or 0.0, "setup_client_cpu_s": u0 + k0,
            "setup_server_cpu_s": seen.server_setup_cpu_s or 0.0}  # fmt: skip


def group_of(line: str) -> str:
    return next((name for name, pattern in GROUPS if pattern.search(line)), OTHER)


def attached(args: argparse.Namespace, out: Path, tracer: list[str]) -> tuple[int, float, int]:
    """Runs the client and, once its load has started ("Threads started!"), `tracer` attached
    to it (`-p PID` is added unless it traces the whole system, `-a`) for the middle of the
    load: start-up, connecting and the report stay out. Returns the client's transactions, the
    share of its load the tracer saw and the client's pid."""
    # From 1 s into the load to 2 s before its end: perf or strace may take a moment to
    # attach on a busy host, and the process's exit (Python's finalisation) stays out.
    window_s = max(args.time - 3.0, 1.0)
    client = subprocess.Popen(client_argv(args, out), stdout=subprocess.PIPE, text=True)
    assert client.stdout is not None
    lines = []
    for line in client.stdout:
        lines.append(line)
        if "Threads started!" in line:
            break
    time.sleep(1.0)
    # perf stops when its `sleep` does; strace (it takes no command with -p) on SIGINT.
    strace = tracer[0] == "strace"
    target = [] if "-a" in tracer else ["-p", str(client.pid)]  # -a: the whole system
    argv = [*tracer, *target, *([] if strace else ["--", "sleep", f"{window_s:g}"])]
    traced = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if strace:
        time.sleep(window_s)
        traced.send_signal(signal.SIGINT)
    traced.wait()
    lines += client.stdout.readlines()
    client.wait()
    return transactions(args, "".join(lines), out), window_s / args.time, client.pid


def perf_groups(args: argparse.Namespace, tmp: Path) -> dict[str, float]:
    """Each group's share of the client's samples during its load, in %."""
    data = tmp / "perf.data"
    attached(args, tmp / "perf-run", ["perf", "record", "-q", "-e", "cpu-clock", "-F", "2000",
                                      "-g", "-o", str(data)])  # fmt: skip
    report = subprocess.run(
        ["perf", "report", "-i", str(data), "--stdio", "--no-children", "--sort", "dso,sym",
         "-g", "none", "--percent-limit", "0"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    shares: dict[str, float] = {}
    for line in report.splitlines():
        found = re.match(r"\s*([\d.]+)%\s+(.*)", line)
        if found:
            group = group_of(found.group(2))
            shares[group] = shares.get(group, 0.0) + float(found.group(1))
    return shares


def strace_calls(args: argparse.Namespace, tmp: Path) -> dict[str, float]:
    """System calls per transaction during the load, by call."""
    log = tmp / "strace.txt"
    txns, seen, _ = attached(args, tmp / "strace-run", ["strace", "-c", "-f", "-o", str(log)])
    calls: dict[str, float] = {}
    for line in log.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] != "total":
            calls[parts[-1]] = int(parts[3]) / max(txns * seen, 1)
    return dict(sorted(calls.items(), key=lambda kv: -kv[1]))


def perf_stat(args: argparse.Namespace, tmp: Path) -> dict[str, float]:
    """perf stat's counts per transaction during the load (task-clock in µs)."""
    log = tmp / "perf-stat.csv"
    tracer = ["perf", "stat", "-x", ",", "-o", str(log), "-e", ",".join(STAT_EVENTS)]
    txns, seen, _ = attached(args, tmp / "stat-run", tracer)
    per_txn = max(txns * seen, 1)
    counts: dict[str, float] = {}
    for line in log.read_text().splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[0].replace(".", "", 1).isdigit():
            value, name = float(fields[0]), fields[2].removeprefix("syscalls:sys_enter_")
            counts[name] = value * 1e3 / per_txn if name == "task-clock" else value / per_txn
    return counts


BATCH_CALLS = ("epoll_wait", "poll", "recvfrom", "sendto", "read", "write")


def wait_batches(args: argparse.Namespace, tmp: Path) -> dict[str, float]:
    """Per transaction during the load: the socket and readiness calls the client's threads
    make, how many sockets each readiness wait returns ready (mean, and the share returning
    one) and the reads that found nothing (EAGAIN). Traced system-wide (the syscall exit
    tracepoints; perf attached to each of sysbench's 4,096 threads would need more file
    descriptors than it may open), the client's process picked out by its pid."""
    data = tmp / "batch.data"
    events = (a for call in BATCH_CALLS for a in ("-e", f"syscalls:sys_exit_{call}"))
    tracer = ["perf", "record", "-q", "-a", "-o", str(data), *events]
    txns, seen, pid = attached(args, tmp / "batch-run", tracer)
    script = subprocess.run(["perf", "script", "-i", str(data), "-F", "pid,event,trace"],
                            check=True, capture_output=True, text=True).stdout  # fmt: skip
    ready: list[int] = []
    calls = dict.fromkeys(BATCH_CALLS, 0)
    empty_reads = 0
    for line in script.splitlines():
        found = re.search(r"^\s*(\d+)\s.*sys_exit_(\w+).*0x([0-9a-f]+)\s*$", line)
        if not found or int(found.group(1)) != pid:
            continue
        call, ret = found.group(2), int(found.group(3), 16)
        ret = ret - (1 << 64) if ret >= 1 << 63 else ret
        calls[call] += 1
        if call in ("epoll_wait", "poll") and ret >= 0:
            ready.append(ret)
        elif ret == -11:  # EAGAIN: a read that found nothing
            empty_reads += 1
    per_txn = max(txns * seen, 1)
    return {**{f"{call}_per_txn": n / per_txn for call, n in calls.items()},
            "ready_per_wait": sum(ready) / max(len(ready), 1),
            "waits_returning_one_pct": 100 * sum(r == 1 for r in ready) / max(len(ready), 1),
            "empty_reads_per_txn": empty_reads / per_txn}  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    skip = set(args.skip.split(","))
    # sysbench's libpq would use TLS whenever the server offers it (sslmode "prefer"; the test
    # servers do), where oltplab's URL without ?sslmode= is plaintext: the same for both.
    os.environ["PGSSLMODE"] = parse_qs(urlsplit(args.db).query).get("sslmode", ["disable"])[0]
    result: dict[str, object] = {"tool": args.tool, "workload": args.workload,
                                 "threads": args.threads}  # fmt: skip
    total = 0.0
    with tempfile.TemporaryDirectory(prefix="oltplab-profile-") as d:
        tmp = Path(d)
        if "plain" not in skip:
            cpu = plain(args, tmp)
            result["cpu"] = cpu
            total = cpu["user_us_per_txn"] + cpu["kernel_us_per_txn"]
            user, kernel = cpu["user_us_per_txn"], cpu["kernel_us_per_txn"]
            print(f"{args.tool} {args.workload} {args.threads}: {total:.1f} µs CPU/txn "
                  f"(user {user:.1f}, kernel {kernel:.1f}); set-up {cpu['setup_s']:.2f} s, "
                  f"CPU: client {cpu['setup_client_cpu_s']:.2f} s, "
                  f"server {cpu['setup_server_cpu_s']:.2f} s")  # fmt: skip
        if "perf" not in skip:
            shares = perf_groups(args, tmp)
            result["perf_pct"] = shares
            for group, pct in sorted(shares.items(), key=lambda kv: -kv[1]):
                per = f", {pct / 100 * total:.2f} µs/txn" if "plain" not in skip else ""
                print(f"  {pct:5.1f} %  {group}{per}")
        if "strace" not in skip:
            calls = strace_calls(args, tmp)
            result["syscalls_per_txn"] = calls
            top = ", ".join(f"{name} {n:.2f}" for name, n in list(calls.items())[:6])
            print(f"  syscalls/txn: {sum(calls.values()):.2f} ({top})")
        if "stat" not in skip:
            counts = perf_stat(args, tmp)
            result["perf_stat_per_txn"] = counts
            shown = (f"{name} {n:.2f}{' µs' if name == 'task-clock' else ''}"
                     for name, n in counts.items())  # fmt: skip
            print("  per txn: " + ", ".join(shown))
        if "batch" not in skip:
            batches = wait_batches(args, tmp)
            result["wait_batches"] = batches
            print("  readiness waits: " + ", ".join(f"{k} {v:.2f}" for k, v in batches.items()))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
