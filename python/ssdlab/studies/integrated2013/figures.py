"""Figures and report tables of the integrated2013 study (seed 002). The claim judges are in judges.py."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd
from ssdlab.report import figures as F
from ssdlab.report.html import table

from .judges import (
    CLASSES,
    TIME,
    _classes,
    _desktop,
    _earlier,
    _eq3,
    _eq4,
    _logs,
    _ok,
    _one,
    _pick,
    _ref_size,
    _sizes,
    _traces,
    _variant,
    _workload_cells,
)

POLICIES = ("clc", "ref", "bplru", "hitstat", "integrated")


def _ratio_table(d):
    """REF's execution time over CLC's per (buffer size, log blocks): Fig 1-a and 2-a."""
    rows = []
    # The workload and device the cells share (the figure's subtitle).
    shared = {c: d[c].iloc[0] for c in d.columns if str(c).startswith(("workload.", "device.")) and d[c].nunique() == 1}
    for size in _sizes(d):
        for n in _logs(d):
            clc, ref = _one(d, TIME, "clc", logs=n, size=size), _one(d, TIME, "ref", logs=n, size=size)
            if clc == clc and ref == ref:
                rows.append(
                    {**shared, "buffer.bytes": size, "ftl.log_blocks": n, "ref_over_clc": ref / clc, "status": "ok"}
                )
    return pd.DataFrame(rows)


def _grouped(ax, cells, values, labels=None):
    """Bars at one x per workload, one bar per policy (CLC, REF) side by side; `values(row)` is a list
    of stacked segments, labelled `labels` (one colour each), else one segment coloured by policy."""
    names = list(dict.fromkeys(w for w, _, _ in cells))
    kinds = list(dict.fromkeys(k for _, k, _ in cells))
    offsets, width = F.bar_offsets(len(kinds))
    seen = set()
    for w, kind, row in cells:
        x = names.index(w) + offsets[kinds.index(kind)]
        bottom = 0.0
        for j, v in enumerate(values(row)):
            key = j if labels else kind
            style = F.series_style(j if labels else kinds.index(kind), bars=True)
            label = (labels[j] if labels else kind.upper()) if key not in seen else None
            seen.add(key)
            ax.bar(x, v, width * 0.92, bottom=bottom, label=label, zorder=3, linewidth=0.4, **style)
            bottom += v
        if labels:
            ax.text(x, bottom, kind.upper(), ha="center", va="bottom", fontsize=6)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([n.replace(", ", "\n") + " LB" for n in names], fontsize=7)
    ax.grid(False, axis="x")


def _fig3a(df):
    """Seed Fig 3-a: Eq. 3 (no padding, full merges) against Eq. 4 (padding every reference) over the
    number of references to one log block, for three cluster sizes, at the grid's N_p and R:W:E."""
    ok = _ok(df)
    n_p = int(ok["device.pages_per_block"].iloc[0]) if "device.pages_per_block" in ok else 128
    cost = {}
    for key, seed in (("nand.read_us", 1.0), ("nand.program_us", 6.0), ("nand.erase_us", 10.0)):
        cost[key] = float(ok[key].iloc[0]) if key in ok and ok[key].notna().any() else seed
    r = cost["nand.read_us"]
    R, W, E = 1.0, cost["nand.program_us"] / r, cost["nand.erase_us"] / r
    refs = list(range(1, 7))
    with F.panel(F.PANEL[0] + 1.6, F.PANEL[1]) as (fig, ax):
        for i, s in enumerate((8, 32, 64)):
            fm = [_eq3(n_p, R, W, E, [s] * n) for n in refs]
            bp = [_eq4(n_p, R, W, E, [s] * n) for n in refs]
            style = F.series_style(i)
            ax.plot(refs, fm, label=f"full merge (Eq. 3), S_c = {s}", zorder=3, **style)
            ax.plot(refs, bp, label=f"padding (Eq. 4), S_c = {s}", zorder=3, **{**style, "linestyle": "--"})
        ax.set_xlabel("references to the log block (n)")
        ax.set_ylabel(f"cost (R = 1; W = {W:g}, E = {E:g}, N_p = {n_p})")
        F._legend(ax)
        return F._finish(fig, ax)


def _workload_figure(df, values, ylabel: str, top: float, labels=None, band=None):
    """Bars per workload (`_grouped`) on a wide panel from 0 to `top`, `band` (lo, hi) shaded as the
    seed's range; None without such cells."""
    cells = _workload_cells(df)
    if not cells:
        return None
    with F.panel(F.PANEL[0] + 3.0, F.PANEL[1]) as (fig, ax):
        if band:
            ax.axhspan(*band, color="#dddddd", zorder=1, label=f"seed: {band[0]}–{band[1]}%")
        _grouped(ax, cells, values, labels)
        ax.set_ylabel(ylabel)
        ax.set_ylim(0, top)
        F._legend(ax)
        return F._finish(fig, ax)


