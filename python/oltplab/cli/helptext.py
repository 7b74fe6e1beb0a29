"""Help texts of the `oltplab` command (option texts come from the engine's catalogue)."""

import textwrap

from oltplab.catalog import DEFAULT_WORKLOAD, Catalog, WorkloadDef
from oltplab.defaultdb import DEFAULT_RESULTS_ROOT

_ROOT = DEFAULT_RESULTS_ROOT
_WIDTH = 100  # as the option list (cli/parser.py)

DB_URLS = f"""\
database URLs (--db):
  sqlite:///abs/path/to.db           embedded SQLite file (absolute path)
  sqlite://relative/path/to.db       embedded SQLite file (relative to the current directory)
  mysql://user:pass@host:port/db     MariaDB / MySQL (also ?socket=/path/to/mysqld.sock)
  postgresql://user:pass@host:port/db  PostgreSQL
  Without --db, oltplab uses its own SQLite database, {_ROOT}/sbtest.db
  ({_ROOT}/bulk_insert.db for bulk_insert); `run` prepares it when it is missing or was
  prepared with other data options (--tables, --table-size, --auto-inc, --secondary,
  --create-secondary, --rand-*). With --db, run `oltplab prepare` first, as with sysbench.
  Passwords are never stored: run.json keeps the URL as user:***@host."""

DB_OPTION_HELP = (
    "database URL: sqlite:///path.db, mysql://user:pass@host:port/db, "
    f"postgresql://user:pass@host:port/db [oltplab's own SQLite file in {_ROOT}/]"
)
SCRIPT_DB_OPTION_HELP = (
    "database URL: mysql://user:pass@host:port/db, postgresql://user:pass@host:port/db "
    "(required: a script has no default database)"
)
OUT_OPTION_HELP = f"run directory to write (new or empty) [{_ROOT}/<YYYYmmdd-HHMMSS>-<workload>]"
RAY_OPTION_HELP = (
    "distribute the load over a Ray cluster: ADDRESS is HOST:6379, or auto (the cluster of "
    "this node; the default when --ray has no value); needs pip install 'oltplab[ray]'"
)
CLIENTS_OPTION_HELP = (
    "with --ray: engine actors, one per node where the cluster has several; each runs its "
    "share of --threads, --rate and --events (prepare: of the tables) [the number of nodes]"
)

METRICS_OPTION_HELP = (
    "also sample host and server metrics on the interval grid: system (system.csv, from "
    "/proc), server (server.csv: SHOW GLOBAL STATUS / pg_stat_*, on a connection of its own)"
)

EXIT_CODES = """\
exit status:
  0 success, 1 the run failed, 2 bad input (one-line message), 130 interrupted (Ctrl-C)"""

