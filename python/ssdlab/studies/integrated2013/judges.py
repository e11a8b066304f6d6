"""The claim judges (claims.toml names them) of the integrated2013 study (seed 002).

Each judge computes the quantity its claim's text names from the results frame and returns an
Outcome; the band comes from the claim's own parameters (claims.toml says which words of the seed
they read). figures.py takes the helpers that pick and read cells from here."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from ssdlab.claims import Outcome

TIME = "time.nand_serial_us"  # execution time: serial NAND time at the seed's R:W:E = 1:6:10
CLASSES = (
    ("ftl.log.merged_never_rereferenced", "never re-referenced"),
    ("ftl.log.merged_rereferenced_fits", "re-referenced, ΣS_c ≤ N_p"),
    ("ftl.log.merged_rereferenced_overflows", "re-referenced, ΣS_c > N_p"),
)


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


def _classes(d):
    """Shares of the three re-reference classes among merged log blocks, per cell."""
    total = sum(d[k].astype(float) for k, _ in CLASSES)
    return {label: d[k].astype(float) / total for k, label in CLASSES}


def _trace_name(path) -> str:
    return Path(str(path)).name.split(".")[0]


def _workload_cells(df, kinds=("clc", "ref")):
    """Fig 3-b's and Fig 5's bars: (label, kind, row) for the desktop profile at the most log blocks
    (the seed's 1,024) and each real trace at its grid's most, at the seed's 2 MB buffer."""
    out = []
    d = _desktop(df)
    d = d[d["buffer.kind"].isin(kinds)] if len(d) else d
    if len(d):
        size, n = _ref_size(d), _logs(d)[-1]
        for kind in kinds:
            rows = _pick(d, kind, logs=n, size=size)
            if len(rows):
                out.append((f"desktop, {n}", kind, rows.iloc[0]))
    tr = _traces(df)
    for path in sorted(tr["workload.path"].unique()) if len(tr) else []:
        part = tr[tr["workload.path"] == path]
        n = _logs(part)[-1]
        for kind in kinds:
            rows = _pick(part, kind, logs=n)
            if len(rows):
                out.append((f"{_trace_name(path)}, {n}", kind, rows.iloc[0]))
    return out


def _why_ref(t, n, size):
    """Why REF is not faster enough than CLC at `n` log blocks, from the counts at `size`."""
    hit = (t("ref", n, "ftl.log.hit_ratio", size=size), t("clc", n, "ftl.log.hit_ratio", size=size))
    miss = (t("ref", n, "ftl.log.misses", size=size), t("clc", n, "ftl.log.misses", size=size))
    clusters = t("ref", n, "ftl.log.requested_clusters", size=size) / t(
        "clc", n, "ftl.log.requested_clusters", size=size
    )
    erases = (t("ref", n, "nand.erases", size=size), t("clc", n, "nand.erases", size=size))
    return (
        f"at {size >> 20} MiB: REF's log-block misses (each a merge once the log blocks are in use) {miss[0]:,.0f} vs "
        f"CLC's {miss[1]:,.0f}, erases {erases[0]:,.0f} vs {erases[1]:,.0f}: its higher reference rate "
        f"({hit[0]:.1%} vs {hit[1]:.1%}, as the seed explains) is a share of {clusters:.1f}× the flushes, so it saves "
        "few merges"
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
        # Fig 1–2's grid: the buffer sizes CLC ran at (the CLC-vs-REF grid's).
        self.sizes = _sizes(self.d[self.d["buffer.kind"] == "clc"])
        self.cells: list = []

    def t(self, kind, n, metric=TIME, size=None, padding=None, d=None):
        rows = _pick(self.d if d is None else d, kind, logs=n, size=size or self.size, padding=padding)
        self.cells += list(rows["cell"][:1])
        return float(rows[metric].iloc[0]) if len(rows) else float("nan")

    def row(self, kind, n, size=None, d=None):
        """The cell's row (a one-row frame; empty when the grid lacks it), kept for `cells`."""
        rows = _pick(self.d if d is None else d, kind, logs=n, size=size or self.size)[:1]
        self.cells += list(rows["cell"])
        return rows

    def out(self, measured, holds, why=""):
        return Outcome(measured, holds, why, sorted(set(self.cells), key=str))

    def missing(self, what):
        return self.out("—", None, f"no {what} in these results")


def _why(holds, fails: str, unjudged: str) -> str:
    """An Outcome's `why`: nothing when the claim holds, `unjudged` when it cannot be judged."""
    return "" if holds else unjudged if holds is None else fails


def _mib(size):
    return f"{size >> 20} MiB"


def _ref_over_clc(k, n):
    """REF's time over CLC's at `n` log blocks, per buffer size: the seed's Fig 1-a draws one line per
    buffer size and states its "up to" over them (sizes where either is missing are left out)."""
    r = {size: k.t("ref", n, size=size) / k.t("clc", n, size=size) for size in k.sizes}
    return {size: v for size, v in r.items() if v == v}


def _per_size(r):
    return ", ".join(f"{v:.2f} ({_mib(size)})" for size, v in r.items())


def _ref_over_clc_band(df, claim, logs, up_to):
    """The desk, the claim's log-block count (default `logs`), REF / CLC there per buffer size, and
    the band: `share` (default half) of the seed's "up to" (default `up_to`)."""
    k = _Desk(df)
    n = claim.get("logs", logs)
    return k, n, _ref_over_clc(k, n), claim.get("share", 0.5) * claim.get("up_to", up_to)


def clc_faster_few_logs(df, claim):
    k, n, r, need = _ref_over_clc_band(df, claim, 8, 0.30)
    if not r:
        return k.missing(f"CLC and REF cells at {n} log blocks")
    best = max(r.values()) - 1
    holds = best >= need
    return k.out(
        f"REF / CLC at {n} log blocks: {_per_size(r)}; best case CLC {best:.0%} faster (band: at least {need:.0%})",
        holds,
        ""
        if holds
        else f"CLC's best case is {best:.0%} faster, below half of the seed's {claim.get('up_to', 0.30):.0%}",
    )


def ref_faster_many_logs(df, claim):
    k, n, r, need = _ref_over_clc_band(df, claim, 1024, 0.13)
    if not r:
        return k.missing(f"CLC and REF cells at {n} log blocks")
    best_size = min(r, key=r.get)
    best = 1 - r[best_size]
    holds = best >= need
    chain = _variant(df, "chain") if len(_variant(df, "single")) else _ok(df).iloc[:0]
    ch = chain[chain["buffer.kind"].isin(["clc", "ref"]) & (chain["workload.kind"] == "desktop")]
    sens = ""
    if len(ch) and n in _logs(ch):
        size = _ref_size(ch)
        rc = k.t("ref", n, d=ch, size=size) / k.t("clc", n, d=ch, size=size)
        sens = f"; chain variant (sensitivity) {rc:.2f} ({_mib(size)})"
    faster = f"REF {best:.0%} faster" if best >= 0 else f"REF {-best:.0%} slower"
    return k.out(
        f"REF / CLC at {n} log blocks: {_per_size(r)}; best case {faster} (band: at least {need:.1%} faster){sens}",
        holds,
        "" if holds else _why_ref(k.t, n, best_size),
    )


def ref_gains_with_logs(df, claim):
    k = _Desk(df)
    lo, hi = (_ref_over_clc(k, k.lo), _ref_over_clc(k, k.hi))
    sizes = [s for s in lo if s in hi]
    if not sizes or k.lo == k.hi:
        return k.missing("CLC and REF cells at two log-block counts")
    holds = all(hi[s] < lo[s] for s in sizes)
    rising = [_mib(s) for s in sizes if hi[s] >= lo[s]]
    return k.out(
        f"REF / CLC from {k.lo} to {k.hi} log blocks: "
        + ", ".join(f"{lo[s]:.2f} → {hi[s]:.2f} ({_mib(s)})" for s in sizes),
        holds,
        "" if holds else "REF loses ground with more log blocks at " + ", ".join(rising),
    )


def ref_gains_real_traces(df, claim):
    tr = _traces(df)
    cells, parts, lost = [], [], []
    for path in sorted(tr["workload.path"].unique()) if len(tr) else []:
        part = tr[tr["workload.path"] == path]
        logs = _logs(part)
        r = {}
        for n in (logs[0], logs[-1]):
            rows = {x: _pick(part, x, logs=n) for x in ("clc", "ref")}
            if all(len(v) for v in rows.values()):
                cells += [str(v["cell"].iloc[0]) for v in rows.values()]
                r[n] = float(rows["ref"][TIME].iloc[0]) / float(rows["clc"][TIME].iloc[0])
        if len(r) == 2:
            parts.append(f"{_trace_name(path)} {r[logs[0]]:.2f} → {r[logs[-1]]:.2f}")
            if r[logs[-1]] >= r[logs[0]]:
                lost.append(_trace_name(path))
    if not parts:
        return Outcome("—", None, "no real-trace cells of CLC and REF at two log-block counts")
    holds = not lost
    return Outcome(
        "REF / CLC from the fewest to the most log blocks: " + "; ".join(parts),
        holds,
        "" if holds else f"REF loses ground with more log blocks on {', '.join(lost)} ({len(lost)} of {len(parts)})",
        sorted(set(cells)),
    )


def _by_cell(k, metric, kinds=("clc", "ref"), logs=None, sizes=None):
    """{kind: {(size, logs): value}} over Fig 1–2's grid (missing cells left out)."""
    out = {}
    for x in kinds:
        vals = {(s, n): k.t(x, n, metric, size=s) for s in sizes or k.sizes for n in logs or k.logs}
        out[x] = {key: v for key, v in vals.items() if v == v}
    return out


def _both(v):
    """The cells of `_by_cell`'s `v` where CLC and REF both have a value."""
    return [key for key in v["clc"] if key in v["ref"]]


def _desk_by_cell(df, metric):
    """The desk, `metric` by cell for CLC and REF over Fig 1–2's grid, and the cells with both."""
    k = _Desk(df)
    v = _by_cell(k, metric)
    return k, v, _both(v)


def clc_fewer_clusters(df, claim):
    k, rq, both = _desk_by_cell(df, "ftl.log.requested_clusters")
    if not both:
        return k.missing("CLC and REF cells")
    worse = [key for key in both if rq["clc"][key] >= rq["ref"][key]]
    ratio = [rq["ref"][key] / rq["clc"][key] for key in both]
    return k.out(
        f"REF requests {min(ratio):.1f}–{max(ratio):.1f}× CLC's clusters; CLC fewer in {len(both) - len(worse)} of "
        f"{len(both)} cells ({k.lo}–{k.hi} log blocks, {_mib(k.sizes[0])}–{_mib(k.sizes[-1])})",
        not worse,
        "" if not worse else "CLC requests as many or more at " + ", ".join(f"{n} ({_mib(s)})" for s, n in worse),
    )


def _spread(values):
    values = [v for v in values if v == v]
    return max(values) / min(values) - 1 if values else float("nan")


def clusters_independent_of_logs(df, claim):
    k = _Desk(df)
    rq = _by_cell(k, "ftl.log.requested_clusters")
    ref = {s: _spread([v for (s2, _), v in rq["ref"].items() if s2 == s]) for s in k.sizes}
    ref = {s: v for s, v in ref.items() if v == v}
    clc = max((_spread([v for (s2, _), v in rq["clc"].items() if s2 == s]) for s in k.sizes), default=float("nan"))
    if not ref or len(k.logs) < 2:
        return k.missing("REF cells at two log-block counts")
    band = claim.get("max_spread", 0.10)
    holds = all(v <= band for v in ref.values())
    return k.out(
        f"REF's requested clusters over {k.lo}–{k.hi} log blocks: "
        + ", ".join(f"{v:.0%} spread ({_mib(s)})" for s, v in ref.items())
        + f" (band: at most {band:.0%}); CLC {clc:.0%} (it never sees the FTL)",
        holds,
        ""
        if holds
        else "REF prefers window LBNs in its recently-evicted list, which holds as many LBNs as there are log "
        "blocks: the more log blocks, the more often its victim is such an LBN rather than the one with the most "
        "window pages, and the more (smaller) clusters it sends",
    )


def clusters_depend_on_buffer(df, claim):
    k = _Desk(df)
    if len(k.sizes) < 2:
        return k.missing("two buffer sizes")
    rq = _by_cell(k, "ftl.log.requested_clusters")
    band = claim.get("min_spread", 0.10)
    parts, bad = [], []
    for x in ("clc", "ref"):
        drops = []
        for n in k.logs:
            v = [rq[x].get((s, n), float("nan")) for s in k.sizes]
            if any(a != a for a in v):
                continue
            falling = all(a > b for a, b in zip(v[:-1], v[1:], strict=True))
            drop = v[0] / v[-1] - 1
            drops.append(drop)
            if not falling or drop <= band:
                bad.append(f"{x.upper()} at {n} log blocks ({drop:+.0%}{'' if falling else ', not falling'})")
        if drops:
            parts.append(f"{x.upper()} {min(drops):.0%}–{max(drops):.0%}")
    if not parts:
        return k.missing("cells at every buffer size")
    return k.out(
        f"requested clusters at {_mib(k.sizes[0])} over those at {_mib(k.sizes[-1])}, minus 1, over the log-block "
        f"counts: {'; '.join(parts)} (band: falling with each size, by more than {band:.0%})",
        not bad,
        "" if not bad else "; ".join(bad),
    )


def clc_more_misses_many_logs(df, claim):
    k = _Desk(df)
    many = [n for n in k.logs if n >= claim.get("from_logs", 128)]
    if not many:
        return k.missing(f"cell with at least {claim.get('from_logs', 128)} log blocks")
    m = _by_cell(k, "ftl.log.misses", logs=many)
    both = _both(m)
    if not both:
        return k.missing(f"CLC and REF cells at {many[0]} log blocks or more")
    fewer = [key for key in both if m["clc"][key] <= m["ref"][key]]
    ratio = [m["clc"][key] / m["ref"][key] for key in both]
    rq = _by_cell(k, "ftl.log.requested_clusters", logs=many)
    cl = [rq["ref"][key] / rq["clc"][key] for key in both if key in rq["ref"] and key in rq["clc"]] or [float("nan")]
    return k.out(
        f"CLC's misses / REF's at {many[0]}–{many[-1]} log blocks: {min(ratio):.2f}–{max(ratio):.2f}; CLC more in "
        f"{len(both) - len(fewer)} of {len(both)} cells",
        not fewer,
        ""
        if not fewer
        else f"REF's reference rate is the higher one, but over {min(cl):.1f}–{max(cl):.1f}× CLC's flushes: counted "
        f"per run, its misses match or outnumber CLC's in {len(fewer)} cells, e.g. "
        + ", ".join(f"{n} ({_mib(s)})" for s, n in fewer[:4]),
    )


def ref_higher_reference_rate(df, claim):
    k, h, both = _desk_by_cell(df, "ftl.log.hit_ratio")
    if not both:
        return k.missing("CLC and REF cells")
    lower = [key for key in both if h["ref"][key] <= h["clc"][key]]
    return k.out(
        f"reference rate REF {min(h['ref'].values()):.0%}–{max(h['ref'].values()):.0%}, CLC "
        f"{min(h['clc'].values()):.0%}–{max(h['clc'].values()):.0%}; REF higher in {len(both) - len(lower)} of "
        f"{len(both)} cells",
        not lower,
        "" if not lower else "REF's is not higher at " + ", ".join(f"{n} ({_mib(s)})" for s, n in lower),
    )


def reference_rate_rises(df, claim):
    k = _Desk(df)
    if len(k.logs) < 2:
        return k.missing("two log-block counts")
    h = _by_cell(k, "ftl.log.hit_ratio")
    parts, bad = [], []
    for x in ("clc", "ref"):
        for s in k.sizes:
            v = [h[x].get((s, n), float("nan")) for n in k.logs]
            v = [a for a in v if a == a]
            if len(v) < 2:
                continue
            parts.append(f"{x.upper()} {v[0]:.0%} → {v[-1]:.0%} ({_mib(s)})")
            if not all(a < b for a, b in zip(v[:-1], v[1:], strict=True)):
                bad.append(f"{x.upper()} at {_mib(s)}")
    if not parts:
        return k.missing("CLC or REF cells at two log-block counts")
    return k.out(
        f"from {k.lo} to {k.hi} log blocks: " + ", ".join(parts),
        not bad,
        "" if not bad else "not rising at every step: " + ", ".join(bad),
    )


def few_logs_rarely_rereferenced(df, claim):
    k = _Desk(df)
    n, band = claim.get("logs", 8), claim.get("at_most", 0.10)
    h = _by_cell(k, "ftl.log.hit_ratio", logs=[n])
    if not any(h.values()):
        return k.missing(f"CLC or REF cell at {n} log blocks")
    lru = _Pad(df)
    shown = [f"{lru.p('none', n, 'ftl.log.hit_ratio', s):.1%} ({_mib(s)})" for s in lru.psizes if n in lru.plogs]
    bad = [f"{x.upper()} {v:.0%} ({_mib(s)})" for x, vals in h.items() for (s, _), v in vals.items() if v > band]
    return k.out(
        f"reference rate at {n} log blocks: "
        + "; ".join(
            f"{x.upper()} " + ", ".join(f"{v:.0%} ({_mib(s)})" for (s, _), v in vals.items()) for x, vals in h.items()
        )
        + f" (band: at most {band:.0%})"
        + (f"; block-level LRU without padding {', '.join(shown)}" if shown else ""),
        not bad,
        ""
        if not bad
        else "above the band: " + ", ".join(bad) + ". REF flushes an LBN's window pages in several pieces: the later "
        "pieces hit the log block the first one took",
    )


class _Pad(_Desk):
    """Block-level LRU without padding against always padding (Fig 4)."""

    def __init__(self, df):
        super().__init__(df)
        self.pad = self.d[self.d["buffer.kind"] == "block-lru"]
        self.plogs = _logs(self.pad) if len(self.pad) else []
        self.psizes = _sizes(self.pad) if len(self.pad) else []

    def p(self, padding, n, metric, size):
        return self.t("block-lru", n, metric, size=size, padding=padding, d=self.pad)

    def ratio(self, n, metric, size):
        """Without padding over with padding (Fig 4's bars)."""
        return self.p("none", n, metric, size) / self.p("fixed", n, metric, size)

    def gaps(self):
        """(log blocks, buffer size, erases ratio, time ratio) per cell of the padding grid."""
        out = []
        for s in self.psizes:
            for n in self.plogs:
                e, tm = self.ratio(n, "nand.erases", s), self.ratio(n, TIME, s)
                if e == e and tm == tm:
                    out.append((n, s, e, tm))
        return out


def padding_cheaper_without_reref(df, claim):
    k = _Pad(df)
    n = claim.get("logs", 8)
    if n not in k.plogs:
        return k.missing(f"padding grid cell at {n} log blocks")
    r = {s: (k.ratio(n, TIME, s), k.p("none", n, "ftl.log.hit_ratio", s)) for s in k.psizes}
    holds = all(tm > 1 for tm, _ in r.values())
    return k.out(
        f"time without / with padding at {n} log blocks: "
        + ", ".join(f"{tm:.2f} ({_mib(s)}; reference rate without padding {h:.2%})" for s, (tm, h) in r.items()),
        holds,
        "" if holds else "padding is not faster at " + ", ".join(_mib(s) for s, (tm, _) in r.items() if tm <= 1),
    )


def full_merge_cheaper_with_reref(df, claim):
    k = _Pad(df)
    n = claim.get("logs", 1024)
    if n not in k.plogs:
        return k.missing(f"padding grid cell at {n} log blocks")
    parts, judged, bad = [], 0, []
    for s in k.psizes:
        rows = k.row("block-lru", n, size=s, d=k.pad[k.pad["buffer.padding"] == "none"])
        tm = k.ratio(n, TIME, s)
        if not len(rows) or tm != tm:
            continue
        fits, over = (float(rows[c].iloc[0]) for c in (CLASSES[1][0], CLASSES[2][0]))
        mostly = fits > over
        parts.append(
            f"{tm:.2f} ({_mib(s)}; re-referenced log blocks fitting {fits / max(fits + over, 1):.0%})"
            + ("" if mostly else ", not judged: most overflow")
        )
        if mostly:
            judged += 1
            if tm >= 1:
                bad.append(_mib(s))
    holds = None if not judged else not bad
    return k.out(
        f"time without / with padding at {n} log blocks: " + ", ".join(parts),
        holds,
        _why(
            holds,
            "padding is as fast or faster at " + ", ".join(bad),
            "no cell whose re-referenced log blocks mostly fit",
        ),
    )


def padding_pays_without_reref(df, claim):
    k = _Pad(df)
    gaps = k.gaps()
    hit = {(n, s): k.p("none", n, "ftl.log.hit_ratio", s) for n, s, _, _ in gaps}
    pays = [(n, s) for n, s, _, tm in gaps if tm > 1]
    rest = [(n, s) for n, s, _, tm in gaps if tm <= 1]
    holds = max(hit[c] for c in pays) < min(hit[c] for c in rest) if pays and rest else None
    return k.out(
        "; ".join(
            f"{n} ({_mib(s)}): reference rate w/o padding {hit[(n, s)]:.1%}, time w/o / with {tm:.2f}"
            for n, s, _, tm in gaps
        ),
        holds,
        _why(
            holds,
            "a cell where padding pays has a higher reference rate than one where it does not",
            "padding pays at every cell or at none",
        ),
    )


def rereferenced_mostly_fit(df, claim):
    k = _Pad(df)
    parts, bad = [], []
    for s in k.psizes:
        for n in k.plogs:
            rows = k.row("block-lru", n, size=s, d=k.pad[k.pad["buffer.padding"] == "none"])
            if not len(rows):
                continue
            fits, over = (float(rows[c].iloc[0]) for c in (CLASSES[1][0], CLASSES[2][0]))
            if fits + over == 0:
                continue
            share = fits / (fits + over)
            parts.append(f"{n} ({_mib(s)}) {share:.0%} of {fits + over:,.0f}")
            if share <= 0.5:
                bad.append(f"{n} ({_mib(s)})")
    if not parts:
        return k.missing("re-referenced log blocks of block-level LRU without padding")
    return k.out(
        "re-referenced log blocks with ΣS_c ≤ N_p, block-level LRU without padding: " + "; ".join(parts),
        not bad,
        "" if not bad else "half or fewer fit at " + ", ".join(bad),
    )


def reref_classes(df, claim):
    k = _Desk(df)
    n = claim.get("logs", 1024)
    sh = {}
    for x in ("clc", "ref"):
        rows = k.row(x, n)
        if len(rows):
            sh[x] = {lab: float(v.iloc[0]) for lab, v in _classes(rows).items()}
    if not sh:
        return k.missing(f"CLC or REF cell at {n} log blocks")
    band = claim.get("at_most", 1 / 3)
    over = {x: v[CLASSES[2][1]] for x, v in sh.items()}
    holds = all(v <= band for v in over.values())
    return k.out(
        "share of merged log blocks: "
        + "; ".join(f"{x}: " + ", ".join(f"{lab} {v:.0%}" for lab, v in c.items()) for x, c in sh.items())
        + f" ({n} log blocks, {k.mib}; band: ΣS_c > N_p at most {band:.0%})",
        holds,
        ""
        if holds
        else "more overflow than the band: " + ", ".join(f"{x} {v:.0%}" for x, v in over.items() if v > band),
    )


def reref_classes_traces(df, claim):
    band = claim.get("at_most", 1 / 3)
    cells = [(w, x, row) for w, x, row in _workload_cells(df) if not w.startswith("desktop")]
    if not cells:
        return Outcome("—", None, "no real-trace cells of CLC or REF")
    over = {(w, x): float(_classes(row.to_frame().T)[CLASSES[2][1]].iloc[0]) for w, x, row in cells}
    bad = [f"{w} {x} {v:.0%}" for (w, x), v in over.items() if v > band]
    return Outcome(
        "ΣS_c > N_p share of merged log blocks (log blocks after the trace): "
        + "; ".join(f"{w} {x} {v:.0%}" for (w, x), v in over.items())
        + f" (band: at most {band:.0%})",
        not bad,
        "" if not bad else "above the band: " + ", ".join(bad),
        sorted({str(row["cell"]) for _, _, row in cells}),
    )


def never_share_varies(df, claim):
    n = claim.get("logs", 512)
    d, tr = _desktop(df), _traces(df)
    shares, cells = {}, []
    for name, part in [("desktop", d[d["buffer.bytes"].astype(int) == _ref_size(d)] if len(d) else d)] + [
        (_trace_name(p), tr[tr["workload.path"] == p])
        for p in (sorted(tr["workload.path"].unique()) if len(tr) else [])
    ]:
        rows = _pick(part, "clc", logs=n)[:1] if len(part) else part
        if len(rows):
            cells.append(str(rows["cell"].iloc[0]))
            shares[name] = float(_classes(rows)[CLASSES[0][1]].iloc[0])
    if len(shares) < 2:
        return Outcome("—", None, f"fewer than two workloads with a CLC cell at {n} log blocks", cells)
    lo, hi = min(shares.values()), max(shares.values())
    factor = claim.get("at_least", 2.0)
    holds = hi >= factor * lo
    return Outcome(
        f"never re-referenced share, CLC at {n} log blocks: "
        + ", ".join(f"{w} {v:.0%}" for w, v in shares.items())
        + f"; highest / lowest {hi / lo:.1f} (band: at least {factor:g})",
        holds,
        "" if holds else "the shares are too alike",
        sorted(cells),
    )


def padding_cuts_erases_more(df, claim):
    k = _Pad(df)
    gaps = k.gaps()
    saves = [(n, s, e, tm) for n, s, e, tm in gaps if e > 1]
    more = [c for c in saves if abs(c[2] - 1) > abs(c[3] - 1)]
    holds = len(more) > len(saves) / 2 if saves else None
    return k.out(
        "; ".join(f"{n} ({_mib(s)}): erases {e:.2f}×, time {tm:.2f}×" for n, s, e, tm in gaps)
        + f" (no padding / padding); the erase gap is the larger in {len(more)} of the {len(saves)} cells where "
        "padding saves erases",
        holds,
        _why(
            holds,
            "where log blocks are re-referenced, padding costs a whole-block write per flush",
            "padding saves no erases in any cell",
        ),
    )


def no_padding_erases_double(df, claim):
    k = _Pad(df)
    n = claim.get("logs", 8)
    if n not in k.plogs:
        return k.missing(f"padding grid cell at {n} log blocks")
    lo, hi = claim.get("low", 1.5), claim.get("high", 2.5)
    e = {s: k.ratio(n, "nand.erases", s) for s in k.psizes}
    holds = all(lo <= v <= hi for v in e.values())
    return k.out(
        f"erases without / with padding at {n} log blocks: "
        + ", ".join(f"{v:.2f}× ({_mib(s)})" for s, v in e.items())
        + f" (band {lo:g}–{hi:g}×)",
        holds,
        "" if holds else "outside the band at " + ", ".join(_mib(s) for s, v in e.items() if not lo <= v <= hi),
    )


def padding_more_erases_many_logs(df, claim):
    k = _Pad(df)
    n = claim.get("logs", 1024)
    if n not in k.plogs:
        return k.missing(f"padding grid cell at {n} log blocks")
    s = k.psizes[0]
    e = k.ratio(n, "nand.erases", s)
    others = ", ".join(f"{k.ratio(n, 'nand.erases', x):.2f}× ({_mib(x)})" for x in k.psizes[1:])
    holds = e < 1
    return k.out(
        f"erases without / with padding at {n} log blocks: {e:.2f}× ({_mib(s)})"
        + (f"; larger buffers {others}" if others else ""),
        holds,
        "" if holds else f"padding erases less at {_mib(s)} too",
    )


def utilisation_at_merge(df, claim):
    k = _Desk(df)
    n = claim.get("logs", 1024)
    lo, hi = claim.get("low", 0.2), claim.get("high", 0.6)
    u = {x: k.t(x, n, "ftl.log.utilisation_at_merge_rereferenced.mean") for x in ("clc", "ref")}
    u = {x: v for x, v in u.items() if v == v}
    if not u:
        return k.missing(f"CLC or REF cell at {n} log blocks")
    inside = all(lo <= v <= hi for v in u.values())
    how = _ok(df)["ftl.log_utilisation"].iloc[0] if "ftl.log_utilisation" in df else "written"
    return k.out(
        ", ".join(f"{x} {v:.0%}" for x, v in u.items()) + f" ({n} log blocks, {k.mib}; {how} pages)",
        inside,
        ""
        if inside
        else "outside the range: "
        + ", ".join(f"{x} {v:.1%}" for x, v in u.items() if not lo <= v <= hi)
        + f" (pages of the merged log block / N_p, `ftl.log_utilisation = {how}`)",
    )


def _over_sizes(k, n, value):
    """{kind: [value(row) per buffer size, ascending]} for CLC and REF at `n` log blocks."""
    out = {}
    for x in ("clc", "ref"):
        vals = []
        for s in k.sizes:
            rows = k.row(x, n, size=s)
            if len(rows):
                vals.append(value(rows))
        out[x] = vals
    return out


def larger_buffer_fewer_rerefs(df, claim):
    k = _Desk(df)
    n = claim.get("logs", 1024)
    if len(k.sizes) < 2:
        return k.missing("two buffer sizes")
    rr = _over_sizes(k, n, lambda r: 1 - float(_classes(r)[CLASSES[0][1]].iloc[0]))
    hit = _over_sizes(k, n, lambda r: float(r["ftl.log.hit_ratio"].iloc[0]))
    falling = {x: len(v) > 1 and all(a > b for a, b in zip(v[:-1], v[1:], strict=True)) for x, v in rr.items()}
    sizes = f"{_mib(k.sizes[0])} → {_mib(k.sizes[-1])}"
    return k.out(
        f"re-referenced share of merged log blocks at {n} log blocks, {sizes}: "
        + "; ".join(f"{x.upper()} " + " → ".join(f"{a:.0%}" for a in v) for x, v in rr.items())
        + " (reference rate "
        + "; ".join(f"{x.upper()} " + " → ".join(f"{a:.0%}" for a in v) for x, v in hit.items())
        + ")",
        all(falling.values()),
        ""
        if all(falling.values())
        else "not falling with each size: " + ", ".join(x for x, f in falling.items() if not f),
    )


def larger_buffer_more_erases(df, claim):
    k = _Desk(df)
    n = claim.get("logs", 1024)
    if len(k.sizes) < 2:
        return k.missing("two buffer sizes")
    er = _over_sizes(k, n, lambda r: float(r["nand.erases"].iloc[0]))
    flushes = _over_sizes(k, n, lambda r: float(r["ftl.log.requested_clusters"].iloc[0]))
    misses = _over_sizes(k, n, lambda r: float(r["ftl.log.misses"].iloc[0]))
    rising = {x: len(v) > 1 and all(a < b for a, b in zip(v[:-1], v[1:], strict=True)) for x, v in er.items()}
    holds = all(rising.values())

    def ends(d):
        return "; ".join(f"{x.upper()} {v[0]:,.0f} → {v[-1]:,.0f}" for x, v in d.items() if v)

    return k.out(
        f"erases at {n} log blocks, {_mib(k.sizes[0])} → {_mib(k.sizes[-1])}: "
        + "; ".join(f"{x.upper()} " + " → ".join(f"{a:,.0f}" for a in v) for x, v in er.items()),
        holds,
        ""
        if holds
        else f"a larger buffer sends fewer clusters ({ends(flushes)}): fewer of them hit a log block, but the "
        f"misses, each a merge, fall with them ({ends(misses)})",
    )


def utilisation_traces(df, claim):
    lo, hi = claim.get("low", 0.2), claim.get("high", 0.6)
    cells = [(w, x, row) for w, x, row in _workload_cells(df) if not w.startswith("desktop")]
    if not cells:
        return Outcome("—", None, "no real-trace cells of CLC or REF")
    u = {(w, x): float(row["ftl.log.utilisation_at_merge_rereferenced.mean"]) for w, x, row in cells}
    bad = [f"{w} {x} {v:.1%}" for (w, x), v in u.items() if not lo <= v <= hi]
    return Outcome(
        "; ".join(f"{w} {x} {v:.0%}" for (w, x), v in u.items())
        + f" (log blocks after the trace; band {lo:.0%}–{hi:.0%})",
        not bad,
        "" if not bad else "outside the range: " + ", ".join(bad),
        sorted({str(row["cell"]) for _, _, row in cells}),
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


# -- the seed's cost model (Fig 3-a) ----------------------------------------------------------------


def _eq3(n_p, R, W, E, clusters):
    """Seed Eq. 3: no padding, n references of sizes `clusters` to one log block, full merges."""
    total = sum(clusters)
    full = W * n_p + n_p * (R + W) + 2 * E
    return (total // n_p) * full + W * (total % n_p) + n_p * (R + W) + 2 * E


def _eq4(n_p, R, W, E, clusters):
    """Seed Eq. 4: every reference padded into a whole block and switch-merged."""
    return sum((n_p - s) * R + n_p * W + E for s in clusters)
