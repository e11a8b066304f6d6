"""Figures, tables and the claim judges (claims.toml) of the integrated2013 study (seed 002)."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd
from ssdlab.claims import Outcome
from ssdlab.report import figures as F
from ssdlab.report.html import table

TIME = "time.nand_serial_us"  # execution time: serial NAND time at the seed's R:W:E = 1:6:10
CLASSES = (
    ("ftl.log.merged_never_rereferenced", "never re-referenced"),
    ("ftl.log.merged_rereferenced_fits", "re-referenced, ΣS_c ≤ N_p"),
    ("ftl.log.merged_rereferenced_overflows", "re-referenced, ΣS_c > N_p"),
)
POLICIES = ("clc", "ref", "bplru", "hitstat", "integrated")


def _ok(df):
    return df[df["status"] == "ok"]


def _variant(df, variant):
    """Ok cells on BAST's `variant` (results from before the column existed count as chain)."""
    ok = _ok(df)
    if "ftl.bast.variant" not in ok:
        return ok if variant == "chain" else ok.iloc[:0]
    return ok[ok["ftl.bast.variant"].fillna("chain") == variant]


def _headline(df):
    """The headline cells: BAST with one log block per data block (seed 002 §3.1) and the current
    reref predictor; results with no such cells (stored before the study ran `single`) whole."""
    ok = _variant(df, "single")
    if not len(ok):
        ok = _ok(df)
    return ok[~_earlier(ok)]


def _earlier(rows):
    """Which rows ran the earlier reref predictor (`padding.reref.in_order = false`)."""
    if "padding.reref.in_order" not in rows:
        return pd.Series(False, index=rows.index)
    return rows["padding.reref.in_order"].map(lambda v: v is False or (v is not pd.NA and v == 0))


def _desktop(df):
    ok = _headline(df)
    return ok[ok["workload.kind"] == "desktop"]


def _pick(d, kind, padding=None, logs=None, size=None):
    """Rows of buffer `kind` (with its default padding unless `padding` is given)."""
    rows = d[d["buffer.kind"] == kind]
    if padding is not None:
        rows = rows[rows["buffer.padding"] == padding]
    elif kind in ("integrated", "clc"):
        rows = rows[rows["buffer.padding"] == ("reref" if kind == "integrated" else "none")]
    if logs is not None:
        rows = rows[rows["ftl.log_blocks"].astype(int) == logs]
    if size is not None:
        rows = rows[rows["buffer.bytes"].astype(int) == size]
    return rows


def _one(d, metric, kind, **kw):
    rows = _pick(d, kind, **kw)
    return float(rows[metric].iloc[0]) if len(rows) else float("nan")


def _sizes(d):
    return sorted(set(int(b) for b in d["buffer.bytes"]))


def _logs(d):
    return sorted(set(int(n) for n in d["ftl.log_blocks"]))


def _ref_size(d):
    """The seed's 2 MB buffer, or the nearest size in the grid."""
    return min(_sizes(d), key=lambda b: abs(b - (2 << 20)))


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


