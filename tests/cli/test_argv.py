import pytest

from oltplab.cli.argv import find_workload, normalise_argv, wants_help

BOOLS = ["skip-trx", "histogram"]
VALUES = ["threads", "time", "db", "out"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--skip_trx"], ["--skip-trx=on"]),
        (["--skip-trx=off"], ["--skip-trx=off"]),
        (
            ["--table_size=5", "--rand_type", "uniform"],
            ["--table-size=5", "--rand-type", "uniform"],
        ),
        (["--out=my_dir"], ["--out=my_dir"]),  # values keep their underscores
        (["--", "--skip_trx"], ["--", "--skip_trx"]),
        (["oltp_read_only", "-h"], ["oltp_read_only", "-h"]),
    ],
)
def test_normalise_argv(args: list[str], expected: list[str]) -> None:
    assert normalise_argv(args, BOOLS) == expected


@pytest.mark.parametrize(
    ("args", "workload"),
    [
        (["oltp_read_only", "--threads=2"], "oltp_read_only"),
        (["--threads", "8", "oltp_read_only"], "oltp_read_only"),
        (["--threads=8", "--skip-trx=on", "oltp_insert"], "oltp_insert"),
        (["--db", "sqlite:///x.db", "--time", "2"], None),
        (["--", "oltp_read_only"], None),
        ([], None),
    ],
)
def test_find_workload(args: list[str], workload: str | None) -> None:
    assert find_workload(args, VALUES) == workload


def test_wants_help() -> None:
    assert wants_help(["oltp_read_only", "--help"])
    assert wants_help(["-h"])
    assert not wants_help(["--", "-h"])
    assert not wants_help(["--threads=2"])
