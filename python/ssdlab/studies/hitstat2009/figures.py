"""Figures, tables and the claim judges (claims.toml) of the hitstat2009 study (seed 000)."""

from __future__ import annotations

import html
import json
from pathlib import Path

import numpy as np
from ssdlab.claims import Outcome
from ssdlab.report import figures as F

ELAPSED = "time.program_erase_us"  # the thesis's elapsed time: program + erase time
THROUGHPUT = "throughput.program_erase_write_mib_s"
# What the study's padding grids vary: (policy, fixed threshold, model statistics).
PAD_KEYS = ["buffer.padding", "padding.fixed.threshold", "ftl.model_stats"]


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


def _series(row):
    """A cell's sampled time series as a DataFrame (empty when it has none)."""
    import pandas as pd

    frame = F.series_of(row.get("series"))
    return frame if frame is not None else pd.DataFrame()


def _model_label(row):
    return f"Padding Model ({row['ftl.model_stats']} statistics)"


def _grid(df, name):
    """Rows of one [[grid]], recognised by the axes the cell varied. A cell that two grids share
    (the same configuration) is stored once, under the first grid, so the log-block rows also take
    the buffer-grid cells at the reference size."""
    ok = df[df["status"] == "ok"]
    axes = ok["axes"].map(lambda a: set(json.loads(a)))
    if name == "padding":
        return ok[axes.map(lambda a: bool(a & {"padding.fixed.threshold", "ftl.model_stats"}))]
    if name == "traces":
        return ok[axes.map(lambda a: "workload.path" in a)]
    buffers = {"buffer.kind", "buffer.bytes", "ftl.kind", "ftl.log_blocks"}
    if name == "buffers":
        return ok[axes.map(lambda a: a == buffers)]
    rows = ok[axes.map(lambda a: a <= buffers and "ftl.log_blocks" in a)]
    return rows[rows["buffer.bytes"].astype(int) == _ref_bytes(ok)]


def _ref_bytes(df):
    """The buffer size that stands for the thesis's 32 MB on its 20 GB device (same ratio)."""
    target = 32e6 / 20e9
    sizes = sorted(set(int(b) for b in df["buffer.bytes"]))
    logical = float(df["device.logical_bytes"].iloc[0])
    return min(sizes, key=lambda b: abs(b / logical - target))


