"""One self-contained HTML report per study: `write_report(study_dir) -> Path`.

The report embeds its figures as SVG data URIs (text as text, dense lines as images) and its CSS
inline, loads nothing from elsewhere (a Content-Security-Policy forbids it) and opens offline. A
small script checks, once the page has loaded, that every image decoded, and sets the document
title to "ssdlab report: N figures OK" or "ssdlab report: BROKEN IMAGES".
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import math
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import figures as F

TABLE_METRICS = ["waf", "nand.erases", "buffer.page_hit_ratio", "time.nand_serial_us"]
FIGURE_METRICS = ["waf", "nand.erases", "buffer.page_hit_ratio"]
MAX_LINES = 20  # a `by` axis with more values is not used for lines (F.series_style: distinct up to 32)
MAX_PANELS = 6  # a facet axis with more values is not used for panels

FigureList = list[tuple[str, Any]]
FiguresArg = Callable[[Any], Iterable[tuple[str, Any]]] | Iterable[tuple[str, Any]] | None
SectionsArg = Callable[[Any], Iterable[tuple[str, str]]] | Iterable[tuple[str, str]] | None


# ----------------------------------------------------------------------------------------------
# inputs


def load_results(study_dir: str | Path):
    """The study's results DataFrame through the results store (`ssdlab.load_results`, looked up
    when called: tests replace it)."""
    from .. import load_results as loader

    return loader(study_dir)


def read_study(study_dir: str | Path) -> tuple[dict, str]:
    """The study's spec from DIR/study.toml and its text ({} and "" when there is none)."""
    p = Path(study_dir) / "study.toml"
    if not p.is_file():
        return {}, ""
    text = p.read_text()
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{p}: {e}") from None


def axis_keys(df, spec: Mapping | None = None) -> list[str]:
    """The keys the study varied: `df.attrs["axes"]` (set by the results store), else the union of
    the `axes` column's keys, else study.toml's [axes] and [[zip]] tables."""
    keys: dict[str, None] = dict.fromkeys(getattr(df, "attrs", {}).get("axes") or [])
    if not keys and "axes" in df.columns:
        for a in df["axes"]:
            keys.update(dict.fromkeys(F.axes_of(a)))
    if not keys and spec:
        keys.update(dict.fromkeys(_spec_axes(spec)))
    return [k for k in keys if k in df.columns]


def _spec_axes(spec: Mapping) -> list[str]:
    out = list((spec.get("axes") or {}).keys())
    zips = spec.get("zip") or []
    for z in zips if isinstance(zips, list) else [zips]:
        if isinstance(z, Mapping):
            out += [k for k, v in z.items() if isinstance(v, list)]
    return out


# ----------------------------------------------------------------------------------------------
# default figures


def _distinct(series) -> int:
    return len({F._norm(v) for v in series})


