"""A scripted stand-in for oltplab._core: same functions, same JSON, same exceptions.

It validates option names and number ranges against the engine's own catalogue (enough
for exit-code tests), creates the SQLite file a prepare would, and plays interval events computed by
tests/synthetic.py. Scenarios are set on the instance (see FakeCore's attributes).
"""

import functools
import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from oltplab._types import Json
from oltplab.exceptions import ConfigError, DriverError, NotPreparedError
from tests import synthetic

RawHandler = Callable[[str], None]


@functools.cache
def _engine_catalog() -> str:
    from oltplab import _core

    return _core.catalog()


def catalog_doc() -> Json:
    """The engine's own catalogue of workloads and options (`_core.catalog()`, not a copy):
    the fake resolves options with the real names, types, defaults and ranges, so the two
    cannot drift apart."""
    doc: Json = json.loads(_engine_catalog())
    return doc


def _resolve(spec: Json) -> Json:
    """Every option value, validated the way the engine does for names and integer ranges."""
    doc = catalog_doc()
    wl = next((w for w in doc["workloads"] if w["name"] == spec["workload"]), None)
    if wl is None:
        raise ConfigError(f"unknown workload '{spec['workload']}'")
    defs = {d["name"]: d for d in doc["general"] + wl["options"]}
    values = {n: d["default"] for n, d in defs.items()}
    for raw, value in spec.get("options", {}).items():
        name = raw.lstrip("-").replace("-", "_")
        d = defs.get(name)
        if d is None:
            raise ConfigError(f"unknown option --{name.replace('_', '-')} for {spec['workload']}")
        if d["type"] in ("int", "float"):
            try:
                number = float(value)
            except (TypeError, ValueError):
                number = float("nan")  # fails the range check below
            if not d["min"] <= number <= d["max"]:
                raise ConfigError(
                    f"--{name.replace('_', '-')} must be a number from {d['min']} to {d['max']}, "
                    f"got '{value}'"
                )
            value = int(number) if d["type"] == "int" else number
        elif d["type"] == "bool" and isinstance(value, str):
            value = value.lower() in ("on", "true", "yes", "1", "")
        values[name] = value
    return values


def _sqlite_path(db: str) -> Path:
    assert db.startswith("sqlite://"), db
    return Path(db.removeprefix("sqlite://"))


class FakeCore:
    __version__ = "0.0.0+fake"

    def __init__(self) -> None:
        self.calls: list[tuple[str, Json]] = []
        self.intervals_per_run: int | None = None  # default: --time / --report-interval
        self.stop_reason = "time"  # "interrupted" / "error": a partial result
        self.stop_after: int | None = None  # intervals played before such a stop
        self.raise_before_start: BaseException | None = None
        self.raise_after_start: BaseException | None = None  # raised after the 1st interval
        self.raise_in_prepare: BaseException | None = None
        self.sigint_in_prepare = False  # Ctrl-C as the binding reports it: DriverError

    def catalog(self) -> str:
        return json.dumps(catalog_doc())

    def prepare(self, spec_json: str, on_event: RawHandler | None = None) -> str:
        spec = json.loads(spec_json)
        self.calls.append(("prepare", spec))
        values = _resolve(spec)
        emit = on_event or (lambda _text: None)
        path = _sqlite_path(spec["db"])
        if not spec.get("target", {}).get("create") and not path.exists():
            raise NotPreparedError(f"{path} does not exist")
        path.write_bytes(b"SQLite format 3\x00fake")
        for table in range(1, values["tables"] + 1):
            emit(json.dumps({"event": "message", "text": f"Creating table 'sbtest{table}'..."}))
            total = values["table_size"]
            emit(json.dumps({"event": "rows", "table": table, "done": total // 2, "total": total}))
            if self.raise_in_prepare is not None:
                raise self.raise_in_prepare
            if self.sigint_in_prepare:
                self._interrupt()
            emit(json.dumps({"event": "rows", "table": table, "done": total, "total": total}))
        return json.dumps(synthetic.prepare_result(values["tables"]))

    @staticmethod
    def _interrupt() -> None:
        """The binding checks signals; Python's handler raises; the engine stops, and an
        interrupted prepare comes back as DriverError."""
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the handler interrupts this
        except KeyboardInterrupt:
            raise DriverError("prepare interrupted; the data are incomplete") from None
        raise AssertionError("SIGINT was not delivered")

    def cleanup(self, spec_json: str, on_event: RawHandler | None = None) -> str:
        spec = json.loads(spec_json)
        self.calls.append(("cleanup", spec))
        values = _resolve(spec)
        for table in range(1, values["tables"] + 1):
            if on_event is not None:
                on_event(
                    json.dumps({"event": "message", "text": f"Dropping table 'sbtest{table}'..."})
                )
        return json.dumps(
            {"workload": spec["workload"], "tables": values["tables"], "duration_s": 0.01}
        )

    def run(self, spec_json: str, on_event: RawHandler | None = None) -> str:
        spec = json.loads(spec_json)
        self.calls.append(("run", spec))
        values = _resolve(spec)
        if not _sqlite_path(spec["db"]).exists():
            raise NotPreparedError("table sbtest1 does not exist; run `oltplab prepare` first")
        if self.raise_before_start is not None:
            raise self.raise_before_start
        emit = on_event or (lambda _text: None)
        emit(json.dumps(synthetic.started_event(values["threads"])))
        interval_s = values["report_interval"] or 1.0
        n = self.intervals_per_run or max(1, round(values["time"] / interval_s))
        if self.stop_after is not None:
            n = self.stop_after
        events = synthetic.intervals(n, interval_s=interval_s)
        for i, event in enumerate(events):
            emit(json.dumps(event))
            if i == 0 and self.raise_after_start is not None:
                raise self.raise_after_start
        histogram_ms = [[0.5, 10], [1.0, 30], [2.0, 5]] if values["histogram"] else None
        result = synthetic.run_result(
            events,
            threads=values["threads"],
            stop_reason=self.stop_reason,
            error="database disk image is malformed" if self.stop_reason == "error" else None,
            opts=values,
            histogram_ms=histogram_ms,
        )
        result["workload"] = spec["workload"]
        return json.dumps(result)
