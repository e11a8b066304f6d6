"""Figures, tables and the claim judges (claims.toml) of the ptsd study (seed 004, Im & Bae's PTSD)."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
from ssdlab.claims import Outcome
from ssdlab.report import figures as F
from ssdlab.report.html import table

VARIANTS = ("OPT", "DFTL", "PART", "PART-RP", "PART-SCHED", "WRITEOPT", "ADAPTIVE")
HEADLINE = "randrw"  # reads meet writes on an aged device
SECONDARY = "randwrite-then-randread"  # the seed's text taken literally
READ_NS = "latency.read_ns"
THROUGHPUT = "throughput.iops"
READ_MEAN = "latency.read.mean_us"
NUM = ' class="num"'


def variant(row) -> str:
    """The variant a cell runs, from its configuration."""
    if row["ftl.kind"] == "page":
        return "OPT"
    part, dirty, sched = row["ftl.dftl.partition"], row["ftl.dftl.dirty_cache"], row["run.scheduler"]
    if part == "none":
        return "DFTL"
    if part == "adaptive":
        return "ADAPTIVE"
    if dirty == "entry":
        return "WRITEOPT"
    return {"fifo": "PART", "read-priority": "PART-RP", "write-stop": "PART-SCHED"}[sched]


def workload(row) -> str:
    if row["workload.kind"] == "fio":
        return str(row["workload.fio.rw"])
    return Path(str(row["workload.path"])).name.split(".")[0]


def _cells(df):
    ok = df[df["status"] == "ok"] if "status" in df.columns else df
    ok = ok.copy()
    if len(ok):
        ok["variant"] = ok.apply(variant, axis=1)
        ok["workload"] = ok.apply(workload, axis=1)
    return ok


def _one(ok, wl, v):
    """The cell of variant `v` on workload `wl`, or None."""
    rows = ok[(ok["workload"] == wl) & (ok["variant"] == v)]
    return rows.iloc[0] if len(rows) else None


def _hist(cell):
    h = F.histogram_of(cell["histograms"], READ_NS) if cell is not None else None
    return None if h is None else (h[0] / 1000.0, h[1])


def _quantile(h, q: float) -> float:
    values, counts = h
    cum = np.cumsum(counts) / counts.sum()
    return float(values[np.searchsorted(cum, q)])


def _cdf_figure(ok, wl, variants, lo: float = 0.0):
    with F.style():
        fig = F._new_figure(F.PANEL[0] + 1.2, F.PANEL[1])
        ax = fig.add_subplot()
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
    with F.style():
        fig = F._new_figure(F.PANEL[0] + 1.2, F.PANEL[1])
        ax = fig.add_subplot()
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
    with F.style():
        fig = F._new_figure(F.PANEL[0] + 1.5, F.PANEL[1])
        ax = fig.add_subplot()
        wls = [w for w in (HEADLINE, SECONDARY) if w in set(ok["workload"])]
        width = 0.8 / len(VARIANTS)
        for i, v in enumerate(VARIANTS):
            ys = [_m(ok, w, v, THROUGHPUT) for w in wls]
            ax.bar(
                np.arange(len(wls)) + (i - len(VARIANTS) / 2 + 0.5) * width,
                ys,
                width,
                label=v,
                zorder=3,
                linewidth=0.4,
                **F.series_style(i, bars=True),
            )
        ax.set_xticks(range(len(wls)))
        ax.set_xticklabels(wls)
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


# -- claims (claims.toml names these judges; `workload` is a claim's set-up) ------------------------


def _read_us(ok) -> float:
    """One flash read with its transfer (no queueing), µs."""
    c = ok.iloc[0]
    return float(c["nand.read_us"]) + 4096 / float(c["nand.channel_mb_s"])


def _q(ok, wl, v, q):
    h = _hist(_one(ok, wl, v))
    return np.nan if h is None else _quantile(h, q)


def _m(ok, wl, v, k):
    c = _one(ok, wl, v)
    return np.nan if c is None else float(c[k])


def _setup(df, claim, variants):
    """The ok cells, the claim's workload and the cells of `variants` on it (ValueError if any is
    missing: the claim is then not judged)."""
    ok = _cells(df)
    wl = claim["workload"]
    cells = []
    for v in variants:
        c = _one(ok, wl, v) if len(ok) else None
        if c is None:
            raise ValueError(f"no {v} cell on {wl}")
        cells.append(str(c["cell"]))
    return ok, wl, cells


def cdf_left(df, claim):
    ok, wl, cells = _setup(df, claim, ("DFTL", "PART"))
    d50, p50 = _q(ok, wl, "DFTL", 0.5), _q(ok, wl, "PART", 0.5)
    d90, p90 = _q(ok, wl, "DFTL", 0.9), _q(ok, wl, "PART", 0.9)
    rew = _m(ok, wl, "DFTL", "ftl.cmt.read_evict_writes")
    hd, hp = _m(ok, wl, "DFTL", "ftl.cmt.hit_ratio"), _m(ok, wl, "PART", "ftl.cmt.hit_ratio")
    holds = bool(p50 < 0.9 * d50 and p90 < 0.9 * d90)
    why = "PART's reads never write the map; DFTL's do only while dirty translation pages are in its CMT" + (
        ": after the write phase only until the pages it left dirty are evicted, and PART's reads have half the "
        "memory (the clean region), so they miss more"
        if wl == SECONDARY
        else ": with reads and writes mixed every DFTL read miss may evict a dirty page"
    )
    return Outcome(
        f"p50 {p50:,.0f} vs {d50:,.0f} µs, p90 {p90:,.0f} vs {d90:,.0f} µs; DFTL wrote {rew:,.0f} translation pages "
        f"while reading; CMT hit ratio {hp:.2f} vs {hd:.2f}",
        holds,
        why,
        cells,
    )


def one_extra_read(df, claim):
    ok, wl, cells = _setup(df, claim, ("OPT", "PART"))
    t_read = _read_us(ok)
    gap50 = (_q(ok, wl, "PART", 0.5) - _q(ok, wl, "OPT", 0.5)) / t_read
    gap90 = (_q(ok, wl, "PART", 0.9) - _q(ok, wl, "OPT", 0.9)) / t_read
    misses = 1 - _m(ok, wl, "PART", "ftl.cmt.hit_ratio")
    return Outcome(
        f"PART − OPT: {gap50:+.1f} reads at p50, {gap90:+.1f} at p90 (one read = {t_read:.0f} µs); {misses:.0%} of "
        "PART's reads read a translation page (never more than one)",
        bool(0.5 <= gap50 <= 3 and 0.5 <= gap90 <= 3),
        "a read miss costs exactly one map read in PART; the gap in latency adds the queueing those map reads "
        "cause at queue depth 128",
        cells,
    )


def tail_with_scheduling(df, claim):
    ok, wl, cells = _setup(df, claim, ("DFTL", "PART", "PART-SCHED"))
    d99, p99, s99 = (_q(ok, wl, v, 0.99) for v in ("DFTL", "PART", "PART-SCHED"))
    p999, s999 = _q(ok, wl, "PART", 0.999), _q(ok, wl, "PART-SCHED", 0.999)
    return Outcome(
        f"p99: DFTL {d99:,.0f}, PART {p99:,.0f}, PART-SCHED {s99:,.0f} µs; p99.9: PART {p999:,.0f}, PART-SCHED "
        f"{s999:,.0f} µs",
        bool(abs(p99 / d99 - 1) < 0.25 and s99 < 0.8 * p99),
        "write-stop takes no flush while a read is in the device, so reads do not queue behind a flush's programs, "
        "map writes and GC; reads submitted during the synchronous flush wait for all of it (the seed's noted "
        "limitation), which is where PART-SCHED's own extreme tail comes from"
        + ("; after the write phase no flush meets a read at all" if wl == SECONDARY else ""),
        cells,
    )


def writeopt_gain(df, claim):
    ok, wl, cells = _setup(df, claim, ("WRITEOPT", "PART-SCHED"))
    wo, ps = _m(ok, wl, "WRITEOPT", THROUGHPUT), _m(ok, wl, "PART-SCHED", THROUGHPUT)
    return Outcome(
        f"{wo / ps - 1:+.0%} ({wo:,.0f} vs {ps:,.0f} requests/s); map programs "
        f"{_m(ok, wl, 'WRITEOPT', 'nand.programs.map'):,.0f} vs {_m(ok, wl, 'PART-SCHED', 'nand.programs.map'):,.0f}",
        bool(0.05 <= wo / ps - 1 <= 0.2),
        "an entry-level dirty region needs no translation-page read on a write miss and writes a page back with many "
        "entries at once (greedy batch update); the gain is larger than the seed's when every page-level dirty "
        "eviction is a program of its own and programs dominate",
        cells,
    )


def _band(claim) -> str:
    return f"{claim['lo']:+.0%} … {claim['hi']:+.0%}"


def sched_cost(df, claim):
    """Seed Fig. 11: PART-SCHED's throughput slightly below PART's: its change within [lo, hi]."""
    ok, wl, cells = _setup(df, claim, ("PART-SCHED", "PART"))
    ps, pt = _m(ok, wl, "PART-SCHED", THROUGHPUT), _m(ok, wl, "PART", THROUGHPUT)
    return Outcome(
        f"{ps / pt - 1:+.1%} ({ps:,.0f} vs {pt:,.0f} requests/s; “slightly”: {_band(claim)})",
        bool(claim["lo"] <= ps / pt - 1 <= claim["hi"]),
        "the synchronous flush stalls the controller while the dies work"
        + ("; with the reads after all writes the scheduler has nothing to reorder" if wl == SECONDARY else ""),
        cells,
    )


def sched_mean(df, claim):
    """Seed Fig. 9(a): with write-stop scheduling PART's mean read latency slightly better: the
    change of PART-SCHED's mean read latency against PART's within [lo, hi]."""
    ok, wl, cells = _setup(df, claim, ("PART-SCHED", "PART"))
    ps, pt = _m(ok, wl, "PART-SCHED", READ_MEAN), _m(ok, wl, "PART", READ_MEAN)
    change = ps / pt - 1
    return Outcome(
        f"mean read latency {change:+.1%} ({ps:,.0f} vs {pt:,.0f} µs; “slightly”: {_band(claim)}); p50 "
        f"{_q(ok, wl, 'PART-SCHED', 0.5):,.0f} vs {_q(ok, wl, 'PART', 0.5):,.0f} µs",
        bool(claim["lo"] <= change <= claim["hi"]),
        "write-stop holds a flush while reads wait, so fewer reads queue behind programs; the reads that arrive during "
        "the synchronous flush wait for all of it"
        + ("; after the write phase no flush meets a read" if wl == SECONDARY else ""),
        cells,
    )


def part_extra_writes(df, claim):
    """Seed §III-C: a page-level CMT's extra writes under random traffic weigh more with the
    partition than in DFTL: PART's map programs per host page written above DFTL's, and its
    throughput below DFTL's."""
    ok, wl, cells = _setup(df, claim, ("DFTL", "PART"))
    per = {v: _m(ok, wl, v, "nand.programs.map") / _m(ok, wl, v, "nand.programs.host") for v in ("DFTL", "PART")}
    t = {v: _m(ok, wl, v, THROUGHPUT) for v in ("DFTL", "PART")}
    holds = bool(per["PART"] > per["DFTL"] and t["PART"] < t["DFTL"])
    return Outcome(
        f"map programs per host page program: PART {per['PART']:.3f} vs DFTL {per['DFTL']:.3f}; requests/s "
        f"{t['PART']:,.0f} vs {t['DFTL']:,.0f}",
        holds,
        ""
        if holds
        else "a write hit in PART's clean region moves the page to the dirty region, whose victim is written at once; "
        "with half the memory each region misses more than DFTL's one list",
        cells,
    )