def default_figures(df, axes: Sequence[str] | None = None, metrics: Sequence[str] = FIGURE_METRICS) -> FigureList:
    """For each numeric axis with at least two values, each key metric against it (lines); grouped
    bars against each categorical axis only when no axis is numeric. Of axes that vary together
    (zipped), the first stands for them.

    Nothing compared is averaged away. The lines (or bars) are the values of the axis with the
    most values, at most MAX_LINES (a categorical one first, a workload one last); the panels are
    the values of a workload axis (whose values often differ in scale), else of the next largest
    axis, at most MAX_PANELS; further axes split the panels too while the figure stays within
    F.MAX_PANELS panels, and only the axes that would not fit are averaged over (the caption says
    so). Metrics missing, all NaN or constant over the ok cells are skipped."""
    ok = df[df["status"] == "ok"] if "status" in df.columns else df
    if len(ok) == 0:
        return []
    keys = [k for k in (axes if axes is not None else axis_keys(df)) if k in ok.columns and _distinct(ok[k]) >= 2]
    plotted = []
    for m in metrics:
        if m in ok.columns:
            vals = ok[m].astype(float)
            if vals.notna().any() and vals.dropna().nunique() > 1:
                plotted.append(m)
    keys = _dimensions(ok, keys)
    numeric = {k: F.is_numeric_column(ok, k) for k in keys}
    # Each metric once against each numeric axis, the categorical axes its lines and panels (bars
    # against a categorical axis would show the same cells again); bars only without a numeric axis.
    xs = [k for k in keys if numeric[k]] or keys
    out: FigureList = []
    for x in xs:
        by, panels, mean_over = figure_axes(ok, x, [k for k in keys if k != x], numeric)
        # the panels the figure draws (an axis the others already tell apart makes none)
        panels = F.split(ok, [x, by], mean_over)[0]
        for m in plotted:
            fig = _draw(ok, x, m, by, panels, mean_over, numeric[x])
            what = "against" if numeric[x] else "by"
            caption = f"{F.label(m)} ({m}) {what} {x}"
            if by:
                caption += f", {'one line' if numeric[x] else 'one bar'} per {by}"
            if panels:
                caption += f"; one panel per {', '.join(panels)}"
            if mean_over:
                caption += f"; mean over {', '.join(mean_over)}"
            out.append((caption, fig))
    return out


def figure_axes(ok, x: str, others: Sequence[str], numeric: Mapping[str, bool]):
    """The roles of the axes `others` in a default figure against `x`: (the `by` axis of its lines
    or None, its panel axes, the axes averaged over), by the rule of `default_figures`."""
    n = {k: _distinct(ok[k]) for k in others}
    workload = [k for k in others if k.startswith("workload.") and n[k] <= MAX_PANELS]
    facet = workload[0] if workload and len(others) > 1 else None
    # The series: a categorical axis before a numeric one (against a numeric x), a workload axis
    # last, then the one with the most values (the comparison the study is about).
    candidates = sorted(
        (k for k in others if k != facet and n[k] <= MAX_LINES),
        key=lambda k: (numeric[k] and numeric[x], k.startswith("workload."), -n[k], others.index(k)),
    )
    by = candidates[0] if candidates else None
    rest = [k for k in others if k not in (by, facet)]
    if facet is None:
        fits = sorted((k for k in rest if n[k] <= MAX_PANELS), key=lambda k: (numeric[k], -n[k], rest.index(k)))
        facet = fits[0] if fits else None
    panels = [facet] if facet else []
    mean_over = []
    for k in sorted((k for k in rest if k != facet), key=lambda k: (n[k], rest.index(k))):
        if _combinations(ok, [*panels, k]) <= F.MAX_PANELS:
            panels.append(k)
        else:
            mean_over.append(k)
    # keep the study's order of the panel axes and of the averaged ones
    return by, sorted(panels, key=others.index), sorted(mean_over, key=others.index)


def _combinations(ok, keys: Sequence[str]) -> int:
    return len({tuple(F._norm(v) for v in vals) for vals in zip(*(ok[k] for k in keys), strict=True)})


def _dimensions(ok, keys: Sequence[str]) -> list[str]:
    """The keys less those whose values pair one-to-one with an earlier key's (zipped axes, such as
    ftl.gc with ftl.page.gc_free_blocks): a figure against either would be the same figure."""
    out: list[str] = []
    for k in keys:
        if not any(_one_to_one(ok, j, k) for j in out):
            out.append(k)
    return out


def _one_to_one(ok, a: str, b: str) -> bool:
    pairs = {(F._norm(u), F._norm(v)) for u, v in zip(ok[a], ok[b], strict=True)}
    return len(pairs) == len({p[0] for p in pairs}) == len({p[1] for p in pairs})


