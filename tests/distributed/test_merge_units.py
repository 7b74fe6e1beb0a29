"""The pieces of a distributed run that need no cluster: shares of the load, intervals
lined up by time, clock offsets from round trips, and the engine's exact merge of interval
events (against histograms of every value, built independently with the hdrhistogram package)."""

import random

import pytest
from hdrh.histogram import HdrHistogram

from oltplab import engine
from oltplab.cli.main import main
from oltplab.distributed.align import IntervalAligner
from oltplab.distributed.clock import estimate
from oltplab.distributed.shares import split_count, split_load, split_units
from oltplab.exceptions import ConfigError, DriverError
from oltplab.rundir.hlog import HIGHEST_NS, LOWEST_NS, SIGNIFICANT_DIGITS


def test_shares_add_up_and_differ_by_one_at_most() -> None:
    assert split_count(10, 3) == [4, 3, 3]
    shares = split_load({"threads": 10, "rate": 1000.0, "events": 7, "rand_seed": 5}, 3, 5)
    assert [s.threads for s in shares] == [4, 3, 3]
    assert sum(s.rate_per_s for s in shares) == pytest.approx(1000.0)
    assert shares[0].rate_per_s == pytest.approx(400.0)  # the same rate per connection
    assert [s.events for s in shares] == [3, 2, 2]
    assert len({s.rand_seed for s in shares}) == 3
    assert split_units(5, 2) == [[1, 3, 5], [2, 4]]
    with pytest.raises(ConfigError, match="fewer than --clients"):
        split_load({"threads": 2}, 3, 1)


def test_intervals_wait_for_every_running_client() -> None:
    aligner = IntervalAligner(2)
    aligner.push(0, {"k": 0})
    assert aligner.ready() == []  # client 1 has not delivered interval 0
    aligner.push(1, {"k": 0})
    aligner.push(0, {"k": 1})
    assert aligner.ready() == [[(0, {"k": 0}), (1, {"k": 0})]]
    aligner.end(1)  # lost: the others go on without it
    assert aligner.ready() == [[(0, {"k": 1})]]


def test_the_clock_offset_keeps_the_fastest_round_trip() -> None:
    # Client 5 s ahead; the slow sample's asymmetric delay would bias the estimate.
    samples = [(0.0, 5.0006, 0.001), (1.0, 6.09, 1.1)]
    offset = estimate(samples)
    assert offset.offset_s == pytest.approx(5.0001)
    assert offset.bound_s == pytest.approx(0.0005)
    assert abs(offset.offset_s - 5.0) <= offset.bound_s


