"""Figures and report tables of the hitstat2009 study (seed 000). The claim judges are in judges.py."""

from __future__ import annotations

import html
import math
from pathlib import Path

import numpy as np
import pandas as pd
from ssdlab.report import figures as F
from ssdlab.report.html import plain_table, text_row

from .judges import (
    ELAPSED,
    FULL_SHARE,
    NAMES,
    OVERHEAD_SHARE,
    THROUGHPUT,
    _at_ref,
    _final_bw,
    _grid,
    _log_sizes,
    _mib,
    _pct,
    _ref_bytes,
    _with_derived,
    row_bw,
)

# What the study's padding grids vary: (policy, fixed threshold, model statistics).
PAD_KEYS = ["buffer.padding", "padding.fixed.threshold", "ftl.model_stats"]


def _series(row):
    """A cell's sampled time series as a DataFrame (empty when it has none)."""
    frame = F.series_of(row.get("series"))
    return frame if frame is not None else pd.DataFrame()


def _model_label(row):
    return f"Padding Model ({row['ftl.model_stats']} statistics)"


def _fig20_split(part, ftl, size):
    """Fig 20's bars: erases by switch merges (solid) and by full merges (hatched, on top), each
    buffer's total normalised to FAB's at the same number of log blocks."""
    logs = sorted(set(int(x) for x in part["ftl.log_blocks"]))
    kinds = [k for k in ("fab", "bplru", "hitstat", "hitstat-adj") if k in set(part["buffer.kind"])]
    with F.panel(max(F.PANEL[0], 1.2 + 0.5 * len(logs)), F.PANEL[1]) as (fig, ax):
        by = part.set_index(["ftl.log_blocks", "buffer.kind"])
        offsets, w = F.bar_offsets(len(kinds))
        pos = np.arange(len(logs), dtype=float)
        for i, k in enumerate(kinds):
            base = [float(by.loc[(n, "fab"), "nand.erases"]) if (n, "fab") in by.index else math.nan for n in logs]
            sw = [float(by.loc[(n, k), "ftl.erases.switch"]) if (n, k) in by.index else math.nan for n in logs]
            fu = [float(by.loc[(n, k), "ftl.erases.full"]) if (n, k) in by.index else math.nan for n in logs]
            rest = [
                float(by.loc[(n, k), "nand.erases"]) - s - f if (n, k) in by.index else math.nan
                for n, s, f in zip(logs, sw, fu, strict=True)
            ]
            x = pos + offsets[i]
            style = F.series_style(i, bars=True)
            sw_n = np.array(sw) / np.array(base)
            fu_n = np.array(fu) / np.array(base)
            ax.bar(x, sw_n, width=w, linewidth=0.4, color=style["color"], edgecolor="#222222", zorder=3, label=NAMES[k])
            ax.bar(
                x,
                fu_n,
                bottom=sw_n,
                width=w,
                linewidth=0.4,
                color=style["color"],
                edgecolor="white",
                hatch="////",
                alpha=0.55,
                zorder=3,
            )
            other = np.array(rest) / np.array(base)
            ax.bar(x, other, bottom=sw_n + fu_n, width=w, linewidth=0.4, color="#999999", zorder=3)
        ax.set_xticks(pos)
        ax.set_xticklabels([str(n) for n in logs])
        ax.grid(axis="x", visible=False)
        ax.axhline(1.0, color="#555555", linestyle="--", linewidth=0.8, zorder=2)
        ax.set_xlabel("log blocks")
        ax.set_ylabel("block erases, normalised to FAB\n(solid: switch, hatched: full merge)")
        F.panel_title(ax, f"{ftl.upper()}, {_mib(size)} buffer")
        F.figure_legend(fig)
        right = F.legend_size([NAMES[k] for k in kinds], None, fig.get_figheight())[1]
        F._suptitle(fig, F.subtitle(part), right=right)
        return F._finish(fig, ax)


