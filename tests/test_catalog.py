import pytest

from oltplab.catalog import Catalog, OptionDef, flag_of, load_catalog, normalise_name, parse_catalog
from oltplab.exceptions import ConfigError
from tests.fakecore import FakeCore, catalog_doc


@pytest.fixture
def catalog() -> Catalog:
    return parse_catalog(catalog_doc())


def test_names_with_dashes_or_underscores() -> None:
    assert normalise_name("--table-size") == normalise_name("table_size") == "table_size"
    assert flag_of("table_size") == "--table-size"


def test_resolve_fills_defaults_and_converts_text(catalog: Catalog) -> None:
    values = catalog.resolve(
        "oltp_read_write", {"table-size": "500", "--skip_trx": "on", "time": "2.5"}
    )
    assert values["table_size"] == 500
    assert values["skip_trx"] is True
    assert values["time"] == 2.5
    assert values["threads"] == 1
    assert values["rand_type"] == "special"


def test_unconvertible_values_are_left_for_the_engine(catalog: Catalog) -> None:
    assert catalog.resolve("oltp_read_write", {"threads": "many"})["threads"] == "many"
    assert catalog.resolve("oltp_read_write", {"skip_trx": "maybe"})["skip_trx"] == "maybe"


def test_unknown_names_fail_before_any_work(catalog: Catalog) -> None:
    with pytest.raises(
        ConfigError, match=r"unknown option --bogus for oltp_read_write; see `oltplab run"
    ):
        catalog.resolve("oltp_read_write", {"bogus": 1})
    choose = r"unknown workload 'nope'; choose one of: oltp_read_only, oltp_read_write, "
    with pytest.raises(ConfigError, match=choose):
        catalog.workload("nope")
    with pytest.raises(ConfigError, match="random-points"):
        catalog.resolve("oltp_read_write", {"random_points": 3})
    assert catalog.resolve("select_random_points", {"random_points": "3"})["random_points"] == 3


def test_options_for_and_all_options(catalog: Catalog) -> None:
    assert "random_points" not in catalog.options_for("oltp_read_write")
    assert {"random_points", "threads", "table_size"} <= set(catalog.all_options())


@pytest.mark.parametrize(
    ("text", "value"), [("on", True), ("OFF", False), ("", True), ("yes", True), ("0", False)]
)
def test_bool_coercion(text: str, value: bool) -> None:
    assert OptionDef("x", "bool", False, "").coerce(text) is value


def test_load_catalog_reads_the_engine_once(fake_core: FakeCore) -> None:
    first = load_catalog()
    assert load_catalog() is first
    assert first.names[0] == "oltp_read_only"  # the engine's order