def figures(df):
    out = []
    g = _grid(df, "buffers")
    if len(g):
        part = g[g["ftl.kind"] == "bast"]
        for metric, what in (
            ("buffer.flushed_groups", "flushed groups"),
            ("buffer.sector_hit_ratio", "sector hit ratio"),
        ):
            fig = F.line(part, x="buffer.bytes", y=metric, by="buffer.kind", logx=True)
            out.append((f"Fig 15 analogue: {what} against buffer size (buffer-side, on BAST)", fig))
        ref = _ref_bytes(g)
        at = part[part["buffer.bytes"].astype(int) == ref].dropna(subset=["histograms"])
        for name, what, logx in (
            ("buffer.group_update_interval", "group update interval (flushes, log2 buckets)", True),
            ("buffer.flushed_group_pages", "flushed group size (pages)", False),
        ):
            samples = {}
            for _, row in at.iterrows():
                pairs = json.loads(row["histograms"]).get(name, [])
                if pairs:
                    values, counts = np.asarray(pairs, float).T
                    samples[row["buffer.kind"]] = np.repeat(values, counts.astype(int))
            if samples:
                fig = F.cdf(samples, xlabel=what, logx=logx)
                out.append((f"Fig 15–16 analogue: CDF of the {what}, {ref >> 20} MiB buffer (on BAST)", fig))
        for ftl in ("bast", "fast"):
            part = g[g["ftl.kind"] == ftl]
            for metric, what in (
                ("nand.erases", "block erases"),
                (THROUGHPUT, "write throughput (program + erase time)"),
            ):
                fig = F.line(part, x="buffer.bytes", y=metric, by="buffer.kind", logx=True)
                fig.axes[0].set_title(ftl.upper(), fontsize=8)
                out.append((f"Fig 17–18 analogue: {what} against buffer size on {ftl.upper()}", fig))
    tr = _grid(df, "traces")
    for path in sorted(tr["workload.path"].unique()) if len(tr) else []:
        part = tr[tr["workload.path"] == path]
        sizes = sorted(set(int(b) for b in part["buffer.bytes"]))
        size = sizes[len(sizes) // 2]
        part = part[part["buffer.bytes"].astype(int) == size]
        name = Path(str(path)).name
        for metric, what in (("buffer.flushed_groups", "flushed groups"), (THROUGHPUT, "write throughput")):
            fig = F.bars(part, x="ftl.kind", y=metric, by="buffer.kind")
            fig.axes[0].set_title(f"{name}, {size >> 20} MiB buffer", fontsize=8)
            out.append((f"Real trace {name}: {what} by FTL and buffer ({size >> 20} MiB)", fig))
    lg = _grid(df, "logs")
    for ftl, kinds in (("bast", ("fab", "bplru", "hitstat")), ("fast", ("fab", "bplru", "hitstat-adj"))):
        part = lg[(lg["ftl.kind"] == ftl) & lg["buffer.kind"].isin(kinds)]
        baseline = "fab"
        if len(part):
            fig = F.normalized_bars(part, x="ftl.log_blocks", y=ELAPSED, by="buffer.kind", baseline=baseline)
            fig.axes[0].set_title(ftl.upper(), fontsize=8)
            out.append(
                (
                    f"Fig 19–20 analogue: elapsed time (program + erase) normalised to FAB against log "
                    f"blocks, {ftl.upper()}",
                    fig,
                )
            )
    pg = _grid(df, "padding")
    for ftl in ("bast", "fast"):
        part = pg[pg["ftl.kind"] == ftl]
        fixed, model = part[part["buffer.padding"] == "fixed"], part[part["buffer.padding"] == "model"]
        if len(fixed):
            overlay = None
            if len(model):
                xs = sorted(fixed["padding.fixed.threshold"])
                seed = model[model["ftl.model_stats"] == "seed"]
                pick = seed if len(seed) else model
                overlay = ([xs[0], xs[-1]], [float(pick[ELAPSED].iloc[0])] * 2, _model_label(pick.iloc[0]))
            fig = F.line(fixed, x="padding.fixed.threshold", y=ELAPSED, by="buffer.kind", overlay=overlay)
            fig.axes[0].set_title(ftl.upper(), fontsize=8)
            fig.axes[0].set_xlabel("fixed padding threshold (fraction of a block)")
            out.append(
                (
                    f"Tables 5–6 / Fig 21 analogue: elapsed time against the fixed padding threshold, "
                    f"{ftl.upper()}; dashed: the dynamic Padding Model",
                    fig,
                )
            )
        sampled = model[[len(_series(r)) > 0 for _, r in model.iterrows()]]
        if len(sampled):
            overlay = None
            if len(fixed):
                # the best fixed threshold across the sampled requests, in the figure's legend
                best = float(fixed.loc[fixed[ELAPSED].idxmin(), "padding.fixed.threshold"])
                xs = [x for _, r in sampled.iterrows() for x in _series(r)["requests"]]
                overlay = ([min(xs), max(xs)], [best, best], f"best fixed threshold ({best:g})")
            fig = F.series(sampled, y="padding.threshold_fraction", by="ftl.model_stats", overlay=overlay)
            ax = fig.axes[0]
            ax.set_xlabel("write requests replayed")
            ax.set_ylabel("B_w/N (fraction of a block)")
            ax.set_title(ftl.upper(), fontsize=8)
            out.append(
                (
                    f"Table {5 if ftl == 'bast' else 6} analogue, last column: the Padding Model's B_w/N as the run "
                    f"proceeds on {ftl.upper()}, one line per reading of its statistics (sampled every "
                    f"{_sample_every(model)} requests); dashed: the best fixed threshold",
                    fig,
                )
            )
    return out


def _sample_every(model):
    v = model["run.sample_every"].iloc[0] if "run.sample_every" in model else None
    return f"{int(v):,}" if v is not None and v == v else "N"


def _final_bw(row):
    v = row.get("padding.threshold_fraction")
    if v is not None and v == v:
        return float(v)
    return row_bw(row)


def _stat(row, key, fmt, has_samples):
    return format(float(row[key]), fmt) if has_samples else "N/A"


def _padding_table(ftl, fixed, model):
    """Table 5 (BAST) or 6 (FAST) as the thesis prints it: one row per fixed threshold and one per
    reading of the model, with the merge statistics and the B_w/N they give."""
    bast = ftl == "bast"
    head = ["padding", "block erases", "page writes", "elapsed (s)", "padded flushes"]
    head += ["R_LB", "U_LB"] if bast else ["R_DB"]
    head += ["B_w/N"]
    body = []
    rows = [
        (f"{r['padding.fixed.threshold']:.2f}", r)
        for _, r in fixed.sort_values("padding.fixed.threshold", ascending=False).iterrows()
    ]
    rows += [(f"dynamic by Model ({r['ftl.model_stats']})", r) for _, r in model.iterrows()]
    for label, r in rows:
        has = float(r.get("ftl.model_samples", 1.0)) > 0
        cells = [
            label,
            f"{float(r['nand.erases']):,.0f}",
            f"{float(r['nand.programs.total']):,.0f}",
            f"{float(r[ELAPSED]) / 1e6:,.3f}",
            f"{float(r['buffer.padded_flushes']):,.0f}",
        ]
        cells += (
            [_stat(r, "ftl.r_lb", ".2f", has), _stat(r, "ftl.u_lb", ".3%", has)]
            if bast
            else [_stat(r, "ftl.r_db", ".2f", has)]
        )
        bw = _final_bw(r) if label.startswith("dynamic") else row_bw(r)
        cells.append(f"{bw:.2f}" if bw == bw else "N/A")
        body.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    table = "<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>" + "".join(body) + "</table>"
    intro = (
        f"<p>HitStat{'' if bast else '(adj)'} on {ftl.upper()}: each fixed threshold (a group holding at least "
        "that fraction of a block is padded; 1.00 never pads, 0.00 always pads) and the dynamic Padding Model "
        "with both readings of its statistics (<code>ftl.model_stats</code>). B_w/N is the model's threshold "
        "computed from the row's final merge statistics (for the model rows: the threshold it used last); "
        "N/A where the run produced no sample.</p>"
    )
    return (f"Table {5 if bast else 6} analogue: HitStat with {ftl.upper()}", intro + table)


# -- claims (claims.toml names these judges) -----------------------------------------------------


def _at_ref(df):
    """The buffer grid at the reference size, and that size in bytes."""
    g = _grid(df, "buffers")
    if not len(g):
        raise ValueError("the grid has no buffer-size cells")
    ref = _ref_bytes(g)
    return g[g["buffer.bytes"].astype(int) == ref], ref


def _pick(at, ftl, kind):
    """The one cell of (ftl, buffer kind) in `at`."""
    row = at[(at["ftl.kind"] == ftl) & (at["buffer.kind"] == kind)]
    if len(row) != 1:
        raise ValueError(f"{len(row)} cells of {kind} on {ftl}, expected 1")
    return row.iloc[0]


def flushed_groups_order(df, claim):
    at, ref = _at_ref(df)
    rows = {k: _pick(at, "bast", k) for k in ("fab", "bplru", "hitstat")}
    fg = {k: float(r["buffer.flushed_groups"]) for k, r in rows.items()}
    return Outcome(
        f"HitStat = {fg['hitstat'] / fg['fab']:.1%} of FAB, {fg['hitstat'] / fg['bplru']:.1%} of BPLRU "
        f"({ref / (1 << 20):g} MiB)",
        fg["hitstat"] < fg["bplru"] < fg["fab"],
        cells=[r["cell"] for r in rows.values()],
    )


def throughput_above(df, claim):
    at, _ = _at_ref(df)
    ftl, kind = claim["ftl"], claim["kind"]
    rows = {k: _pick(at, ftl, k) for k in ("fab", "bplru", kind)}
    t, e, p = ({k: float(r[m]) for k, r in rows.items()} for m in (THROUGHPUT, "nand.erases", "nand.programs.total"))
    holds = t[kind] > t["fab"] and t[kind] > t["bplru"]
    why = (
        ""
        if holds
        else f"erases {kind} {e[kind]:,.0f} vs FAB {e['fab']:,.0f} / BPLRU {e['bplru']:,.0f}; page programs "
        f"{p[kind]:,.0f} vs {p['fab']:,.0f} / {p['bplru']:,.0f}: on this synthetic desktop profile the "
        "fewer flushed groups do not turn into fewer merges"
    )
    return Outcome(
        f"{kind} = {t[kind] / t['fab']:.1%} of FAB, {t[kind] / t['bplru']:.1%} of BPLRU",
        holds,
        why,
        [r["cell"] for r in rows.values()],
    )


def full_merge_share(df, claim):
    at, _ = _at_ref(df)
    kinds = ("fab", "bplru", "hitstat", "hitstat-adj")
    rows = {k: _pick(at, "fast", k) for k in kinds}
    share = {k: float(r["ftl.erases.full"]) / float(r["nand.erases"]) for k, r in rows.items()}
    lowest = min(share["fab"], share["bplru"])
    holds = share["hitstat"] <= claim["at_most"] * lowest
    why = ""
    if not holds:
        padded = ", ".join(
            f"{k} pads {float(r['buffer.padded_flushes']) / float(r['buffer.flushed_groups']):.1%} of "
            f"{float(r['buffer.flushed_groups']):,.0f} flushed groups"
            for k, r in rows.items()
        )
        lower = "lower than" if share["hitstat"] < lowest else "not lower than"
        why = f"{lower} FAB's and BPLRU's but not far below: {padded}; the rest go to the RW log blocks (full merges)"
    return Outcome(", ".join(f"{k} {s:.1%}" for k, s in share.items()), holds, why, [r["cell"] for r in rows.values()])


def always_pad(df, claim):
    pg = _grid(df, "padding")
    always = pg[(pg["buffer.padding"] == "fixed") & (pg["padding.fixed.threshold"] == 0.0)].set_index("ftl.kind")
    b, f = always.loc["bast"], always.loc["fast"]
    n = float(always["device.pages_per_block"].iloc[0])
    same = float(b[ELAPSED]) == float(f[ELAPSED])
    exact = all(
        float(r["nand.erases"]) == float(r["buffer.flushed_groups"])
        and float(r["nand.programs.total"]) == n * float(r["nand.erases"])
        for r in (b, f)
    )
    return Outcome(
        f"{float(b['nand.erases']):,.0f} erases = flushed groups, {float(b['nand.programs.total']):,.0f} page "
        f"writes (= {n:g} × erases), {float(b[ELAPSED]) / 1e6:,.3f} s on BAST and "
        f"{float(f[ELAPSED]) / 1e6:,.3f} s on FAST",
        same and exact,
        cells=[b["cell"], f["cell"]],
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
    return Outcome(
        f"model {float(m[ELAPSED]) / 1e6:,.1f} s vs best fixed {best['padding.fixed.threshold']:g}: "
        f"{float(best[ELAPSED]) / 1e6:,.1f} s ({gap:+.1%})" + (f"; {others}" if others else ""),
        holds,
        why,
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
    return Outcome(
        f"B_w/N at the end {bw:.3f}; best fixed threshold {best['padding.fixed.threshold']:g}",
        holds,
        why,
        [m["cell"], best["cell"]],
    )


# -- report sections after the claims ----------------------------------------------------------


def sections(df):
    pg = _grid(df, "padding")
    out = []
    for ftl in ("bast", "fast"):
        part = pg[pg["ftl.kind"] == ftl]
        fixed, model = part[part["buffer.padding"] == "fixed"], part[part["buffer.padding"] == "model"]
        if len(fixed):
            out.append(_padding_table(ftl, fixed, model))
    trace_rows = []
    tr = _grid(df, "traces")
    for (path, ftl, size), part in tr.groupby(["workload.path", "ftl.kind", "buffer.bytes"]) if len(tr) else []:
        by = part.set_index("buffer.kind")
        fg = " / ".join(f"{k} {by.loc[k, 'buffer.flushed_groups']:,.0f}" for k in by.index)
        tp = " / ".join(f"{k} {by.loc[k, THROUGHPUT]:.3f}" for k in by.index)
        trace_rows.append(
            f"<tr><td>{html.escape(Path(str(path)).name)}</td><td>{html.escape(ftl.upper())}</td>"
            f"<td>{int(size) >> 20} MiB</td><td>{html.escape(fg)}</td><td>{html.escape(tp)}</td></tr>"
        )
    if trace_rows:
        out.append(
            (
                "The same buffers on real traces",
                "<p>Flushed groups and write throughput (MiB/s over program + erase time) of each buffer on "
                "the real traces; the thesis's claims are judged above on the desktop profile only.</p>"
                "<table><tr><th>trace</th><th>FTL</th><th>buffer</th><th>flushed groups</th>"
                "<th>throughput</th></tr>" + "".join(trace_rows) + "</table>",
            )
        )
    return out
