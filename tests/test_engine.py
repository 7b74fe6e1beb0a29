import json
import sys

import pytest

from oltplab import engine
from oltplab._types import Json
from oltplab.exceptions import EngineMissingError
from tests.fakecore import FakeCore


def test_build_spec() -> None:
    assert engine.build_spec("oltp_read_only", "sqlite:///x.db", {"threads": 2}, create=True) == {
        "workload": "oltp_read_only",
        "db": "sqlite:///x.db",
        "options": {"threads": 2},
        "target": {"create": True},
    }


def test_events_arrive_as_dicts(fake_core: FakeCore, tmp_path: object) -> None:
    seen: list[Json] = []
    db = f"sqlite://{tmp_path}/x.db"
    engine.prepare(engine.build_spec("oltp_read_write", db, {}, create=True), seen.append)
    assert seen[0] == {"event": "message", "text": "Creating table 'sbtest1'..."}
    result = engine.run(engine.build_spec("oltp_read_write", db, {"time": 2}), seen.append)
    assert [e["event"] for e in seen[-3:]] == ["started", "interval", "interval"]
    assert result["transactions"] == 200
    assert json.loads(fake_core.catalog())["workloads"]


def test_missing_engine_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import oltplab

    monkeypatch.delattr(oltplab, "_core", raising=False)
    monkeypatch.setitem(sys.modules, "oltplab._core", None)  # makes the import fail
    with pytest.raises(EngineMissingError, match="make build-dev"):
        engine.catalog()
