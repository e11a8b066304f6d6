"""The claim judges (claims.toml names them) of the hitstat2009 study (seed 000).

Each judge computes the quantity its claim's text names from the results frame and returns an
Outcome; the band comes from the claim's own parameters (claims.toml says which words of the seed
they read). figures.py takes the helpers that pick and read cells from here."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from ssdlab.claims import Outcome
from ssdlab.report import figures as F

ELAPSED = "time.program_erase_us"  # the thesis's elapsed time: program + erase time
THROUGHPUT = "throughput.program_erase_write_mib_s"
HITSTATS = ("hitstat", "hitstat-adj")
# The seed's three buffers on each FTL: HitStat on BAST, HitStat(adj) on FAST (§4.4.2, §5.3.3).
SEED_BUFFERS = {"bast": ("fab", "bplru", "hitstat"), "fast": ("fab", "bplru", "hitstat-adj")}
BUFFER_AXES = {"buffer.kind", "buffer.bytes", "ftl.kind", "ftl.log_blocks"}
NAMES = {"fab": "FAB", "bplru": "BPLRU", "hitstat": "HitStat", "hitstat-adj": "HitStat(adj)"}
# Derived columns of the figures and judges (not engine metrics).
FULL_SHARE = "full-merge share of erases"
OVERHEAD_SHARE = "overhead pages / pages logged"


def bw_fraction(r_db, r_lb, u_lb, n, erase_us, program_us):
    """The Padding Model's B_w / N (seed 000 Eq. 3) from merge statistics; NaN without samples."""
    if not (r_db > 0 and r_lb > 0 and u_lb > 0):
        return float("nan")
    ce, cw = erase_us, program_us
    bw = r_lb * n * u_lb * (ce + n * cw) / ((r_lb + r_db) * ce + (r_lb * u_lb + r_db) * n * cw)
    return bw / n


def row_bw(row):
    return bw_fraction(
        float(row["ftl.r_db"]),
        float(row["ftl.r_lb"]),
        float(row["ftl.u_lb"]),
        float(row["device.pages_per_block"]),
        float(row["nand.erase_us"]),
        float(row["nand.program_us"]),
    )


def _grid(df, name, size=None):
    """Rows of one kind of [[grid]], recognised by the axes the cell varied. A cell that two grids
    share (the same configuration) is stored once, under the first grid, so the log-block rows also
    take the buffer-grid cells at their buffer size.

    "buffers": Fig 15–18's buffer sizes; "logs": Fig 19–20's log-block counts at buffer size `size`
    (default: the reference size, 32 MiB); "padding": Tables 5–6's HitStat cells; "fig21": FAB's and
    BPLRU's padding cells; "traces": the real traces."""
    ok = df[df["status"] == "ok"]
    axes = ok["axes"].map(lambda a: set(json.loads(a)))
    if name == "padding":
        part = ok[axes.map(lambda a: bool(a & {"padding.fixed.threshold", "ftl.model_stats"}))]
        return part[part["buffer.kind"].isin(HITSTATS)]
    # Fig 21's cells: FAB and BPLRU across fixed thresholds, BPLRU with the Padding Model (BPLRU's
    # own padding is fixed, FAB's none: the results hold the padding each cell ran).
    other = ok["buffer.kind"].isin(("fab", "bplru"))
    fig21 = other & (axes.map(lambda a: "padding.fixed.threshold" in a) | (ok["buffer.padding"] == "model"))
    if name == "fig21":
        return ok[fig21]
    if name == "traces":
        return ok[axes.map(lambda a: "workload.path" in a)]
    if name == "buffers":
        return ok[axes.map(lambda a: a == BUFFER_AXES)]
    rows = ok[axes.map(lambda a: a <= BUFFER_AXES and "ftl.log_blocks" in a) & ~fig21]
    if size is None:
        size = _ref_bytes(ok[axes.map(lambda a: a == BUFFER_AXES)])
    return rows[rows["buffer.bytes"].astype(int) == int(size)]


def _ref_bytes(df):
    """The buffer size that stands for the thesis's 32 MB on its 20 GB device (same ratio)."""
    target = 32e6 / 20e9
    sizes = sorted(set(int(b) for b in df["buffer.bytes"]))
    if not sizes:
        raise ValueError("the grid has no buffer-size cells")
    logical = float(df["device.logical_bytes"].iloc[0])
    return min(sizes, key=lambda b: abs(b / logical - target))


def _log_sizes(df):
    """The buffer sizes of the log-block grids, ascending."""
    ok = df[df["status"] == "ok"]
    axes = ok["axes"].map(lambda a: set(json.loads(a)))
    rows = ok[axes.map(lambda a: a == {"buffer.kind", "ftl.log_blocks"})]
    return sorted(set(int(b) for b in rows["buffer.bytes"]))


def _mib(b):
    return f"{int(b) / (1 << 20):g} MiB"


def _with_derived(df):
    """`df` with the derived columns of Fig 18(d) and Fig 20 (NaN where they do not apply)."""
    erases = df["nand.erases"].astype(float)
    out = df.assign(**{FULL_SHARE: df["ftl.erases.full"].astype(float) / erases.where(erases > 0)})
    if "ftl.fast.overhead_pages" in df and "ftl.log.used_pages_at_merge" in df:
        logged = df["ftl.log.used_pages_at_merge"].astype(float)
        out[OVERHEAD_SHARE] = df["ftl.fast.overhead_pages"].astype(float) / logged.where(logged > 0)
    return out


def _hist(row, name):
    """A cell's histogram `name` as (values, counts)."""
    h = F.histogram_of(row.get("histograms"), name)
    if h is None:
        raise ValueError(f"cell {row['cell']} has no histogram {name}")
    return h


def _share(row, name, lo=-math.inf, hi=math.inf):
    """The share of a cell's histogram `name` with lo <= value < hi."""
    values, counts = _hist(row, name)
    return float(counts[(values >= lo) & (values < hi)].sum() / counts.sum())


def _final_bw(row):
    v = row.get("padding.threshold_fraction")
    if v is not None and v == v:
        return float(v)
    return row_bw(row)


def _outcome(measured, holds, why="", cells=()):
    """An Outcome with a Python bool verdict (numpy comparisons give numpy bools)."""
    return Outcome(measured, bool(holds), why, [str(c) for c in cells])


