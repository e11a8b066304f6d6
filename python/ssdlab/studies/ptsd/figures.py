"""Figures and report tables of the ptsd study (seed 004, Im & Bae's PTSD). The claim judges are in judges.py."""

from __future__ import annotations

import html

import numpy as np
from ssdlab.report import figures as F
from ssdlab.report.html import table

from .judges import (
    SECONDARY,
    THROUGHPUT,
    _cells,
    _hist,
    _m,
    _one,
    _quantile,
)

VARIANTS = ("OPT", "DFTL", "PART", "PART-RP", "PART-SCHED", "WRITEOPT", "ADAPTIVE")
HEADLINE = "randrw"  # reads meet writes on an aged device
NUM = ' class="num"'


def _cdf_figure(ok, wl, variants, lo: float = 0.0):
    with F.panel(F.PANEL[0] + 1.2, F.PANEL[1]) as (fig, ax):
        for i, v in enumerate(variants):
            h = _hist(_one(ok, wl, v))
            if h is None:
                continue
            ys = np.cumsum(h[1]) / h[1].sum()
            keep = ys >= lo
            ax.plot(h[0][keep], ys[keep], drawstyle="steps-post", label=v, zorder=3, **F.series_style(i, dense=True))
        ax.set_xscale("log")
        ax.set_xlabel("read latency (µs)")
        ax.set_ylabel("fraction ≤ x (CDF" + (f", from {lo:.0%})" if lo else ")"))
        ax.set_ylim(lo, 1.005)
        F._legend(ax)
        return F._finish(fig, ax)


def _distribution_figure(ok, wl, variants):
    """Seed Fig 10: the share of reads in each latency bin (log-spaced), one line per variant."""
    with F.panel(F.PANEL[0] + 1.2, F.PANEL[1]) as (fig, ax):
        hists = {v: _hist(_one(ok, wl, v)) for v in variants}
        lows = [h[0][h[0] > 0].min() for h in hists.values() if h is not None]
        highs = [h[0].max() for h in hists.values() if h is not None]
        if not lows:
            return None
        edges = np.geomspace(min(lows), max(highs) * 1.001, 60)
        for i, (v, h) in enumerate(hists.items()):
            if h is None:
                continue
            share, _ = np.histogram(h[0], bins=edges, weights=h[1] / h[1].sum())
            ax.plot(np.sqrt(edges[:-1] * edges[1:]), share, label=v, zorder=3, **F.series_style(i, dense=True))
        ax.set_xscale("log")
        ax.set_xlabel("read latency (µs)")
        ax.set_ylabel("share of reads per bin")
        F._legend(ax)
        return F._finish(fig, ax)


def _throughput_figure(ok):
    """Seed Fig 11: total throughput of each variant on each synthetic workload."""
    with F.panel(F.PANEL[0] + 1.5, F.PANEL[1]) as (fig, ax):
        wls = [w for w in (HEADLINE, SECONDARY) if w in set(ok["workload"])]
        F.grouped_bars(ax, wls, [(v, [_m(ok, w, v, THROUGHPUT) for w in wls]) for v in VARIANTS], zorder=3)
        ax.set_ylabel("requests per second")
        F._legend(ax)
        return F._finish(fig, ax)


def figures(df):
    ok = _cells(df)
    out = []
    for wl, what in (
        (HEADLINE, "50% random reads and writes on the aged device (headline)"),
        (SECONDARY, "random writes of twice the device, then random reads (secondary)"),
    ):
        if not (ok["workload"] == wl).any():
            continue
        out.append(
            (
                f"Seed Fig 8 — read-latency CDF, {what}: OPT, DFTL and PART.",
                _cdf_figure(ok, wl, ("OPT", "DFTL", "PART")),
            )
        )
        out.append(
            (
                f"Seed Fig 9 — the read-latency tail from the 80th percentile, {what}: PART without scheduling, with "
                "read priority, with write-stop (PART-SCHED), and WRITEOPT and ADAPTIVE (both with write-stop).",
                _cdf_figure(ok, wl, ("DFTL", "PART", "PART-RP", "PART-SCHED", "WRITEOPT", "ADAPTIVE"), lo=0.8),
            )
        )
        fig = _distribution_figure(ok, wl, ("OPT", "DFTL", "PART", "PART-SCHED", "WRITEOPT"))
        if fig is not None:
            out.append(
                (f"Seed Fig 10 — the read-latency distribution, {what} (share of reads per log-spaced bin).", fig)
            )
    if len(ok):
        out.append(
            (
                "Seed Fig 11 — total throughput (requests per second over the whole run) of every variant.",
                _throughput_figure(ok),
            )
        )
    return out


