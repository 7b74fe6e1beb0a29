#!/usr/bin/env python3
"""oltplab's `tpcc` side by side with Percona-Lab/sysbench-tpcc on private MariaDB and PostgreSQL.

sysbench-tpcc's Lua scripts are GPL and not part of oltplab: pass the directory of your own
copy (git clone https://github.com/Percona-Lab/sysbench-tpcc) with --tpcc-lua. Needs sysbench
1.0.20 (Debian's package) on PATH.

For each server and tool, on an empty database: `prepare` of --scale warehouses with --threads
loaders (wall time, sysbench-tpcc's fixed 30 s wait included: it is part of its prepare), then
a `run` of --time seconds at each --points connection count. Measured from outside, the same
way for both tools: the client command's CPU (user + sys from wait4, threads included) and its
peak RSS; New-Orders are counted on the server (the growth of SUM(d_next_o_id): committed
New-Orders, the same for both tools), so client CPU per New-Order compares even though the
mixes differ (45% vs 43.5% New-Orders). Issue 14's goals: prepare ≤ 0.3 of sysbench-tpcc's,
client CPU per New-Order ≤ 0.5 at 16 and at 1,024 connections.

    make build-release
    .venv/bin/python bench/vs_sysbench_tpcc.py --tpcc-lua ~/src/sysbench-tpcc --write-docs

The two tools' data differ (sysbench-tpcc's is compressible and creates its indexes before the
load); the numbers say how long each tool takes to produce its own, not the same bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import (
    DOCS,
    engine_build,
    fmt,
    get_ready,
    git_describe,
    host_busy_pct,
    machine,
    oltplab_argv,
    shown_args,
    start_server,
    wait_idle,
    write_docs,
)  # fmt: skip

import oltplab
from oltplab.servers import ManagedServer

SECTION = "## TPC-C against sysbench-tpcc"
BEGIN = "<!-- vs_sysbench_tpcc:begin -->"
END = "<!-- vs_sysbench_tpcc:end -->"
GOALS = {"prepare": 0.3, "cpu_per_new_order": 0.5}


def _measured(argv: list[str], cwd: Path | None = None) -> dict[str, Any]:
    """Wall seconds, client CPU seconds (user + sys, all threads) and peak RSS of one command,
    from wait4: exact, not sampled. Its output goes to a file, read after it exits."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.monotonic()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, text=True, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, errors = out.read(), err.read()
    if proc.returncode != 0:
        raise SystemExit(f"{argv[0]} failed ({proc.returncode}): {(errors or text)[-2000:]}")
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mib": usage.ru_maxrss / 1024,
        "stdout": text,
    }


def _sysbench(server: ManagedServer, lua_dir: Path, scale: int, *extra: str) -> list[str]:
    driver = "mysql" if server.engine == "mariadb" else "pgsql"
    return [
        "sysbench", str(lua_dir / "tpcc.lua"), f"--db-driver={driver}",
        f"--{driver}-host=127.0.0.1", f"--{driver}-port={server.port}",
        f"--{driver}-user={server.user}", f"--{driver}-password={server.password}",
        f"--{driver}-db={server.database}", f"--scale={scale}", "--tables=1", "--use_fk=0",
        *extra,
    ]  # fmt: skip


def _oltplab(server: ManagedServer, verb: str, scale: int, *extra: str) -> list[str]:
    return oltplab_argv(verb, "tpcc", "--db", server.url, "--scale", str(scale), *extra)


def _new_orders(server: ManagedServer) -> int:
    """Committed New-Orders so far: each one advanced its district's d_next_o_id."""
    rows = server.query("SELECT SUM(d_next_o_id) FROM district1", database=server.database)
    return int(rows[0][0])


def _run(server: ManagedServer, argv: list[str], cwd: Path | None) -> dict[str, Any]:
    wait_idle(server)
    before = _new_orders(server)
    m = _measured(argv, cwd)
    m["new_orders"] = _new_orders(server) - before
    m["cpu_per_new_order_us"] = 1e6 * m["cpu_s"] / max(m["new_orders"], 1)
    return m