def figures(df):
    out = []
    g = _grid(df, "buffers")
    if len(g):
        g = _with_derived(g)
        part = g[g["ftl.kind"] == "bast"]
        for metric, what, fig_no in (
            ("buffer.flushed_groups", "flushed groups", "15(a)"),
            ("buffer.sector_hit_ratio", "sector hit ratio", "16(b)"),
        ):
            fig = F.line(part, x="buffer.bytes", y=metric, by="buffer.kind", logx=True)
            out.append((f"Fig {fig_no} analogue: {what} against buffer size (buffer-side, on BAST)", fig))
        ref = _ref_bytes(g)
        at = part[part["buffer.bytes"].astype(int) == ref].dropna(subset=["histograms"])
        for name, what, logx, fig_no in (
            ("buffer.group_update_interval", "group update interval (flushes, log2 buckets)", True, "15(b)"),
            ("buffer.flushed_group_pages", "flushed group size (pages)", False, "16(a)"),
        ):
            samples = {}
            for _, row in at.iterrows():
                h = F.histogram_of(row["histograms"], name)
                if h is not None:
                    samples[row["buffer.kind"]] = np.repeat(h[0], h[1].astype(int))
            if samples:
                fig = F.cdf(samples, xlabel=what, logx=logx)
                out.append((f"Fig {fig_no} analogue: CDF of the {what}, {ref >> 20} MiB buffer (on BAST)", fig))
        for ftl, fig_no in (("bast", 17), ("fast", 18)):
            part = g[g["ftl.kind"] == ftl]
            extra = (
                ("ftl.log_utilization", "d", "log-block space utilisation (programmed share of reclaimed log blocks)")
                if ftl == "bast"
                else (OVERHEAD_SHARE, "d", "overhead pages to log blocks (share of the pages logged)")
            )
            for metric, letter, what in (
                ("nand.erases", "a", "block erases"),
                ("nand.programs.total", "b", "page writes"),
                (THROUGHPUT, "c", "write throughput (program + erase time)"),
                extra,
            ):
                if metric not in part or part[metric].isna().all():
                    continue
                fig = F.line(part, x="buffer.bytes", y=metric, by="buffer.kind", logx=True)
                ax = fig.axes[0]
                F.panel_title(ax, ftl.upper())
                if metric == OVERHEAD_SHARE:
                    ax.set_ylabel("overhead pages / pages logged")
                elif metric == "ftl.log_utilization":
                    ax.set_ylabel("log-block space utilisation")
                out.append((f"Fig {fig_no}({letter}) analogue: {what} against buffer size on {ftl.upper()}", fig))
    tr = _grid(df, "traces")
    for path in sorted(tr["workload.path"].unique()) if len(tr) else []:
        part = tr[tr["workload.path"] == path]
        sizes = sorted(set(int(b) for b in part["buffer.bytes"]))
        size = sizes[len(sizes) // 2]
        part = part[part["buffer.bytes"].astype(int) == size]
        name = Path(str(path)).name
        for metric, what in (("buffer.flushed_groups", "flushed groups"), (THROUGHPUT, "write throughput")):
            fig = F.bars(part, x="ftl.kind", y=metric, by="buffer.kind")
            F.panel_title(fig.axes[0], f"{name}, {size >> 20} MiB buffer")
            out.append((f"Real trace {name}: {what} by FTL and buffer ({size >> 20} MiB)", fig))
    for size in _log_sizes(df):
        lg = _grid(df, "logs", size)
        for ftl, fig_no in (("bast", 19), ("fast", 20)):
            part = lg[lg["ftl.kind"] == ftl]
            if len(part) and "fab" in set(part["buffer.kind"]):
                fig = F.normalized_bars(part, x="ftl.log_blocks", y=ELAPSED, by="buffer.kind", baseline="fab")
                F.panel_title(fig.axes[0], f"{ftl.upper()}, {_mib(size)} buffer")
                out.append(
                    (
                        f"Fig {fig_no} analogue: elapsed time (program + erase) normalised to FAB against log "
                        f"blocks, {ftl.upper()}, {_mib(size)} buffer",
                        fig,
                    )
                )
            if ftl == "fast" and len(part) and "fab" in set(part["buffer.kind"]):
                out.append(
                    (
                        f"Fig 20 analogue: block erases by switch merges (solid) and full merges (hatched; grey: "
                        f"other erases) normalised to FAB against log blocks, FAST, {_mib(size)} buffer",
                        _fig20_split(part, ftl, size),
                    )
                )
    pg = _grid(df, "padding")
    f21 = _grid(df, "fig21")
    for ftl in ("bast", "fast"):
        part = pg[pg["ftl.kind"] == ftl]
        fixed, model = part[part["buffer.padding"] == "fixed"], part[part["buffer.padding"] == "model"]
        others = f21[f21["ftl.kind"] == ftl]
        o_fixed, o_model = others[others["buffer.padding"] == "fixed"], others[others["buffer.padding"] == "model"]
        if len(fixed):
            overlay = None
            xs = sorted(fixed["padding.fixed.threshold"])
            if len(model):
                seed = model[model["ftl.model_stats"] == "seed"]
                pick = seed if len(seed) else model
                overlay = ([xs[0], xs[-1]], [float(pick[ELAPSED].iloc[0])] * 2, _model_label(pick.iloc[0]))
            # FAB, BPLRU, then HitStat: the colours of the other figures' first two lines; a log
            # scale, as always padding costs FAB several times its best.
            both = pd.concat([o_fixed.sort_values("buffer.kind", ascending=False), fixed]) if len(o_fixed) else fixed
            fig = F.line(
                both, x="padding.fixed.threshold", y=ELAPSED, by="buffer.kind", overlay=overlay, logy=len(o_fixed) > 0
            )
            ax = fig.axes[0]
            if len(o_model):
                # BPLRU with the Padding Model (Fig 21's other horizontal line): dotted in BPLRU's colour
                kinds = list(dict.fromkeys(both["buffer.kind"]))
                with F.style():
                    ax.plot(
                        [xs[0], xs[-1]],
                        [float(o_model[ELAPSED].iloc[0]) / F.scale(ELAPSED)] * 2,
                        color=F.series_style(kinds.index("bplru"))["color"],
                        linestyle=":",
                        linewidth=1.2,
                        label="BPLRU with the Padding Model",
                        zorder=2,
                    )
            F.panel_title(ax, ftl.upper())
            ax.set_xlabel("fixed padding threshold (fraction of a block)")
            who = "HitStat" if ftl == "bast" else "HitStat(adj)"
            out.append(
                (
                    f"Tables 5–6 / Fig 21 analogue: elapsed time against the fixed padding threshold, "
                    f"{ftl.upper()}; dashed: the dynamic Padding Model ({who})"
                    + ("; dotted: BPLRU with the Padding Model" if len(o_model) else ""),
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
            F.panel_title(ax, ftl.upper())
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
        body.append(text_row(cells))
    table = plain_table(head, body)
    intro = (
        f"<p>HitStat{'' if bast else '(adj)'} on {ftl.upper()}: each fixed threshold (a group holding at least "
        "that fraction of a block is padded; 1.00 never pads, 0.00 always pads) and the dynamic Padding Model "
        "with both readings of its statistics (<code>ftl.model_stats</code>). B_w/N is the model's threshold "
        "computed from the row's final merge statistics (for the model rows: the threshold it used last); "
        "N/A where the run produced no sample.</p>"
    )
    return (f"Table {5 if bast else 6} analogue: HitStat with {ftl.upper()}", intro + table)


def _seed_terms(df):
    """Fig 17–18 and 20 in the seed's terms at the reference size: one row per FTL and buffer."""
    at, ref = _at_ref(df)
    rows = []
    for ftl in ("bast", "fast"):
        for k in ("fab", "bplru", "hitstat", "hitstat-adj"):
            part = at[(at["ftl.kind"] == ftl) & (at["buffer.kind"] == k)]
            if len(part) != 1:
                continue
            r = part.iloc[0]
            share = float(r[OVERHEAD_SHARE]) if ftl == "fast" and OVERHEAD_SHARE in r else math.nan
            cells = [
                ftl.upper(),
                NAMES[k],
                f"{float(r['buffer.flushed_groups']):,.0f}",
                f"{float(r['nand.erases']):,.0f}",
                f"{float(r['nand.programs.total']):,.0f}",
                f"{float(r[THROUGHPUT]):.3f}",
                f"{float(r['ftl.log_utilization']):.1%}",
                f"{float(r['ftl.erases.switch']):,.0f} / {float(r['ftl.erases.full']):,.0f}",
                _pct(float(r[FULL_SHARE])),
                f"{float(r['ftl.fast.overhead_pages']):,.0f} ({_pct(share)})" if share == share else "—",
            ]
            rows.append(text_row(cells))
    head = [
        "FTL",
        "buffer",
        "flushed groups (15a)",
        "block erases (17a/18a)",
        "page writes (17b/18b)",
        "throughput MiB/s (17c/18c)",
        "log-block utilisation (17d)",
        "switch / full-merge erases (20)",
        "full-merge share (20)",
        "overhead pages to log blocks (18d)",
    ]
    table = plain_table(head, rows)
    intro = (
        f"<p>The buffers at {_mib(ref)} (the thesis's 32 MB) with 2,048 BAST and 128 FAST log blocks, in the "
        "thesis's terms: page writes are every page programmed (host, padding and merge copies), the "
        "log-block utilisation is the programmed share of every reclaimed log block, the overhead pages are "
        "pages an LBN wrote into FAST's RW logs from one flush unit and merged before another joined them "
        "(in brackets: their share of the pages logged and merged).</p>"
    )
    return (f"Fig 15–20 in the thesis's terms ({_mib(ref)} buffer)", intro + table)


def sections(df):
    out = []
    if len(_grid(df, "buffers")):
        out.append(_seed_terms(df))
    pg = _grid(df, "padding")
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
                "the real traces; the seed's claims are judged on the desktop profile, the extension row on "
                "these.</p>"
                "<table><tr><th>trace</th><th>FTL</th><th>buffer</th><th>flushed groups</th>"
                "<th>throughput</th></tr>" + "".join(trace_rows) + "</table>",
            )
        )
    return out
