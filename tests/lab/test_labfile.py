"""The lab file reader: every mistake is one line naming the file, the line and the key."""

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oltplab.cli.main import main
from oltplab.exceptions import ConfigError
from oltplab.lab.labfile import read_lab_text
from oltplab.lab.labfile_values import LabFileError

GOOD = """\
[lab]
name = "t"
time = 5
repeats = 2

[servers.mdb]
engine = "mariadb"
settings = { innodb_buffer_pool_size = "128M" }

[servers.mdb.configs.a]
thread_handling = "one-thread-per-connection"

[servers.mdb.configs.b]
thread_handling = "pool-of-threads"

[[workloads]]
name = "oltp_read_only"
threads = [1, 4]
options = { tables = 1, table_size = 100 }
"""


def test_a_good_file_resolves_with_defaults() -> None:
    spec = read_lab_text(GOOD, "lab.toml")
    assert spec.name == "t"
    assert spec.time_s == 5.0
    assert spec.order == "interleaved"
    assert spec.restore == "auto"
    assert spec.metrics == ("system", "server")
    assert list(spec.servers[0].configs) == ["a", "b"]
    assert spec.workloads[0].threads == (1, 4)


def test_a_server_without_configs_has_default() -> None:
    text = GOOD.split("[servers.mdb.configs.a]")[0] + GOOD.split('pool-of-threads"\n')[1]
    spec = read_lab_text(text, "lab.toml")
    assert spec.servers[0].configs == {"default": {}}


@pytest.mark.parametrize(
    ("change", "line", "key", "says"),
    [
        (("repeats = 2", "repeatz = 2"), 4, "lab.repeatz", "unknown key"),
        (("time = 5", 'time = "5"'), 3, "lab.time", "must be seconds > 0"),
        (('engine = "mariadb"', 'engine = "oracle"'), 7, "servers.mdb.engine", "must be one of"),
        (("threads = [1, 4]", "threads = []"), 18, "workloads[0].threads", "non-empty"),
        (
            ('name = "oltp_read_only"', 'name = "oltp_nope"'),
            17,
            "workloads[0].name",
            "unknown workload",
        ),
        (
            ("table_size = 100", "table_sise = 100"),
            19,
            "workloads[0].options.table_sise",
            "--table-sise",
        ),
        (("tables = 1,", "tables = 1, time = 3,"), 19, "workloads[0].options.time", "[lab] time"),
        (
            ('thread_handling = "pool-of-threads"', "thread_handling = [1]"),
            13,
            "servers.mdb.configs.b",
            "table of server variables",
        ),
    ],
)
def test_bad_files_name_file_line_and_key(
    change: tuple[str, str], line: int, key: str, says: str
) -> None:
    text = GOOD.replace(*change, 1)
    assert text != GOOD
    with pytest.raises(LabFileError) as info:
        read_lab_text(text, "my.toml")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"my.toml:{line}: {key}: "), message
    assert says in message


@pytest.mark.parametrize("value", ["600", '"600"'])
def test_max_connections_in_settings_is_the_servers(value: str) -> None:
    """Where server variables are written: it becomes the server's max_connections (which
    sizes the lab), not a variable oltplab would then set twice."""
    text = GOOD.replace(
        'settings = { innodb_buffer_pool_size = "128M" }',
        f'settings = {{ innodb_buffer_pool_size = "128M", max_connections = {value} }}',
    )
    spec = read_lab_text(text, "lab.toml")
    assert spec.servers[0].max_connections == 600
    assert spec.servers[0].settings == {"innodb_buffer_pool_size": "128M"}
    both = text.replace('engine = "mariadb"', 'engine = "mariadb"\nmax_connections = 600')
    assert read_lab_text(both, "lab.toml") == spec  # the same value in both places: fine


@pytest.mark.parametrize(
    ("change", "key", "says"),
    [
        (
            ('engine = "mariadb"', 'engine = "mariadb"\nmax_connections = 500'),
            "servers.mdb.max_connections",
            "500 here but 600 in settings: set max_connections in one place",
        ),
        (
            ("max_connections = 600", 'max_connections = "many"'),
            "servers.mdb.settings.max_connections",
            "must be an integer >= 1, not 'many'",
        ),
        (
            ('thread_handling = "pool-of-threads"', "max_connections = 50"),
            "servers.mdb.configs.b.max_connections",
            "the same for every config",
        ),
    ],
)
def test_max_connections_set_twice_or_per_config_is_one_line(
    change: tuple[str, str], key: str, says: str
) -> None:
    text = GOOD.replace(
        'innodb_buffer_pool_size = "128M"',
        'innodb_buffer_pool_size = "128M", max_connections = 600',
    )
    text = text.replace(*change, 1)
    with pytest.raises(LabFileError) as info:
        read_lab_text(text, "my.toml")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("my.toml:"), message
    assert f": {key}: " in message, message
    assert says in message


def test_invalid_toml_names_its_line() -> None:
    with pytest.raises(LabFileError, match=r"^x.toml:3: not valid TOML"):
        read_lab_text('[lab]\nname = "t"\ntime = = 3\n', "x.toml")


def test_cli_bad_lab_file_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lab = tmp_path / "bad.toml"
    lab.write_text(GOOD.replace("repeats = 2", "repeats = 0"), encoding="utf-8")
    assert main(["lab", "run", str(lab), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert f"{lab}:4: lab.repeats: must be an integer >= 1" in err[0]
    assert not (tmp_path / "out").exists()  # nothing started


_TOKENS = st.sampled_from(
    [
        "[lab]\n",
        'name = "x"\n',
        "time = 1\n",
        "time = -1\n",
        "[servers.s]\n",
        'engine = "mariadb"\n',
        'engine = "external"\n',
        'url = "mysql://u:p@h/d"\n',
        "[servers.s.configs.c]\n",
        "x = 1\n",
        "[[workloads]]\n",
        'name = "oltp_read_only"\n',
        "threads = [1]\n",
        "threads = []\n",
        "rate = [10.5]\n",
        "options = { tables = 1 }\n",
        "options = { nope = 1 }\n",
        "[client]\n",
        'cpus = "0"\n',
        'cpus = "99"\n',
        "[scales.small]\n",
        "repeats = 3\n",
        "= broken\n",
        "[lab\n",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TOKENS, max_size=14), st.text(max_size=20))
def test_fuzz_reader_gives_a_lab_or_one_line(tokens: list[str], noise: str) -> None:
    """Whatever the text, the reader returns a lab or raises one one-line error naming the
    file and a line that exists (never another exception, never a traceback)."""
    text = "".join(tokens) + noise
    try:
        spec = read_lab_text(text, "f.toml")
    except ConfigError as e:
        message = str(e)
        assert "\n" not in message.strip() or "not valid TOML" in message
        prefix, line = message.split(":")[:2]
        assert prefix == "f.toml"
        if line.strip().isdigit():
            assert 1 <= int(line) <= max(1, text.count("\n") + 1)
    else:
        assert spec.servers
        assert spec.workloads
        assert all(w.threads or w.rate for w in spec.workloads)
