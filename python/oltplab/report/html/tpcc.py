"""TPC-C's own results in the report: tpmC per run and the five transaction types' counts,
rollbacks, errors and latency, as run.json's summary.tpcc holds them (the engine's numbers
over the measured time after --warmup, what `oltplab run` printed), labelled unaudited."""

import html

from oltplab.documents.run import TpccLatency, TpccSummary
from oltplab.report.html.model import ReportData, RunView
from oltplab.report.html.tables import number, swatch, table

TYPE_LATENCY_SHOWN = ("p50", "p90", "p95", "p99", "max")


def tpcc_of(run: RunView) -> TpccSummary | None:
    summary = run.analysis.run.summary
    return None if summary is None else summary.tpcc


def _shown(latency: TpccLatency | None) -> tuple[float | None, ...]:
    if latency is None:
        return (None,) * len(TYPE_LATENCY_SHOWN)
    return (latency.p50, latency.p90, latency.p95, latency.p99, latency.max)


def tpcc_tables(data: ReportData) -> str:
    """Two tables when any run is TPC-C: tpmC per run, and per run and transaction type."""
    runs = [(r, t) for r in data.runs if (t := tpcc_of(r)) is not None]
    if not runs:
        return ""
    totals, types = [], []
    for run, tpcc in runs:
        who = swatch(run.config, data.colours[run.config])
        who += f'<td class="name">{html.escape(run.name)}</td>'
        totals.append(
            who
            + number(tpcc.warehouses)
            + number(run.threads)
            + number(tpcc.tpmC)
            + number(tpcc.tpm_total)
            + number(None if tpcc.efficiency is None else 100 * tpcc.efficiency, 3)
        )
        for kind, result in tpcc.by_type.items():
            types.append(
                who
                + f"<td>{kind}</td>"
                + number(result.count)
                + number(result.share_pct, 3)
                + number(result.rollbacks)
                + number(result.errors)
                + "".join(number(v) for v in _shown(result.latency_ms))
            )
    label = html.escape(runs[0][1].label or "TPC-C-like, unaudited")
    return (
        f"<h3>TPC-C results ({label})</h3>"
        + table(
            "tpcc",
            ["config", "run", "warehouses", "terminals", "tpmC", "tpm total", "efficiency %"],
            totals,
            "New-Orders per minute of the measured time (after --warmup; rolled-back ones "
            "included), as `oltplab run` printed them; efficiency only with --think-time=spec.",
        )
        + table(
            "tpcc-types",
            ["config", "run", "type", "count", "share %", "rollbacks", "errors"]
            + [f"{k} ms" for k in TYPE_LATENCY_SHOWN],
            types,
            "Per transaction type over the measured time, from each type's histogram; errors "
            "are failed attempts that were retried. The chart 'Latency per transaction type' "
            "shows the steady window (after the warm-up cut) instead.",
        )
    )