def _fig3b(df):
    return _workload_figure(
        df,
        lambda row: [float(v.iloc[0]) for v in _classes(row.to_frame().T).values()],
        "share of merged log blocks",
        1.08,
        labels=[lab for _, lab in CLASSES],
    )


def _fig5(df):
    return _workload_figure(
        df,
        lambda row: [100 * float(row["ftl.log.utilisation_at_merge_rereferenced.mean"])],
        "utilisation at merge (%)",
        105,
        band=(20, 60),
    )


PADDING_LABEL = "block padding"


def figures(df):
    out = []
    d = _desktop(df)
    cr = d[d["buffer.kind"].isin(["clc", "ref"]) & (d["buffer.padding"] == "none")]
    if len(cr):
        t = _ratio_table(cr)
        if len(t):
            fig = F.line(t, x="ftl.log_blocks", y="ref_over_clc", by="buffer.bytes", logx=True)
            fig.axes[0].axhline(1.0, color="#555555", linestyle="--", linewidth=1.0)
            fig.axes[0].set_ylabel("REF time / CLC time")
            out.append(("Fig 1–2 (a) analogue: REF's execution time normalised to CLC's against log blocks", fig))
        size = _ref_size(cr)
        at = cr[cr["buffer.bytes"].astype(int) == size]
        for metric, what in (
            ("ftl.log.requested_clusters", "requested clusters"),
            ("ftl.log.misses", "log-block misses"),
            ("ftl.log.hit_ratio", "log-block reference rate (hit ratio)"),
        ):
            fig = F.line(at, x="ftl.log_blocks", y=metric, by="buffer.kind", logx=True)
            out.append((f"Fig 1–2 (b, c) analogue: {what} against log blocks ({size >> 20} MiB buffer)", fig))
    out.append(
        ("Fig 3-a: block padding (Eq. 4) against full merges (Eq. 3) by the references to a log block", _fig3a(df))
    )
    fig = _fig3b(df)
    if fig is not None:
        out.append(
            (
                "Fig 3-b analogue: re-reference classes of the merged log blocks (2 MiB; desktop at its most log "
                "blocks, each real trace at its grid's most)",
                fig,
            )
        )
    pad = d[d["buffer.kind"] == "block-lru"]
    if len(pad):
        pad = pad.assign(
            **{PADDING_LABEL: pad["buffer.padding"].map({"none": "without padding", "fixed": "with padding"})}
        )
        for metric, what in ((TIME, "execution time"), ("nand.erases", "erases")):
            fig = F.normalized_bars(pad, x="ftl.log_blocks", y=metric, by=PADDING_LABEL, baseline="with padding")
            out.append((f"Fig 4 analogue: {what} of block-level LRU without padding, normalised to with padding", fig))
    fig = _fig5(df)
    if fig is not None:
        out.append(
            (
                "Fig 5 analogue: utilisation of the re-referenced log blocks at their merge (2 MiB; desktop at its "
                "most log blocks, each real trace at its grid's most)",
                fig,
            )
        )
    integ = d[d["buffer.bytes"].astype(int) == _ref_size(d)] if len(d) else d
    rows = pd.concat([_pick(integ, k) for k in POLICIES]) if len(integ) else integ
    if len(rows):
        for metric, what in ((TIME, "execution time"), ("nand.erases", "erases")):
            fig = F.normalized_bars(rows, x="ftl.log_blocks", y=metric, by="buffer.kind", baseline="clc")
            out.append((f"The integrated buffer: {what} normalised to CLC against log blocks", fig))
    tr = _traces(df)
    for path in sorted(tr["workload.path"].unique()) if len(tr) else []:
        part = tr[tr["workload.path"] == path]
        part = pd.concat([_pick(part, k) for k in POLICIES])
        fig = F.normalized_bars(part, x="ftl.log_blocks", y=TIME, by="buffer.kind", baseline="clc")
        out.append((f"Real trace {Path(str(path)).name}: execution time normalised to CLC", fig))
    return out