def _at_ref(df):
    """The buffer grid at the reference size, and that size in bytes."""
    g = _grid(df, "buffers")
    if not len(g):
        raise ValueError("the grid has no buffer-size cells")
    ref = _ref_bytes(g)
    return _with_derived(g[g["buffer.bytes"].astype(int) == ref]), ref


def _pick(at, ftl, kind):
    """The one cell of (ftl, buffer kind) in `at`."""
    row = at[(at["ftl.kind"] == ftl) & (at["buffer.kind"] == kind)]
    if len(row) != 1:
        raise ValueError(f"{len(row)} cells of {kind} on {ftl}, expected 1")
    return row.iloc[0]


def _picks(at, ftl, kinds):
    """The one cell of each buffer kind on `ftl` in `at`, by kind."""
    return {k: _pick(at, ftl, k) for k in kinds}


def _values(rows, key):
    """`key` of each of `rows` (kind -> cell), as floats."""
    return {k: float(r[key]) for k, r in rows.items()}


def _ref_picks(df, ftl, kinds):
    """The reference buffer size and the one cell of each of `kinds` on `ftl` at it, by kind."""
    at, ref = _at_ref(df)
    return ref, _picks(at, ftl, kinds)


def _ref_values(df, ftl, kinds, key):
    """`_ref_picks` and the `key` of each of its cells."""
    ref, rows = _ref_picks(df, ftl, kinds)
    return ref, rows, _values(rows, key)


def _curve(g, ftl, kind, x="buffer.bytes"):
    """The cells of (ftl, buffer kind) in `g`, ascending in `x`."""
    part = g[(g["ftl.kind"] == ftl) & (g["buffer.kind"] == kind)]
    if not len(part):
        raise ValueError(f"no cells of {kind} on {ftl}")
    return part.assign(_x=part[x].astype(float)).sort_values("_x")


def _ends(curve, missing):
    """The first and the last cell of `curve`; a change needs two, else ValueError(`missing`)."""
    if len(curve) < 2:
        raise ValueError(missing)
    return curve.iloc[0], curve.iloc[-1]


def _seed_grid(df, ftl):
    """The buffer-grid cells of the seed's three buffers on `ftl` (Fig 17's cells)."""
    g = _grid(df, "buffers")
    return g[(g["ftl.kind"] == ftl) & g["buffer.kind"].isin(SEED_BUFFERS[ftl])]


def _seed_cells(df, ftl):
    """`_seed_grid`, which a judge of those cells needs to hold some."""
    g = _seed_grid(df, ftl)
    if not len(g):
        raise ValueError(f"no buffer-size cells on {ftl}")
    return g


def _log_settings(df, ftl):
    """(buffer size, log blocks, its cells by buffer kind) of each setting of the log-block grids
    on `ftl`, by buffer size, then log blocks."""
    for size in _log_sizes(df):
        lg = _grid(df, "logs", size)
        lg = lg[lg["ftl.kind"] == ftl]
        for n in sorted(set(int(x) for x in lg["ftl.log_blocks"])):
            yield size, n, lg[lg["ftl.log_blocks"].astype(int) == n].set_index("buffer.kind")


def _pct(v):
    return f"{v:.1%}"


def _names(kinds):
    return ", ".join(NAMES[k] for k in kinds)


def flushed_groups_order(df, claim):
    ref, rows, fg = _ref_values(df, "bast", ("fab", "bplru", "hitstat"), "buffer.flushed_groups")
    g = _grid(df, "buffers")
    g = g[g["ftl.kind"] == "bast"]
    sizes = sorted(set(int(b) for b in g["buffer.bytes"]))
    ordered = 0
    for s in sizes:
        by = g[g["buffer.bytes"].astype(int) == s].set_index("buffer.kind")["buffer.flushed_groups"]
        ordered += bool(by["hitstat"] < by["bplru"] < by["fab"])
    return _outcome(
        f"HitStat = {fg['hitstat'] / fg['fab']:.1%} of FAB, {fg['hitstat'] / fg['bplru']:.1%} of BPLRU "
        f"({_mib(ref)}); the order holds at {ordered} of {len(sizes)} buffer sizes",
        fg["hitstat"] < fg["bplru"] < fg["fab"],
        cells=[r["cell"] for r in rows.values()],
    )


def update_interval_short(df, claim):
    """Fig 15(b): the share of flushes whose group update interval is below `below` flushes."""
    ref, rows = _ref_picks(df, "bast", ("fab", "bplru", "hitstat"))
    share = {k: _share(r, "buffer.group_update_interval", hi=claim["below"]) for k, r in rows.items()}
    ratio = min(share["fab"] / share["bplru"], share["fab"] / share["hitstat"])
    holds = ratio >= claim["ratio"]
    return _outcome(
        f"below {claim['below']:,} flushes: FAB {_pct(share['fab'])}, BPLRU {_pct(share['bplru'])}, HitStat "
        f"{_pct(share['hitstat'])} ({_mib(ref)}); FAB ≥ {ratio:.2f}× the others",
        holds,
        "" if holds else f"FAB's share is only {ratio:.2f}× the larger of the others' (band: ≥ {claim['ratio']:g}×)",
        [r["cell"] for r in rows.values()],
    )


def update_interval_growth(df, claim):
    """§5.3.3: how the share of short update intervals (below `below` flushes) changes from the
    smallest to the largest buffer, BPLRU against FAB."""
    g = _grid(df, "buffers")
    change, cells, ends = {}, [], {}
    for k in ("fab", "bplru"):
        lo, hi = _ends(_curve(g, "bast", k), f"one buffer size of {k}: no growth to measure")
        a, b = (_share(r, "buffer.group_update_interval", hi=claim["below"]) for r in (lo, hi))
        change[k] = b - a
        ends[k] = (a, b, float(lo["buffer.group_update_interval.mean"]), float(hi["buffer.group_update_interval.mean"]))
        cells += [lo["cell"], hi["cell"]]
        span = f"{_mib(lo['buffer.bytes'])} → {_mib(hi['buffer.bytes'])}"
    grows = change["bplru"] < 0  # fewer short intervals: longer intervals
    little = abs(change["fab"]) <= claim["fab_at_most"] * abs(change["bplru"])
    holds = grows and little
    measured = "; ".join(
        f"{NAMES[k]} {_pct(a)} → {_pct(b)} ({(b - a) * 100:+.1f} points; mean interval {m0:,.0f} → {m1:,.0f})"
        for k, (a, b, m0, m1) in ends.items()
    )
    why = ""
    if not holds:
        why = (
            "BPLRU's short intervals do not fall"
            if not grows
            else f"FAB's change is {abs(change['fab']) / abs(change['bplru']):.2f}× BPLRU's (band: ≤ "
            f"{claim['fab_at_most']:g}×)"
        )
    return _outcome(f"share below {claim['below']:,} flushes, {span}: {measured}", holds, why, cells)


