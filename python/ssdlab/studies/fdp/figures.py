"""Figures and the anchors table of the fdp study."""

from __future__ import annotations

import html

from ssdlab.report import figures as F

from .judges import cachelib_pair, cells, with_handles

# The published numbers, beside ssdlab's cell of the same set-up: (what, published, cell filter).
ANCHORS = (
    ("CacheLib, 50% utilisation", "1.22 → 1.03", 0.5),
    ("CacheLib, 100% utilisation", "3.22 → 1.03", 1.0),
    ("LMCache, 89% utilisation (PM9D3a)", "2.60 → 1.43", 0.89),
)
# The overwrites' distribution of the WARP artifact's documented three-stream job.
WARP_JOB = "zoned:80/20:10/20:10/60"


def variant(r) -> str:
    """FDP off, or the handle type of an FDP cell."""
    return "FDP off" if r["fdp"] == "FDP off" else f"FDP on, {r['handle_type']}"


def figures(df):
    ok = cells(df)
    out = []
    cl = ok[(ok["setup"] == "cachelib") & ok["source"].isin(["FDP off", "CacheLib's engines"])]
    cl = with_handles(cl, 8, off_too=True)
    if len(cl):
        fig = F.line(cl, x="workload.cachelib.utilisation", y="waf", by="fdp")
        for ax in fig.axes:
            if ax.get_xlabel():
                ax.set_xlabel("utilisation (share of the device the cache uses)")
        out.append(
            (
                "CacheLib's flash cache: WAF against utilisation, FDP off and on (panels: formatted, or filled first)",
                fig,
            )
        )
    ru = ok[(ok["setup"] == "cachelib") & (ok["workload.cachelib.utilisation"] == 0.89) & (ok["fdp"] == "FDP on")]
    ru = with_handles(ru, 2)
    if len(ru):
        fig = F.bars(ru, x="ru_mib", y="waf", by="handle_type")
        fig.axes[0].set_xlabel("reclaim unit (MiB)")
        out.append(("89% utilisation, FDP on, two handles: WAF by reclaim unit size and handle type", fig))
    ids = ok[(ok["setup"] == "cachelib") & (ok["workload.cachelib.utilisation"] == 1.0)]
    ids = ids[(ids["run.precondition"] == "none")]
    if ids["source"].nunique() > 2:
        fig = F.bars(ids, x="source", y="waf")
        out.append(("100% utilisation: WAF by where the placement identifiers come from (8 handles)", fig))
    hd = ok[ok["setup"] == "handles"]
    if len(hd):
        fig = F.line(hd, x="fdp.handles", y="waf")
        out.append(("100% utilisation, future-knowledge identifiers: WAF against the number of handles", fig))
    adv = ok[ok["setup"] == "adversarial"]
    if len(adv):
        adv = adv.assign(variant=[variant(r) for _, r in adv.iterrows()])
        fig = F.bars(adv, x="jumper", y="waf", by="variant")
        out.append(
            (
                "WARP's adversarial three streams (its artifact's job file): WAF with FDP off and on, "
                "by the distribution of the overwrites",
                fig,
            )
        )
    rt = ok[ok["setup"] == "read tails"]
    if len(rt):
        fig = F.bars(rt, x="nand.suspend", y="latency.read.p999_us", by="fdp", logy=True)
        out.append(
            (
                "Timed, CacheLib with 50% lookups: read p99.9 (µs, log scale), FDP off and on, suspend off and on",
                fig,
            )
        )
    return out


def sections(df):
    """The published anchors beside ssdlab's figures of the same set-up."""
    ok = cells(df)
    rows = []
    for what, published, util in ANCHORS:
        for pre in ("none", "fill"):
            off, on = cachelib_pair(ok, util, pre)
            if off is not None and on is not None:
                label = "formatted" if pre == "none" else "filled first"
                rows.append(
                    f"<tr><td>{html.escape(what)}</td><td>{published}</td><td>{label}</td>"
                    f"<td>{off['waf']:.2f} → {on['waf']:.2f}</td></tr>"
                )
    adv = ok[(ok["setup"] == "adversarial") & (ok["jumper"] == WARP_JOB)]
    if len(adv):
        waf = ", ".join(f"{variant(r)} {r['waf']:.2f}" for _, r in adv.sort_values(["fdp", "handle_type"]).iterrows())
        rows.append(
            "<tr><td>WARP, adversarial three streams (zoned overwrites)</td><td>FDP on 2.58× / 4.49×</td>"
            f"<td>filled first</td><td>{html.escape(waf)}</td></tr>"
        )
    if not rows:
        return []
    table = (
        "<table><tr><th>anchor</th><th>published (FDP off → on)</th><th>device before the cache</th>"
        "<th>ssdlab</th></tr>" + "".join(rows) + "</table>"
    )
    return [("Published anchors beside ssdlab", table)]
