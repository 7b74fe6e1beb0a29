"""The floor client (bench/floor/floor_client.c) as a third tool of vs_sysbench.py --floor:
oltp_point_select and oltp_read_only reduced to one send(2) and the recv(2) of its reply per
statement, with next to nothing else, so that its CPU per transaction is what any client making
those calls pays, measured in the same pairs as oltplab and sysbench."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from _common import fmt
from _vs_compare import configs_of, median, ratio, tools_by_pair
from _vs_run import Run

FLOOR = "floor"
SOURCE = Path(__file__).resolve().parent / "floor" / "floor_client.c"
# The workloads it runs, with sysbench's default options.
WORKLOADS = ("oltp_point_select", "oltp_read_only")
# Up to this many connections a thread each, blocking in recv(2), beyond it epoll threads: as
# oltplab's engine threads (crates/oltplab-engine/src/exec/runtime.rs).
THREAD_PER_CONNECTION_UP_TO = 64


def runs_floor(workload: str) -> bool:
    return workload in WORKLOADS


def floor_args(threads: int) -> list[str]:
    """How the floor waits at `threads` connections: as oltplab does at that many, a thread per
    connection or one epoll thread per 4 cores."""
    if threads <= THREAD_PER_CONNECTION_UP_TO:
        return []
    return [f"--event-threads={-(-(os.cpu_count() or 1) // 4)}"]


def floor_binary(base_dir: Path) -> Path:
    """Compiles the floor client into `base_dir` (again when its source is newer); exits with
    what to install when the vendors' client headers are missing."""
    binary = base_dir / "floor_client"
    if binary.exists() and binary.stat().st_mtime >= SOURCE.stat().st_mtime:
        return binary
    try:
        flags = subprocess.run(["mariadb_config", "--cflags", "--libs"], capture_output=True,
                               text=True, check=True).stdout.split()  # fmt: skip
        pg_include = subprocess.run(["pg_config", "--includedir"], capture_output=True,
                                    text=True, check=True).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        sys.exit("vs_sysbench.py: --floor compiles bench/floor/floor_client.c against libmariadb "
                 "and libpq: apt-get install libmariadb-dev libpq-dev")  # fmt: skip
    base_dir.mkdir(parents=True, exist_ok=True)
    cc = shutil.which("cc") or "gcc"
    argv = [cc, "-O2", "-o", str(binary), str(SOURCE), *flags, f"-I{pg_include}", "-lpq",
            "-lpthread"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"vs_sysbench.py: cannot compile the floor client: {done.stderr.strip()}")
    return binary


def parse_floor(stdout: str, run: Run) -> None:
    """Its last line: {"transactions": N, "seconds": S, ...}."""
    lines = stdout.strip().splitlines()
    try:
        doc = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        return
    run.transactions = int(doc.get("transactions", 0))
    seconds = float(doc.get("seconds", 0.0))
    run.tps = run.transactions / seconds if seconds > 0 else 0.0
    run.ok = run.transactions > 0


def floor_table(runs: Sequence[Run]) -> str:
    """Per configuration the floor's CPU per statement (user + kernel), and each tool's CPU and
    user time over the floor's: medians of the runs, and of the pairs' ratios."""
    rows = []
    for engine, workload, threads, transport in configs_of(runs):
        config = (engine, workload, threads, transport)
        pairs = [d for d in tools_by_pair(runs, config, ok_only=True) if FLOOR in d]
        if not pairs:
            continue
        floors = [d[FLOOR] for d in pairs]
        cells = [
            f"{fmt(median([f.cpu_per_txn_us for f in floors]), '.2f')} "
            f"({fmt(median([f.user_per_txn_us for f in floors]), '.2f')} + "
            f"{fmt(median([f.kernel_per_txn_us for f in floors]), '.2f')})"
        ]
        for tool in ("oltplab", "sysbench"):
            both = [(d[tool], d[FLOOR]) for d in pairs if tool in d]
            cpu = median([ratio(t.cpu_per_txn_us, f.cpu_per_txn_us) for t, f in both])
            user = median([ratio(t.user_per_txn_us, f.user_per_txn_us) for t, f in both])
            cells.append(f"{fmt(cpu, '.2f')} · {fmt(user, '.2f')}")
        head = f"| {engine} | {workload} | {threads:,} | {transport} | {len(pairs)} | "
        rows.append(head + " | ".join(cells) + " |")
    if not rows:
        return ""
    return (
        "The floor client (bench/floor/floor_client.c: one send and the recv of its reply per "
        "statement, nothing else), medians of the pairs\n\n"
        "| server | workload | threads | over | pairs | floor CPU/txn µs (user + kernel) | "
        "oltplab / floor: CPU · user | sysbench / floor: CPU · user |\n"
        "|---|---|--:|---|--:|---|---|---|\n" + "\n".join(rows) + "\n"
    )
