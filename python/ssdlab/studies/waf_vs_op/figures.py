"""Figures and the analytic check of the waf-vs-op study."""

from __future__ import annotations

import numpy as np
from ssdlab.analytic import greedy_waf
from ssdlab.report import figures as F


def _analytic_curve(df):
    rhos = np.linspace(float(df["device.op"].min()), float(df["device.op"].max()), 100)
    return rhos, [greedy_waf(r) for r in rhos], "greedy, analytic (Xiang & Kurkoski)"


def figures(df):
    ok = df[df["status"] == "ok"]
    out = []
    for kind in sorted(ok["workload.kind"].unique()):
        part = ok[ok["workload.kind"] == kind]
        overlay = _analytic_curve(part) if kind == "uniform" else None
        fig = F.line(part, x="device.op", y="waf", by="ftl.gc", overlay=overlay)
        fig.axes[0].set_xlabel("over-provisioning ρ")
        fig.axes[0].set_title(f"{kind} 4 KiB writes", fontsize=8)
        caption = f"WAF against over-provisioning ρ, {kind} writes, one line per GC victim policy"
        if kind == "uniform":
            caption += "; dashed: the analytic WAF of greedy GC"
        out.append((caption, fig))
    return out


def sections(df):
    """Greedy under uniform writes against the analytic expression, cell by cell."""
    ok = df[(df["status"] == "ok") & (df["ftl.gc"] == "greedy") & (df["workload.kind"] == "uniform")]
    rows = []
    for _, r in ok.sort_values("device.op").iterrows():
        ref = greedy_waf(float(r["device.op"]))
        rows.append(
            f"<tr><td>{r['device.op']:g}</td><td>{int(r['device.pages_per_block'])}</td>"
            f"<td>{r['waf']:.4f}</td><td>{ref:.4f}</td><td>{(r['waf'] / ref - 1) * 100:+.2f}%</td></tr>"
        )
    table = (
        "<p>Greedy GC under uniform random writes against Xiang &amp; Kurkoski's expression "
        "WA = (1+ρ) / ((1+ρ) + W<sub>0</sub>(−(1+ρ)e<sup>−(1+ρ)</sup>)), the limit of many pages per "
        "block. With finitely many pages per block greedy does slightly better than the limit; the "
        "gap halves with each doubling of pages per block (tests/test_waf_analytic.py).</p>"
        "<table><tr><th>ρ</th><th>pages/block</th><th>ssdlab WAF</th><th>analytic</th><th>difference</th></tr>"
        + "".join(rows)
        + "</table>"
    )
    return [("Greedy GC against the analytic model", table)] if rows else []
