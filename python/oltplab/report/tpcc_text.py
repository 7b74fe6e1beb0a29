"""The TPC-C block of oltplab's printed summary: tpmC and per-type results, labelled as the
TPC-C-like, unaudited numbers they are."""

from oltplab.documents.run import TpccSummary

LATENCY_SHOWN = ("p50", "p90", "p99", "max")


def tpcc_lines(tpcc: TpccSummary) -> list[str]:
    efficiency = tpcc.efficiency
    head = f"    tpcc:           {tpcc.tpmC:.1f} tpmC, {tpcc.tpm_total:.1f} tpm total"
    if efficiency is not None:
        head += f", efficiency {100 * efficiency:.1f}%"
        if efficiency > 1:
            head += " (above the 12.86 tpmC/warehouse ceiling: check the think times)"
    lines = [
        head + " (TPC-C-like, unaudited)",
        f"    {'':16}{'type':<14}{'count':>9}{'share':>8}{'rollbk':>8}{'errors':>8}"
        + "".join(f"{k + ' ms':>10}" for k in LATENCY_SHOWN),
    ]
    types = tpcc.by_type.items()
    total = sum(t.count for _, t in types) or 1
    for name, t in types:
        lat = t.latency_ms
        shown = (lat.p50, lat.p90, lat.p99, lat.max) if lat else (0.0,) * len(LATENCY_SHOWN)
        lines.append(
            f"    {'':16}{name:<14}{t.count:>9}{100 * t.count / total:>7.1f}%"
            f"{t.rollbacks:>8}{t.errors:>8}" + "".join(f"{v:>10.2f}" for v in shown)
        )
    skipped = tpcc.delivery_skipped_districts
    if skipped:
        lines.append(f"    {'':16}delivery skipped {skipped} district(s) with no new order")
    return lines
