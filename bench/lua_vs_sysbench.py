#!/usr/bin/env python3
"""Lua scripts side by side with sysbench (issue 21): copies of sysbench's own scripts, run by
sysbench 1.0.20 and by oltplab (`oltplab run SCRIPT.lua`), and oltplab's native workload of
the same name, on the same private server and data.

Copies /usr/share/sysbench/NAME.lua to BASE/scripts/lua_NAME.lua (a copy run as a script, as
issue 21 measures it, under a name no line on stderr compares with a built-in), starts a
private MariaDB (and PostgreSQL) sized for the largest point, loads sysbench's tables once,
and runs each configuration (script x threads) with the tools in turn, whole processes,
--pairs times: oltplab's script run, sysbench's (up to --sysbench-max threads: above it
sysbench runs out of memory), and oltplab's native workload (at --native-threads). Each run is
measured from outside as in bench/vs_sysbench.py (bench/_vs_tools.py: client CPU between "Threads
started!" and the final report, peak RSS, set-up, tps, the server's statements). Reports
medians of the pairs' ratios against issue 21's goals; --write-docs puts them into
docs/performance.md ("Lua scripts").

    make build-release
    .venv/bin/python bench/lua_vs_sysbench.py --quick               # smoke test, ~3 min
    .venv/bin/python bench/lua_vs_sysbench.py --write-docs          # MariaDB

See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from _common import common_facts, fmt, get_ready, measured_on, reproduce, table_head, write_docs
from _vs_compare import Goal, median, ratio, same_work
from _vs_run import Run, from_json
from _vs_server import enable_pg_stat_statements
from _vs_tools import NATIVE, SCRIPT_PREFIX, load_run_data, run_once, sysbench_version
from vs_sysbench import bench_server, parse_configs

SYSBENCH_SCRIPTS = Path("/usr/share/sysbench")
DEFAULT_CONFIGS = ["oltp_read_only=4096", "oltp_point_select=8,10000"]
QUICK_CONFIGS = ["oltp_read_only=64", "oltp_point_select=4,200"]
SECTION = "## Lua scripts"
BEGIN = "<!-- bench/lua_vs_sysbench.py: begin (generated; edit the script, not this block) -->"
END = "<!-- bench/lua_vs_sysbench.py: end -->"

# (label, how to read it from a run, format): medians per tool, ratios per pair.
METRICS: list[tuple[str, Callable[[Run], float | None], str]] = [
    ("tps", lambda r: r.tps, ".0f"),
    ("client CPU/txn µs", lambda r: r.cpu_per_txn_us, ".1f"),
    ("peak RSS MB", lambda r: r.peak_rss_mb, ".0f"),
    ("set-up s", lambda r: r.setup_s, ".2f"),
    ("p95 ms", lambda r: r.p95_ms, ".2f"),
]
READ = {label: get for label, get, _ in METRICS}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--engines", default="mariadb", help="[mariadb]; or mariadb,postgresql")
    ap.add_argument("--configs", nargs="+", default=None, metavar="SCRIPT=N,N",
                    help=f"scripts, thread counts [{' '.join(DEFAULT_CONFIGS)}]")  # fmt: skip
    ap.add_argument("--pairs", type=int, default=None, help="runs of each tool per point [2]")
    ap.add_argument("--time", type=float, default=None, help="seconds of load per run [15]")
    ap.add_argument("--tables", type=int, default=None, help="run data: tables [4]")
    ap.add_argument("--table-size", type=int, default=None, help="run data: rows per table [10000]")
    ap.add_argument("--sysbench-max", type=int, default=4096,
                    help="sysbench runs points up to this many threads [4096]")  # fmt: skip
    ap.add_argument("--native-threads", default="8",
                    help="oltplab's native workload runs at these thread counts [8]")  # fmt: skip
    ap.add_argument("--busy-window", type=float, default=2.0,
                    help="seconds of host CPU measured before each run [2]")  # fmt: skip
    ap.add_argument("--server-var", action="append", default=[], metavar="ENGINE:NAME=VALUE",
                    help="a server variable [mariadb:innodb_buffer_pool_size=2G]")  # fmt: skip
    ap.add_argument("--no-pg-stat-statements", action="store_true",
                    help="count PostgreSQL's commits only (pg_stat_database)")  # fmt: skip
    ap.add_argument("--quick", action="store_true", help="smoke test: 1 pair, 3 s, few threads")
    ap.add_argument("--base-dir", type=Path, default=Path("/var/tmp/oltplab-bench-lua"),
                    help="servers, script copies, runs (not under a 0700 directory)")  # fmt: skip
    ap.add_argument("--engine-source", default=None, help="where the engine was built from")
    ap.add_argument("--keep-servers", action="store_true", help="leave the servers running")
    ap.add_argument("--json", type=Path, help="also write every measurement here")
    ap.add_argument("--from-json", type=Path, metavar="FILE",
                    help="measure nothing: report the runs of an earlier --json FILE")  # fmt: skip
    ap.add_argument("--write-docs", action="store_true", help="update docs/performance.md")
    args = ap.parse_args(argv)
    quick = args.quick
    defaults: dict[str, Any] = {
        "pairs": 1 if quick else 2, "time": 3.0 if quick else 15.0,
        "tables": 2 if quick else 4, "table_size": 1000 if quick else 10_000,
        "configs": QUICK_CONFIGS if quick else DEFAULT_CONFIGS,
    }  # fmt: skip
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    # What bench_server and run_once read besides (no timed prepare here, no --before).
    args.prepare_threads, args.prepare_tables, args.before = 1, args.tables, None
    args.native_at = {int(n) for n in args.native_threads.split(",") if n.strip()}
    return args


def script_copy(name: str, base_dir: Path) -> str:
    """sysbench's NAME.lua copied under a name that is not a built-in's (the same file for
    both tools; its `require "oltp_common"` is found on sysbench's Lua path by both)."""
    target = base_dir / "scripts" / f"{SCRIPT_PREFIX}{name}.lua"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(SYSBENCH_SCRIPTS / f"{name}.lua", target)
    return str(target)


def tools_for(threads: int, args: argparse.Namespace) -> list[str]:
    return (
        ["oltplab"]
        + (["sysbench"] if threads <= args.sysbench_max else [])
        + ([NATIVE] if threads in args.native_at else [])
    )


def measure(
    args: argparse.Namespace, argv: Sequence[str] | None
) -> tuple[list[Run], dict[str, Any]]:
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    configs = [(script_copy(w, args.base_dir), n) for w, n in parse_configs(args.configs)]
    largest = max(n for _, n in configs)
    get_ready(largest, args.base_dir)
    facts = common_facts(args, argv) | {
        "sysbench": sysbench_version(), "pairs": args.pairs, "busy_window_s": args.busy_window,
        "server_settings": {},
    }  # fmt: skip
    runs: list[Run] = []
    t0 = time.monotonic()
    for engine in engines:
        server, pgss = bench_server(engine, largest, args, facts)
        try:
            load_run_data(server, args)
            pgss = pgss and enable_pg_stat_statements(server)
            for script, threads in configs:
                for pair in range(1, args.pairs + 1):
                    for tool in tools_for(threads, args):
                        r = run_once(server, tool, script, threads, pair, args, pgss)
                        runs.append(r)
                        print(f"{engine} {Path(script).name} {threads} pair {pair} {tool}: "
                              + ", ".join(f"{label} {fmt(get(r), spec)}"
                                          for label, get, spec in METRICS)
                              + f", start to started {fmt(r.start_to_started_s, '.2f')} s"
                              + ("" if r.ok else f" FAILED: {r.error}"),
                              file=sys.stderr)  # fmt: skip
        finally:
            if not args.keep_servers:
                server.stop()
    facts["total_s"] = round(time.monotonic() - t0)
    return runs, facts


# -- report ------------------------------------------------------------------------------------

Point = tuple[str, str, int]  # engine, script, threads
BOTH = {"oltplab", "sysbench"}


def points(runs: Sequence[Run]) -> list[Point]:
    return list(dict.fromkeys((r.engine, r.workload, r.threads) for r in runs))


def by_pair(runs: Sequence[Run], point: Point) -> list[dict[str, Run]]:
    """Each pair's runs by tool (failed runs left out)."""
    out: dict[int, dict[str, Run]] = {}
    for r in runs:
        if (r.engine, r.workload, r.threads) == point and r.ok:
            out.setdefault(r.pair, {})[r.tool] = r
    return [d for _, d in sorted(out.items())]


def pair_ratio(pairs: Sequence[dict[str, Run]], other: str, label: str) -> float | None:
    """The median over the pairs of oltplab's script run / `other`'s, of metric `label`."""
    get = READ[label]
    return median(
        [ratio(get(d["oltplab"]), get(d[other])) for d in pairs if {"oltplab", other} <= d.keys()]
    )


def tool_median(pairs: Sequence[dict[str, Run]], tool: str, label: str) -> float | None:
    return median([READ[label](d[tool]) for d in pairs if tool in d])


def summary_table(runs: Sequence[Run]) -> str:
    tools = ("oltplab", "sysbench", NATIVE)
    head = table_head(
        ["server", "script", "threads", "pairs", *[label for label, _, _ in METRICS],
         "oltplab / sysbench", "oltplab / native", "same work as sysbench"], left=3,
    )  # fmt: skip
    rows = []
    for point in points(runs):
        engine, script, threads = point
        pairs = by_pair(runs, point)
        cells = [
            " · ".join(fmt(tool_median(pairs, t, label), spec) for t in tools)
            for label, _, spec in METRICS
        ]
        vs = [
            ", ".join(f"{short}: {fmt(pair_ratio(pairs, other, label), '.2f')}"
                      for short, label in (("CPU", "client CPU/txn µs"), ("RSS", "peak RSS MB"),
                                           ("tps", "tps"), ("set-up", "set-up s")))
            for other in ("sysbench", NATIVE)
        ]  # fmt: skip
        work = [same_work(d["oltplab"], d["sysbench"]) for d in pairs if d.keys() >= BOTH]
        worst = max((d for _, d in work), default=0.0)
        same = "-" if not work or any(w is None for w, _ in work) else (
            ("yes" if all(w for w, _ in work) else "NO") + f" (±{100 * worst:.1f} %)"
        )  # fmt: skip
        failed = sum(1 for r in runs if (r.engine, r.workload, r.threads) == point and not r.ok)
        rows.append(
            f"| {engine} | {Path(script).name} | {threads:,} | {len(pairs)}"
            + (f" ({failed} failed)" if failed else "")
            + " | " + " | ".join(cells) + f" | {vs[0]} | {vs[1]} | {same} |"
        )  # fmt: skip
    return head + "\n".join(rows) + "\n"


def lua_goals(runs: Sequence[Run]) -> list[tuple[Goal, str]]:
    """Issue 21's goals: (goal, unit: "" for a ratio to sysbench's or "MB"/"s")."""
    out: list[tuple[Goal, str]] = []
    for point in points(runs):
        engine, script, threads = point
        name, pairs = Path(script).stem.removeprefix(SCRIPT_PREFIX), by_pair(runs, point)
        label = f"{name}.lua at {threads:,} connections"
        if name == "oltp_read_only" and threads == 4096:
            out += [
                (Goal(f"peak client RSS, {label}", engine, "≤ 0.15",
                      pair_ratio(pairs, "sysbench", "peak RSS MB")), ""),
                (Goal(f"client CPU/txn, {label}", engine, "≤ 0.6",
                      pair_ratio(pairs, "sysbench", "client CPU/txn µs")), ""),
                (Goal(f"thread_init (set-up), {label}", engine, "≤ 5",
                      tool_median(pairs, "oltplab", "set-up s")), "s"),
            ]  # fmt: skip
        if name == "oltp_point_select" and threads == 10_000:
            out.append((Goal(f"peak client RSS, {label}", engine, "≤ 500",
                             tool_median(pairs, "oltplab", "peak RSS MB")), "MB"))  # fmt: skip
        if name == "oltp_point_select" and threads == 8:
            out.append((Goal(f"client CPU/txn, {label}", engine, "≤ 1.0",
                             pair_ratio(pairs, "sysbench", "client CPU/txn µs")), ""))  # fmt: skip
    return out


OF_SYSBENCH = "of sysbench's"


def goal_lines(runs: Sequence[Run]) -> list[str]:
    return [
        f"- {g.engine}: {g.what} {g.target} {unit or OF_SYSBENCH}: "
        f"{fmt(g.value, '.2f')}{' ' + unit if unit else ''} — {g.verdict()}"
        for g, unit in lua_goals(runs)
    ]


def pairs_table(runs: Sequence[Run]) -> str:
    head = table_head(
        ["server", "script", "threads", "pair", "tool", "tps", "CPU/txn µs", "kernel %",
         "peak RSS MB", "set-up s", "start to started s", "host busy before / during", "errors"],
        left=5,
    )  # fmt: skip
    rows = [
        f"| {r.engine} | {Path(r.workload).name} | {r.threads:,} | {r.pair} | {r.tool} | "
        f"{r.tps:.0f} | {fmt(r.cpu_per_txn_us, '.1f')} | {fmt(r.kernel_pct, '.0f')} | "
        f"{fmt(r.peak_rss_mb, '.0f')} | {fmt(r.setup_s, '.2f')} | "
        f"{fmt(r.start_to_started_s, '.2f')} | {r.host_busy_pct_before:.0f} % / "
        f"{fmt(r.host_busy_pct_load, '.0f')} % | {r.errors}"
        + ("" if r.ok else f"; FAILED: {r.error}") + " |"
        for r in runs
    ]  # fmt: skip
    return head + "\n".join(rows) + "\n"


def report(runs: Sequence[Run]) -> str:
    return "\n".join([
        "Medians per tool: oltplab's script run · sysbench's · oltplab's native workload; "
        "ratios: the median of the pairs' oltplab-script / other ratios",
        "",
        summary_table(runs),
        "Issue 21's goals (medians of the pairs):",
        "",
        *goal_lines(runs),
        "",
        "Every run:",
        "",
        pairs_table(runs),
    ])  # fmt: skip


def docs_block(runs: Sequence[Run], facts: dict[str, Any]) -> str:
    versions = ", ".join(f"{k} {v}" for k, v in facts["servers"].items())
    settings = "; ".join(
        f"{e}: " + ", ".join(f"{k}={v}" for k, v in s.items())
        for e, s in facts["server_settings"].items()
    )
    return "\n".join([
        BEGIN, "",
        f"{measured_on(facts)}; {facts['sysbench']}; {versions}. Run data: {facts['tables']} x "
        f"{facts['table_size']:,}-row tables loaded once per server; {facts['time_s']:g} s per "
        f"run, {facts['pairs']} pairs, the tools in turn (whole processes), loopback TCP, "
        f"every other option at its default. Server settings: {settings}. The same measures "
        "as the side-by-side table above (bench/_vs_tools.py); *set-up*: oltplab's "
        "`connect_s` (every connection opened and its `thread_init` run), sysbench's start "
        "to \"Threads started!\".",
        "", report(runs), *reproduce(facts["command"], END),
    ])  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.from_json:
        runs, _, facts = from_json(args.from_json)
    else:
        runs, facts = measure(args, argv)
    if args.json:  # before the report: a report that fails must not lose the measurements
        doc = {"facts": facts, "runs": [asdict(r) for r in runs], "prepares": []}
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
    print(report(runs))
    if args.write_docs:
        write_docs(docs_block(runs, facts), SECTION, BEGIN, END)
        print("wrote docs/performance.md", file=sys.stderr)
    return 0 if all(r.ok for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