def _draw(ok, x: str, y: str, by: str | None, panels: Sequence[str], mean_over: Sequence[str], numeric_x: bool):
    """Lines (bars against a categorical x) of `y` per value of `by`, a panel per combination of
    `panels`, averaged over `mean_over`. Panels of a workload axis get y scales of their own (its
    values often differ in scale); other panels share one, so that they compare at a glance."""
    draw = F.line if numeric_x else F.bars
    kwargs = {"logx": F.is_bytes_key(x)} if numeric_x else {}
    sharey = not any(k.startswith("workload.") for k in panels)
    return draw(ok, x=x, y=y, by=by, mean_over=list(mean_over), sharey=sharey, **kwargs)


# ----------------------------------------------------------------------------------------------
# HTML pieces

CSS = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", Helvetica, Arial, sans-serif;
  color: #1d1d1f; background: #fff; margin: 0; line-height: 1.45; font-size: 15px; }
main { max-width: 1180px; margin: 0 auto; padding: 28px 32px 60px; }
h1 { font-size: 1.7em; margin: 0 0 .2em; }
h2 { font-size: 1.2em; margin: 2.2em 0 .6em; padding-bottom: .25em; border-bottom: 1px solid #ddd; }
h3 { font-size: 1em; margin: 1.4em 0 .4em; }
p.desc { max-width: 62em; margin: .4em 0 .8em; }
.meta { color: #555; font-size: .9em; }
nav { margin: 1em 0 0; font-size: .9em; }
nav a { margin-right: 1.1em; color: #0b62a4; text-decoration: none; }
.badge { display: inline-block; padding: 0 .5em; border-radius: 3px; font-size: .85em; font-weight: 600; }
.badge.ok { background: #e3f2e7; color: #1c6b34; } .badge.failed { background: #fbe4e1; color: #a1271b; }
.figs { display: flex; flex-wrap: wrap; gap: 26px 36px; align-items: flex-start; }
figure { margin: 0; flex: 0 1 auto; max-width: 100%; }
figure img { display: block; width: 100%; height: auto; }
figcaption { font-size: .86em; color: #333; margin-top: .35em; }
figcaption b { color: #000; }
.note { background: #fff8e1; border-left: 3px solid #e6a700; padding: .5em .8em; font-size: .9em; margin: .8em 0; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: .85em; margin: .4em 0 1em; }
th, td { padding: .28em .7em; border-bottom: 1px solid #e4e4e4; text-align: left; vertical-align: top; }
th { background: #f4f5f7; font-weight: 600; position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr:hover td { background: #fafbfc; }
td.nan { color: #999; text-align: right; }
td.err { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .92em; white-space: pre-wrap;
  color: #a1271b; max-width: 60em; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: .88em; }
pre { background: #f6f8fa; padding: .8em 1em; overflow-x: auto; border-radius: 4px; }
details summary { cursor: pointer; color: #0b62a4; margin: .6em 0; }
footer { margin-top: 3em; color: #777; font-size: .8em; }
"""

SCRIPT = """
window.addEventListener("load", function () {
  var imgs = document.images, bad = 0;
  for (var i = 0; i < imgs.length; i++) {
    if (!(imgs[i].complete && imgs[i].naturalWidth > 0)) { bad++; }
  }
  document.title = bad ? "ssdlab report: BROKEN IMAGES" : "ssdlab report: " + imgs.length + " figures OK";
});
"""

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'"


def esc(v: Any) -> str:
    return html.escape(str(v), quote=True)


def _is_nan(v: Any) -> bool:
    try:
        return v is None or (isinstance(v, float) and math.isnan(v)) or bool(v != v)
    except (TypeError, ValueError):
        return False


def _metric_cell(name: str, v: Any) -> str:
    if _is_nan(v):
        return '<td class="nan">—</td>'
    try:
        f = float(v)
    except (TypeError, ValueError):
        return f"<td>{esc(v)}</td>"
    if name.endswith("ratio") or name.endswith("waf"):
        text = f"{f:.4f}"
    elif f == int(f) and abs(f) < 1e15:
        text = f"{int(f):,}"
    else:
        text = f"{f:,.4g}" if abs(f) < 1e4 else f"{f:,.0f}"
    return f'<td class="num">{esc(text)}</td>'


def _config_cell(key: str, v: Any) -> str:
    text = F.format_value(key, v)
    full = str(v)
    title = f' title="{esc(full)}"' if full != text else ""
    numeric = isinstance(v, (int, float)) and not isinstance(v, bool)
    cls = ' class="num"' if numeric or F.is_bytes_key(key) else ""
    return f"<td{cls}{title}>{esc(text)}</td>"


def table(header: Sequence[str], rows: Iterable[str]) -> str:
    """A report table: `header` cells (escaped here) over `rows` (`<tr>` strings), scrolling sideways
    when wide."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'


def text_row(cells: Iterable[Any]) -> str:
    """A table row of text cells (escaped here)."""
    return "<tr>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>"


def plain_table(header: Sequence[str], rows: Iterable[str]) -> str:
    """A bare table (no header group, no scrolling): `header` cells (escaped here) over `rows`
    (`<tr>` strings)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def claim_row(claim: str, source: str, measured: str, holds: bool | None, why: str = "") -> str:
    """One row of a study's claim-by-claim table: the claim, what its source reports, what ssdlab
    measures, the verdict (holds / does not hold / not measured for None) and why."""
    verdict = {True: "holds", False: "does not hold", None: "not measured"}[holds]
    return (
        f"<tr><td>{esc(claim)}</td><td>{esc(source)}</td><td>{esc(measured)}</td>"
        f"<td><b>{verdict}</b></td><td>{esc(why)}</td></tr>"
    )


def _figure_html(i: int, caption: str, fig) -> str:
    # SVG (text as text, dense lines as an image): a fraction of a 200 dpi PNG's bytes and time,
    # sharp at any zoom. Shown at ~1.2x print size (115 CSS px per inch), never wider than the page.
    data = F.svg_bytes(fig)
    w, h = round(fig.get_figwidth() * 115), round(fig.get_figheight() * 115)
    uri = "data:image/svg+xml;base64," + base64.b64encode(data).decode("ascii")
    return (
        f'<figure id="fig{i}" style="width:{w}px"><img src="{uri}" alt="{esc(caption)}" width="{w}" '
        f'height="{h}"><figcaption><b>Figure {i}.</b> {esc(caption)}</figcaption></figure>'
    )


def _fmt_seconds(s: float) -> str:
    if _is_nan(s):
        return "—"
    s = float(s)
    if s < 120:
        return f"{s:.1f} s"
    m, sec = divmod(int(round(s)), 60)
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min {sec:02d} s" if h else f"{m} min {sec:02d} s"


def _unique(df, col: str) -> list:
    if col not in df.columns:
        return []
    return [v for v in dict.fromkeys(v for v in df[col] if not _is_nan(v) and v != "")]


def _provenance(df) -> str:
    rows = []

    def add(name: str, values: list, code: bool = False) -> None:
        if not values:
            text = '<span class="meta">not recorded</span>'
        else:
            text = ", ".join(f"<code>{esc(v)}</code>" if code else esc(v) for v in values)
        rows.append(f"<tr><th>{esc(name)}</th><td>{text}</td></tr>")

    add("ssdlab versions", _unique(df, "prov.ssdlab_version"))
    add("git revisions", _unique(df, "prov.git_revision"), code=True)
    add("hosts", _unique(df, "prov.host"))
    if "prov.wall_s" in df.columns:
        wall = df["prov.wall_s"].astype(float)
        total = _fmt_seconds(float(wall.sum())) if wall.notna().any() else "—"
        rows.append(
            f"<tr><th>total wall time</th><td>{esc(total)} over {int(wall.notna().sum())} cells"
            f" (longest cell {esc(_fmt_seconds(float(wall.max())))})</td></tr>"
            if wall.notna().any()
            else "<tr><th>total wall time</th><td>—</td></tr>"
        )
    finished = sorted(str(v) for v in _unique(df, "prov.finished_at"))
    if finished:
        span = finished[0] if len(finished) == 1 else f"{finished[0]} … {finished[-1]}"
        rows.append(f"<tr><th>finished</th><td>{esc(span)}</td></tr>")
    out = f"<table><tbody>{''.join(rows)}</tbody></table>"
    if "prov.trace_digest" in df.columns:
        by_path = "workload.path" in df.columns
        pairs = dict.fromkeys(
            (str(p) if by_path and not _is_nan(p) else "", str(d))
            for p, d in zip(df["workload.path"] if by_path else [""] * len(df), df["prov.trace_digest"], strict=True)
            if not _is_nan(d) and d != ""
        )
        if pairs:
            out += "<h3>Trace digests</h3>" + table(
                ["trace", "digest"],
                (f"<tr><td>{esc(p or '—')}</td><td><code>{esc(d)}</code></td></tr>" for p, d in pairs),
            )
    return out


def _toml_value(v: Any) -> str:
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + "}"
    return str(v)


def _kv_table(header: Sequence[str], items: Iterable[tuple[str, Any]]) -> str:
    return table(header, (f"<tr><td><code>{esc(k)}</code></td><td>{esc(_toml_value(v))}</td></tr>" for k, v in items))


def _configuration(spec: Mapping, text: str) -> str:
    from ..api import flatten

    parts = []
    base = flatten(spec.get("base") or {})
    if base:
        parts.append("<h3>Base configuration</h3>" + _kv_table(["key", "value"], base.items()))
    axes = spec.get("axes") or {}
    if axes:
        parts.append("<h3>Axes (the grid is their product)</h3>" + _kv_table(["key", "values"], axes.items()))
    zips = spec.get("zip") or []
    for i, z in enumerate(zips if isinstance(zips, list) else [zips], 1):
        if isinstance(z, Mapping):
            parts.append(f"<h3>Zipped axes {i} (varied together)</h3>" + _kv_table(["key", "values"], z.items()))
    if text:
        parts.append(f"<details><summary>study.toml</summary><pre>{esc(text)}</pre></details>")
    return "".join(parts) or '<p class="meta">No study.toml in the study directory.</p>'


def _cells_table(df, keys: Sequence[str]) -> str:
    metrics = [m for m in TABLE_METRICS if m in df.columns]
    header = ["#", *keys, *metrics, "status"]
    rows = []
    for n, (_, r) in enumerate(df.iterrows(), 1):
        status = str(r.get("status", "ok"))
        cls = "ok" if status == "ok" else "failed"
        rows.append(
            f'<tr><td class="num">{n}</td>'
            + "".join(_config_cell(k, r[k]) for k in keys)
            + "".join(_metric_cell(m, r[m]) for m in metrics)
            + f'<td><span class="badge {cls}">{esc(status)}</span></td></tr>'
        )
    return table(header, rows)


def _failed_table(failed, keys: Sequence[str]) -> str:
    rows = []
    for _, r in failed.iterrows():
        axes = F.axes_of(r.get("axes")) or {k: r[k] for k in keys}
        where = ", ".join(f"{k}={F.format_value(k, v)}" for k, v in axes.items()) or str(r.get("key", ""))
        rows.append(f'<tr><td>{esc(where)}</td><td class="err">{esc(r.get("error", ""))}</td></tr>')
    return table(["cell", "error"], rows)


# ----------------------------------------------------------------------------------------------
# the report


def write_report(
    study_dir: str | Path,
    out: str | Path | None = None,
    figures: FiguresArg = None,
    sections: SectionsArg = None,
    results=None,
    title: str | None = None,
) -> Path:
    """Write the study's report.html (into `study_dir`, or to `out`: a file, or a directory to hold
    report.html) and return its path.

    figures: None for the default figures (see `default_figures`), a callable `figures(df) ->
        [(caption, Figure)]` (a registered study's), or such a list.
    sections: optional free-form sections [(title, html)] (or a callable of df returning them),
        shown after the figures; their HTML is inserted as given, their titles are escaped.
    results: the results DataFrame; by default `ssdlab.load_results(study_dir)`.
    """
    study_dir = Path(study_dir)
    df = load_results(study_dir) if results is None else results
    spec, spec_text = read_study(study_dir)
    meta = spec.get("study") or {}
    name = title or meta.get("name") or study_dir.resolve().name
    description = meta.get("description", "")
    keys = axis_keys(df, spec)
    ok = df[df["status"] == "ok"] if "status" in df.columns else df
    failed = df[df["status"] != "ok"] if "status" in df.columns else df.iloc[0:0]

    if callable(figures):
        figs = list(figures(df))
    elif figures is not None:
        figs = list(figures)
    else:
        figs = default_figures(df, axes=keys)
    extra = list(sections(df) if callable(sections) else (sections or []))

    fig_html = []
    for i, (caption, fig) in enumerate(figs, 1):
        fig_html.append(_figure_html(i, str(caption), fig))
        F.close_figure(fig)
    if fig_html:
        figures_block = f'<div class="figs">{"".join(fig_html)}</div>'
    elif len(ok) == 0:
        figures_block = '<p class="note">No cell finished: nothing to plot.</p>'
    else:
        figures_block = '<p class="note">No figures: no axis of this study takes two or more values.</p>'

    from .._core import __version__

    now = _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    nav = ['<a href="#figures">Figures</a>']
    body = [
        f"<h1>{esc(name)}</h1>",
        f'<p class="desc">{esc(description)}</p>' if description else "",
        f'<p class="meta">{len(df)} cells: <span class="badge ok">{len(ok)} ok</span> '
        + (f'<span class="badge failed">{len(failed)} failed</span> ' if len(failed) else "")
        + f"· report generated {esc(now)} by ssdlab {esc(__version__)} from <code>{esc(study_dir)}</code></p>",
        "NAV",
        f'<section id="figures"><h2>Figures</h2>{figures_block}</section>',
    ]
    for j, (sec_title, sec_html) in enumerate(extra, 1):
        nav.append(f'<a href="#section{j}">{esc(sec_title)}</a>')
        body.append(f'<section id="section{j}"><h2>{esc(sec_title)}</h2>{sec_html}</section>')
    nav.append('<a href="#cells">Cells</a>')
    body.append(f'<section id="cells"><h2>Key metrics per cell</h2>{_cells_table(df, keys)}</section>')
    if len(failed):
        nav.append('<a href="#failed">Failed cells</a>')
        body.append(
            f'<section id="failed"><h2>Failed cells ({len(failed)})</h2>{_failed_table(failed, keys)}</section>'
        )
    nav += ['<a href="#configuration">Configuration</a>', '<a href="#provenance">Provenance</a>']
    body.append(f'<section id="configuration"><h2>Configuration</h2>{_configuration(spec, spec_text)}</section>')
    body.append(f'<section id="provenance"><h2>Provenance</h2>{_provenance(df)}</section>')
    body.append(f"<footer>ssdlab {esc(__version__)} · metric definitions: docs/metrics.md</footer>")
    body[body.index("NAV")] = f"<nav>{''.join(nav)}</nav>"

    doc = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>ssdlab report: {esc(name)}</title><style>{CSS}</style>"
        f"<script>{SCRIPT}</script></head>\n<body><main>\n"
        + "\n".join(b for b in body if b)
        + "\n</main></body></html>\n"
    )
    if out is None:
        path = study_dir / "report.html"
    else:
        path = Path(out)
        if path.is_dir():
            path = path / "report.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc, encoding="utf-8")
    return path
