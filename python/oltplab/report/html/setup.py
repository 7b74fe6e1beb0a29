"""The report's first section, what ran: servers and versions, the variables that differ
between configs, the workload and its options, the host, the client, the commands to
reproduce, and every warning of the analysis."""

import html
import shlex
from typing import Any

from oltplab.analysis import sameness
from oltplab.analysis.sameness import comparable_variables, differing_variables
from oltplab.report.html.model import ReportData
from oltplab.report.html.tables import swatch, table, text
from oltplab.rundir import Run

# Options that name the run rather than the work (as the analysis's sameness rules).
RUN_OPTIONS = {
    "rand_seed",
    "time",
    "events",
    "report_interval",
    "percentile",
    "histogram",
    "threads",
    "rate",
}


def setup_section(data: ReportData) -> str:
    parts = [
        _labs(data),
        _configs_table(data),
        _workloads(data),
        _host(data),
        _distributed(data),
        _commands(data),
    ]
    return "".join(parts)


def _labs(data: ReportData) -> str:
    out = []
    for path, doc in data.labs:
        states: dict[str, int] = {}
        for cell in doc.cells:
            states[cell.status] = states.get(cell.status, 0) + 1
        counted = ", ".join(f"{n} {state}" for state, n in sorted(states.items()))
        lab = doc.lab
        out.append(
            f"<p><b>Lab {html.escape(lab.name)}</b> ({html.escape(str(path))}), from "
            f"<code>{html.escape(doc.source)}</code>: {len(doc.cells)} cells ({counted}); "
            f"{lab.time_s:g} s per run after {lab.warmup_time_s:g} s warm-up, "
            f"{lab.repeats} repeat(s), order {html.escape(str(lab.order))}, "
            f"restore {html.escape(str(lab.restore))}.</p>"
        )
    return "".join(out)


def _configs_table(data: ReportData) -> str:
    first = {c: data.runs_of(c)[0].analysis.run for c in data.configs}
    variables = {c: comparable_variables(run) for c, run in first.items()}
    differing = differing_variables(first.values())
    body = []
    for c in data.configs:
        target = first[c].doc.target
        cells = swatch(c, data.colours[c])
        cells += text(target.driver) + text(target.server_version)
        cells += text(len(data.runs_of(c)))
        cells += "".join(text(variables[c].get(n)) for n in differing)
        body.append(cells)
    caption = (
        "Configs (one colour each in every chart); server variables shown only where they differ."
        if differing
        else "Configs (one colour each in every chart); no server variable differs between them."
    )
    return table(
        "configs", ["config", "driver", "server version", "runs", *differing], body, caption
    )


def _workloads(data: ReportData) -> str:
    out = []
    for workload in data.workloads:
        runs = [r for r in data.runs if r.workload == workload]
        options = [r.analysis.run.options for r in runs]
        keys = sorted(set.intersection(*(set(o) for o in options)) - RUN_OPTIONS)
        shared = {
            k: options[0][k]
            for k in keys
            if all(repr(o.get(k)) == repr(options[0][k]) for o in options)
        }
        threads = sorted({r.threads for r in runs})
        rates = sorted({r.rate_per_s for r in runs if r.rate_per_s})
        load = f"connections {', '.join(map(str, threads))}" + (
            f"; target rates {', '.join(f'{x:g}/s' for x in rates)}" if rates else ""
        )
        times = _durations([r.analysis.run for r in runs])
        shown = " ".join(f"--{k.replace('_', '-')}={_plain(v)}" for k, v in shared.items())
        out.append(
            f"<p><b>{html.escape(workload)}</b>: {html.escape(load)}; run length "
            f"{html.escape(times)}; {len(runs)} run(s).<br>"
            f"<code>{html.escape(shown)}</code></p>"
        )
    return "".join(out)


def _durations(runs: list[Run]) -> str:
    """The runs' measured lengths: one number, or the range."""
    found = [r.summary.duration_s for r in runs if r.summary is not None]
    if not found:
        return "unknown"
    low, high = min(found), max(found)
    return f"{low:.3g} s" if f"{low:.3g}" == f"{high:.3g}" else f"{low:.3g}-{high:.3g} s"


def _plain(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def _distributed(data: ReportData) -> str:
    """Runs whose load came from several client machines (--ray): how many, and where."""
    lines = []
    for r in data.runs:
        spread = r.analysis.run.doc.distributed
        if spread is None:
            continue
        clients = spread.clients
        hosts = sorted({str(c.hostname) for c in clients})
        lost = len(spread.losses)
        lines.append(
            f"{r.name}: {len(clients)} clients on Ray ({', '.join(hosts)})"
            + (f", {lost} lost" if lost else "")
        )
    if not lines:
        return ""
    return "<p><b>Distributed load</b>: " + html.escape("; ".join(lines)) + "</p>"


def _host(data: ReportData) -> str:
    hosts: dict[tuple[Any, ...], int] = {}
    tools = set()
    for r in data.runs:
        doc = r.analysis.run.doc
        h = doc.host
        key = (
            (h.hostname, h.cpu_model, h.cpu_cores, h.memory_bytes, h.kernel, h.os)
            if h is not None
            else (None,) * 6
        )
        hosts.setdefault(key, 0)
        hosts[key] += 1
        tools.add(f"{doc.tool.name} {doc.tool.version}")
    lines = []
    for (name, cpu, cores, memory, kernel, os_name), n in hosts.items():
        mem = f"{memory / 2**30:.1f} GiB" if isinstance(memory, int | float) else "?"
        lines.append(f"{name}: {cpu}, {cores} CPUs, {mem}, {kernel}, {os_name} ({n} runs)")
    client = ", ".join(sorted(tools))
    return (
        "<p><b>Host</b>: "
        + html.escape("; ".join(lines))
        + "<br><b>Client</b>: "
        + html.escape(client)
        + "</p>"
    )


def _commands(data: ReportData) -> str:
    lines = []
    for path, doc in data.labs:
        lines.append(f"oltplab lab run {shlex.quote(doc.source)} --out {shlex.quote(str(path))}")
    for r in data.runs:
        argv = r.analysis.run.doc.argv
        if argv:
            lines.append("oltplab " + " ".join(shlex.quote(str(a)) for a in argv))
    if not lines:
        return ""
    unique = list(dict.fromkeys(lines))
    more = f"\n# ... and {len(unique) - 40} more" if len(unique) > 40 else ""
    return (
        "<details><summary>Commands to reproduce (passwords redacted)</summary><pre>"
        + html.escape("\n".join(unique[:40]) + more)
        + "</pre></details>"
    )


def warnings_of(data: ReportData) -> list[str]:
    """Every warning the analysis gave, once: runs' flags, sweeps, comparisons, notes."""
    out = list(data.notes)
    for _, doc in data.labs:
        out += [
            f"cell {c.id}: {c.status}: {c.error or 'no run'}"
            for c in doc.cells
            if c.status == "failed"
        ]
    for r in data.runs:
        flags = [f for f in r.analysis.flags if f != "stalls"]
        if flags:
            out.append(f"{r.name}: {', '.join(flags)}")
    for workload in data.workloads:
        runs = [r.analysis.run for r in data.runs if r.workload == workload]
        out += [f"{workload}: {w}" for w in sameness.option_warnings(runs)]
        out += [f"{workload}: {w}" for w in sameness.client_warnings(runs)]
    for found in data.sweeps.values():
        out += found.warnings
    for comparison in data.comparisons.values():
        out += comparison.warnings
    return list(dict.fromkeys(out))
