"""`oltplab import SYSBENCH_LOG --out DIR [--workload NAME]`: a sysbench log as a run
directory (docs/sysbench-compat.md, "Importing a sysbench log")."""

import argparse
import sys
from pathlib import Path

from oltplab.cli import exitcodes
from oltplab.cli.argv import wants_help
from oltplab.cli.parser import _Parser
from oltplab.exceptions import ConfigError
from oltplab.sysbench_import import parse_log, write_run

DESCRIPTION = """\
Reads the text sysbench 1.0.x printed for `run` (its preamble, the --report-interval lines,
the --histogram block and the final report) and writes a run directory: run.json with the
numbers exactly as sysbench printed them, intervals.csv with one row per interval line, and
latency.hlog from the --histogram block. What the log does not say stays null or empty.
A log cut short (no final report) is imported with "complete": false."""


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="oltplab import",
        usage="oltplab import SYSBENCH_LOG --out DIR [--workload NAME]",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
        add_help=False,
    )
    parser.add_argument("-h", "--help", action="store_true", help="show this help and exit")
    parser.add_argument("log", metavar="SYSBENCH_LOG", help="sysbench's output; - reads stdin")
    parser.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        required=True,
        help="run directory to write (new or empty)",
    )
    parser.add_argument(
        "--workload",
        metavar="NAME",
        help="the workload the log ran, e.g. oltp_read_write [unknown]",
    )
    return parser


def _read(name: str) -> str:
    if name == "-":
        return sys.stdin.read()
    try:
        return Path(name).read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise ConfigError(f"cannot read {name}: {e.strerror or e}") from e


def main(args: list[str]) -> int:
    parser = _parser()
    if wants_help(args):
        print(parser.format_help(), end="")
        return exitcodes.OK
    parsed = parser.parse_args(args)
    source = "-" if parsed.log == "-" else Path(parsed.log).name
    log = parse_log(_read(parsed.log), parsed.log)
    manifest = write_run(log, parsed.out, source=source, workload=parsed.workload)
    state = "complete" if manifest["complete"] else "incomplete: no final report"
    if log.fatal is not None:
        state = "incomplete: sysbench stopped with FATAL"
    hlog = ", latency.hlog" if (parsed.out / manifest["files"]["hlog"]).exists() else ""
    print(f"Imported {parsed.log} into {parsed.out}: {len(log.intervals)} intervals{hlog}, {state}")
    return exitcodes.OK
