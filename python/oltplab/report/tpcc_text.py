"""The TPC-C block of oltplab's printed summary: tpmC and per-type results, labelled as the
TPC-C-like, unaudited numbers they are."""

from oltplab._types import Json

TYPES = ("new_order", "payment", "order_status", "delivery", "stock_level")


def tpcc_lines(tpcc: Json) -> list[str]:
    efficiency = tpcc.get("efficiency")
    head = f"    tpcc:           {tpcc['tpmC']:.1f} tpmC, {tpcc['tpm_total']:.1f} tpm total"
    if efficiency is not None:
        head += f", efficiency {100 * efficiency:.1f}%"
        if efficiency > 1:
            head += " (above the 12.86 tpmC/warehouse ceiling: check the think times)"
    lines = [
        head + " (TPC-C-like, unaudited)",
        f"    {'':16}{'type':<14}{'count':>9}{'share':>8}{'rollbk':>8}{'errors':>8}"
        f"{'p50 ms':>10}{'p90 ms':>10}{'p99 ms':>10}{'max ms':>10}",
    ]
    total = sum(int(tpcc["by_type"][t]["count"]) for t in TYPES) or 1
    for name in TYPES:
        t = tpcc["by_type"][name]
        lat = t["latency_ms"] or {}
        lines.append(
            f"    {'':16}{name:<14}{t['count']:>9}{100 * t['count'] / total:>7.1f}%"
            f"{t['rollbacks']:>8}{t['errors']:>8}"
            + "".join(f"{lat.get(k, 0.0):>10.2f}" for k in ("p50", "p90", "p99", "max"))
        )
    skipped = tpcc.get("delivery_skipped_districts")
    if skipped:
        lines.append(f"    {'':16}delivery skipped {skipped} district(s) with no new order")
    return lines