def group_size_order(df, claim):
    """Fig 16(a): the share of flushed groups holding at least `at_least` pages."""
    ref, rows = _ref_picks(df, "bast", ("hitstat", "bplru", "fab"))
    share = {k: _share(r, "buffer.flushed_group_pages", lo=claim["at_least"]) for k, r in rows.items()}
    holds = share["hitstat"] > share["bplru"] > share["fab"]
    return _outcome(
        f"≥ {claim['at_least']} pages: HitStat {_pct(share['hitstat'])}, BPLRU {_pct(share['bplru'])}, FAB "
        f"{_pct(share['fab'])} ({_mib(ref)})",
        holds,
        cells=[r["cell"] for r in rows.values()],
    )


def fab_small_groups(df, claim):
    """Fig 16(a), §5.5: the share of FAB's flushed groups holding at most `pages` pages."""
    at, ref = _at_ref(df)
    row = _pick(at, "bast", "fab")
    share = _share(row, "buffer.flushed_group_pages", hi=claim["pages"] + 1)
    return _outcome(
        f"FAB: {_pct(share)} of its flushed groups hold ≤ {claim['pages']} pages ({_mib(row['buffer.bytes'])})",
        share > 0.5,
        cells=[row["cell"]],
    )


def fab_cdf_step(df, claim):
    """Fig 16(a): the largest rise of FAB's flushed-group-size CDF at one group size."""
    at, ref = _at_ref(df)
    row = _pick(at, "bast", "fab")
    values, counts = _hist(row, "buffer.flushed_group_pages")
    i = int(np.argmax(counts))
    step = float(counts[i] / counts.sum())
    below = float(counts[values < values[i]].sum() / counts.sum())
    holds = step >= claim["step"]
    return _outcome(
        f"FAB's CDF rises most at {values[i]:g} pages: {_pct(below)} → {_pct(below + step)} "
        f"({step * 100:.1f} points, {_mib(ref)})",
        holds,
        "" if holds else f"no group size holds {claim['step']:.1%} of FAB's flushed groups",
        [row["cell"]],
    )


def sector_hit_order(df, claim):
    """Fig 16(b): FAB < HitStat < BPLRU, HitStat within `slightly` (relative) of BPLRU."""
    ref, rows, h = _ref_values(df, "bast", ("fab", "bplru", "hitstat"), "buffer.sector_hit_ratio")
    below = 1 - h["hitstat"] / h["bplru"]
    order = h["fab"] < h["hitstat"] < h["bplru"]
    holds = order and below <= claim["slightly"]
    why = ""
    if not holds:
        why = (
            "the order FAB < HitStat < BPLRU does not hold"
            if not order
            else f"HitStat is {below:.1%} below BPLRU, more than slightly (band: ≤ {claim['slightly']:.0%}); "
            f"it lies {(h['bplru'] - h['hitstat']) / (h['bplru'] - h['fab']):.0%} of the way from BPLRU to FAB"
        )
    return _outcome(
        f"FAB {h['fab']:.3f}, HitStat {h['hitstat']:.3f}, BPLRU {h['bplru']:.3f} ({_mib(ref)}); HitStat "
        f"{below:.1%} below BPLRU",
        holds,
        why,
        [r["cell"] for r in rows.values()],
    )


def fewest_erases(df, claim):
    """Fig 14's expectation: `policy` has fewer block erases than FAB and BPLRU on each FTL."""
    at, ref = _at_ref(df)
    p = claim["policy"]
    parts, cells, holds = [], [], True
    for ftl in claim["ftls"]:
        rows = _picks(at, ftl, ("fab", "bplru", p))
        e = _values(rows, "nand.erases")
        holds &= e[p] < e["fab"] and e[p] < e["bplru"]
        parts.append(f"{ftl.upper()}: {NAMES[p]} {e[p]:,.0f}, FAB {e['fab']:,.0f}, BPLRU {e['bplru']:,.0f}")
        cells += [r["cell"] for r in rows.values()]
    return _outcome(f"block erases ({_mib(ref)}): " + "; ".join(parts), holds, cells=cells)


def ftl_fit(df, claim):
    """Fig 14 / §6: FAB's throughput above BPLRU's on BAST, BPLRU's above FAB's on FAST."""
    at, ref = _at_ref(df)
    t = {(ftl, k): float(_pick(at, ftl, k)[THROUGHPUT]) for ftl in ("bast", "fast") for k in ("fab", "bplru")}
    bast = t["bast", "fab"] / t["bast", "bplru"]
    fast = t["fast", "bplru"] / t["fast", "fab"]
    holds = bast > 1 and fast > 1
    return _outcome(
        f"BAST: FAB = {bast:.1%} of BPLRU; FAST: BPLRU = {fast:.1%} of FAB ({_mib(ref)})",
        holds,
        cells=[_pick(at, ftl, k)["cell"] for ftl in ("bast", "fast") for k in ("fab", "bplru")],
    )


def programs_per_erase_spread(df, claim):
    """Fig 17(a, b): page writes per block erase across the figure's cells (the seed's buffers,
    every buffer size) on `ftl`."""
    g = _seed_cells(df, claim["ftl"])
    per = g["nand.programs.total"].astype(float) / g["nand.erases"].astype(float)
    spread = float(per.max() / per.min() - 1)
    holds = spread >= claim["spread"]
    f = _seed_grid(df, "fast")
    fast = ""
    if len(f):
        fp = f["nand.programs.total"].astype(float) / f["nand.erases"].astype(float)
        fast = f"; FAST {fp.min():.1f}–{fp.max():.1f} ({fp.max() / fp.min() - 1:.1%})"
    return _outcome(
        f"{claim['ftl'].upper()}: {per.min():.1f}–{per.max():.1f} page writes per erase over {len(g)} cells "
        f"(spread {spread:.1%}){fast}",
        holds,
        "" if holds else f"spread below {claim['spread']:.0%}: erases and page writes move together",
        list(g["cell"]),
    )


