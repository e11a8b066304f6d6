"""Figures and report tables of the hwb study (seed 003, P. Li's HWB). The claim judges are in judges.py."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
from ssdlab import studies
from ssdlab.report import figures as F
from ssdlab.report.html import table, text_row
from ssdlab.traces import traces_dir

from .judges import (
    ERASES,
    HIT,
    MEAN,
    NAMES,
    OCC,
    READS,
    _at_ref,
    _ok,
    _paths,
    profile,
    ref_bytes,
    short,
)

P99 = "latency.write.p99_us"
METRICS = (
    (HIT, "write hit ratio"),
    (ERASES, "block erases"),
    (MEAN, "mean write response time"),
    (P99, "p99 write response time"),
)
CLASSES = ("fs", "fl", "is", "il")
NUM = ' class="num"'  # a right-aligned table cell


def trace_root(df) -> Path:
    """The trace directory the cells read (the study's `{traces}`), else the default one."""
    study = studies.get("hwb")
    rels = study.trace_files() + study.trace_files(quick=True)
    for p in df["workload.path"].dropna().unique():
        for rel in rels:
            if str(p).endswith("/" + rel):
                return Path(str(p)[: -len(rel) - 1])
    return traces_dir()


def trace_files(root: Path) -> list[str]:
    """Every trace file under `root` (MANIFEST.md and licence files left out), relative to it."""
    if not root.is_dir():
        return []
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and p.suffix != ".md" and not p.name.startswith(("COPYING", "."))
    )


def _left_out(rel, prof, ran, full, min_pages, profiles):
    """Why a trace file is not in this grid's buffer cells, from its profile."""
    if rel in ran:
        return "in the grid"
    if isinstance(prof, str):
        return f"not readable: {prof}"
    if prof["write_requests"] == 0:
        return "no writes"
    for other in ran:
        twin = profiles.get(other)
        if Path(other).parent == Path(rel).parent and isinstance(twin, dict):
            if {k: v for k, v in twin.items() if k != "format"} == {k: v for k, v in prof.items() if k != "format"}:
                return f"the same requests as {Path(other).name} ({prof['format']} form), which the grid reads"
    if rel in full:
        return "in the full grid"
    if prof["written_pages"] <= min_pages:
        return (
            f"its {prof['written_pages']:,} written pages fit in the smallest buffer ({min_pages:,} pages): "
            "no policy evicts anything before the final flush"
        )
    if prof["page_writes"] == prof["written_pages"]:
        return "every page is written once: no write can hit a buffer"
    return "not in the grid"


def _profiles(df):
    """[(relative name, profile, in-grid note)] for every trace file of the trace directory."""
    ok = _ok(df)
    root = trace_root(df)
    ran = [str(Path(p).relative_to(root)) for p in _paths(ok) if str(p).startswith(str(root))]
    full = studies.get("hwb").trace_files()
    min_pages = int(ok["buffer.capacity_pages"].min()) if len(ok) else 0
    profiles = {rel: profile(str(root / rel)) for rel in trace_files(root)}
    return [(rel, p, _left_out(rel, p, ran, full, min_pages, profiles)) for rel, p in profiles.items()]


def _profile_figure(rows):
    rows = [(rel, p) for rel, p, _ in rows if isinstance(p, dict) and p["written_pages"] > 0]
    if not rows:
        return None
    with F.style():
        fig = F._new_figure(7.6, 0.8 + 0.24 * len(rows))
        share_ax, writes_ax = fig.subplots(1, 2, sharey=True)
        y = np.arange(len(rows))
        left = np.zeros(len(rows))
        h = 0.8 / len(CLASSES)
        for i, c in enumerate(CLASSES):
            share = np.array([p["page_classes"][c]["share"] for _, p in rows])
            writes = [p["page_classes"][c]["writes_mean"] or np.nan for _, p in rows]
            style = {**F.series_style(i, bars=True), "linewidth": 0.4, "zorder": 3}
            share_ax.barh(y, share, left=left, height=0.7, label=c.upper(), **style)
            writes_ax.barh(y - 0.4 + h * (i + 0.5), writes, height=h, **style)
            left += share
        share_ax.set_yticks(y, [Path(rel).name for rel, _ in rows])
        share_ax.invert_yaxis()
        share_ax.set_xlim(0, 1)
        share_ax.set_xlabel("share of written pages")
        share_ax.grid(axis="y", visible=False)
        writes_ax.set_xscale("log")
        writes_ax.set_xlabel("writes per page (mean)")
        writes_ax.grid(axis="y", visible=False)
        fig.legend(loc="outside upper center", ncols=len(CLASSES))
    return F._finish(fig)


