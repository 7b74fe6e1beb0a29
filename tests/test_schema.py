"""run.json as written validates against schema/run.schema.json at every stage.

(tests/test_cli_e2e.py validates the run.json of real runs too.)
"""

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from oltplab._types import Json
from oltplab.rundir import RunWriter
from oltplab.rundir.manifest import initial_manifest
from tests import synthetic

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema" / "run.schema.json"


def validate(doc: Any) -> None:
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)


def _stages(tmp_path: Path, finish: str) -> list[Json]:
    manifest = initial_manifest(
        workload="oltp_read_write",
        options=synthetic.options(),
        db_url="mysql://u:pw@h/db?password=pw",
        argv=["oltplab", "run", "--db=mysql://u:pw@h/db", "--mysql-password", "pw"],
    )
    writer = RunWriter.create(tmp_path, manifest, created_dir=False)

    def read() -> Json:
        doc: Json = json.loads((tmp_path / "run.json").read_text())
        return doc

    stages = [read()]
    writer.on_event(synthetic.started_event())
    stages.append(read())
    events = synthetic.intervals(2)
    for e in events:
        writer.on_event(e)
    if finish == "abort":
        writer.abort(stop_reason="error", error="boom")
    else:
        writer.finish(synthetic.run_result(events, stop_reason=finish))
    stages.append(read())
    return stages


@pytest.mark.parametrize("finish", ["time", "events", "interrupted", "error", "abort"])
def test_every_stage_validates(tmp_path: Path, finish: str) -> None:
    for doc in _stages(tmp_path, finish):
        validate(doc)
        assert "pw" not in json.dumps(doc)


def test_schema_rejects_a_complete_run_without_summary(tmp_path: Path) -> None:
    doc = _stages(tmp_path, "time")[-1] | {"summary": None}
    with pytest.raises(jsonschema.ValidationError):
        validate(doc)


def test_schema_rejects_an_unredacted_url(tmp_path: Path) -> None:
    doc = _stages(tmp_path, "time")[-1]
    doc["target"]["url"] = "mysql://u:secret@h/db"
    with pytest.raises(jsonschema.ValidationError):
        validate(doc)