def shrinks_least(df, claim):
    """Fig 17(a, b): the relative fall of erases and of page writes from the smallest to the largest
    buffer, `policy` against `others`."""
    g = _grid(df, "buffers")
    ftl, p = claim["ftl"], claim["policy"]
    fall, cells = {}, []
    for k in [p, *claim["others"]]:
        lo, hi = _ends(_curve(g, ftl, k), f"one buffer size of {k}: no fall to measure")
        fall[k] = {m: 1 - float(hi[m]) / float(lo[m]) for m in ("nand.erases", "nand.programs.total")}
        cells += [lo["cell"], hi["cell"]]
        span = f"{_mib(lo['buffer.bytes'])} → {_mib(hi['buffer.bytes'])}"
    holds = all(
        fall[p][m] <= claim["at_most"] * min(fall[k][m] for k in claim["others"])
        for m in ("nand.erases", "nand.programs.total")
    )
    measured = "; ".join(
        f"{NAMES[k]} erases −{f['nand.erases']:.1%}, page writes −{f['nand.programs.total']:.1%}"
        for k, f in fall.items()
    )
    return _outcome(
        f"{ftl.upper()}, {span}: {measured}",
        holds,
        "" if holds else f"{NAMES[p]}'s fall is more than {claim['at_most']:g}× the smallest of the others'",
        cells,
    )


def throughput_above(df, claim):
    policy = claim["policy"]
    ref, rows = _ref_picks(df, claim["ftl"], ("fab", "bplru", policy))
    t, e, p = (_values(rows, m) for m in (THROUGHPUT, "nand.erases", "nand.programs.total"))
    holds = t[policy] > t["fab"] and t[policy] > t["bplru"]
    why = (
        ""
        if holds
        else f"erases {policy} {e[policy]:,.0f} vs FAB {e['fab']:,.0f} / BPLRU {e['bplru']:,.0f}; page programs "
        f"{p[policy]:,.0f} vs {p['fab']:,.0f} / {p['bplru']:,.0f}: on this synthetic desktop profile the "
        "fewer flushed groups do not turn into fewer merges"
    )
    return _outcome(
        f"{NAMES[policy]} = {t[policy] / t['fab']:.1%} of FAB, {t[policy] / t['bplru']:.1%} of BPLRU ({_mib(ref)})",
        holds,
        why,
        [r["cell"] for r in rows.values()],
    )


def program_time_share(df, claim):
    """§5.3.2: the share of the elapsed time spent programming pages, lowest over the figure's cells."""
    g = _seed_cells(df, claim["ftl"])
    prog = g["nand.programs.total"].astype(float) * g["nand.program_us"].astype(float)
    share = prog / g[ELAPSED].astype(float)
    i = share.idxmin()
    holds = float(share.min()) >= claim["at_least"]
    return _outcome(
        f"page writes take {share.min():.1%}–{share.max():.1%} of the elapsed time over {len(g)} cells "
        f"(lowest: {NAMES[g.loc[i, 'buffer.kind']]}, {_mib(g.loc[i, 'buffer.bytes'])})",
        holds,
        "" if holds else f"below {claim['at_least']:.0%} in some cell",
        list(g["cell"]),
    )


def log_util_below(df, claim):
    """Fig 17(d): the largest log-block space utilisation over the figure's cells."""
    g = _seed_cells(df, claim["ftl"])
    u = g["ftl.log_utilization"].astype(float)
    i = u.idxmax()
    holds = float(u.max()) < claim["below"]
    return _outcome(
        f"{u.min():.1%}–{u.max():.1%} over {len(g)} cells (highest: {NAMES[g.loc[i, 'buffer.kind']]}, "
        f"{_mib(g.loc[i, 'buffer.bytes'])})",
        holds,
        "" if holds else f"above {claim['below']:.0%} in some cell",
        list(g["cell"]),
    )


def _against(df, ftl, kinds, key, base, over):
    """The reference-size cells of `kinds` on `ftl`: the reference size, the rows, their `key`, and
    the `key` of each of `over` divided by `base`'s."""
    ref, rows, v = _ref_values(df, ftl, kinds, key)
    return ref, rows, v, {k: v[k] / v[base] for k in over}


def log_util_lower(df, claim):
    """Fig 17(d): HitStat's and BPLRU's log-block utilisation against FAB's."""
    ref, rows, u, rel = _against(
        df, claim["ftl"], ("fab", "bplru", "hitstat"), "ftl.log_utilization", "fab", ("hitstat", "bplru")
    )
    holds = max(rel.values()) <= claim["at_most"]
    return _outcome(
        f"FAB {_pct(u['fab'])}, HitStat {_pct(u['hitstat'])} ({rel['hitstat']:.2f}× FAB), BPLRU "
        f"{_pct(u['bplru'])} ({rel['bplru']:.2f}× FAB) ({_mib(ref)})",
        holds,
        "" if holds else f"not much lower than FAB's (band: ≤ {claim['at_most']:g}× FAB)",
        [r["cell"] for r in rows.values()],
    )


def erases_much_lower(df, claim):
    """Fig 18(a): FAB's and BPLRU's erases against `policy`'s on `ftl`."""
    p = claim["policy"]
    ref, rows, e, rel = _against(df, claim["ftl"], (p, "fab", "bplru"), "nand.erases", p, ("fab", "bplru"))
    holds = min(rel.values()) >= claim["much"]
    return _outcome(
        f"{NAMES[p]} {e[p]:,.0f} erases; FAB {rel['fab']:.2f}×, BPLRU {rel['bplru']:.2f}× that ({_mib(ref)})",
        holds,
        "" if holds else f"not much higher than {NAMES[p]}'s (band: ≥ {claim['much']:g}×)",
        [r["cell"] for r in rows.values()],
    )


def overhead_lowest(df, claim):
    """Fig 18(d): overhead pages as a share of the pages logged (and merged), lowest for `policy`."""
    p = claim["policy"]
    ref, rows, share = _ref_values(df, claim["ftl"], ("fab", "bplru", "hitstat", "hitstat-adj"), OVERHEAD_SHARE)
    holds = all(share[p] < share[k] for k in SEED_BUFFERS[claim["ftl"]] if k != p)
    return _outcome(
        ", ".join(
            f"{NAMES[k]} {_pct(s)} ({float(rows[k]['ftl.fast.overhead_pages']):,.0f} pages)" for k, s in share.items()
        )
        + f" ({_mib(ref)})",
        holds,
        "" if holds else f"{NAMES[p]}'s share is not the lowest of the seed's three",
        [r["cell"] for r in rows.values()],
    )


