"""The drop-in mode: sysbench 1.0.20's command line in, sysbench's output out.

    argv.py     sysbench's command line -> an Invocation (workload, command, options)
    options.py  sysbench's own options and what oltplab does with each
    target.py   --db-driver and the --mysql-*/--pgsql-*/--sqlite-* options -> a --db URL
    output.py   the banner, prepare's header, `help` and the error lines

The command itself is cli/commands/sysbench.py; the reports are report/sysbench_text.py.
"""

from oltplab.sysbench_compat.argv import Invocation, parse_argv
from oltplab.sysbench_compat.target import db_url

__all__ = ["Invocation", "db_url", "parse_argv"]