def _profile_table(rows) -> str:
    head = ["trace", "write requests", "written pages", "page writes", "F if written ≥"]
    head += [f"{c.upper()} share / writes per page" for c in CLASSES] + ["buffer grid"]
    body = []
    for rel, p, note in rows:
        if isinstance(p, str):
            cells = [rel] + ["—"] * (len(head) - 2) + [note]
        else:
            pc = p["page_classes"]
            cells = [
                rel,
                f"{p['write_requests']:,}",
                f"{p['written_pages']:,}",
                f"{p['page_writes']:,}",
                f"{pc['frequent_writes']}",
            ]
            cells += [f"{pc[c]['share']:.2%} / {pc[c]['writes_mean']:.2f}" if pc[c]["pages"] else "—" for c in CLASSES]
            cells.append(note)
        body.append(text_row(cells))
    return table(head, body)


def _trace_figure(part, name):
    with F.style():
        fig = F._new_figure(2 * F.PANEL[0] + 1.3, 2 * F.PANEL[1])
        axs = list(fig.subplots(2, 2).flat)
    for ax, (metric, _) in zip(axs, METRICS, strict=True):
        F.line(part, x="buffer.bytes", y=metric, by="buffer.kind", logx=True, ax=ax, legend=False)
        _dash_reads(ax)
        if metric in (MEAN, P99) and ax.get_lines():  # bars (one buffer size) keep a linear axis
            ax.set_yscale("log")
    with F.style():
        F._legend(axs[1], "buffer.kind")  # the policies' own styles, before _dodge marks repeats
    for ax in axs:
        _dodge(ax)
    fig.suptitle(name, fontsize=8)
    return F._finish(fig)


def _dash_reads(ax) -> None:
    """Draw a policy's "reads cached" line as its write-only line's colour and marker, dashed and
    hollow (the palette would otherwise give it another policy's colour)."""
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    bars = {c.get_label(): c for c in ax.containers}  # one buffer size: drawn as bars
    for kind, label in READS.items():
        if label in lines and kind in lines:
            base, ln = lines[kind], lines[label]
            ln.set(color=base.get_color(), marker=base.get_marker(), linestyle="--", markerfacecolor="white")
        if label in bars and kind in bars:
            colour = bars[kind].patches[0].get_facecolor()
            for patch in bars[label].patches:
                patch.set(facecolor="white", edgecolor=colour, hatch="////")


DODGE = 0.07  # octaves between a policy's points and those of an earlier policy they repeat


def _dodge(ax) -> None:
    """Keep policies that coincide visible (LRU-WSR and CFLRU without read caching are LRU on most
    traces, the integrated buffer is CLC on a page-mapped FTL): a line with points where an earlier
    policy's points are is drawn a little to the right along the (log) buffer-size axis, DODGE
    octaves per earlier policy it meets there, dotted, with larger hollow markers."""
    drawn = []
    for ln in [ln for ln in ax.get_lines() if ln.get_label() in NAMES]:
        xs, ys = np.asarray(ln.get_xdata(), float), np.asarray(ln.get_ydata(), float)
        meets = max(
            (
                sum(any(np.isclose(x, px) and np.isclose(y, py, rtol=1e-9) for px, py in pts) for pts in drawn)
                for x, y in zip(xs, ys, strict=True)
            ),
            default=0,
        )
        drawn.append(list(zip(xs, ys, strict=True)))
        if meets:
            ln.set(markerfacecolor="none", markersize=1.5 * ln.get_markersize(), markeredgewidth=1.2, linestyle=":")
            ln.set_xdata(xs * 2 ** (meets * DODGE))


def _same(part, a, b) -> bool:
    """Whether policies `a` and `b` gave the same metrics in every cell of `part`."""
    x = part[part["buffer.kind"] == a].set_index("buffer.bytes")
    y = part[part["buffer.kind"] == b].set_index("buffer.bytes")
    if not len(x) or len(x) != len(y):
        return False
    cols = [HIT, ERASES, MEAN, P99]
    return bool((x[cols].sort_index().to_numpy() == y[cols].sort_index().to_numpy()).all())


