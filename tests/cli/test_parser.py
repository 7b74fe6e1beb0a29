import pytest

from oltplab.catalog import Catalog, load_catalog, parse_catalog
from oltplab.cli.parser import parse_verb
from oltplab.exceptions import ConfigError
from tests.fakecore import catalog_doc


@pytest.fixture
def catalog() -> Catalog:
    return parse_catalog(catalog_doc())


def test_every_option_form(catalog: Catalog) -> None:
    parsed = parse_verb(
        "run",
        ["oltp_read_only", "--threads", "4", "--table_size=100", "--skip-trx", "--histogram=off",
         "--db", "sqlite:///x.db", "--out=runs/a", "--rand-type", "uniform"],
        catalog,
    )  # fmt: skip
    assert parsed is not None
    assert parsed.workload == "oltp_read_only"
    assert parsed.db == "sqlite:///x.db"
    assert str(parsed.out) == "runs/a"
    assert parsed.options == {
        "threads": "4",
        "table_size": "100",
        "skip_trx": "on",
        "histogram": "off",
        "rand_type": "uniform",
    }


def test_defaults_are_left_to_the_engine(catalog: Catalog) -> None:
    parsed = parse_verb("run", [], catalog)
    assert parsed is not None
    assert (parsed.workload, parsed.db, parsed.out, parsed.options) == (
        "oltp_read_write",
        None,
        None,
        {},
    )


def test_workload_after_options(catalog: Catalog) -> None:
    parsed = parse_verb("run", ["--random-points", "3", "select_random_points"], catalog)
    assert parsed is not None
    assert parsed.workload == "select_random_points"
    assert parsed.options == {"random_points": "3"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--bogus=1"],
            "unknown option --bogus for oltp_read_write; see `oltplab run oltp_read_write --help`",
        ),
        (["--random-points=3"], "unknown option --random-points for oltp_read_write"),
        (["nope"], "unknown workload 'nope'; choose one of: oltp_read_only, oltp_read_write, "),
        (["oltp_read_only", "extra"], "unexpected argument 'extra'"),
        (
            ["oltp_read_only", "--skip-trx", "off"],
            "give a boolean's value with '=', as --skip-trx=off",
        ),
        (["--skip-trx", "off"], "as --skip-trx=off"),
        (["--threads"], "argument --threads: expected one argument"),
    ],
)
def test_bad_input_is_a_config_error(catalog: Catalog, args: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("[", r"\[")):
        parse_verb("run", args, catalog)


def test_out_is_only_for_run(catalog: Catalog) -> None:
    with pytest.raises(ConfigError, match="unknown option --out"):
        parse_verb("prepare", ["--out=x"], catalog)


def test_help_lists_the_workload_options_with_defaults(
    catalog: Catalog, capsys: pytest.CaptureFixture[str]
) -> None:
    assert parse_verb("run", ["select_random_points", "--help"], catalog) is None
    text = capsys.readouterr().out
    assert text.startswith(
        "usage: oltplab run [WORKLOAD] [--db URL] [--out DIR] [--OPTION=VALUE ...]"
    )
    assert "select_random_points options:" in text
    assert "--random-points=N" in text
    assert "Number of random points in the IN() clause in generated SELECTs [10]" in text
    assert "--skip-trx[=on|off]" in text
    assert "AUTOCOMMIT mode [off]" in text
    assert "--time=N" in text
    assert "limit for total execution time in seconds; 0: no limit [10]" in text
    assert "sqlite:///abs/path/to.db" in text
    assert "mysql://user:pass@host:port/db" in text
    assert "oltplab-runs/sbtest.db" in text
    assert "130 interrupted" in text


def test_help_of_prepare_has_no_out(catalog: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_verb("prepare", ["-h"], catalog) is None
    text = capsys.readouterr().out
    assert "--out" not in text
    assert "oltp_read_write options:" in text


def test_an_option_the_driver_ignores_is_said_once(capsys: pytest.CaptureFixture[str]) -> None:
    real = load_catalog()  # the engine's: it has the drivers' options
    parse_verb("run", ["--db", "sqlite:///x.db", "--db-ps-mode=disable"], real)
    parse_verb("run", ["--db", "postgresql://u@h/db", "--db-ps-mode=disable"], real)
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("oltplab: warning: --db-ps-mode has no effect with the sqlite driver")


def test_a_misplaced_url_never_shows_its_password(catalog: Catalog) -> None:
    with pytest.raises(ConfigError) as err:
        parse_verb("run", ["mysql://u:hunter2@h/db"], catalog)
    assert "hunter2" not in str(err.value)
    assert "--db" in str(err.value)
