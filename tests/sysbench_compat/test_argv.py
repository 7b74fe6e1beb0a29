"""sysbench command lines -> Invocation (workload, command, options, connection)."""

from pathlib import Path
from typing import Any

import pytest

from oltplab.catalog import Catalog, load_catalog
from oltplab.exceptions import ConfigError
from oltplab.sysbench_compat import parse_argv

RI0 = {"report_interval": "0"}  # sysbench's default, which oltplab's own `run` does not share


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["oltp_read_write", "run"], {"workload": "oltp_read_write", "options": RI0}),
        (
            ["--threads=8", "oltp_read_only", "--time=60", "run"],
            {"workload": "oltp_read_only", "options": {"threads": "8", "time": "60", **RI0}},
        ),
        (
            ["/usr/share/sysbench/oltp_point_select.lua", "--tables=4", "prepare"],
            {
                "workload": "oltp_point_select",
                "test": "oltp_point_select.lua",
                "command": "prepare",
            },
        ),
        (["oltp_delete.lua", "cleanup"], {"workload": "oltp_delete", "test": "oltp_delete.lua"}),
        (["oltp_read_write", "--threads", "8", "run"], {"options": {"threads": "8", **RI0}}),
        (
            [
                "oltp_read_write",
                "--table_size=5",
                "--point-selects=3",
                "--report_interval=2",
                "run",
            ],
            {"options": {"table_size": "5", "point_selects": "3", "report_interval": "2"}},
        ),
        (
            ["oltp_read_write", "--skip_trx", "--histogram=on", "--auto-inc=off", "run"],
            {"options": {"skip_trx": "on", "histogram": "on", "auto_inc": "off", **RI0}},
        ),
        (
            ["oltp_read_write", "--threads=2", "--threads=4", "run"],
            {"options": {"threads": "4", **RI0}},
        ),
        (
            ["oltp_read_write", "--num-threads=4", "--max-time=20", "--max-requests=100", "run"],
            {
                "options": {"threads": "4", "time": "20", "events": "100", **RI0},
                "warnings": (
                    "--num-threads is deprecated, use --threads instead",
                    "--max-time is deprecated, use --time instead",
                    "--max-requests is deprecated, use --events instead",
                ),
            },
        ),
        (  # an alias overrides its new name wherever it stands, but only above its default
            [
                "oltp_read_write",
                "--num-threads=6",
                "--threads=3",
                "--max-time=0",
                "--time=5",
                "run",
            ],
            {"options": {"threads": "6", "time": "5", **RI0}},
        ),
        (
            ["oltp_read_write", "--db-ps-mode=disable", "--mysql-ignore-errors=all", "run"],
            {"options": {"db_ps_mode": "disable", "mysql_ignore_errors": "all", **RI0}},
        ),
        (
            ["oltp_read_write", "--mysql-storage-engine=myisam", "--rand-type=uniform", "run"],
            {"options": {"mysql_storage_engine": "myisam", "rand_type": "uniform", **RI0}},
        ),
        (
            [
                "--db-driver=pgsql",
                "--pgsql-host=/run/postgresql",
                "--pgsql-port",
                "5433",
                "--pgsql-user=u",
                "--pgsql-password=p",
                "--pgsql_db=d",
                "oltp_read_write",
                "run",
            ],
            {
                "connection": {
                    "db_driver": "pgsql",
                    "pgsql_host": "/run/postgresql",
                    "pgsql_port": "5433",
                    "pgsql_user": "u",
                    "pgsql_password": "p",
                    "pgsql_db": "d",
                }
            },
        ),
        (
            ["oltp_read_write", "--mysql-socket=/tmp/s", "--mysql-ssl", "--mysql-password=", "run"],
            {"connection": {"mysql_socket": "/tmp/s", "mysql_ssl": "on", "mysql_password": ""}},
        ),
        (
            ["oltp_read_write", "--db-driver=sqlite", "--sqlite-db=x.db", "run"],
            {"connection": {"db_driver": "sqlite", "sqlite_db": "x.db"}},
        ),
        (["oltp_read_write", "--out=o", "run"], {"out": Path("o")}),
        (["oltp_read_write", "--out", "o", "run"], {"out": Path("o")}),
        (
            ["--test=oltp_read_only", "run"],
            {
                "workload": "oltp_read_only",
                "warnings": (
                    "the --test option is deprecated. You can pass a script name or path on "
                    "the command line without any options.",
                ),
            },
        ),
        (  # accepted without effect
            ["oltp_read_write", "--verbosity=5", "--thread-stack-size=32K", "--db-debug", "run"],
            {"options": RI0, "connection": {}, "warnings": ()},
        ),
        (
            ["oltp_read_write", "--forced-shutdown=10", "--debug=on", "--validate", "run"],
            {
                "warnings": (
                    "--forced-shutdown is not implemented by oltplab; ignored",
                    "--debug is not implemented by oltplab; ignored",
                    "--validate is not implemented by oltplab; ignored",
                )
            },
        ),
        (
            ["oltp_read_write", "--forced-shutdown=off", "--rate=0", "--tx-rate=0", "run"],
            {"options": {"rate": "0", **RI0}, "warnings": ()},
        ),
        (
            ["oltp_read_write", "--tx-rate=50", "run"],
            {
                "options": {"rate": "50", **RI0},
                "warnings": ("--tx-rate is deprecated, use --rate instead",),
            },
        ),
        (
            ["oltp_read_write", "--report-checkpoints=", "--mysql-dry-run=off", "run"],
            {"warnings": ()},
        ),
        (["select_random_points", "--random_points=3", "help"], {"command": "help"}),
    ],
)
def test_translation(catalog: Catalog, args: list[str], expected: dict[str, Any]) -> None:
    inv = parse_argv(args, catalog)
    for field, value in expected.items():
        assert getattr(inv, field) == value, field


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["oltp_read_write", "--bogus=1", "run"], "invalid option: --bogus"),
        (["oltp_read_write", "--bogus", "run"], "invalid option: --bogus"),  # takes no value
        (["oltp_read_write", "--random-points=3", "run"], "invalid option: --random-points"),
        (["oltp_read_write"], "Command is required. Supported commands: prepare, run"),
        ([], "no test name"),
        (["oltp_read_write", "frob"], "Unknown command: frob"),
        (["oltp_read_write", "prewarm"], "'prewarm' command is not supported"),
        (["oltp_read_write", "run", "extra"], "Unrecognized command line argument: extra"),
        (["cpu", "run"], "Cannot find benchmark 'cpu'"),
        (["./my_oltp.lua", "run"], "Cannot find benchmark './my_oltp.lua'"),
        (["oltp_read_write", "--report-checkpoints=10,20", "run"], "--report-checkpoints"),
        (["oltp_read_write", "--mysql-dry-run", "run"], "--mysql-dry-run is not supported"),
        (["oltp_read_write", "--config-file=x.cfg", "run"], "--config-file is not supported"),
        (["oltp_read_write", "--skip-trx", "off", "run"], "as --skip-trx=off"),
        (["oltp_read_write", "run", "--threads"], "option --threads needs a value"),
        (["oltp_read_write", "--num-threads=many", "run"], "'num_threads' option: 'many'"),
        (["oltp_read_write", "run", "--test"], "option --test needs a value"),
        (["--test", "--threads=2", "run"], "option --test needs a value"),
        (["oltp_read_write", "--verbosity=six", "run"], "'verbosity' option"),
        (["oltp_read_write", "--verbosity=6", "run"], "'verbosity' option"),
    ],
)
def test_bad_input(catalog: Catalog, args: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=None) as err:
        parse_argv(args, catalog)
    assert message in str(err.value)


def test_messages_never_echo_values(catalog: Catalog) -> None:
    """A mistyped --mysql-password is an unknown option: its value stays out of the error."""
    with pytest.raises(ConfigError) as err:
        parse_argv(["oltp_read_write", "--mysql-pasword=hunter2", "run"], catalog)
    assert "hunter2" not in str(err.value)
    assert "--mysql-pasword" in str(err.value)


def test_verbosity_and_scripts_options(catalog: Catalog) -> None:
    inv = parse_argv(
        [
            "oltp_read_write",
            "--verbosity=1",
            "--thread-init-timeout",
            "30",
            "--luajit-cmd=off",
            "run",
        ],
        catalog,
    )
    assert (inv.verbosity, inv.warnings, inv.options) == (1, (), {"report_interval": "0"})
    assert parse_argv(["oltp_read_write", "run"], catalog).verbosity == 3
