import pytest

from oltplab.redact import redact_argv, redact_url


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("mysql://bench:s3cret@db1:3306/sbtest", "mysql://bench:***@db1:3306/sbtest"),
        ("postgresql://u:p%40ss@h/db", "postgresql://u:***@h/db"),
        ("mysql://bench@db1/sbtest", "mysql://bench@db1/sbtest"),
        ("mysql://u:p@h/db?socket=/run/my.sock", "mysql://u:***@h/db?socket=/run/my.sock"),
        ("postgresql://h/db?user=u&password=x", "postgresql://h/db?user=u&password=***"),
        ("sqlite:///tmp/x.db", "sqlite:///tmp/x.db"),
        ("not a url", "not a url"),
    ],
)
def test_redact_url(url: str, expected: str) -> None:
    assert redact_url(url) == expected


def test_redact_argv() -> None:
    argv = [
        "oltplab", "run", "--db", "mysql://u:pw@h/db", "--db=mysql://u:pw@h/db",
        "--mysql-password", "pw", "--pgsql_password=pw", "--threads=4", "--bypass=1",
    ]  # fmt: skip
    assert redact_argv(argv) == [
        "oltplab", "run", "--db", "mysql://u:***@h/db", "--db=mysql://u:***@h/db",
        "--mysql-password", "***", "--pgsql_password=***", "--threads=4", "--bypass=1",
    ]  # fmt: skip