def _fmt(v, digits=0) -> str:
    return "—" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:,.{digits}f}"


def _variant_table(ok, wls) -> str:
    header = [
        "workload",
        "variant",
        "read p50 µs",
        "read p90 µs",
        "read p99 µs",
        "read p99.9 µs",
        "requests/s",
        "CMT hit ratio",
        "map reads",
        "map programs",
        "map writes during reads",
        "erases",
        "write-stops",
        "stalled s",
        "out of order",
    ]
    rows = []
    for wl in wls:
        for v in VARIANTS:
            c = _one(ok, wl, v)
            if c is None:
                continue
            h = _hist(c)
            qs = [_quantile(h, q) if h is not None else np.nan for q in (0.5, 0.9, 0.99, 0.999)]

            def get(k, c=c):
                return float(c[k]) if k in c and c[k] == c[k] else np.nan

            cells = [
                *(_fmt(q) for q in qs),
                _fmt(get(THROUGHPUT)),
                _fmt(get("ftl.cmt.hit_ratio"), 3),
                _fmt(get("nand.reads.map")),
                _fmt(get("nand.programs.map")),
                _fmt(get("ftl.cmt.read_evict_writes")),
                _fmt(get("nand.erases")),
                _fmt(get("queue.write_stops")),
                _fmt(get("queue.stalled_us") / 1e6, 1),
                _fmt(get("queue.out_of_order")),
            ]
            rows.append(
                f"<tr><td>{html.escape(wl)}</td><td>{v}</td>" + "".join(f"<td{NUM}>{x}</td>" for x in cells) + "</tr>"
            )
    return table(header, rows)


def _reorder_table(ok) -> str:
    """How much reordering requests changed the counts (PART against its two schedulers)."""
    keys = ("nand.programs.host", "nand.programs.map", "nand.reads.map", "nand.programs.gc", "nand.erases")
    rows = []
    for wl in dict.fromkeys(ok["workload"]):
        base = _one(ok, wl, "PART")
        for v in ("PART-RP", "PART-SCHED"):
            c = _one(ok, wl, v)
            if base is None or c is None:
                continue
            diffs = [(float(c[k]) - float(base[k])) / float(base[k]) if float(base[k]) else 0.0 for k in keys]
            rows.append(
                f"<tr><td>{html.escape(wl)}</td><td>{v}</td><td{NUM}>{_fmt(float(c['queue.out_of_order']))}</td>"
                + "".join(f"<td{NUM}>{d:+.2%}</td>" for d in diffs)
                + "</tr>"
            )
    return table(["workload", "scheduler", "requests reordered", *(f"{k} vs PART" for k in keys)], rows)


def sections(df):
    ok = _cells(df)
    if not len(ok):
        return []
    synth = [w for w in (HEADLINE, SECONDARY) if w in set(ok["workload"])]
    traces = [w for w in dict.fromkeys(ok["workload"]) if w not in synth]
    out = [
        ("Every variant, synthetic workloads", _variant_table(ok, synth)),
    ]
    if traces:
        out.append(
            (
                "Every variant on the real traces",
                "<p>Each trace's own requests, closed loop of 128, after a fill; latencies over the whole trace.</p>"
                + _variant_table(ok, traces),
            )
        )
    out.append(
        (
            "What reordering changed",
            "<p>The host-interface schedulers take requests out of submission order, so the simulated sequence "
            "differs from PART's; the counts move by this much (timed mode with the fifo scheduler reports exactly the "
            "counts-mode figures).</p>" + _reorder_table(ok),
        )
    )
    return out