def full_merge_share(df, claim):
    """Fig 20: full-merge erases / all erases on FAST; both HitStat variants against FAB and BPLRU."""
    _, rows, share = _ref_values(df, "fast", ("fab", "bplru", "hitstat", "hitstat-adj"), FULL_SHARE)
    lowest = min(share["fab"], share["bplru"])
    far = {k: share[k] <= claim["at_most"] * lowest for k in HITSTATS}
    holds = all(far.values())
    why = ""
    if not holds:
        padded = ", ".join(
            f"{NAMES[k]} pads {float(r['buffer.padded_flushes']) / float(r['buffer.flushed_groups']):.1%} of "
            f"{float(r['buffer.flushed_groups']):,.0f} flushed groups"
            for k, r in rows.items()
        )
        missed = " and ".join(f"{NAMES[k]} ({share[k] / lowest:.2f}×)" for k, ok in far.items() if not ok)
        why = (
            f"{missed} not far below the lower of FAB's and BPLRU's (band: ≤ {claim['at_most']:g}×): {padded}; "
            "the rest go to the RW log blocks (full merges)"
        )
    return _outcome(
        ", ".join(f"{NAMES[k]} {_pct(s)}" for k, s in share.items()),
        holds,
        why,
        [r["cell"] for r in rows.values()],
    )


def crossing(df, claim):
    """§5.3.3: where FAB's throughput overtakes BPLRU's as the buffer grows on `ftl` (the
    difference interpolated linearly in log buffer size between the two sizes around its sign change)."""
    g = _grid(df, "buffers")
    ftl = claim["ftl"]
    a, b = _curve(g, ftl, "fab"), _curve(g, ftl, "bplru")
    sizes = [s for s in a["_x"] if s in set(b["_x"])]
    d = [float(a[a["_x"] == s][THROUGHPUT].iloc[0]) - float(b[b["_x"] == s][THROUGHPUT].iloc[0]) for s in sizes]
    cells = list(a["cell"]) + list(b["cell"])
    lo, hi = claim["near_mib"] / claim["factor"], claim["near_mib"] * claim["factor"]
    points = []
    for (s0, d0), (s1, d1) in zip(zip(sizes, d, strict=True), zip(sizes[1:], d[1:], strict=True), strict=False):
        if d0 < 0 <= d1:  # BPLRU ahead, then FAB
            t = d0 / (d0 - d1)
            points.append(math.exp(math.log(s0) + t * (math.log(s1) - math.log(s0))) / (1 << 20))
    sign = "FAB ahead" if d[0] > 0 else "BPLRU ahead"
    if not points:
        return _outcome(
            f"no crossing from BPLRU ahead to FAB ahead over {_mib(sizes[0])}–{_mib(sizes[-1])} "
            f"({sign} at {_mib(sizes[0])}, {'FAB' if d[-1] > 0 else 'BPLRU'} ahead at {_mib(sizes[-1])})",
            False,
            f"the band is {lo:.1f}–{hi:.1f} MiB",
            cells,
        )
    holds = any(lo <= p <= hi for p in points)
    return _outcome(
        "FAB overtakes BPLRU at ≈ " + ", ".join(f"{p:.1f} MiB" for p in points),
        holds,
        "" if holds else f"outside {lo:.1f}–{hi:.1f} MiB",
        cells,
    )


def switch_vs_logs(df, claim):
    """Fig 20: with fewer log blocks the Padding Model's threshold is lower and its switch-merge
    erases more, for both HitStat variants (32 MiB buffer, FAST)."""
    lg = _with_derived(_grid(df, "logs"))
    ftl = claim["ftl"]
    parts, cells, holds = [], [], True
    for k in HITSTATS:
        lo, hi = _ends(_curve(lg, ftl, k, x="ftl.log_blocks"), f"one log-block count of {k}: nothing to compare")
        th = (float(lo["padding.threshold_fraction"]), float(hi["padding.threshold_fraction"]))
        sw = (float(lo["ftl.erases.switch"]), float(hi["ftl.erases.switch"]))
        holds &= th[0] < th[1] and sw[0] > sw[1]
        parts.append(f"{NAMES[k]}: B_w/N {th[0]:.3f} → {th[1]:.3f}, switch erases {sw[0]:,.0f} → {sw[1]:,.0f}")
        cells += [lo["cell"], hi["cell"]]
        span = f"{int(lo['ftl.log_blocks'])} → {int(hi['ftl.log_blocks'])} log blocks"
    fixed = []
    for k in ("fab", "bplru"):
        c = _curve(lg, ftl, k, x="ftl.log_blocks")
        s = c["ftl.erases.switch"].astype(float)
        fixed.append(f"{NAMES[k]} {s.min():,.0f}–{s.max():,.0f}")
    return _outcome(
        f"{span}: " + "; ".join(parts) + f" (fixed padding: {', '.join(fixed)} switch erases)",
        holds,
        "" if holds else "a variant's threshold does not fall, or its switch merges do not rise, with fewer log blocks",
        cells,
    )


def _steps_up(c, x):
    """The steps of `c` (ascending in x) where the elapsed time does not fall."""
    e = c[ELAPSED].astype(float).tolist()
    xs = c[x].tolist()
    return [(xs[i], xs[i + 1]) for i in range(len(e) - 1) if e[i + 1] >= e[i]]


