import re

import pytest

from oltplab._types import Json
from oltplab.documents.codec import fields_of
from oltplab.documents.run import Fairness, Queries, RankedLatency, RunManifest, Target
from oltplab.rundir import manifest as m
from tests import synthetic


def _initial(options: Json | None = None) -> RunManifest:
    return m.initial_manifest(
        workload="oltp_read_write",
        options=options or synthetic.options(),
        db_url="mysql://bench:s3cret@db1:3306/sbtest",
        argv=["oltplab", "run", "--db", "mysql://bench:s3cret@db1:3306/sbtest"],
    )


def test_initial_manifest_is_incomplete_and_redacted() -> None:
    doc = _initial()
    assert doc.schema_version == 1
    assert doc.complete is False
    assert doc.summary is None
    assert doc.target == Target(
        driver="mysql", url="mysql://bench:***@db1:3306/sbtest", server_version=None
    )
    assert "s3cret" not in str(doc)
    assert doc.load.threads == 1
    assert doc.load.time_s == 10.0


def test_final_manifest_summarises_the_result() -> None:
    events = synthetic.intervals(4, transactions=50)
    result = synthetic.run_result(events, threads=4)
    doc = m.final_manifest(_initial(), result)
    s = doc.summary
    assert s is not None
    assert doc.complete is True
    assert doc.stop_reason == "time"
    assert s.transactions == 200
    assert s.queries == Queries(read=2800, write=800, other=400, total=4000)
    assert s.tps == pytest.approx(50.0)
    assert s.qps == pytest.approx(1000.0)
    assert s.latency_ms.p99_9 == result["latency_ns"]["p99_9"] / 1e6
    assert s.latency_ms.sum == pytest.approx(result["latency_ns"]["sum"] / 1e6)
    assert s.percentile == RankedLatency(rank=95.0, latency_ms=result["latency_ns"]["pct"] / 1e6)
    assert doc.target.server_version == "3.46.0"
    assert doc.load.interval_s == 1.0
    assert doc.histograms is not None
    assert doc.histograms["transactions"].startswith("HIST")
    assert re.fullmatch(r"2025-11-21T04:40:00\.500Z", doc.started_at or "")


def test_interrupted_and_failed_runs_are_incomplete() -> None:
    result = synthetic.run_result(synthetic.intervals(2), stop_reason="interrupted")
    assert m.final_manifest(_initial(), result).complete is False
    forged = result | {"complete": True, "stop_reason": "error", "error": "x"}
    assert m.final_manifest(_initial(), forged).complete is False


def test_no_transactions_means_null_latency() -> None:
    result = synthetic.run_result([synthetic.interval_event(1.0, transactions=0)])
    s = m.summary_of(result)
    assert set(fields_of(s.latency_ms).values()) == {None}
    assert s.percentile == RankedLatency(rank=95.0, latency_ms=None)


def test_percentile_zero_has_no_percentile() -> None:
    result = synthetic.run_result(synthetic.intervals(1), opts={"percentile": 0})
    assert m.summary_of(result).percentile is None


def test_fairness_is_sysbench_population_stddev() -> None:
    fair = m.fairness_of(
        [
            {"events": 10, "latency_sum_ns": 2_000_000_000},
            {"events": 20, "latency_sum_ns": 4_000_000_000},
        ]
    )
    assert fair == Fairness(
        events_avg=15.0, events_stddev=5.0, execution_time_avg_s=3.0, execution_time_stddev_s=1.0
    )
    assert m.fairness_of([]) is None


def test_aborted_manifest() -> None:
    doc = m.aborted_manifest(
        _initial(), stop_reason="error", error="boom", ended_at=synthetic.STARTED_AT
    )
    assert (doc.complete, doc.stop_reason, doc.error) == (False, "error", "boom")
    assert doc.ended_at == "2025-11-21T04:40:00.500Z"
