"""The `oltplab` entry point: top-level options and dispatch to one verb. Errors become a
one-line message and an exit code (cli/exitcodes.py), never a traceback."""

import os
import sys
from collections.abc import Callable, Sequence

from oltplab import priority
from oltplab._version import __version__
from oltplab.cli import exitcodes, helptext
from oltplab.cli.commands import (
    check,
    cleanup,
    compare,
    import_log,
    lab,
    prepare,
    report,
    run,
    server,
    show,
    sysbench,
    table,
)
from oltplab.cli.interrupts import InterruptWatch
from oltplab.exceptions import OltpLabError
from oltplab.extras import missing_module_line

COMMANDS: dict[str, Callable[[list[str]], int]] = {
    "prepare": prepare.main,
    "run": run.main,
    "cleanup": cleanup.main,
    "check": check.main,
    "sysbench": sysbench.main,
    "import": import_log.main,
    "show": show.main,
    "compare": compare.main,
    "table": table.main,
    "server": server.main,
    "lab": lab.main,
    "report": report.main,
}

# How a command's errors read; the drop-in mode prints sysbench's `FATAL: ...` lines.
ERROR_LINES: dict[str, Callable[[str], str]] = {"sysbench": sysbench.fatal_line}


def _dispatch(args: list[str]) -> int:
    if not args or args[0] in ("-h", "--help"):
        (sys.stdout if args else sys.stderr).write(helptext.TOP_HELP)
        return exitcodes.OK if args else exitcodes.BAD_INPUT
    if args[0] == "--version":
        print(f"oltplab {__version__}")
        return exitcodes.OK
    command = COMMANDS.get(args[0])
    if command is None:
        print(
            exitcodes.error_line(
                f"unknown command '{args[0]}'; choose one of: {', '.join(COMMANDS)} "
                "(see `oltplab --help`)"
            ),
            file=sys.stderr,
        )
        return exitcodes.BAD_INPUT
    return command(args[1:])


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    watch = InterruptWatch()
    try:
        with watch, priority.own_session():
            code = _dispatch(args)
    except KeyboardInterrupt:
        print(
            "oltplab: terminated" if watch.terminated else "oltplab: interrupted", file=sys.stderr
        )
        return _interrupted(watch)
    except OltpLabError as e:
        error_line = ERROR_LINES.get(args[0] if args else "", exitcodes.error_line)
        print(error_line(str(e)), file=sys.stderr)
        return _interrupted(watch) if watch.interrupted else exitcodes.for_error(e)
    except ModuleNotFoundError as e:
        line = missing_module_line(e)
        if line is None:
            raise  # oltplab's own module: a bug, whose traceback must show
        print(exitcodes.error_line(line), file=sys.stderr)
        return exitcodes.BAD_INPUT
    except BrokenPipeError:
        # stdout was closed early (`oltplab run | head`): point it at /dev/null so that
        # flushing it at exit does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return exitcodes.FAILED
    return _interrupted(watch) if code == exitcodes.INTERRUPTED else code


def _interrupted(watch: InterruptWatch) -> int:
    return exitcodes.TERMINATED if watch.terminated else exitcodes.INTERRUPTED
