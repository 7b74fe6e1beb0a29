"""Issue 11, items 1 and 2, through the command line: any password written into a --db URL,
well or badly encoded, ends in exit 2 with one line, no traceback, and the password shown
nowhere (terminal or disk). The host is a closed loopback port, so every URL the parser
accepts fails to connect at once; a password cannot move the host elsewhere (its '/', '?', '@'
or '#' makes the URL ambiguous, and such a URL is refused)."""

import contextlib
import io
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oltplab.cli.main import main
from oltplab.redact import redact_url

MARK = "Zq9"  # every generated password starts so: text nobody else prints
CLOSED = "127.0.0.1:1"  # nothing listens on port 1: connect fails at once
# What breaks URLs: delimiters, '%' escapes good and bad, multi-byte text, spaces.
PASSWORD_TEXT = st.lists(
    st.sampled_from([*list("#?/@:%&=[] +a0fF€é\\'\""), "%2", "%zz", "%40", "%e2%82"]),
    max_size=12,
).map("".join)


def _cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(scheme=st.sampled_from(["mysql", "postgresql"]), text=PASSWORD_TEXT)
def test_any_password_in_the_url_gives_one_line_and_no_secret(
    tmp_path: Path, scheme: str, text: str
) -> None:
    password = MARK + text
    url = f"{scheme}://bench:{password}@{CLOSED}/sbtest?connect_timeout=2"
    out_dir = tmp_path / "run"
    code, stdout, stderr = _cli(
        ["run", "oltp_point_select", "--db", url, "--time=1", "--out", str(out_dir)]
    )
    assert code == 2, (url, stdout, stderr)
    assert stderr.startswith("oltplab: error: "), stderr
    assert stderr.count("\n") == 1, stderr
    assert "Traceback" not in stderr + stdout
    assert MARK not in stderr + stdout, stderr
    # Nothing written holds it (the run directory is removed when the load never started).
    if out_dir.exists():
        for f in out_dir.rglob("*"):
            assert not f.is_file() or MARK not in f.read_text(errors="replace"), f
    # What the redaction shows never holds the password either.
    assert MARK not in redact_url(url)


@settings(max_examples=300, deadline=None)
@given(url=st.text(max_size=40).map(lambda t: "mysql://" + t))
def test_redaction_never_fails(url: str) -> None:
    redacted = redact_url(url)
    assert redacted.startswith("mysql://")


def test_a_panicking_url_of_issue_11_is_one_line_in_a_real_process(tmp_path: Path) -> None:
    """`pa%€` panicked the engine, printing the password twice and exiting 1."""
    done = subprocess.run(
        [sys.executable, "-m", "oltplab", "run", "--db", f"mysql://u:{MARK}pa%€@{CLOSED}/db"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done
    assert done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "'%' not followed by two hex digits" in done.stderr
    assert MARK not in done.stdout + done.stderr