def sections(df):
    d = _desktop(df)
    if not len(d):
        return []
    out = []
    pred = []
    for _, r in _ok(df).iterrows():
        if r.get("buffer.padding") != "reref" or pd.isna(r.get("padding.reref.predictions")):
            continue
        where = "desktop" if r["workload.kind"] == "desktop" else Path(str(r["workload.path"])).name
        in_order = r.get("padding.reref.in_order")
        rule = "earlier" if in_order is False or (in_order is not pd.NA and in_order == 0) else "in-order"
        prefixes = r.get("padding.reref.prefixes_logged")
        pred.append(
            f"<tr><td>{html.escape(where)}</td><td>{html.escape(str(r.get('ftl.bast.variant') or 'chain'))}</td>"
            f"<td>{html.escape(r['buffer.kind'])}</td><td>{rule}</td>"
            f"<td>{int(r['ftl.log_blocks'])}</td><td>{int(r['buffer.bytes']) >> 20} MiB</td>"
            f"<td>{r['padding.reref.predictions']:,.0f}</td><td>{r['padding.reref.accuracy']:.1%}</td>"
            f"<td>{r['padding.reref.predicted_reref']:,.0f}</td><td>{r['padding.reref.accuracy_observed']:.1%}</td>"
            f"<td>{'—' if prefixes is None or prefixes != prefixes else f'{prefixes:,.0f}'}</td>"
            f"<td>{r['buffer.padded_flushes']:,.0f}</td><td>{r['ftl.log.hit_ratio']:.1%}</td></tr>"
        )
    if pred:
        out.append(
            (
                "The re-reference predictor (reref padding) against what happened",
                "<p>Every padding decision (a partial group whose flush misses the log) is a prediction. Accuracy over "
                "all of them judges a padded flush by whether its LBN came back within the FTL's log blocks' worth of "
                "log-block allocations; the observed accuracy covers the predictions 're-referenced' (left unpadded), "
                "whose outcome the FTL itself shows. The in-order predictor (`padding.reref.in_order`, default) "
                "logs a miss whose pages are the block's in-order prefix without a prediction (its log block ends "
                "in a partial or switch merge, no dearer than padding); the earlier one predicts and may pad it.</p>"
                + table(
                    (
                        "workload",
                        "BAST",
                        "buffer",
                        "predictor",
                        "log blocks",
                        "buffer size",
                        "predictions",
                        "accuracy",
                        "predicted re-referenced",
                        "observed accuracy",
                        "prefixes logged",
                        "padded flushes",
                        "log-block hit ratio",
                    ),
                    pred,
                ),
            )
        )
    tr = _traces(df)
    earlier = _variant(df, "single")
    earlier = earlier[(earlier["workload.kind"] == "trace") & _earlier(earlier)]
    chain = _variant(df, "chain")
    chain = chain[chain["workload.kind"] == "trace"] if len(_variant(df, "single")) else chain.iloc[:0]
    trows = []
    for (path, n), part in tr.groupby(["workload.path", "ftl.log_blocks"]) if len(tr) else []:
        clc = _one(part, TIME, "clc")
        cells = []
        values = [_one(part, TIME, k) for k in POLICIES]
        values += [_one(part, TIME, "integrated", padding="none"), _one(part, TIME, "clc", padding="reref")]
        before = earlier[(earlier["workload.path"] == path) & (earlier["ftl.log_blocks"] == n)]
        values.append(_one(before, TIME, "integrated"))
        for v in values:
            cells.append(f"<td>{v / clc:.2f}</td>" if v == v else "<td>—</td>")
        trows.append(f"<tr><td>{html.escape(Path(str(path)).name)}</td><td>{int(n)}</td>" + "".join(cells) + "</tr>")
    if trows:
        out.append(
            (
                "Real traces",
                "<p>Execution time normalised to CLC on the real traces (touched blocks renumbered densely, the device "
                "sized to them and filled, the trace replayed twice; 2 MiB buffer; BAST with one log block per data "
                "block), with the integrated buffer's two mechanisms alone: its victim choice without padding, and "
                "reref padding behind CLC; and the integrated buffer with the earlier predictor "
                "(`padding.reref.in_order = false`).</p>"
                + table(
                    ("trace", "log blocks")
                    + POLICIES
                    + ("integrated, no padding", "clc + reref padding", "integrated, earlier predictor"),
                    trows,
                ),
            )
        )
    ch = _variant(df, "chain")
    ch = ch[ch["workload.kind"] == "desktop"] if len(_variant(df, "single")) else ch.iloc[:0]
    crows = []
    for n in _logs(ch) if len(ch) else []:
        size = _ref_size(ch)
        vals = {
            k: (_one(ch, TIME, k, logs=n, size=size), _one(d, TIME, k, logs=n, size=size))
            for k in ("clc", "ref", "integrated")
        }
        crows.append(
            f"<tr><td>{n}</td>"
            + "".join(
                f"<td>{c / vals['clc'][0]:.2f}</td><td>{s_ / vals['clc'][1]:.2f}</td>"
                for c, s_ in (vals["ref"], vals["integrated"])
            )
            + "</tr>"
        )
    if crows:
        out.append(
            (
                "Sensitivity: BAST's chain variant",
                "<p>Execution time normalised to CLC on the desktop profile (2 MiB buffer) with BAST's chain variant "
                "(an LBN may own up to `ftl.bast.chain_limit` = 4 log blocks; seed 000 Table 3) next to the headline "
                "one-to-one BAST of seed 002 §3.1.</p>"
                + table(("log blocks", "REF, chain", "REF, single", "integrated, chain", "integrated, single"), crows),
            )
        )
    return out
