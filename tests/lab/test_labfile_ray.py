"""A lab's [client] ray/clients: checked with the rest of the file (one line naming the key,
exit 2), recorded in lab.json's lab, shown by --dry-run. The real distributed lab runs in
tests/distributed/test_distributed_lab.py."""

from pathlib import Path

import pytest

from oltplab.cli.main import main
from oltplab.distributed import cluster
from oltplab.documents.lab import LabSpec
from oltplab.lab.labfile import read_lab_text
from oltplab.lab.labfile_values import LabFileError

LAB = """\
[lab]
name = "t"
time = 5

[client]
{client}

[servers.db]
engine = "external"
url = "{url}"

[[workloads]]
name = "oltp_point_select"
threads = [2, 4]
"""


def lab(client: str, url: str = "mysql://u@127.0.0.1:3306/sbtest") -> str:
    return LAB.format(client=client, url=url)


def test_ray_and_clients_are_read_and_kept_in_lab_json() -> None:
    spec = read_lab_text(lab('ray = "10.0.0.1:6379"\nclients = 2'), "lab.toml")
    assert (spec.client_ray, spec.client_clients) == ("10.0.0.1:6379", 2)
    again = LabSpec.from_json(spec.to_json())
    assert (again.client_ray, again.client_clients) == ("10.0.0.1:6379", 2)
    plain = read_lab_text(lab(""), "lab.toml")
    assert (plain.client_ray, plain.client_clients) == (None, None)


@pytest.mark.parametrize(
    ("client", "url", "key", "says"),
    [
        ("clients = 2", None, "client.clients", 'needs ray = "auto"'),
        ('ray = "auto"\nclients = 0', None, "client.clients", "integer >= 1"),
        ('ray = "auto"\nclients = true', None, "client.clients", "integer >= 1"),
        ('ray = "nohost"', None, "client.ray", '"auto" or "HOST:PORT"'),
        ("ray = 6379", None, "client.ray", '"auto" or "HOST:PORT"'),
        ('ray = "auto"\nclients = 3', None, "workloads[0].threads", "cannot be shared by 3"),
        ('ray = "auto"', "sqlite:///tmp/x.db", "servers.db.url", "not an SQLite file"),
    ],
)
def test_a_bad_client_table_is_one_line_naming_the_key(
    client: str, url: str | None, key: str, says: str
) -> None:
    text = lab(client) if url is None else lab(client, url)
    with pytest.raises(LabFileError) as e:
        read_lab_text(text, "lab.toml")
    message = str(e.value)
    assert "\n" not in message
    assert message.startswith("lab.toml:")
    assert f" {key}: " in message
    assert says in message


def test_ray_without_the_extra_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster, "ray_installed", lambda: False)
    with pytest.raises(LabFileError, match=r"client\.ray: needs Ray: pip install 'oltplab\[ray\]'"):
        read_lab_text(lab('ray = "auto"'), "lab.toml")


def test_dry_run_shows_the_distribution_and_a_bad_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.toml"
    good.write_text(lab('ray = "auto"\nclients = 2'))
    assert main(["lab", "run", str(good), "--dry-run", "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "each cell distributed on Ray (auto): clients = 2" in out
    assert not (tmp_path / "o").exists()
    bad = tmp_path / "bad.toml"
    bad.write_text(lab("clients = 2"))
    assert main(["lab", "run", str(bad), "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert "client.clients" in err
    assert "Traceback" not in err