def _tool_side(
    server: ManagedServer, tool: str, lua_dir: Path, args: argparse.Namespace, work: Path
) -> dict[str, Any]:
    """One tool on one server: prepare, then a run per point."""
    server.recreate_database()
    if tool == "sysbench-tpcc":
        prep = _measured(_sysbench(server, lua_dir, args.scale, f"--threads={args.threads}",
                                   "prepare"), lua_dir)  # fmt: skip
    else:
        prep = _measured(_oltplab(server, "prepare", args.scale, "--threads", str(args.threads)))
    side: dict[str, Any] = {"prepare_s": prep["wall_s"], "prepare_cpu_s": prep["cpu_s"]}
    for point in args.points:
        if tool == "sysbench-tpcc":
            argv = _sysbench(server, lua_dir, args.scale, f"--threads={point}",
                             f"--time={args.time}", "run")  # fmt: skip
            m = _run(server, argv, lua_dir)
            tps = re.search(r"transactions:\s+\d+\s+\(([\d.]+) per sec", m["stdout"])
            m["tps"] = float(tps.group(1)) if tps else None
        else:
            run_dir = work / f"oltplab-{server.engine}-{point}"
            argv = _oltplab(server, "run", args.scale, "--threads", str(point), "--time",
                            str(args.time), "--report-interval", "0",
                            "--out", str(run_dir))  # fmt: skip
            m = _run(server, argv, None)
            summary = json.loads((run_dir / "run.json").read_text())["summary"]
            m["tps"] = summary["tps"]
            m["tpmC"] = summary["tpcc"]["tpmC"]
        del m["stdout"]
        side[str(point)] = m
        print(f"  {server.engine} {tool} {point}: {fmt(m['cpu_per_new_order_us'], '.0f')} us "
              f"CPU/New-Order, {fmt(m['tps'], '.0f')} tps, {m['peak_rss_mib']:.0f} MiB",
              flush=True)  # fmt: skip
    return side


def _server_side(
    engine: str, lua_dir: Path, args: argparse.Namespace, work: Path
) -> dict[str, Any]:
    server = start_server(engine, work, max_connections=max(args.points) + 100)
    try:
        out: dict[str, Any] = {"version": server.version}
        for tool in ("sysbench-tpcc", "oltplab"):
            print(f"{engine}: {tool} ...", flush=True)
            out[tool] = _tool_side(server, tool, lua_dir, args, work)
        out["prepare_ratio"] = out["oltplab"]["prepare_s"] / out["sysbench-tpcc"]["prepare_s"]
        for point in args.points:
            ours, theirs = out["oltplab"][str(point)], out["sysbench-tpcc"][str(point)]
            ratio = ours["cpu_per_new_order_us"] / theirs["cpu_per_new_order_us"]
            out[f"cpu_ratio_{point}"] = ratio
        return out
    finally:
        server.stop()


def _verdict(ratio: float, goal: float) -> str:
    return f"{ratio:.2f} ({'met' if ratio <= goal else 'NOT met'}: goal ≤ {goal})"