SEED_FIG11 = ("DFTL", "PART", "PART-SCHED", "WRITEOPT")  # the seed's variants besides OPT


def writeopt_order(df, claim):
    """Seed Fig. 11: WRITEOPT's throughput above every variant but OPT's (DFTL, PART,
    PART-SCHED), OPT's above WRITEOPT's."""
    ok, wl, cells = _setup(df, claim, ("OPT", *SEED_FIG11))
    t = {v: _m(ok, wl, v, THROUGHPUT) for v in ("OPT", *SEED_FIG11)}
    others = [v for v in SEED_FIG11 if v != "WRITEOPT"]
    holds = bool(t["OPT"] > t["WRITEOPT"] and all(t["WRITEOPT"] > t[v] for v in others))
    order = sorted(t, key=t.get, reverse=True)
    return Outcome(
        "requests/s: " + ", ".join(f"{v} {t[v]:,.0f}" for v in order),
        holds,
        "WRITEOPT's entry-level dirty region saves translation-page reads and writes on writes; OPT has no map traffic",
        cells,
    )


def non_opt_close(df, claim):
    """Seed Fig. 11: apart from OPT the variants' throughputs differ little (GC dominates): the
    largest over the smallest of DFTL, PART, PART-SCHED and WRITEOPT at most `within`."""
    ok, wl, cells = _setup(df, claim, SEED_FIG11)
    t = {v: _m(ok, wl, v, THROUGHPUT) for v in SEED_FIG11}
    hi, lo = max(t, key=t.get), min(t, key=t.get)
    spread = t[hi] / t[lo]
    gc = {v: _m(ok, wl, v, "nand.programs.gc") for v in SEED_FIG11}
    host = {v: _m(ok, wl, v, "nand.programs.host") for v in SEED_FIG11}
    return Outcome(
        f"{hi} / {lo} = {spread:.2f}× (at most {claim['within']:.2f}×); GC copies per host page program "
        + ", ".join(f"{v} {gc[v] / host[v]:.2f}" if host[v] else f"{v} —" for v in SEED_FIG11),
        bool(spread <= claim["within"]),
        "the variants differ only in map traffic; where map programs and reads rival the GC copies the spread widens",
        cells,
    )


