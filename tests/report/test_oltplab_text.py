from pathlib import Path

from oltplab.documents.run import RunManifest
from oltplab.report.oltplab_text import summary_text
from oltplab.rundir.manifest import aborted_manifest, final_manifest, initial_manifest
from tests import synthetic


def _initial() -> RunManifest:
    return initial_manifest(
        workload="oltp_read_write", options=synthetic.options(), db_url="sqlite:///x", argv=None
    )


def test_summary_of_a_complete_run_with_errors() -> None:
    events = [synthetic.interval_event(1.0, errors=3), synthetic.interval_event(2.0)]
    result = synthetic.run_result(events) | {"saturated": 2}
    text = summary_text(final_manifest(_initial(), result), Path("runs/a"))
    lines = text.splitlines()
    assert lines[0] == "oltplab summary:"
    assert lines[1] == "    run:            oltp_read_write, 2 threads, 2.00 s, complete"
    assert lines[2] == "    throughput:     100.00 tps, 2000.00 qps"
    assert lines[3].startswith("    latency (ms):   p50 ")
    assert " p99.9 " in lines[3]
    assert lines[4] == "    errors:         3 (SQLITE_BUSY: 3)"
    assert "2 latencies above 1 h" in text
    assert lines[-1] == "    run directory:  runs/a"


def test_summary_of_a_run_that_raised() -> None:
    manifest = aborted_manifest(_initial(), stop_reason="error", error="disk I/O error", ended_at=0)
    text = summary_text(manifest, Path("r"))
    assert "INCOMPLETE (error)" in text
    assert "    error:          disk I/O error" in text
    assert "throughput" not in text