def _classes(d):
    """Shares of the three re-reference classes among merged log blocks, per cell."""
    total = sum(d[k].astype(float) for k, _ in CLASSES)
    return {label: d[k].astype(float) / total for k, label in CLASSES}


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
            ("ftl.log.hit_ratio", "log-block hit ratio"),
        ):
            fig = F.line(at, x="ftl.log_blocks", y=metric, by="buffer.kind", logx=True)
            out.append((f"Fig 1–2 (b, c) analogue: {what} against log blocks ({size >> 20} MiB buffer)", fig))
    pad = d[d["buffer.kind"] == "block-lru"]
    if len(pad):
        for metric, what in ((TIME, "execution time"), ("nand.erases", "erases")):
            fig = F.normalized_bars(pad, x="ftl.log_blocks", y=metric, by="buffer.padding", baseline="fixed")
            out.append(
                (f"Fig 4 analogue: {what} of block-level LRU without padding, normalised to always padding", fig)
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


def _why_ref(t, n):
    """Why REF is not faster than CLC at `n` log blocks, from the counts."""
    hit = (t("ref", n, "ftl.log.hit_ratio"), t("clc", n, "ftl.log.hit_ratio"))
    miss = (t("ref", n, "ftl.log.misses"), t("clc", n, "ftl.log.misses"))
    clusters = t("ref", n, "ftl.log.requested_clusters") / t("clc", n, "ftl.log.requested_clusters")
    erases = (t("ref", n, "nand.erases"), t("clc", n, "nand.erases"))
    return (
        f"log-block hit ratio REF {hit[0]:.1%} vs CLC {hit[1]:.1%} (higher for REF, as the seed explains), but REF "
        f"sends {clusters:.1f}× the clusters, so its misses are {miss[0]:,.0f} vs {miss[1]:,.0f} and its erases "
        f"{erases[0]:,.0f} vs {erases[1]:,.0f}"
    )


def _traces(df):
    ok = _headline(df)
    return ok[ok["workload.kind"] == "trace"]


def _trace_ratios(tr):
    """(trace name, log blocks, integrated time / the better of CLC's and REF's, cells) per real-trace
    cell."""
    out = []
    for (path, n), part in tr.groupby(["workload.path", "ftl.log_blocks"]) if len(tr) else []:
        better = min(_one(part, TIME, "clc"), _one(part, TIME, "ref"))
        cells = [c for k in ("clc", "ref", "integrated") for c in _pick(part, k)["cell"]]
        out.append((Path(str(path)).name, int(n), _one(part, TIME, "integrated") / better, cells))
    return out


def _why_integrated(tr, losses):
    """Which of the integrated buffer's two mechanisms costs where it loses on real traces."""
    slower = [(w, n) for w, n, r, _ in _trace_ratios(tr) if r > 1]
    padding_costs = 0
    for w, n in slower:
        part = tr[(tr["workload.path"].map(lambda p: Path(str(p)).name) == w) & (tr["ftl.log_blocks"] == n)]
        better = min(_one(part, TIME, "clc"), _one(part, TIME, "ref"))
        padding_costs += _one(part, TIME, "integrated", padding="none") <= better
    return (
        "slower than the better of CLC and REF on "
        + "; ".join(losses)
        + f". In {padding_costs} of these {len(slower)} cells its victim choice alone (no padding) is not slower: "
        "there the padding is what costs (reref pads a miss predicted not to be re-referenced; in-order prefixes, "
        "which a partial or switch merge reclaims as cheaply, are logged)"
    )


class _Desk:
    """The headline desktop cells at the seed's 2 MB buffer (or the nearest size): `t(kind, logs,
    metric)` reads one, and every cell read is kept for the claim's `cells`."""

    def __init__(self, df):
        self.d = _desktop(df)
        self.size = _ref_size(self.d)
        self.mib = f"{self.size >> 20} MiB"
        self.logs = _logs(self.d)
        self.lo, self.hi = self.logs[0], self.logs[-1]
        self.cells: list = []

    def t(self, kind, n, metric=TIME, size=None, padding=None, d=None):
        rows = _pick(self.d if d is None else d, kind, logs=n, size=size or self.size, padding=padding)
        self.cells += list(rows["cell"][:1])
        return float(rows[metric].iloc[0]) if len(rows) else float("nan")

    def out(self, measured, holds, why=""):
        return Outcome(measured, holds, why, sorted(set(self.cells), key=str))


def _ref_over_clc(k, n):
    """REF's time over CLC's at `n` log blocks, per buffer size: the seed's Fig 1-a draws one line per
    buffer size and states its "up to" over them."""
    sizes = _sizes(k.d[k.d["buffer.kind"] == "clc"])
    return {size: k.t("ref", n, size=size) / k.t("clc", n, size=size) for size in sizes}


def _per_size(r):
    return ", ".join(f"{v:.2f} ({size >> 20} MiB)" for size, v in r.items())


def clc_faster_few_logs(df, claim):
    k = _Desk(df)
    r = _ref_over_clc(k, k.lo)
    return k.out(f"REF / CLC at {k.lo} log blocks: {_per_size(r)}", max(r.values()) > 1)


def ref_faster_many_logs(df, claim):
    k = _Desk(df)
    r = _ref_over_clc(k, k.hi)
    holds = min(r.values()) < 1
    chain = _variant(df, "chain") if len(_variant(df, "single")) else _ok(df).iloc[:0]
    ch = chain[chain["buffer.kind"].isin(["clc", "ref"]) & (chain["workload.kind"] == "desktop")]
    sens = ""
    if len(ch) and k.hi in _logs(ch):
        size = _ref_size(ch)
        rc = k.t("ref", k.hi, d=ch, size=size) / k.t("clc", k.hi, d=ch, size=size)
        sens = f"; chain variant (sensitivity) {rc:.2f} ({size >> 20} MiB)"
    return k.out(
        f"REF / CLC at {k.hi} log blocks: {_per_size(r)}{sens}",
        holds,
        "" if holds else _why_ref(k.t, k.hi),
    )


def clc_fewer_clusters(df, claim):
    k = _Desk(df)
    rq = {x: [k.t(x, n, "ftl.log.requested_clusters") for n in k.logs] for x in ("clc", "ref")}
    fewer = all(c < r for c, r in zip(rq["clc"], rq["ref"], strict=True))
    return k.out(
        f"CLC {min(rq['clc']):,.0f}–{max(rq['clc']):,.0f}, REF {min(rq['ref']):,.0f}–{max(rq['ref']):,.0f} "
        f"over {k.lo}–{k.hi} log blocks ({k.mib})",
        fewer,
    )


def clusters_independent_of_logs(df, claim):
    k = _Desk(df)
    rq = {x: [k.t(x, n, "ftl.log.requested_clusters") for n in k.logs] for x in ("clc", "ref")}
    spread = max(rq["clc"]) / min(rq["clc"]) - 1
    return k.out(
        f"CLC: {spread:.1%} spread over log blocks; REF: {max(rq['ref']) / min(rq['ref']) - 1:.1%} "
        "(REF's recently-evicted list is sized by the log blocks)",
        spread < claim.get("max_spread", 0.01),
    )


def clc_more_misses_many_logs(df, claim):
    k = _Desk(df)
    many = [n for n in k.logs if n >= claim.get("from_logs", 128)]
    m = {n: (k.t("clc", n, "ftl.log.misses"), k.t("ref", n, "ftl.log.misses")) for n in many}
    holds = all(c > r for c, r in m.values()) if many else None
    why = (
        ""
        if holds
        else "no grid point with that many log blocks"
        if holds is None
        else (
            "REF's hit ratio is the higher one at every count, but it sends many more (smaller) clusters: "
            "its default `evict_scope = window` flushes only an LBN's pages in the LRU-end window, so its "
            "misses, a share of many more requests, outnumber CLC's"
        )
    )
    return k.out(", ".join(f"{n}: CLC {c:,.0f} vs REF {r:,.0f}" for n, (c, r) in m.items()), holds, why)


class _Pad(_Desk):
    """Block-level LRU without padding against always padding (Fig 4)."""

    def __init__(self, df):
        super().__init__(df)
        self.pad = self.d[self.d["buffer.kind"] == "block-lru"]
        self.plogs = _logs(self.pad)
        self.psize = _ref_size(self.pad)

    def p(self, padding, n, metric):
        return self.t("block-lru", n, metric, size=self.psize, padding=padding, d=self.pad)

    def gaps(self):
        return [
            (
                n,
                self.p("none", n, "nand.erases") / self.p("fixed", n, "nand.erases"),
                self.p("none", n, TIME) / self.p("fixed", n, TIME),
            )
            for n in self.plogs
        ]


def no_padding_erases_double(df, claim):
    k = _Pad(df)
    n = k.plogs[0]
    e = k.p("none", n, "nand.erases") / k.p("fixed", n, "nand.erases")
    return k.out(f"{e:.2f}× at {n} log blocks ({k.psize >> 20} MiB, block-level LRU)", e >= claim.get("at_least", 1.5))


def padding_cuts_erases_more(df, claim):
    k = _Pad(df)
    gaps = k.gaps()
    fewer = [e for _, e, _ in gaps if e > 1]
    more = all(abs(e - 1) > abs(tm - 1) for _, e, tm in gaps if e > 1)
    holds = more if fewer else None
    why = (
        ""
        if holds
        else "padding saves no erases at any log-block count"
        if holds is None
        else "where log blocks are re-referenced, padding costs a whole-block write per flush"
    )
    return k.out(
        "; ".join(f"{n}: erases {e:.2f}×, time {tm:.2f}× (no padding / padding)" for n, e, tm in gaps), holds, why
    )


def padding_pays_without_reref(df, claim):
    k = _Pad(df)
    gaps = k.gaps()
    pays = [n for n, _, tm in gaps if tm > 1]
    hit = {n: k.p("none", n, "ftl.log.hit_ratio") for n in k.plogs}
    rest = [n for n in k.plogs if n not in pays]
    holds = max(hit[n] for n in pays) < min(hit[n] for n in rest) if pays and rest else None
    return k.out(
        "; ".join(f"{n}: hit ratio w/o padding {hit[n]:.1%}, time w/o / with {tm:.2f}" for n, _, tm in gaps),
        holds,
        "" if holds is not None else "padding pays at every log-block count or at none",
    )


def reref_classes(df, claim):
    k = _Desk(df)
    sh = {}
    for x in ("clc", "ref"):
        rows = _pick(k.d, x, logs=k.hi, size=k.size)
        if len(rows):
            k.cells += list(rows["cell"][:1])
            sh[x] = _classes(rows)
    over = {x: float(v[CLASSES[2][1]].iloc[0]) for x, v in sh.items()}
    return k.out(
        "; ".join(
            f"{x}: " + ", ".join(f"{lab} {float(v[lab].iloc[0]):.0%}" for _, lab in CLASSES) for x, v in sh.items()
        )
        + f" ({k.hi} log blocks, {k.mib})",
        all(x < claim.get("at_most", 1 / 3) for x in over.values()) if over else None,
        "" if over else "no CLC or REF cell at the most log blocks",
    )


def utilisation_at_merge(df, claim):
    k = _Desk(df)
    lo, hi = claim.get("low", 0.2), claim.get("high", 0.6)
    u = {x: k.t(x, k.hi, "ftl.log.utilisation_at_merge_rereferenced.mean") for x in ("clc", "ref")}
    inside = all(lo <= x <= hi for x in u.values())
    return k.out(
        ", ".join(f"{x} {v:.0%}" for x, v in u.items()) + f" ({k.hi} log blocks, {k.mib}; written pages)",
        inside,
        ""
        if inside
        else "outside the range: "
        + ", ".join(f"{x} {v:.1%}" for x, v in u.items() if not lo <= v <= hi)
        + " (programmed pages of the merged log block / N_p, `ftl.log_utilisation = written`)",
    )


def larger_buffer_fewer_rerefs(df, claim):
    k = _Desk(df)
    sizes = _sizes(k.d[k.d["buffer.kind"] == "clc"])
    hr = [k.t("clc", k.hi, "ftl.log.hit_ratio", size=s) for s in sizes]
    er = [k.t("clc", k.hi, "nand.erases", size=s) for s in sizes]
    falling = all(a > b for a, b in zip(hr[:-1], hr[1:], strict=True))
    holds = falling if len(hr) > 1 else None
    return k.out(
        f"CLC at {k.hi} log blocks: "
        + ", ".join(f"{s >> 20} MiB hit ratio {h:.1%}" for s, h in zip(sizes, hr, strict=True)),
        holds,
        "" if holds else "one buffer size only" if holds is None else "erases " + ", ".join(f"{e:,.0f}" for e in er),
    )


def integrated_beats_clc_ref(df, claim):
    k = _Desk(df)
    best = [(n, k.t("integrated", n), min(k.t("clc", n), k.t("ref", n))) for n in k.logs]
    best = [(n, a, b) for n, a, b in best if a == a]
    traces = _traces(df)
    ratios = _trace_ratios(traces)
    for *_, cells in ratios:
        k.cells += cells
    losses = [f"{w} ({n} log blocks): {r:.2f}×" for w, n, r, _ in ratios if r > 1]
    holds = all(a <= b for _, a, b in best) and not losses if best else None
    return k.out(
        "desktop: "
        + "; ".join(f"{n}: {a / b:.2f}× the better" for n, a, b in best)
        + f"; real traces: slower in {len(losses)} of {len(ratios)} cells",
        holds,
        "" if holds or not losses else _why_integrated(traces, losses),
    )


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