def ptsd_vs_dftl(df, claim):
    ok, wl, cells = _setup(df, claim, ("WRITEOPT", "DFTL", "OPT"))
    wo, d = _m(ok, wl, "WRITEOPT", THROUGHPUT), _m(ok, wl, "DFTL", THROUGHPUT)
    return Outcome(
        f"WRITEOPT / DFTL = {wo / d:.2f}×; OPT / DFTL = {_m(ok, wl, 'OPT', THROUGHPUT) / d:.2f}×",
        bool(1.05 <= wo / d <= 1.3),
        "WRITEOPT halves DFTL's map traffic on writes; the GC that every variant shares dilutes the gain (the "
        "seed: GC dominates)",
        cells,
    )


def adaptive_gain(df, claim):
    ok, wl, cells = _setup(df, claim, ("ADAPTIVE", "WRITEOPT"))
    ad, wo = _m(ok, wl, "ADAPTIVE", THROUGHPUT), _m(ok, wl, "WRITEOPT", THROUGHPUT)
    return Outcome(
        f"throughput {ad / wo - 1:+.1%}; read p99 {_q(ok, wl, 'ADAPTIVE', 0.99):,.0f} vs "
        f"{_q(ok, wl, 'WRITEOPT', 0.99):,.0f} µs; "
        f"final clean share {_m(ok, wl, 'ADAPTIVE', 'ftl.cmt.clean_ratio'):.2f}",
        bool(ad / wo - 1 >= 0.01),
        "the controller gives memory to the side whose misses cost more flash time in the last window",
        cells,
    )


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
