"""`oltplab import SYSBENCH_LOG --out DIR [--workload NAME]`: a sysbench log as a run
directory (docs/sysbench-compat.md, "Importing a sysbench log")."""

import argparse
import json
import sys
from pathlib import Path

from oltplab.cli import exitcodes
from oltplab.cli.argv import wants_help
from oltplab.cli.parser import _Parser
from oltplab.exceptions import ConfigError, StorageError
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
        usage="oltplab import SYSBENCH_LOG --out DIR [--workload NAME] [--json]",
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
    parser.add_argument(
        "--json",
        action="store_true",
        help="print what was imported as one JSON object instead of a sentence",
    )
    return parser


def _read(name: str) -> str:
    """The log's text; bytes that are not UTF-8 (a log saved in another encoding) read as
    U+FFFD, from a file and from stdin alike: sysbench's own lines are ASCII."""
    try:
        if name == "-":
            raw = getattr(sys.stdin, "buffer", None)  # None: a text stream put in its place
            return sys.stdin.read() if raw is None else raw.read().decode("utf-8", "replace")
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
    try:
        manifest = write_run(log, parsed.out, source=source, workload=parsed.workload)
    except OSError as e:
        where = e.filename or parsed.out
        raise StorageError(
            f"cannot write {where}: {e.strerror or e}; free space under {parsed.out.parent} "
            f"or give another --out (nothing was kept; {parsed.log} is unchanged)"
        ) from e
    state = "complete" if manifest.complete else "incomplete: no final report"
    if log.fatal is not None:
        state = "incomplete: sysbench stopped with FATAL"
    has_hlog = (parsed.out / manifest.files.hlog).exists()
    if parsed.json:
        doc = {
            "run": str(parsed.out),
            "source": source,
            "intervals": len(log.intervals),
            "latency_hlog": has_hlog,
            "complete": manifest.complete,
            "state": state,
        }
        print(json.dumps(doc))
        return exitcodes.OK
    hlog = ", latency.hlog" if has_hlog else ""
    print(f"Imported {parsed.log} into {parsed.out}: {len(log.intervals)} intervals{hlog}, {state}")
    return exitcodes.OK
