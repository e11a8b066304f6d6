"""The claim judges (claims.toml names them) of the ptsd study (seed 004, Im & Bae's PTSD).

Each judge computes the quantity its claim's text names from the results frame and returns an
Outcome; the band comes from the claim's own parameters (claims.toml says which words of the seed
they read). figures.py takes the helpers that pick and read cells from here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from ssdlab.claims import Outcome
from ssdlab.report import figures as F

SECONDARY = "randwrite-then-randread"  # the seed's text taken literally
READ_NS = "latency.read_ns"
THROUGHPUT = "throughput.iops"
READ_MEAN = "latency.read.mean_us"


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
    return F.ok_cells(df, variant=variant, workload=workload)


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