TOP_HELP = f"""\
usage: oltplab [-h] [--version] COMMAND [WORKLOAD] [--db URL] [--OPTION=VALUE ...]

OLTP database benchmark lab: sysbench's OLTP workloads, SQL-identical, driven by an async
Rust engine that records every latency in HdrHistograms, with sysbench's report format and
run directories that pandas and any HdrHistogram tool can read.

commands:
  prepare    create and load the workload's tables (sysbench's prepare)
  run        run the workload: live progress, sysbench's interval lines and final report,
             and a run directory (run.json, intervals.csv, latency.hlog)
  cleanup    drop the workload's tables (without --db: delete oltplab's SQLite database)
  check      TPC-C's consistency conditions: `oltplab check tpcc [--db URL] [--json]`
  sysbench   drop-in mode: sysbench 1.0.20's command line and output, e.g.
             `oltplab sysbench oltp_read_write --mysql-host=... --threads=8 run`
  import     a sysbench log as a run directory: `oltplab import sysbench.log --out DIR`
  show       analysed runs: warm-up cut, steady-state tps with its interval, jitter,
             stalls, steady-window latency; with several concurrencies a USL sweep
  compare    candidate runs --vs baseline runs: ratios with 95% intervals, significance
  table      relative table of runs grouped by server (baseline absolute, others ratios)
  server     managed MariaDB/PostgreSQL: `oltplab server start DIR --engine mariadb`,
             stop, status, list
  lab        a whole study from one file: `oltplab lab run LAB.toml --out DIR`, status
  report     one offline HTML report of runs and labs (tables, scaling, timelines,
             distributions), and every chart as PNG/SVG: `oltplab report DIR... -o r.html`

  `oltplab COMMAND --help` lists a command's options; `oltplab run WORKLOAD --help` lists
  that workload's options with their defaults. WORKLOAD defaults to {DEFAULT_WORKLOAD}.
  WORKLOAD may also be a sysbench 1.0 Lua script, PATH.lua (prepare, run, cleanup; its
  own options after the general ones: `oltplab run PATH.lua --help`; docs/lua.md).
  Options keep sysbench's names, defaults and meaning; dashes and underscores are
  interchangeable; values go as --opt=value or --opt value; booleans as --skip-trx or
  --skip-trx=on|off.

options:
  -h, --help   show this help and exit
  --version    print the version and exit

{DB_URLS}

{EXIT_CODES}

examples:
  oltplab run                                   # {DEFAULT_WORKLOAD} on SQLite, sysbench defaults
  oltplab run oltp_read_only --threads=8 --time=60 --table-size=100000
  oltplab prepare --db sqlite:///tmp/sb.db --tables=4 --table-size=100000
  oltplab run oltp_point_select --db sqlite:///tmp/sb.db --tables=4 --threads=4
  oltplab cleanup --db sqlite:///tmp/sb.db --tables=4
  oltplab sysbench oltp_read_only --db-driver=pgsql --pgsql-host=/run/postgresql --time=60 run
"""

_VERB_SUMMARY = {
    "prepare": "Creates the tables of {w} and loads them (sysbench's prepare).",
    "run": "Runs {w}: live progress on a terminal, sysbench's interval lines and final\n"
    "report on stdout, and a run directory with run.json, intervals.csv and latency.hlog.",
    "cleanup": "Drops the tables of {w} (sysbench's cleanup).",
    "check": "Checks the consistency conditions of {w} (TPC-C clause 3.3.2.1-12); --json prints\n"
    "them as JSON. Exit 1 when one fails.",
}

SCRIPT_VERB_SUMMARY = {
    "prepare": "Runs the sysbench Lua script's own prepare (a PARALLEL_COMMAND on --threads\n"
    "threads, as sysbench runs it).",
    "run": "Runs the sysbench Lua script's events on the engine: sysbench's interval lines and\n"
    "final report on stdout, and a run directory with run.json, intervals.csv and latency.hlog.",
    "cleanup": "Runs the sysbench Lua script's own cleanup.",
}
SCRIPT_OPTIONS_NOTE = (
    "The general options go to the engine; any other --name=value is the script's, checked\n"
    "against the options it declares (sysbench.cmdline.options), listed below as sysbench\n"
    "lists them. docs/lua.md: what is supported and every difference from sysbench."
)


def verb_description(verb: str, workload: WorkloadDef) -> str:
    text = _VERB_SUMMARY[verb].format(w=workload.name)
    if workload.description:
        text += "\n\n" + textwrap.fill(f"{workload.name}: {workload.description}", _WIDTH)
    return text


def verb_epilog(verb: str, catalog: Catalog) -> str:
    width = max(len(n) for n in catalog.names)
    workloads = "\n".join(
        textwrap.fill(
            f"  {w.name:<{width}}  {w.description}",
            width=_WIDTH,
            subsequent_indent=" " * (width + 4),
            break_on_hyphens=False,
        )
        for w in catalog.workloads
    )
    parts = [
        f"workloads (WORKLOAD, default {DEFAULT_WORKLOAD}; "
        f"`oltplab {verb} WORKLOAD --help` shows its options):\n{workloads}",
        DB_URLS,
    ]
    if verb == "run":
        parts.append(
            "run directory (--out):\n"
            "  run.json (manifest and summary), intervals.csv (one row per interval, zero-\n"
            "  throughput intervals kept), latency.hlog (HdrHistogram interval log, ns).\n"
            "  Ctrl-C stops the load, writes what was measured and marks it complete=false."
        )
    parts.append(EXIT_CODES)
    return "\n\n".join(parts)
