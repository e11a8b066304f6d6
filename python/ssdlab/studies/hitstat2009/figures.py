"""Figures and the claim-by-claim comparison of the hitstat2009 study (seed 000)."""

from __future__ import annotations

import html
import json
from pathlib import Path

import numpy as np
from ssdlab.report import figures as F
from ssdlab.report.html import claim_row, table

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
            fig = F.series(sampled, y="padding.threshold_fraction")
            ax = fig.axes[0]
            if len(fixed):
                best = fixed.loc[fixed[ELAPSED].idxmin()]
                ax.axhline(float(best["padding.fixed.threshold"]), ls=":", color="k", label="best fixed threshold")
                ax.legend(fontsize=7)
            ax.set_xlabel("write requests replayed")
            ax.set_ylabel("B_w/N (fraction of a block)")
            ax.set_title(ftl.upper(), fontsize=8)
            out.append(
                (
                    f"Table {5 if ftl == 'bast' else 6} analogue, last column: the Padding Model's B_w/N as the run "
                    f"proceeds on {ftl.upper()}, one line per reading of its statistics (sampled every "
                    f"{_sample_every(model)} requests); dotted: the best fixed threshold",
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


def sections(df):
    rows = []
    g = _grid(df, "buffers")
    if len(g):
        ref = _ref_bytes(g)
        at = g[g["buffer.bytes"].astype(int) == ref]
        mib = ref / (1 << 20)

        def v(ftl, kind, metric):
            s = at[(at["ftl.kind"] == ftl) & (at["buffer.kind"] == kind)][metric]
            return float(s.iloc[0]) if len(s) else float("nan")

        fg = {k: v("bast", k, "buffer.flushed_groups") for k in ("fab", "bplru", "hitstat")}
        rows.append(
            claim_row(
                "Flushed groups: HitStat < BPLRU < FAB",
                "HitStat = 58.1% of FAB, 71.3% of BPLRU (32 MB)",
                f"HitStat = {fg['hitstat'] / fg['fab']:.1%} of FAB, "
                f"{fg['hitstat'] / fg['bplru']:.1%} of BPLRU ({mib:g} MiB)",
                fg["hitstat"] < fg["bplru"] < fg["fab"],
            )
        )
        for ftl, kind, thesis in (
            ("bast", "hitstat", "HitStat = 113.9% of FAB, 128.0% of BPLRU (BAST, 2048 log blocks)"),
            ("fast", "hitstat-adj", "HitStat(adj) = 133.2% of FAB, 138.6% of BPLRU (FAST, 128 log blocks)"),
        ):
            t = {k: v(ftl, k, THROUGHPUT) for k in ("fab", "bplru", kind)}
            e = {k: v(ftl, k, "nand.erases") for k in ("fab", "bplru", kind)}
            p = {k: v(ftl, k, "nand.programs.total") for k in ("fab", "bplru", kind)}
            holds = t[kind] > t["fab"] and t[kind] > t["bplru"]
            why = (
                ""
                if holds
                else (
                    f"erases {kind} {e[kind]:,.0f} vs FAB {e['fab']:,.0f} / BPLRU {e['bplru']:,.0f}; page programs "
                    f"{p[kind]:,.0f} vs {p['fab']:,.0f} / {p['bplru']:,.0f}: on this synthetic desktop profile the "
                    "fewer flushed groups do not turn into fewer merges"
                )
            )
            rows.append(
                claim_row(
                    f"Write throughput on {ftl.upper()}: {kind} above FAB and BPLRU",
                    thesis,
                    f"{kind} = {t[kind] / t['fab']:.1%} of FAB, {t[kind] / t['bplru']:.1%} of BPLRU",
                    holds,
                    why,
                )
            )
        share = {
            k: v("fast", k, "ftl.erases.full") / v("fast", k, "nand.erases")
            for k in ("fab", "bplru", "hitstat", "hitstat-adj")
        }
        rows.append(
            claim_row(
                "Full-merge share of erases on FAST: HitStat far below FAB and BPLRU",
                "FAB 89.9%, BPLRU 76.1%, HitStat 14.8%, HitStat(adj) 16.1%",
                ", ".join(f"{k} {s:.1%}" for k, s in share.items()),
                # "Far below": at most half the smaller of FAB's and BPLRU's shares (the thesis: a fifth).
                share["hitstat"] <= 0.5 * min(share["fab"], share["bplru"]),
                ""
                if share["hitstat"] <= 0.5 * min(share["fab"], share["bplru"])
                else (
                    "lower than FAB's and BPLRU's"
                    if share["hitstat"] < min(share["fab"], share["bplru"])
                    else "not lower than FAB's and BPLRU's"
                )
                + " but not far below: "
                + ", ".join(
                    f"{k} pads {v('fast', k, 'buffer.padded_flushes') / v('fast', k, 'buffer.flushed_groups'):.1%} of "
                    f"{v('fast', k, 'buffer.flushed_groups'):,.0f} flushed groups"
                    for k in ("fab", "bplru", "hitstat", "hitstat-adj")
                )
                + "; the rest go to the 127 RW log blocks and are full-merged",
            )
        )
    pg = _grid(df, "padding")
    always = pg[(pg["buffer.padding"] == "fixed") & (pg["padding.fixed.threshold"] == 0.0)].set_index("ftl.kind")
    if {"bast", "fast"} <= set(always.index):
        n = float(always["device.pages_per_block"].iloc[0])
        same = float(always.loc["bast", ELAPSED]) == float(always.loc["fast", ELAPSED])
        exact = all(
            float(r["nand.erases"]) == float(r["buffer.flushed_groups"])
            and float(r["nand.programs.total"]) == n * float(r["nand.erases"])
            for _, r in always.iterrows()
        )
        b = always.loc["bast"]
        rows.append(
            claim_row(
                "Always padding (0.00): one erase and N page writes per flushed group, the same on BAST and FAST",
                "131,960 erases, 16,890,880 page writes (= 128 × 131,960), 13,710.644 s in both Tables 5 and 6",
                f"{float(b['nand.erases']):,.0f} erases = flushed groups, {float(b['nand.programs.total']):,.0f} page "
                f"writes (= {n:g} × erases), {float(b[ELAPSED]) / 1e6:,.3f} s on BAST and "
                f"{float(always.loc['fast', ELAPSED]) / 1e6:,.3f} s on FAST",
                same and exact,
            )
        )
    tables = []
    for ftl, thesis, thesis_bw in (
        (
            "bast",
            "model 0.14 vs best fixed 0.16: 11693.7 s vs 11699.6 s",
            "B_w/N converges to 0.12–0.14; best fixed 0.16",
        ),
        ("fast", "model 0.07 vs best fixed 0.06: 11964.4 s vs 11903.8 s", "B_w/N converges to 0.07; best fixed 0.06"),
    ):
        part = pg[pg["ftl.kind"] == ftl]
        fixed, model = part[part["buffer.padding"] == "fixed"], part[part["buffer.padding"] == "model"]
        if len(fixed):
            tables.append(_padding_table(ftl, fixed, model))
        seed = model[model["ftl.model_stats"] == "seed"]
        if not (len(fixed) and len(seed)):
            continue
        best = fixed.loc[fixed[ELAPSED].idxmin()]
        m = seed.iloc[0]
        gap = float(m[ELAPSED]) / float(best[ELAPSED]) - 1
        others = "; ".join(
            f"{r['ftl.model_stats']} statistics: {float(r[ELAPSED]) / 1e6:,.1f} s "
            f"({float(r[ELAPSED]) / float(best[ELAPSED]) - 1:+.1%})"
            for _, r in model.iterrows()
            if r["ftl.model_stats"] != "seed"
        )
        rows.append(
            claim_row(
                f"Padding Model within a few percent of the best fixed threshold ({ftl.upper()})",
                thesis,
                f"model {float(m[ELAPSED]) / 1e6:,.1f} s vs best fixed {best['padding.fixed.threshold']:g}: "
                f"{float(best[ELAPSED]) / 1e6:,.1f} s ({gap:+.1%})" + (f"; {others}" if others else ""),
                gap <= 0.05,
                ""
                if gap <= 0.05
                else (
                    f"padded flushes: model {float(m['buffer.padded_flushes']):,.0f} vs "
                    f"{float(best['buffer.padded_flushes']):,.0f}; erases {float(m['nand.erases']):,.0f} vs "
                    f"{float(best['nand.erases']):,.0f}; page writes {float(m['nand.programs.total']):,.0f} vs "
                    f"{float(best['nand.programs.total']):,.0f}"
                ),
            )
        )
        bw = _final_bw(m)
        near = abs(bw - float(best["padding.fixed.threshold"])) <= 0.05
        closest = fixed.loc[(fixed["padding.fixed.threshold"] - bw).abs().idxmin()]
        flat = float(closest[ELAPSED]) / float(best[ELAPSED]) - 1
        rows.append(
            claim_row(
                f"The model's B_w/N converges near the best fixed threshold ({ftl.upper()})",
                thesis_bw,
                f"B_w/N at the end {bw:.3f}; best fixed threshold {best['padding.fixed.threshold']:g}",
                near,
                ""
                if near
                else (
                    f"R_DB {float(m['ftl.r_db']):.2f}, R_LB {float(m['ftl.r_lb']):.2f}, U_LB "
                    f"{float(m['ftl.u_lb']):.1%} from {float(m['ftl.model_samples']):,.0f} samples "
                    f"give B_w/N = {bw:.3f}; the fixed threshold nearest it "
                    f"({closest['padding.fixed.threshold']:g}) costs {flat:+.1%} over the best one"
                ),
            )
        )
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
    if not rows:
        return []
    claims = (
        "<p>Each claim of the thesis against what ssdlab measures on this grid (program + erase time, as the "
        "thesis computes it). The workload is a synthetic desktop profile, not the thesis's month-long Windows XP "
        "trace, on a device of the thesis's size (20 GiB, 512 KiB blocks); a claim that does not hold is reported "
        "as such, with the counts "
        "that explain it.</p>" + table(("claim", "thesis", "ssdlab", "verdict", "why"), rows)
    )
    out = [("Thesis claims against ssdlab", claims)] + tables
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