def more_is_better(df, claim):
    """Fig 20: on `ftl` the elapsed time falls at every step of log blocks (each log-block grid's
    buffer size) and of buffer size (the buffer grid), for every buffer."""
    ftl = claim["ftl"]
    bad, steps, cells = [], 0, []
    kinds = ("fab", "bplru", "hitstat", "hitstat-adj")
    for size in _log_sizes(df):
        lg = _grid(df, "logs", size)
        for k in kinds:
            c = _curve(lg, ftl, k, x="ftl.log_blocks")
            steps += len(c) - 1
            cells += list(c["cell"])
            bad += [
                f"{NAMES[k]} {_mib(size)}: {int(a)} → {int(b)} log blocks" for a, b in _steps_up(c, "ftl.log_blocks")
            ]
    g = _grid(df, "buffers")
    for k in kinds:
        c = _curve(g, ftl, k)
        steps += len(c) - 1
        cells += list(c["cell"])
        bad += [f"{NAMES[k]}: {_mib(a)} → {_mib(b)}" for a, b in _steps_up(c, "buffer.bytes")]
    if not steps:
        raise ValueError("no steps of log blocks or buffer size")
    return _outcome(
        f"elapsed time falls at {steps - len(bad)} of {steps} steps ({ftl.upper()})",
        not bad,
        "" if not bad else "it does not fall at " + "; ".join(bad[:6]) + (" …" if len(bad) > 6 else ""),
        cells,
    )


def logs_help_small_buffer(df, claim):
    """Fig 19: the relative fall of elapsed time from the fewest to the most log blocks, at the
    small buffer against the reference one, for every buffer (BAST)."""
    ftl = claim["ftl"]
    small = int(F.parse_size(claim["small"]))
    ref = _ref_bytes(_grid(df, "buffers"))
    cells, parts, holds = [], [], True
    for k in ("fab", "bplru", "hitstat", "hitstat-adj"):
        fall = {}
        for size in (small, ref):
            c = _curve(_grid(df, "logs", size), ftl, k, x="ftl.log_blocks")
            if len(c) < 2:
                raise ValueError(f"one log-block count of {k} at {_mib(size)}")
            fall[size] = 1 - float(c[ELAPSED].iloc[-1]) / float(c[ELAPSED].iloc[0])
            cells += [c["cell"].iloc[0], c["cell"].iloc[-1]]
            span = f"{int(c['ftl.log_blocks'].iloc[0])} → {int(c['ftl.log_blocks'].iloc[-1])} log blocks"
        ok = fall[small] > 0 and fall[ref] <= claim["at_most"] * fall[small]
        holds &= ok
        parts.append(f"{NAMES[k]} −{fall[small]:.1%} at {_mib(small)}, −{fall[ref]:.1%} at {_mib(ref)}")
    return _outcome(
        f"{span}: " + "; ".join(parts),
        holds,
        ""
        if holds
        else f"for some buffer the fall at {_mib(ref)} exceeds {claim['at_most']:g}× the fall at "
        f"{_mib(small)} (or the small buffer gains nothing)",
        cells,
    )


def adj_vs_hitstat(df, claim):
    """§5.4: HitStat(adj)'s elapsed time against HitStat's on `ftl` (the buffer grid): below it up
    to `up_to`, within `close` of it above."""
    g = _grid(df, "buffers")
    ftl = claim["ftl"]
    a, h = _curve(g, ftl, "hitstat-adj"), _curve(g, ftl, "hitstat")
    limit = F.parse_size(claim["up_to"])
    below, near, rel = [], [], []
    for s in a["_x"]:
        ra, rh = a[a["_x"] == s].iloc[0], h[h["_x"] == s].iloc[0]
        r = float(ra[ELAPSED]) / float(rh[ELAPSED]) - 1
        rel.append((s, r))
        (below if s <= limit else near).append(r < 0 if s <= limit else abs(r) <= claim["close"])
    holds = all(below) and all(near) and bool(below)
    small = [r for s, r in rel if s <= limit]
    large = [r for s, r in rel if s > limit]
    measured = f"HitStat(adj) vs HitStat, ≤ {_mib(limit)}: {min(small):+.1%} to {max(small):+.1%}"
    if large:
        measured += f"; above: {min(large):+.1%} to {max(large):+.1%}"
    why = ""
    if not holds:
        fails = [f"{_mib(s)} ({r:+.1%})" for s, r in rel if (r >= 0 if s <= limit else abs(r) > claim["close"])]
        why = "outside the band at " + ", ".join(fails)
    return _outcome(
        measured + f" ({ftl.upper()}, {int(a['ftl.log_blocks'].iloc[0])} log blocks)",
        holds,
        why,
        list(a["cell"]) + list(h["cell"]),
    )


def adj_on_bast(df, claim):
    """§5.4: on BAST HitStat(adj) against HitStat at the smallest and the largest ratio of buffer size
    to log-block space in the log-block grids."""
    ftl = claim["ftl"]
    rows = []
    for size, n, part in _log_settings(df, ftl):
        if {"hitstat", "hitstat-adj"} <= set(part.index):
            block = float(part["device.pages_per_block"].iloc[0]) * float(part["device.page_bytes"].iloc[0])
            rows.append((size / (n * block), size, n, part.loc["hitstat-adj"], part.loc["hitstat"]))
    if len(rows) < 2:
        raise ValueError("fewer than two (buffer, log blocks) settings with both HitStat variants")
    rows.sort(key=lambda r: r[0])
    (r0, s0, n0, a0, h0), (r1, s1, n1, a1, h1) = rows[0], rows[-1]
    d0 = float(a0[ELAPSED]) / float(h0[ELAPSED]) - 1
    d1 = float(a1[ELAPSED]) / float(h1[ELAPSED]) - 1
    holds = d0 <= 0 < d1
    return _outcome(
        f"HitStat(adj) vs HitStat: {d0:+.1%} at {_mib(s0)} / {n0} log blocks (ratio 1:{1 / r0:.0f}), "
        f"{d1:+.1%} at {_mib(s1)} / {n1} log blocks (ratio 1:{1 / r1:.0f})",
        holds,
        "" if holds else "HitStat(adj) is not better at the smallest ratio and worse at the largest",
        [a0["cell"], h0["cell"], a1["cell"], h1["cell"]],
    )


def lowest_in_most(df, claim):
    """§5.5: in how many of the log-block grids' settings the seed's HitStat variant of each FTL has the
    lowest elapsed time of the seed's three buffers."""
    parts, cells, holds = [], [], True
    for ftl, p in claim["policies"].items():
        wins, total, margins = 0, 0, []
        for _, _, part in _log_settings(df, ftl):
            if not set(SEED_BUFFERS[ftl]) <= set(part.index):
                continue
            e = {k: float(part.loc[k, ELAPSED]) for k in SEED_BUFFERS[ftl]}
            total += 1
            wins += e[p] < min(v for k, v in e.items() if k != p)
            margins.append(min(v for k, v in e.items() if k != p) / e[p] - 1)
            cells += list(part["cell"])
        if not total:
            raise ValueError(f"no log-block settings on {ftl}")
        holds &= wins > total / 2
        parts.append(
            f"{ftl.upper()}: {NAMES[p]} lowest in {wins} of {total} (margin over the next best "
            f"{min(margins):+.1%} to {max(margins):+.1%})"
        )
    return _outcome("; ".join(parts), holds, "" if holds else "not the lowest in most settings", cells)


