"""The public Python API."""

from pathlib import Path

import oltplab
from tests.fakecore import FakeCore


def test_public_names() -> None:
    assert set(oltplab.__all__) >= {
        "prepare",
        "run",
        "cleanup",
        "load_run",
        "Run",
        "RunResult",
        "__version__",
    }
    assert issubclass(oltplab.ConfigError, oltplab.OltpLabError)
    assert isinstance(oltplab.__version__, str)


def test_run_with_python_options(fake_core: FakeCore, in_tmp: Path) -> None:
    result = oltplab.run("oltp_read_only", time=2, skip_trx=True, table_size=100)
    assert result.complete
    assert result.path.parent == Path("oltplab-runs")
    assert result.summary is not None
    assert result.summary.transactions == len(result.intervals) * 100
    assert fake_core.calls[-1][1]["options"] == {"time": 2, "skip_trx": True, "table_size": 100}
    assert fake_core.calls[-1][1]["workload"] == "oltp_read_only"
    again = oltplab.load_run(result.path)
    assert again.doc == result.doc
    assert again.doc.argv is None


def test_prepare_and_cleanup(fake_core: FakeCore, tmp_path: Path) -> None:
    db = f"sqlite://{tmp_path}/sb.db"
    assert oltplab.prepare(db=db, tables=3)["tables"] == 3
    assert oltplab.cleanup(db=db, tables=3)["tables"] == 3
    out = oltplab.run(db=db, out=tmp_path / "run", time=1)
    assert out.path == tmp_path / "run"