def _client_event(values: list[int], t_s: float) -> dict[str, object]:
    """An interval event as a client's engine sends it (its latency summary left at 0: the
    merge recomputes it from the counters and the summed histograms)."""
    h = HdrHistogram(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
    for v in values:
        h.record_value(v)
    encoded = h.encode().decode()
    n = len(values)
    summary = dict.fromkeys(("min", "mean", "max", "sum", "p50", "p95", "p99", "p99_9", "pct"), 0)
    return {
        "event": "interval", "t_s": t_s, "interval_s": 1.0, "phase": "run", "step": None,
        "threads_running": 2, "transactions": n, "reads": n, "writes": 0, "others": 0,
        "errors": 1, "reconnects": 0, "errors_by_code": {"1213": 1},
        "latency_sum_ns": sum(values), "latency_min_ns": min(values),
        "latency_max_ns": max(values), "saturated": 0, "lag_sum_ns": 0, "lag_max_ns": 0,
        "late": 0, "client_lag_sum_ns": 0, "latency_ns": summary, "service_latency_ns": None,
        "lag_mean_ns": 0, "backlog": 0, "in_flight": 0, "dropped": 0, "client_cpu_pct": 25.0,
        "histograms": [
            {"tag": None, "start_s": t_s - 1, "interval_s": 1.0, "max_ns": max(values),
             "encoded": encoded},
            {"tag": "point_selects", "start_s": t_s - 1, "interval_s": 1.0,
             "max_ns": max(values), "encoded": encoded},
        ],
    }  # fmt: skip


def test_the_engines_interval_merge_is_that_of_every_value() -> None:
    rng = random.Random(7)
    clients = [[int(10 ** rng.uniform(5, 8)) for _ in range(n)] for n in (300, 1000, 50)]
    events = [_client_event(v, 1.0 + i * 1e-4) for i, v in enumerate(clients)]
    options = {"threads": 6, "percentile": "95", "rand_seed": 3}
    merge = engine.RunMerge(engine.build_spec("oltp_point_select", "mysql://u@h/db", options))
    merged = merge.interval(events)
    every = sorted(v for c in clients for v in c)
    union = HdrHistogram(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
    for v in every:
        union.record_value(v)
    assert (merged["event"], merged["clients"]) == ("interval", 3)
    assert merged["transactions"] == len(every) == 1350
    assert merged["errors_by_code"] == {"1213": 3}
    assert merged["threads_running"] == 6
    assert merged["client_cpu_pct"] == 75.0
    lat = merged["latency_ns"]
    assert (lat["min"], lat["max"], lat["sum"]) == (every[0], every[-1], sum(every))
    # Nearest rank (the engine's definition): the ceil(q N)-th value's bucket, its top.
    assert lat["p50"] == union.get_highest_equivalent_value(every[675 - 1])
    assert lat["p99"] == min(union.get_highest_equivalent_value(every[1337 - 1]), every[-1])
    assert merged["t_s"] == pytest.approx(1.0002)
    decoded = HdrHistogram.decode(merged["histograms"][0]["encoded"])
    assert decoded.get_total_count() == 1350
    assert decoded.get_max_value() == union.get_max_value()
    assert [h["tag"] for h in merged["histograms"]] == [None, "point_selects"]
    merge.interval(events)
    result = merge.finish(
        [], started_at=1.0, ended_at=3.0, interrupted=False, error="every client lost", flags=[]
    )
    assert (result["latency_ns"]["min"], result["latency_ns"]["sum"]) == (every[0], 2 * sum(every))
    assert result["transactions"] == 2 * 1350
    assert result["percentiles_ns"][0][0] == 95.0
    assert (result["stop_reason"], result["complete"]) == ("error", False)
    assert result["client_cpu_s"] == pytest.approx(2 * 0.75)


def test_a_client_of_another_version_is_refused() -> None:
    merge = engine.RunMerge(engine.build_spec("oltp_point_select", "mysql://u@h/db", {}))
    event = _client_event([1000], 1.0)
    del event["latency_sum_ns"]  # an older engine's event
    with pytest.raises(DriverError, match="same oltplab version"):
        merge.interval([event])


def test_without_ray_the_flag_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(__import__("sys").modules, "ray", None)  # import ray -> ImportError
    code = main(["run", "oltp_point_select", "--db=mysql://u@127.0.0.1/db", "--ray"])
    err = capsys.readouterr().err
    assert code == 2
    assert err == "oltplab: error: --ray needs Ray: pip install 'oltplab[ray]'\n"


def test_clients_without_ray_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--clients=2"]) == 2
    assert "--clients needs --ray" in capsys.readouterr().err


def test_uniform_arrivals_of_the_clients_interleave() -> None:
    from oltplab.distributed.driver import arrival_phase

    shares = split_load({"threads": 4, "rate": 400.0, "rand_seed": 1}, 2, 1)
    uniform = {"rate": 400.0, "rate_arrivals": "uniform"}
    # Each client offers 200/s (a gap of 5 ms); the second starts half a gap later.
    assert [arrival_phase(uniform, s) for s in shares] == [
        {"arrival_phase_s": 0.0},
        {"arrival_phase_s": 0.0025},
    ]
    assert arrival_phase({"rate": 400.0, "rate_arrivals": "poisson"}, shares[1]) == {}
    assert arrival_phase({"rate": 0}, shares[1]) == {}


def test_an_address_nobody_answers_fails_at_once() -> None:
    from oltplab.distributed.cluster import check_reachable

    with pytest.raises(ConfigError, match=r"no Ray cluster answers at 127\.0\.0\.1:1"):
        check_reachable("127.0.0.1:1")
    with pytest.raises(ConfigError, match="not HOST:PORT"):
        check_reachable("nonsense")
    check_reachable("auto")  # Ray finds this node's cluster itself


def test_the_driver_drains_just_after_each_interval_boundary() -> None:
    from oltplab.distributed.driver import BOUNDARY_LAG_S, POLL_S, next_poll_s

    start = 1000.0
    # Before the start: at most POLL_S, and the drain just after T0 is not skipped.
    assert next_poll_s(start - 5, start, 1.0) == POLL_S
    assert next_poll_s(start - 0.05, start, 1.0) == pytest.approx(0.05 + BOUNDARY_LAG_S)
    # Mid-interval: POLL_S; near a boundary: the boundary plus the lag.
    assert next_poll_s(start + 0.3, start, 1.0) == POLL_S
    assert next_poll_s(start + 1.9, start, 1.0) == pytest.approx(0.1 + BOUNDARY_LAG_S)
    # Just after a boundary's drain: the next boundary, not the same one again.
    assert next_poll_s(start + 2 + BOUNDARY_LAG_S, start, 0.1) == pytest.approx(0.1)
