"""Figures and report tables of the hotcold2022 study (seed 001, Wu 2022: hot/cold
separation into several open lines of an Open-Channel SSD, by request size). The claim judges are in
judges.py."""

from __future__ import annotations

import numpy as np
from ssdlab.report import figures as F
from ssdlab.report.html import esc, table

from .judges import (
    GIB_PAGES,
    MIXES,
    PLACEMENTS,
    RING,
    SOURCE,
    WRITTEN,
    _aged,
    _cells,
    _collects,
    _one,
    _reductions,
    _series,
    _traces,
    _waf,
    gc_at,
    mix,
)

# Table 4.1 of the thesis: lines garbage-collected, original pblk vs the four-line version.
THESIS_GC = {4: (25, 14), 8: (159, 62), 16: (482, 170), 32: (1144, 392), 64: (2493, 812)}
THESIS_CUT_MEAN = 0.608
# Table 4.2: GiB written in 1-4 minutes, and its stated gains ("10.3%, 4.8%, 1.6%, 5.1%, about 5.45%").
THESIS_DATA = {1: (193, 213), 2: (431, 452), 3: (669, 680), 4: (862, 906)}
NUM = ' class="num"'


def _gc_figure(ok, m, lines, placements):
    with F.panel() as (fig, ax):
        for i, p in enumerate(placements):
            s = _series(_one(ok, m, p, lines))
            if s is None or "gc.victims" not in s:
                continue
            ax.plot(s["host.write_pages"] / GIB_PAGES, s["gc.victims"], label=p, zorder=3, **F.series_style(i))
        if lines == "128 MiB" and m == "small-hot":
            xs = list(THESIS_GC)
            ax.plot(xs, [THESIS_GC[x][0] for x in xs], "ks", ms=5, mfc="none", label="thesis: pblk")
            ax.plot(xs, [THESIS_GC[x][1] for x in xs], "k^", ms=5, mfc="none", label="thesis: 4 lines")
        ax.set_xlabel("data written (GiB)")
        ax.set_ylabel("lines garbage-collected")
        F.legend_right(ax)
        return fig


def _bar_figure(ok, groups, lines, placements, ylabel, value):
    """Grouped bars: one group per workload, one bar per placement (value(cell) or None)."""

    def height(g, p):
        c = _one(ok, g, p, lines)
        v = value(c) if c is not None else None
        return np.nan if v is None else v

    with F.panel(F.PANEL[0] * 1.8, F.PANEL[1]) as (fig, ax):
        series = [(p, [height(g, p) for g in groups]) for p in placements]
        F.grouped_bars(ax, groups, series, ticks={"rotation": 20, "fontsize": 7})
        ax.set_ylabel(ylabel)
        # Above the axes, clear of the bars (the layout engine makes room for it).
        ax.legend(fontsize=6, ncol=4, loc="lower center", bbox_to_anchor=(0.5, 1.01), frameon=False)
        return fig


def _timed_figure(ok):
    with F.panel() as (fig, ax):
        i = 0
        for lines, placements in (("128 MiB", ("none", "size-ema-batch")), ("16 MiB", PLACEMENTS)):
            for p in placements:
                s = _aged(_series(_one(ok, "small-hot", p, lines, timed=True)))
                if s is None or "time_us" not in s:
                    continue
                ax.plot(
                    s["time_us"] / 60e6,
                    s["host.write_pages"] / GIB_PAGES,
                    label=f"{p}, {lines}",
                    **F.series_style(i, dense=True),
                )
                i += 1
        ax.set_xlabel("simulated time after ageing (minutes)")
        ax.set_ylabel("data written (GiB)")
        F.legend_right(ax)
        return fig


def figures(df):
    ok = _cells(df)
    if not len(ok):
        return []
    out = []
    counts = ok[~ok["timed"]]
    for m in MIXES:
        if (counts["mix"] == m).any():
            out.append(
                (
                    f"Thesis Table 4.1 / Fig 4.1 — lines garbage-collected against data written, {m}, on the thesis's "
                    "device (32 lines of 128 MiB); the thesis's own counts (its fio jobs unknown) for reference.",
                    _gc_figure(counts, m, "128 MiB", ("none", "size-ema-batch", "size-ema-entry", "sep-gc")),
                )
            )
            out.append(
                (
                    f"The same, {m}, every placement on the same 4 GiB in 16 MiB lines.",
                    _gc_figure(counts, m, "16 MiB", PLACEMENTS),
                )
            )
    mixes = [m for m in MIXES if (counts["mix"] == m).any()]
    if mixes:
        out.append(
            (
                "WAF after the whole run (64 GiB written) by placement and mix, 16 MiB lines.",
                _bar_figure(counts, mixes, "16 MiB", PLACEMENTS, "WAF", _waf),
            )
        )
    if ok["timed"].any():
        out.append(
            (
                "Thesis Table 4.2 / Fig 4.2 — data written against simulated time, small-hot, closed loop of 32.",
                _timed_figure(ok),
            )
        )
    traces = _traces(counts)
    if traces:

        def rel(c):
            base = _one(counts, mix(c), "none")
            return _waf(c) / _waf(base) if base is not None else None

        out.append(
            (
                "WAF on the real traces relative to no separation (none = 1), every placement.",
                _bar_figure(counts, traces, "16 MiB", PLACEMENTS, "WAF / WAF of none", rel),
            )
        )
    return out