def real_traces_above(df, claim):
    """Extension: HitStat (BAST) and HitStat(adj) (FAST) above FAB and BPLRU in throughput on every
    real trace and buffer size of the trace grid."""
    tr = _grid(df, "traces")
    if not len(tr):
        raise ValueError("no real-trace cells")
    wins, total, losses, cells = 0, 0, [], []
    for (path, ftl, size), part in tr.groupby(["workload.path", "ftl.kind", "buffer.bytes"]):
        p = claim["policies"][ftl]
        by = part.set_index("buffer.kind")[THROUGHPUT].astype(float)
        total += 1
        ok = by[p] > by["fab"] and by[p] > by["bplru"]
        wins += ok
        if not ok:
            losses.append(f"{Path(str(path)).name} {ftl.upper()} {_mib(size)}")
        cells += list(part["cell"])
    return _outcome(
        f"above both in {wins} of {total} (trace, FTL, buffer) settings",
        wins == total,
        "" if wins == total else "not above both on " + ", ".join(losses[:6]) + (" …" if len(losses) > 6 else ""),
        cells,
    )


def _padding_runs(df, ftl):
    """The fixed-threshold cells, the best of them and the Padding Model's cell (seed statistics)."""
    part = _grid(df, "padding")
    part = part[part["ftl.kind"] == ftl]
    fixed, model = part[part["buffer.padding"] == "fixed"], part[part["buffer.padding"] == "model"]
    seed = model[model["ftl.model_stats"] == "seed"]
    if not (len(fixed) and len(seed)):
        raise ValueError(f"no fixed-threshold or Padding Model cells on {ftl}")
    return fixed, model, fixed.loc[fixed[ELAPSED].idxmin()], seed.iloc[0]


def model_vs_best_fixed(df, claim):
    fixed, model, best, m = _padding_runs(df, claim["ftl"])
    gap = float(m[ELAPSED]) / float(best[ELAPSED]) - 1
    others = "; ".join(
        f"{r['ftl.model_stats']} statistics: {float(r[ELAPSED]) / 1e6:,.1f} s "
        f"({float(r[ELAPSED]) / float(best[ELAPSED]) - 1:+.1%})"
        for _, r in model.iterrows()
        if r["ftl.model_stats"] != "seed"
    )
    holds = gap <= claim["within"]
    why = (
        ""
        if holds
        else f"padded flushes: model {float(m['buffer.padded_flushes']):,.0f} vs "
        f"{float(best['buffer.padded_flushes']):,.0f}; erases {float(m['nand.erases']):,.0f} vs "
        f"{float(best['nand.erases']):,.0f}; page writes {float(m['nand.programs.total']):,.0f} vs "
        f"{float(best['nand.programs.total']):,.0f}"
    )
    return _outcome(
        f"model {float(m[ELAPSED]) / 1e6:,.1f} s vs best fixed {best['padding.fixed.threshold']:g}: "
        f"{float(best[ELAPSED]) / 1e6:,.1f} s ({gap:+.1%})" + (f"; {others}" if others else ""),
        holds,
        why,
        [m["cell"], best["cell"]],
    )


def model_beats_best_fixed(df, claim):
    """Table 5: the model's elapsed time (seed statistics) at or below the best fixed threshold's."""
    _, _, best, m = _padding_runs(df, claim["ftl"])
    gap = float(m[ELAPSED]) / float(best[ELAPSED]) - 1
    return _outcome(
        f"model {float(m[ELAPSED]) / 1e6:,.1f} s vs best fixed {best['padding.fixed.threshold']:g}: "
        f"{float(best[ELAPSED]) / 1e6:,.1f} s ({gap:+.2%})",
        gap <= 0,
        "" if gap <= 0 else "the model is slower than the best fixed threshold",
        [m["cell"], best["cell"]],
    )


def bw_near_best_fixed(df, claim):
    fixed, _, best, m = _padding_runs(df, claim["ftl"])
    bw = _final_bw(m)
    holds = abs(bw - float(best["padding.fixed.threshold"])) <= claim["within"]
    closest = fixed.loc[(fixed["padding.fixed.threshold"] - bw).abs().idxmin()]
    flat = float(closest[ELAPSED]) / float(best[ELAPSED]) - 1
    why = (
        ""
        if holds
        else f"R_DB {float(m['ftl.r_db']):.2f}, R_LB {float(m['ftl.r_lb']):.2f}, U_LB "
        f"{float(m['ftl.u_lb']):.1%} from {float(m['ftl.model_samples']):,.0f} samples "
        f"give B_w/N = {bw:.3f}; the fixed threshold nearest it "
        f"({closest['padding.fixed.threshold']:g}) costs {flat:+.1%} over the best one"
    )
    return _outcome(
        f"B_w/N at the end {bw:.3f}; best fixed threshold {best['padding.fixed.threshold']:g}",
        holds,
        why,
        [m["cell"], best["cell"]],
    )


def padding_interior_best(df, claim):
    """Tables 5–6: the best fixed threshold lies strictly between never (1.00) and always (0.00)
    padding, both of which cost at least `at_least` more elapsed time."""
    fixed, _, best, _ = _padding_runs(df, claim["ftl"])
    by = fixed.set_index("padding.fixed.threshold")[ELAPSED].astype(float)
    if not ({0.0, 1.0} <= set(by.index)):
        raise ValueError("the fixed thresholds lack 0.00 or 1.00")
    b = float(best[ELAPSED])
    never, always = by[1.0] / b - 1, by[0.0] / b - 1
    t = float(best["padding.fixed.threshold"])
    holds = 0 < t < 1 and min(never, always) >= claim["at_least"]
    return _outcome(
        f"best fixed {t:g}; never padding (1.00) {never:+.1%}, always padding (0.00) {always:+.1%}",
        holds,
        "" if holds else f"an end is the best or within {claim['at_least']:.0%} of it",
        list(fixed["cell"]),
    )


