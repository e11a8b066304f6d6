"""Figures of the buffers-basic study: per trace, WAF, erases and hit ratio against buffer size."""

from __future__ import annotations

import html
from pathlib import Path

from ssdlab.report import figures as F


def _name(path: str) -> str:
    return Path(str(path)).name


def figures(df):
    ok = df[df["status"] == "ok"]
    out = []
    for path in sorted(ok["workload.path"].unique()):
        part = ok[ok["workload.path"] == path]
        for metric, what in (
            ("waf", "WAF"),
            ("nand.erases", "block erases"),
            ("buffer.page_hit_ratio", "page write hit ratio"),
        ):
            fig = F.line(part, x="buffer.bytes", y=metric, by="buffer.kind", logx=True)
            fig.axes[0].set_title(_name(path), fontsize=8)
            out.append((f"{_name(path)}: {what} against buffer size, one line per buffer policy", fig))
    return out


def sections(df):
    """Which buffer gives the fewest erases on each trace at each size."""
    ok = df[df["status"] == "ok"]
    rows = []
    for (path, size), part in ok.groupby(["workload.path", "buffer.bytes"]):
        best = part.loc[part["nand.erases"].idxmin()]
        none = part[part["buffer.kind"] == "none"]["nand.erases"]
        saving = f"{(1 - best['nand.erases'] / none.iloc[0]) * 100:.1f}%" if len(none) and none.iloc[0] else "—"
        rows.append(
            f"<tr><td>{html.escape(_name(path))}</td><td>{int(size) // (1 << 20)} MiB</td>"
            f"<td>{html.escape(str(best['buffer.kind']))}</td><td>{int(best['nand.erases']):,}</td>"
            f"<td>{saving}</td></tr>"
        )
    table = (
        "<table><tr><th>trace</th><th>buffer</th><th>fewest erases</th><th>erases</th>"
        "<th>fewer than no buffer</th></tr>" + "".join(rows) + "</table>"
    )
    return [("Fewest erases by trace and buffer size", table)] if rows else []
