"""The report of bench/vs_sysbench.py: the summary, per-pair and prepare tables, the legend,
the goals, and the block it writes into docs/performance.md."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from _common import fmt, measured_on, reproduce, table_head
from _vs_compare import (
    METRICS,
    Goal,
    configs_of,
    goals,
    median,
    median_ratio,
    pairs_of,
    prepare_pairs,
    prepare_ratio,
    ratio,
    same_work,
)
from _vs_floor import floor_table
from _vs_run import KINDS, Run

SECTION = "## Side by side with sysbench"
BEGIN = "<!-- bench/vs_sysbench.py: begin (generated; edit the script, not this block) -->"
END = "<!-- bench/vs_sysbench.py: end -->"

LEGEND = [
    "- *tps*, *p95*: run.json's summary; sysbench's final report.",
    "- *over*: loopback TCP (127.0.0.1), or the server's Unix socket (both tools: sysbench's "
    "`--mysql-socket`, `--pgsql-host=DIR`; oltplab's `?socket=`); *pinned*: loopback TCP with "
    "the client on core 0 (`taskset`) and the server's processes and threads on the others.",
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


def per_txn_text(run: Run) -> str:
    pt = run.per_txn()
    if not pt:
        return "-"
    kinds = [k for k in (*KINDS, "rollback") if k in pt] or list(pt)
    return "/".join(f"{pt[k]:.2f}".rstrip("0").rstrip(".") for k in kinds)


# -- tables ------------------------------------------------------------------------------------


def cell(o: float | None, s: float | None, spec: str, r: float | None = None) -> str:
    """`o / s (**ratio**)`; the ratio is o / s unless given (a median of ratios)."""
    r = ratio(o, s) if r is None else r
    return f"{fmt(o, spec)} / {fmt(s, spec)} (**{fmt(r, '.2f')}**)"


def summary_table(runs: Sequence[Run]) -> str:
    """Medians over the pairs: oltplab / sysbench (ratio = median of the pairs' ratios)."""
    head = table_head(
        ["server", "workload", "threads", "over", "pairs", "tps", "client CPU/txn µs",
         "client kernel % oltplab · sysbench", "client peak RSS MB", "set-up s", "p95 ms",
         "server CPU/txn µs",
         "statements/txn oltplab · sysbench", "same work"], left=2,
    )  # fmt: skip
    rows = []
    for config in configs_of(runs):
        engine, workload, threads, transport = config
        pairs = pairs_of(runs, config)
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
            f"| {engine} | {workload} | {threads:,} | {transport} | {len(ok)}{note} | "
            + " | ".join(cells)
            + f" | {fmt(srv_o, '.0f')} / {fmt(srv_s, '.0f')} | {stmts} | {same} |"
        )  # fmt: skip
    return head + "\n".join(rows) + "\n"


def pairs_table(runs: Sequence[Run]) -> str:
    """Every pair: the ratios, and how busy the host was before each run."""
    head = table_head(
        ["server", "workload", "threads", "over", "pair", "tps", "CPU/txn", "peak RSS", "set-up",
         "p95",
         "host busy before: oltplab, sysbench", "host busy during load", "errors"], left=2,
    )  # fmt: skip
    rows = []
    for config in configs_of(runs):
        engine, workload, threads, transport = config
        for o, s in pairs_of(runs, config):
            ratios = " | ".join(fmt(ratio(get(o), get(s)), ".2f") for _, get, _ in METRICS)
            fail = "; ".join(f"{r.tool}: {r.error}" for r in (o, s) if not r.ok)
            rows.append(
                f"| {engine} | {workload} | {threads:,} | {transport} | {o.pair} | {ratios} "
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
        "Issue 22's goals (oltplab / sysbench, medians of the pairs, loopback TCP):",
        "",
        *goals_lines(goals(runs, prepares)),
        "",
        "Every pair (oltplab / sysbench ratios):",
        "",
        pairs_table(runs),
    ]
    floor = floor_table(runs)
    if floor:
        parts += [floor]
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
        f"run, {facts['pairs']} pairs (oltplab then sysbench"
        f"{', then the floor client on its rows' if facts.get('floor') else ''}) "
        "per configuration, loopback TCP "
        "unless the row says socket (pinned: apart from the server), "
        f"prepared statements, every other option at its default (both tools: the same). Server "
        f"settings: {facts['server_settings']}. Host CPU busy (all processes; 100 % = every "
        f"core) in the {facts['busy_window_s']:g} s before each run and while its load ran: in "
        "the per-pair table.",
        "",
        report(runs, prepares),
        *reproduce(facts["command"], END),
    ]
    return "\n".join(lines)