def _fmt(v, digits=0) -> str:
    return "—" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:,.{digits}f}"


def _gc_table(ok) -> str:
    rows = []
    for g in WRITTEN:
        tb, tm = THESIS_GC[g]
        cells = [
            f"<td{NUM}>{g}</td>",
            f"<td{NUM}>{tb:,}</td>",
            f"<td{NUM}>{tm:,}</td>",
            f"<td{NUM}>{(tm - tb) / tb:+.0%}</td>",
        ]
        for m in MIXES:
            red = {x[0]: x for x in _reductions(ok, m)}
            if g in red:
                _, b, v, r = red[g]
                cells.append(
                    f"<td{NUM}>{b:,.0f} → {v:,.0f} ({r:+.0%})</td>"
                    if r is not None
                    else f"<td{NUM}>{b:,.0f} → {v:,.0f}</td>"
                )
            else:
                cells.append(f"<td{NUM}>—</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    head = ["GiB written", "thesis: pblk", "thesis: 4 lines", "thesis: change"] + [
        f"{m}: none → size-ema-batch" for m in MIXES
    ]
    return table(head, rows)


def _source_table(ok) -> str:
    """Where the size classifier's GC copies go, small-hot: lines collected after 64 GiB and WAF."""
    rows = []
    for lines in ("128 MiB", "16 MiB"):
        base = _one(ok, "small-hot", "none", lines)
        if base is None:
            continue
        for p in ("size-ema-batch", "size-ema-entry"):
            for v in (p, p + SOURCE, p + RING):
                c = _one(ok, "small-hot", v, lines)
                if c is None:
                    continue
                g, g0 = gc_at(c, 64), gc_at(base, 64)
                change = f"{g / g0 - 1:+.0%}" if g and g0 else "—"
                rows.append(
                    f"<tr><td>{lines}</td><td>{esc(v)}</td><td{NUM}>{_fmt(g)}</td><td{NUM}>{change}</td>"
                    f"<td{NUM}>{float(c['waf']):.3f}</td><td{NUM}>{float(base['waf']):.3f}</td></tr>"
                )
    return "<p>small-hot, 64 GiB written.</p>" + table(
        ["lines", "placement", "lines collected", "vs none", "WAF", "WAF of none"], rows
    )


def _placement_table(ok, groups, lines, what, erases=False) -> str:
    """WAF (and with `erases` the line erases) per placement (rows) and workload (columns); the
    mean rank by WAF last."""
    rows, ranks = [], {p: [] for p in PLACEMENTS}
    wafs = {}
    for g in groups:
        vals = {p: _one(ok, g, p, lines) for p in PLACEMENTS}
        present = {p: _waf(c) for p, c in vals.items() if c is not None}
        wafs[g] = present
        if not _collects(present):
            continue
        order = sorted(present, key=present.get)
        for r, p in enumerate(order):
            ranks[p].append(r + 1)
    for p in PLACEMENTS:
        cells = [f"<td>{esc(p)}</td>"]
        for g in groups:
            v = wafs[g].get(p)
            c = _one(ok, g, p, lines)
            extra = f" ({float(c['nand.erases']):,.0f})" if erases and c is not None else ""
            cells.append(f"<td{NUM}>{_fmt(v, 3)}{extra}</td>")
        mean_rank = np.mean(ranks[p]) if ranks[p] else None
        cells.append(f"<td{NUM}>{_fmt(mean_rank, 1)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    idle = [g for g in groups if not _collects(wafs[g])]
    note = f" {', '.join(idle)}: no placement copied a page (WAF 1), left out of the ranks." if idle else ""
    also = " and, in brackets, line erases" if erases else ""
    return f"<p>WAF{also} by placement ({what}); the last column is the mean rank (1 = lowest WAF).{note}</p>" + table(
        ["placement"] + list(groups) + ["mean rank"], rows
    )


def sections(df):
    ok = _cells(df)
    if not len(ok):
        return []
    counts = ok[~ok["timed"]]
    out = [("Table 4.1: lines garbage-collected, thesis device", _gc_table(counts))]
    if (counts["variant"].str.endswith(SOURCE) | counts["variant"].str.endswith(RING)).any():
        out.append(("Where the size classifier's GC copies go", _source_table(counts)))
    mixes = [m for m in MIXES if (counts["mix"] == m).any()]
    if mixes:
        out.append(
            ("Every placement, fio mixes (16 MiB lines)", _placement_table(counts, mixes, "16 MiB", "64 GiB written"))
        )
    traces = _traces(counts)
    if traces:
        out.append(
            (
                "Every placement, real traces",
                _placement_table(counts, traces, "16 MiB", "each trace replayed 4 times", erases=True),
            )
        )
    return out
