#!/usr/bin/env python3
"""oltplab's `tpcc` side by side with Percona-Lab/sysbench-tpcc on one private MariaDB.

sysbench-tpcc's Lua scripts are GPL and not part of oltplab: pass the directory of your own
copy (git clone https://github.com/Percona-Lab/sysbench-tpcc) with --tpcc-lua. Needs sysbench
1.0.20 (Debian's package) on PATH.

For each tool, on an empty database: `prepare` of --scale warehouses with --threads loaders
(wall time), then a `run` of --time seconds with --run-threads connections, measured from
outside: the client's CPU (user + sys, /proc, children included) and its transactions, so that
client CPU per transaction compares. Issue 14's goals: oltplab's prepare ≤ 0.3 of
sysbench-tpcc's, client CPU per New-Order ≤ 0.5 (both tools run 45% / 43.5% New-Orders, so
per transaction compares the same within 4%).

    make build-release
    .venv/bin/python bench/vs_sysbench_tpcc.py --tpcc-lua ~/src/sysbench-tpcc --scale 10

The two tools' data differ (sysbench-tpcc's is compressible and creates its indexes before the
load); the numbers say how long each tool takes to produce its own, not the same bytes.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import cpu_s, fmt, oltplab_argv, start_server

from oltplab.servers import ManagedServer


def _measured(argv: list[str], cwd: Path | None = None) -> tuple[float, float, str]:
    """(wall seconds, client CPU seconds, stdout) of one command, its children included."""
    start = time.monotonic()
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd
    )
    cpu = 0.0
    while proc.poll() is None:
        cpu = cpu_s(proc.pid, with_children=True) or cpu
        time.sleep(0.05)
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"{argv[0]} failed ({proc.returncode}): {err.strip()[-2000:]}")
    return time.monotonic() - start, cpu, out


def _sysbench(
    server: ManagedServer, lua_dir: Path, args: argparse.Namespace, *extra: str
) -> list[str]:
    return [
        "sysbench", str(lua_dir / "tpcc.lua"), "--db-driver=mysql", "--mysql-host=127.0.0.1",
        f"--mysql-port={server.port}", f"--mysql-user={server.user}",
        f"--mysql-password={server.password}", f"--mysql-db={server.database}",
        f"--scale={args.scale}", "--tables=1", "--use_fk=0", *extra,
    ]  # fmt: skip


def _oltplab(server: ManagedServer, args: argparse.Namespace, *extra: str) -> list[str]:
    return oltplab_argv(
        *extra[:1], "tpcc", "--db", server.url, "--scale", str(args.scale), *extra[1:]
    )


def _compare(
    server: ManagedServer, lua_dir: Path, args: argparse.Namespace, work: Path
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    server.recreate_database()
    wall, cpu, _ = _measured(
        _sysbench(server, lua_dir, args, f"--threads={args.threads}", "prepare"), lua_dir
    )
    out["sysbench_prepare_s"], out["sysbench_prepare_cpu_s"] = wall, cpu
    _, cpu, text = _measured(
        _sysbench(
            server, lua_dir, args, f"--threads={args.run_threads}", f"--time={args.time}", "run"
        ),
        lua_dir,
    )
    transactions = int(re.search(r"transactions:\s+(\d+)", text).group(1))  # type: ignore[union-attr]
    out["sysbench_cpu_per_txn_us"] = 1e6 * cpu / max(transactions, 1)
    out["sysbench_tps"] = transactions / args.time

    server.recreate_database()
    wall, cpu, _ = _measured(_oltplab(server, args, "prepare", "--threads", str(args.threads)))
    out["oltplab_prepare_s"], out["oltplab_prepare_cpu_s"] = wall, cpu
    run_dir = work / "oltplab-run"
    _, cpu, _ = _measured(
        _oltplab(server, args, "run", "--threads", str(args.run_threads), "--time", str(args.time),
                 "--report-interval", "0", "--out", str(run_dir))
    )  # fmt: skip
    summary = json.loads((run_dir / "run.json").read_text())["summary"]
    out["oltplab_cpu_per_txn_us"] = 1e6 * cpu / max(summary["transactions"], 1)
    out["oltplab_tps"] = summary["tps"]
    out["oltplab_tpmC"] = summary["tpcc"]["tpmC"]
    out["prepare_ratio"] = out["oltplab_prepare_s"] / out["sysbench_prepare_s"]
    out["cpu_per_txn_ratio"] = out["oltplab_cpu_per_txn_us"] / out["sysbench_cpu_per_txn_us"]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--tpcc-lua", type=Path, required=True, help="directory holding your copy of tpcc.lua"
    )
    p.add_argument("--scale", type=int, default=10)
    p.add_argument("--threads", type=int, default=8, help="loaders for prepare")
    p.add_argument("--run-threads", type=int, default=16)
    p.add_argument("--time", type=int, default=60)
    args = p.parse_args(argv)
    lua_dir = args.tpcc_lua.resolve()
    if not (lua_dir / "tpcc.lua").is_file():
        print(f"--tpcc-lua: no tpcc.lua in {lua_dir}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="vs-tpcc-") as tmp:
        work = Path(tmp)
        work.chmod(0o711)  # the server's account enters it
        server = start_server("mariadb", work, max_connections=args.run_threads + 50)
        try:
            result = _compare(server, lua_dir, args, work)
        finally:
            server.stop()
    for key, value in result.items():
        print(f"{key:<26} {fmt(value, '.3f')}")
    for name, key, goal in (
        ("prepare", "prepare_ratio", 0.3),
        ("CPU/txn", "cpu_per_txn_ratio", 0.5),
    ):
        verdict = "met" if result[key] <= goal else "NOT met"
        print(f"goal: {name} ratio {result[key]:.2f} <= {goal}: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
