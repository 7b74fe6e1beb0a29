"""The drop-in mode's own lines: banner, headers, `help`, errors."""

from oltplab.catalog import load_catalog
from oltplab.sysbench_compat.output import (
    BANNER,
    command_header,
    fatal_line,
    usage,
    workload_help,
)
from tests.sysbench_compat.shapes import golden, shape


def test_banner_keeps_sysbench_shape() -> None:
    assert BANNER.startswith("sysbench 1.0.20 (using oltplab ")
    assert shape(BANNER) == shape(golden("run").splitlines()[0])


def test_command_headers() -> None:
    assert command_header("prepare", 1) == BANNER + "\n\n"
    assert command_header("prepare", 2) == BANNER + "\n\nInitializing worker threads...\n\n"
    assert command_header("cleanup", 8) == BANNER + "\n\n"


def test_help_lines_are_sysbench_lines() -> None:
    """Every line `sysbench oltp_read_write help` prints is in oltplab's, byte for byte,
    in the same order; oltplab adds sysbench master's --create_table_options and
    --reconnect."""
    ours = workload_help("oltp_read_write", "oltp_read_write", load_catalog()).splitlines()
    theirs = golden("help").splitlines()
    added = ("  --create_table_options=", "  --reconnect=")
    assert [line for line in ours[1:] if not line.startswith(added)] == theirs[1:]
    assert ours[0] == BANNER


def test_help_names_the_test_as_given() -> None:
    text = workload_help("oltp_insert.lua", "oltp_insert", load_catalog())
    assert text.splitlines()[2] == "oltp_insert.lua options:"


def test_usage_lists_the_workloads() -> None:
    text = usage(load_catalog())
    assert text.startswith("usage: oltplab sysbench [options] TESTNAME prepare|run|cleanup|help")
    assert "oltp_read_write" in text


def test_fatal_line_is_one_line() -> None:
    assert fatal_line("a\nb  c") == "FATAL: a b c"