def figures(df):
    ok = _ok(df)
    out = []
    for path in _paths(ok):
        part = ok[ok["workload.path"] == path]
        lines = part["buffer.bytes"].nunique() > 1  # one buffer size: bars
        notes = ""
        if (part["gc.victims"] == 0).all():
            notes += " GC never ran on this trace (its writes fit in the spare blocks): no erases."
        same = [NAMES[k] for k in ("lru-wsr", "cflru") if _same(part, "lru", k)]
        if same:
            notes += (
                f" {' and '.join(same)} without read caching {'are' if len(same) > 1 else 'is'} LRU here: "
                f"their {'lines repeat' if lines else 'bars equal'} LRU's" + "."
            )
        if _same(part, "clc", "integrated"):
            notes += (
                f" The integrated buffer's {'line repeats' if lines else 'bar equals'} CLC's: on a page-mapped FTL "
                "(no log blocks) it chooses as CLC."
            )
        against = (
            "(log scale) against buffer size, one line per policy (one whose points repeat another's is drawn a "
            "little to the right, dotted, with larger hollow markers)"
            if lines
            else "one bar per policy"
        )
        out.append(
            (
                f"{Path(str(path)).name}: write hit ratio, block erases, mean and p99 write response time "
                f"{against}.{notes}",
                _trace_figure(part, Path(str(path)).name),
            )
        )
    if len(ok):
        ref = ref_bytes(ok)
        at = ok[ok["buffer.bytes"].astype(int) == ref]
        at = at.copy()
        at["trace"] = at["workload.path"].map(short)
        if "lru" in set(at["buffer.kind"]):
            for metric, what in METRICS:
                fig = F.normalized_bars(at, x="trace", y=metric, by="buffer.kind", baseline="lru")
                out.append(
                    (
                        f"At {ref >> 20} MiB (the seed's 32 MB): {what} normalised to LRU's on each trace "
                        "(no bars: LRU's value is 0)",
                        fig,
                    )
                )
    fig = _profile_figure(_profiles(df))
    if fig is not None:
        out.append(
            (
                "Seed 003 Fig 1 analogue, every trace file that writes: the shares of FS, FL, IS and IL pages "
                "(frequently / infrequently updated × short / long re-use distance) and their mean writes per page",
                fig,
            )
        )
    return out


def _values_table(at) -> str:
    head = [
        "trace",
        "policy",
        "write hit ratio",
        "mean occupancy (pages)",
        "erases",
        "mean write response (µs)",
        "p99 write response (µs)",
        "GC victims",
        "die busy",
        "requests in the device (mean)",
    ]
    body = []
    for path in _paths(at):
        part = at[at["workload.path"] == path]
        for _, r in part.iterrows():
            cells = [
                short(path),
                str(r["buffer.kind"]),
                f"{r[HIT]:.4f}",
                f"{r[OCC]:,.0f} of {r['buffer.capacity_pages']:,.0f}",
                f"{r[ERASES]:,.0f}",
                f"{r[MEAN]:,.1f}",
                f"{r[P99]:,.0f}",
                f"{r['gc.victims']:,.0f}",
                f"{r['util.die.mean']:.1%}",
                f"{r['queue.mean_outstanding']:,.2f}",
            ]
            body.append(
                "<tr>"
                + "".join(f"<td{NUM if i > 1 else ''}>{html.escape(c)}</td>" for i, c in enumerate(cells))
                + "</tr>"
            )
    return table(head, body)


def sections(df):
    ok = _ok(df)
    out = []
    if len(ok):
        at, ref = _at_ref(df)
        out.append(
            (
                f"Measured at {ref >> 20} MiB",
                "<p>Every policy on every trace at the claims' buffer size (mean occupancy: pages held after each "
                "write request, averaged; die busy: the die's mean utilisation over the replay; requests in the "
                "device: time-averaged). LRU-WSR and CFLRU hold written pages only; the rows “reads cached” run "
                "them with read caching, where a write to a page cached clean for a read is not a write hit.</p>"
                + _values_table(at),
            )
        )
    prows = _profiles(df)
    if prows:
        out.append(
            (
                "Trace profile: FS / FL / IS / IL pages (seed 003 Fig 1)",
                "<p>Every trace file of the trace directory, profiled by <code>ssdlab.trace_profile</code>: a "
                "written page is <i>frequently</i> updated (F) when written at least the column F's number of "
                "times (more often than the mean over written pages), else <i>infrequently</i> (I); its re-use "
                "distance (distinct pages written between two writes of it, averaged) is <i>short</i> (S) below "
                "8,192 pages (32 MiB, the seed's buffer), else <i>long</i> (L); a page written once is long. The "
                "seed takes the classes from another paper without their thresholds: these are the profile's "
                "(docs/traces.md). For comparison the seed's Fig 1(a): Exchange 5 / 4 / 50 / 41 %, stg1 "
                "35 / 47 / 1 / 17 % (FS / FL / IS / IL). The last column says why a file is not in the buffer "
                "grid.</p>" + _profile_table(prows),
            )
        )
    return out
