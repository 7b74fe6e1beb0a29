"""sysbench-tpcc command lines (as published: `./tpcc.lua --mysql-... --tables=10 --scale=100
prepare|run|cleanup|check`) -> Invocation of oltplab's `tpcc`."""

import pytest

from oltplab.catalog import Catalog, load_catalog
from oltplab.exceptions import ConfigError
from oltplab.sysbench_compat import parse_argv


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def test_a_published_command_line_is_accepted(catalog: Catalog) -> None:
    args = [
        "./tpcc.lua", "--mysql-host=127.0.0.1", "--mysql-user=sbtest", "--mysql-password=pw",
        "--mysql-db=sbt", "--time=300", "--threads=64", "--report-interval=1", "--tables=10",
        "--scale=100", "--db-driver=mysql", "--use_fk=0", "--trx_level=RC", "run",
    ]  # fmt: skip
    inv = parse_argv(args, catalog)
    assert (inv.test, inv.workload, inv.command) == ("tpcc.lua", "tpcc", "run")
    assert inv.options["tables"] == "10"
    assert inv.options["scale"] == "100"
    assert inv.options["use_fk"] == "0"
    assert inv.options["trx_level"] == "RC"
    assert inv.connection["mysql_host"] == "127.0.0.1"
    assert inv.warnings == ()
    resolved = catalog.resolve(inv.workload, inv.options)
    assert (resolved["use_fk"], resolved["scale"]) == (False, 100)


def test_sysbench_tpcc_defaults_apply_in_the_drop_in_only(catalog: Catalog) -> None:
    mysql = parse_argv(["tpcc", "--db-driver=mysql", "prepare"], catalog)
    assert (mysql.options["scale"], mysql.options["use_fk"]) == ("100", "on")
    sqlite = parse_argv(["tpcc", "--db-driver=sqlite", "--sqlite-db=/tmp/x.db", "check"], catalog)
    assert sqlite.command == "check"
    assert "use_fk" not in sqlite.options  # SQLite cannot add foreign keys after the load
    assert next(d for d in catalog.options_for("tpcc").values() if d.name == "scale").default == 1


def test_script_options_without_a_counterpart_are_warned_about(catalog: Catalog) -> None:
    inv = parse_argv(
        ["tpcc.lua", "--enable_purge=yes", "--report_csv=no", "--force_pk=1", "run"], catalog
    )
    assert inv.warnings == (
        "--enable_purge is not implemented by oltplab; ignored",
        "--force_pk is not implemented by oltplab; ignored",
    )


def test_check_is_sysbench_tpcc_only(catalog: Catalog) -> None:
    with pytest.raises(ConfigError, match="only sysbench-tpcc"):
        parse_argv(["oltp_read_write", "check"], catalog)
    with pytest.raises(ConfigError, match="invalid option: --enable_purge"):
        parse_argv(["oltp_read_write", "--enable_purge=yes", "run"], catalog)