def stat_ends(df, claim):
    """Tables 5–6: a merge statistic of the fixed-threshold runs at the two ends of the threshold
    range that has samples (1.00 and the smallest threshold whose run has model samples) against
    its extreme over the thresholds between them (`shape` "min": both ends above the interior
    minimum; "max": both below the interior maximum)."""
    fixed, _, _, _ = _padding_runs(df, claim["ftl"])
    key = claim["stat"]
    have = fixed[fixed["ftl.model_samples"].astype(float) > 0].sort_values("padding.fixed.threshold")
    if len(have) < 3:
        raise ValueError(f"fewer than three fixed thresholds with samples of {key}")
    lo, hi, inner = have.iloc[0], have.iloc[-1], have.iloc[1:-1]
    v = inner[key].astype(float)
    ext = float(v.min() if claim["shape"] == "min" else v.max())
    at = float(inner.loc[v.idxmin() if claim["shape"] == "min" else v.idxmax(), "padding.fixed.threshold"])
    ends = (float(hi[key]), float(lo[key]))
    holds = all(e > ext for e in ends) if claim["shape"] == "min" else all(e < ext for e in ends)
    fmt = ".1%" if key == "ftl.u_lb" else ".2f"
    return _outcome(
        f"{key}: {format(ends[0], fmt)} at {hi['padding.fixed.threshold']:g}, {format(ends[1], fmt)} at "
        f"{lo['padding.fixed.threshold']:g}; interior {claim['shape']} {format(ext, fmt)} at {at:g}",
        holds,
        ""
        if holds
        else f"an end is not {'above' if claim['shape'] == 'min' else 'below'} the interior {claim['shape']}",
        list(have["cell"]),
    )


def _fig21_gains(df, ftl):
    """{buffer: (elapsed at 1.00, at 0.00, the lowest fixed one)} of Fig 21's buffers on `ftl`."""
    out, cells = {}, []
    pg = _grid(df, "padding")
    f21 = _grid(df, "fig21")
    for part in (pg, f21):
        part = part[(part["ftl.kind"] == ftl) & (part["buffer.padding"] == "fixed")]
        for k, c in part.groupby("buffer.kind"):
            by = c.set_index("padding.fixed.threshold")[ELAPSED].astype(float)
            if not ({0.0, 1.0} <= set(by.index)):
                raise ValueError(f"{k} on {ftl} lacks the thresholds 0.00 or 1.00")
            out[k] = (by[1.0], by[0.0], by.min(), float(by.idxmin()))
            cells += list(c["cell"])
    need = {"fab", "bplru", SEED_BUFFERS[ftl][2]}
    if not need <= set(out):
        raise ValueError(f"Fig 21 needs fixed-threshold runs of {_names(sorted(need))} on {ftl}")
    return out, cells


def _fig21_over_best(df, end):
    """{ftl: {buffer: elapsed time at the threshold `end` (1.00 or 0.00) / the lowest fixed one − 1}}
    of Fig 21's buffers on BAST and FAST, and the cells."""
    at = {1.0: 0, 0.0: 1}[end]  # the place of `end` in _fig21_gains' tuples
    over, cells = {}, []
    for ftl in ("bast", "fast"):
        e, c = _fig21_gains(df, ftl)
        cells += c
        over[ftl] = {k: v[at] / v[2] - 1 for k, v in e.items()}
    return over, cells


def fab_padding_gain(df, claim):
    """Fig 21: the gain of the best fixed threshold over never padding (1.00), FAB against BPLRU and
    the seed's HitStat variant, on each FTL."""
    gains, cells = _fig21_over_best(df, 1.0)
    parts, holds = [], True
    for ftl, gain in gains.items():
        h = SEED_BUFFERS[ftl][2]
        holds &= gain["fab"] < gain["bplru"] and gain["fab"] < gain[h]
        parts.append(f"{ftl.upper()}: FAB {gain['fab']:.1%}, BPLRU {gain['bplru']:.1%}, {NAMES[h]} {gain[h]:.1%}")
    return _outcome(
        "best fixed threshold against 1.00: " + "; ".join(parts),
        holds,
        "" if holds else "FAB's gain is not the smallest on every FTL",
        cells,
    )


def zero_rise(df, claim):
    """Fig 21: how much always padding (0.00) costs over the best fixed threshold, FAB and BPLRU
    against the seed's HitStat variant, on each FTL."""
    rises, cells = _fig21_over_best(df, 0.0)
    parts, holds = [], True
    for ftl, rise in rises.items():
        h = SEED_BUFFERS[ftl][2]
        holds &= rise["fab"] > rise[h] and rise["bplru"] > rise[h]
        parts.append(f"{ftl.upper()}: FAB {rise['fab']:+.1%}, BPLRU {rise['bplru']:+.1%}, {NAMES[h]} {rise[h]:+.1%}")
    return _outcome(
        "always padding (0.00) against the best fixed threshold: " + "; ".join(parts),
        holds,
        "" if holds else "FAB's or BPLRU's rise is not above HitStat's on every FTL",
        cells,
    )


def bplru_model(df, claim):
    """Fig 21: BPLRU with the Padding Model against BPLRU's lowest fixed-threshold elapsed time."""
    f21 = _grid(df, "fig21")
    f21 = f21[f21["buffer.kind"] == "bplru"]
    parts, cells, holds = [], [], True
    for ftl in ("bast", "fast"):
        part = f21[f21["ftl.kind"] == ftl]
        fixed, model = part[part["buffer.padding"] == "fixed"], part[part["buffer.padding"] == "model"]
        if not (len(fixed) and len(model)):
            raise ValueError(f"no BPLRU fixed-threshold or Padding Model cells on {ftl}")
        best = fixed.loc[fixed[ELAPSED].idxmin()]
        m = model.iloc[0]
        gap = float(m[ELAPSED]) / float(best[ELAPSED]) - 1
        holds &= gap <= claim["within"]
        parts.append(
            f"{ftl.upper()}: {gap:+.1%} (model B_w/N {float(m['padding.threshold_fraction']):.2f}, best fixed "
            f"{best['padding.fixed.threshold']:g})"
        )
        cells += [m["cell"], best["cell"]]
    return _outcome(
        "BPLRU with the model against its best fixed threshold: " + "; ".join(parts),
        holds,
        "" if holds else f"more than {claim['within']:.0%} above the best fixed threshold",
        cells,
    )