def docs_block(results: dict[str, Any], facts: dict[str, Any], command: str) -> str:
    m = facts["machine"]
    lines = [
        BEGIN,
        "",
        f"Measured {facts['date']} on {m['cpu_model']}, {m['cores']} cores, {m['memory_gib']} "
        f"GiB, Linux {m['kernel']}; oltplab {facts['oltplab']} (git {facts['git']}, "
        f"{facts['engine_build']} engine build); sysbench 1.0.20 with sysbench-tpcc "
        f"{facts['sysbench_tpcc']}. {facts['scale']} warehouses, {facts['threads']} loaders, "
        f"runs of {facts['time_s']} s; host CPU busy {facts['host_busy_pct']:.0f}% (all cores) "
        "just before the script started.",
        "",
        "| Server | Tool | Prepare s | Connections | tps | New-Orders | Client CPU s | "
        "CPU µs / New-Order | Peak RSS MiB |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for engine, r in results.items():
        for tool in ("sysbench-tpcc", "oltplab"):
            side = r[tool]
            for i, point in enumerate(facts["points"]):
                p = side[str(point)]
                prep = f"{side['prepare_s']:.1f}" if i == 0 else ""
                lines.append(
                    f"| {engine} {r['version']} | {tool} | {prep} | {point} | "
                    f"{fmt(p['tps'], '.0f')} | {p['new_orders']} | {p['cpu_s']:.2f} | "
                    f"{p['cpu_per_new_order_us']:.0f} | {p['peak_rss_mib']:.0f} |"
                )
    lines += ["", "| Server | Prepare ratio | " + " | ".join(
        f"CPU/New-Order ratio at {p}" for p in facts["points"]) + " |",
        "|---|--:|" + "--:|" * len(facts["points"])]  # fmt: skip
    for engine, r in results.items():
        cells = [_verdict(r["prepare_ratio"], GOALS["prepare"])]
        goal = GOALS["cpu_per_new_order"]
        cells += [_verdict(r[f"cpu_ratio_{p}"], goal) for p in facts["points"]]
        lines.append(f"| {engine} | " + " | ".join(cells) + " |")
    lines += ["", "Reproduce:", "", "```", "make build-release", command, "```", "", END]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--tpcc-lua", type=Path, required=True, help="directory holding your copy of tpcc.lua"
    )
    p.add_argument("--scale", type=int, default=10)
    p.add_argument("--threads", type=int, default=8, help="loaders for prepare")
    p.add_argument(
        "--points", type=lambda s: [int(x) for x in s.split(",")], default=[16, 1024],
        help="connection counts of the runs (default 16,1024)",
    )  # fmt: skip
    p.add_argument("--time", type=int, default=60)
    p.add_argument("--servers", default="mariadb,postgresql")
    p.add_argument("--write-docs", action="store_true", help=f"write the table into {DOCS}")
    p.add_argument("--json", type=Path, help="also write the results here")
    args = p.parse_args(argv)
    lua_dir = args.tpcc_lua.resolve()
    if not (lua_dir / "tpcc.lua").is_file():
        print(f"--tpcc-lua: no tpcc.lua in {lua_dir}", file=sys.stderr)
        return 2
    facts: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"), "machine": machine(), "oltplab": oltplab.__version__,
        "git": git_describe(), "engine_build": engine_build(), "scale": args.scale,
        "threads": args.threads, "time_s": args.time, "points": args.points,
        "host_busy_pct": host_busy_pct(), "sysbench_tpcc": _lua_version(lua_dir),
    }  # fmt: skip
    if facts["engine_build"] != "release":
        print(f"warning: the engine is a {facts['engine_build']} build: make build-release",
              file=sys.stderr)  # fmt: skip
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="vs-tpcc-") as tmp:
        work = Path(tmp)
        get_ready(max(args.points) + 100, work)
        for engine in args.servers.split(","):
            results[engine] = _server_side(engine, lua_dir, args, work)
            if args.json:
                args.json.write_text(json.dumps({"facts": facts, "results": results}, indent=2))
    for engine, r in results.items():
        print(f"{engine}: prepare ratio {_verdict(r['prepare_ratio'], GOALS['prepare'])}")
        for point in args.points:
            ratio = r[f"cpu_ratio_{point}"]
            print(f"{engine}: CPU/New-Order ratio at {point}: "
                  f"{_verdict(ratio, GOALS['cpu_per_new_order'])}")  # fmt: skip
    if args.write_docs:
        shown = [a for a in shown_args(argv) if a != "--write-docs"]
        command = ".venv/bin/python bench/vs_sysbench_tpcc.py " + " ".join(shown)
        write_docs(docs_block(results, facts, command), SECTION, BEGIN, END)
    return 0


def _lua_version(lua_dir: Path) -> str:
    """The copy's git commit when it is a clone, else `unknown commit`."""
    head = subprocess.run(["git", "-C", str(lua_dir), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True)  # fmt: skip
    return head.stdout.strip() if head.returncode == 0 else "(unknown commit)"


if __name__ == "__main__":
    sys.exit(main())
