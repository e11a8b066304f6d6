"""Figures of the tenants study: a reader beside a write-heavy neighbour, under each way of
protecting the reader."""

from __future__ import annotations

import html

from ssdlab.report import figures as F

#: The set-ups, by what the cell set (arbitration, the reader's class, the scheduler, the
#: reader's channels).
SETUPS = {
    ("round-robin", "medium", "fifo", ()): "no isolation",
    ("weighted-round-robin", "urgent", "fifo", ()): "urgent reader",
    ("round-robin", "medium", "read-priority", ()): "read-priority",
    ("round-robin", "medium", "write-stop", ()): "write-stop",
    ("round-robin", "medium", "fifo", (0, 1, 2, 3)): "channels split",
    ("weighted-round-robin", "urgent", "fifo", (0, 1, 2, 3)): "split + urgent",
}
KEYS = ("host.arbitration", "flows.0.priority", "run.scheduler", "flows.0.channels")

#: What each table column shows: (metric, heading, scale).
COLUMNS = (
    ("flow.0.latency.read.mean_us", "reader mean (µs)"),
    ("flow.0.latency.read.p99_us", "reader p99 (µs)"),
    ("flow.0.latency.read.p999_us", "reader p99.9 (µs)"),
    ("flow.0.slowdown", "reader slowdown"),
    ("flow.1.slowdown", "writer slowdown"),
    ("fairness", "fairness"),
    ("flow.0.throughput.iops", "reader IOPS"),
    ("flow.1.throughput.iops", "writer IOPS"),
    ("throughput.iops", "total IOPS"),
)


def _cells(df):
    """The finished cells with their set-up and tenants (synthetic or real traces) named."""
    ok = df[df["status"] == "ok"]
    setup = [SETUPS.get((*r[:3], tuple(r[3] or ())), "other") for r in ok[list(KEYS)].itertuples(index=False)]
    tenants = ["real traces" if k == "trace" else "synthetic" for k in ok["flows.0.workload.kind"]]
    return ok.assign(setup=setup, tenants=tenants)


def figures(df):
    cells = _cells(df)
    if cells.empty:
        return []
    out = []
    for y, what in (
        ("flow.0.latency.read.p99_us", "The reader's p99 read latency"),
        ("flow.0.slowdown", "The reader's slowdown (mean response time shared ÷ alone)"),
        ("flow.1.slowdown", "The writer's slowdown"),
        ("fairness", "Fairness (smallest slowdown ÷ largest)"),
        ("throughput.iops", "Total throughput of both tenants"),
    ):
        out.append((f"{what}, by set-up.", F.bars(cells, x="setup", y=y, by="tenants")))
    for tenants, part in cells.groupby("tenants"):
        fig = F.distribution_cdf(part, "flow.0.latency.read_ns", by="setup", tail=True)
        out.append((f"The reader's read-latency tail, {tenants}.", fig))
    return out


def _table(part) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for _, h in COLUMNS)
    rows = []
    for setup in SETUPS.values():
        row = part[part["setup"] == setup]
        if row.empty:
            continue
        vals = "".join(f"<td>{float(row[m].iloc[0]):,.4g}</td>" for m, _ in COLUMNS)
        rows.append(f"<tr><td>{html.escape(setup)}</td>{vals}</tr>")
    return f"<table><tr><th>set-up</th>{head}</tr>{''.join(rows)}</table>"


def sections(df):
    cells = _cells(df)
    if cells.empty:
        return []
    return [(f"The numbers: {tenants}", _table(part)) for tenants, part in cells.groupby("tenants")]
