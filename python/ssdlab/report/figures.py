"""Paper-style figures of study results (matplotlib, Agg canvas, no pyplot state).

Every function takes the results DataFrame of a study (one row per cell: a column per dotted
configuration key, a column per metric, `status`), plots only the rows with `status == "ok"` (all
rows when there is no `status` column) and returns the matplotlib `Figure`. Write it with
`save(fig, "out/name")` (PNG at 200 dpi + SVG, or PDF).

Nothing is averaged unless asked. When cells share the plotted coordinates because another
configuration key varies too (say `ftl.gc`), the figure gets one panel per value of that key (a
ValueError naming it when drawing into a given `ax`, or beyond MAX_PANELS panels); pass
`mean_over=["ftl.gc"]` to average over it instead, and the figure says so ("mean over ftl.gc").
`agg="mean"` averages over whatever varies (and says so too). Filter the DataFrame first to plot one
slice. Each figure's title names the workload and device of its cells (`subtitle`); metrics are
labelled in words with their unit, times in seconds (`ssdlab.describe.METRICS`).

Figures are built on matplotlib's Agg canvas directly (no pyplot), so importing this module does not
change the global backend and the figures need no `plt.close`.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from .. import describe

# Okabe & Ito's colour-blind-safe palette (yellow last: it is faint on white).
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
LINESTYLES = ["-", "--", ":", "-."]
HATCHES = ["", "////", "....", "xxxx"]  # the bars' stand-in for LINESTYLES

PANEL = (3.5, 2.6)  # inches, one single-column panel
DPI = 200
FORMATS = ("png", "svg", "pdf")

STYLE = {
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Liberation Sans", "Arial", "Helvetica"],
    "mathtext.fontset": "dejavusans",
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.title_fontsize": 7,
    "legend.frameon": False,
    "axes.grid": True,
    "axes.axisbelow": True,
    "grid.color": "#cccccc",
    "grid.linewidth": 0.5,
    "grid.alpha": 0.8,
    "axes.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": "#333333",
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "xtick.major.size": 3,
    "ytick.major.size": 3,
    "lines.linewidth": 1.3,
    "lines.markersize": 4,
    "axes.formatter.limits": (-4, 5),
    "savefig.dpi": DPI,
    "svg.hashsalt": "ssdlab",
    "pdf.fonttype": 42,
}

MAX_PANELS = 12  # more panels than this is an error asking for a filter or mean_over

_SIZE_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([KMGT]?)(i?B?)\s*$", re.IGNORECASE)
_SIZE_MULT = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


# ----------------------------------------------------------------------------------------------
# helpers


def series_style(i: int, bars: bool = False, dense: bool = False) -> dict:
    """The style of a figure's i-th series, the one rule of every figure: colour i mod 8, line style
    (bars: hatch) i div 8, marker i + i div 8 mod 8. The first 32 series differ pairwise in colour
    or line style, and a series differs from the one sharing its colour in marker too (series 0
    and 8: blue circles, solid; blue squares, dashed). Keyword arguments of `Axes.plot` (`bars`:
    of `Axes.bar`); `dense`: a line of many points, with a marker every tenth of its length."""
    n = len(PALETTE)
    color = PALETTE[i % n]
    if bars:
        hatch = HATCHES[(i // n) % len(HATCHES)] or None
        # a hatch is drawn in the edge colour: white on a dark bar, where dark grey would not show
        dark = hatch and _luminance(color) < 0.4
        return {"color": color, "hatch": hatch, "edgecolor": "white" if dark else "#222222"}
    style = {"color": color, "linestyle": LINESTYLES[(i // n) % len(LINESTYLES)], "marker": MARKERS[(i + i // n) % n]}
    if dense:
        style["markevery"] = 0.1
    return style


def _luminance(color) -> float:
    from matplotlib.colors import to_rgb

    r, g, b = to_rgb(color)
    return 0.299 * r + 0.587 * g + 0.114 * b


@contextmanager
def style():
    """The rcParams of these figures (use it around your own additions to match them)."""
    import matplotlib

    with matplotlib.rc_context(STYLE):
        yield


def _new_figure(width: float = PANEL[0], height: float = PANEL[1]):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


@contextmanager
def panel(width: float = PANEL[0], height: float = PANEL[1]):
    """A new figure of one axes, drawn in `style()`: `with panel(w, h) as (fig, ax): ...` (a study's
    own figure; finish it with `_legend(ax)` and `_finish(fig, ax)` as the figures here do)."""
    with style():
        fig = _new_figure(width, height)
        yield fig, fig.add_subplot()


def panel_title(ax, text: str) -> None:
    """The small title of one panel (say which FTL, trace or buffer size it shows)."""
    ax.set_title(text, fontsize=8)


def bar_offsets(n: int, width: float = 0.8) -> tuple[list[float], float]:
    """`n` bars side by side in a group `width` wide centred on its x: each bar's offset from that
    x, and the bars' width."""
    w = width / n
    return [-width / 2 + w * (i + 0.5) for i in range(n)], w


def grouped_bars(ax, groups: Sequence[str], series: Sequence[tuple[str, Sequence[float]]], ticks=None, **bar) -> None:
    """A group of bars per name in `groups` (its x tick, with the tick options `ticks`), a bar per
    (label, heights) of `series` in `series_style` order; `bar` goes to every `ax.bar` (say zorder)."""
    offsets, w = bar_offsets(len(series))
    xs = np.arange(len(groups))
    for i, ((text, ys), off) in enumerate(zip(series, offsets, strict=True)):
        ax.bar(xs + off, ys, w, label=text, linewidth=0.4, **series_style(i, bars=True), **bar)
    ax.set_xticks(xs, groups, **(ticks or {}))


is_bytes_key = describe.is_bytes_key


def parse_size(v: Any) -> float:
    """4096, "4096", "4KiB", "4 MiB", "1G" -> bytes (float); anything else -> ValueError."""
    if isinstance(v, bool):
        raise ValueError(f"not a size: {v!r}")
    if isinstance(v, (int, float, np.integer, np.floating)):
        return float(v)
    m = _SIZE_RE.match(str(v))
    if not m:
        raise ValueError(f"not a size: {v!r}")
    return float(m.group(1)) * _SIZE_MULT[m.group(2).upper()]


def format_bytes(v: float) -> str:
    """1048576 -> "1 MiB", 1572864 -> "1.5 MiB", 512 -> "512 B"."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "nan"
    return describe.size(float(v))


def format_value(key: str, v: Any) -> str:
    """A configuration value as a label: sizes in KiB/MiB/GiB, paths by file name, numbers short."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if is_bytes_key(key):
        try:
            return format_bytes(parse_size(v))
        except ValueError:
            return str(v)
    if key.endswith(".path") or key.endswith("_path"):
        return Path(str(v)).name or str(v)
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.6g}"
    if isinstance(v, np.integer):
        return str(int(v))
    return str(v)


def label(key: str) -> str:
    """An axis label for a dotted key: words, with the unit the value is shown in."""
    if key in describe.PARAMS:
        return describe.PARAMS[key]
    if key not in describe.METRICS and is_bytes_key(key):
        return key
    return describe.metric_label(key)


def scale(key: str) -> float:
    """What a metric's values are divided by on a figure (1e6 for µs shown in s); 1 for config keys."""
    if key in describe.PARAMS or (key not in describe.METRICS and is_bytes_key(key)):
        return 1.0
    return describe.metric_unit(key)[2]


def ok_rows(df, columns: Iterable[str] = ()):
    """The rows with status "ok" (every row without a status column); checks that `columns` exist
    and that some row remains."""
    _check_columns(df, columns)
    if "status" in df.columns:
        df = df[df["status"] == "ok"]
    if len(df) == 0:
        raise ValueError("no rows with status 'ok' to plot")
    return df


def ok_cells(df, **columns):
    """A copy of the rows with status "ok" (every row without a status column), possibly none, with
    a column per keyword computed from each row by its function (a study's own labels of a cell)."""
    ok = (df[df["status"] == "ok"] if "status" in df.columns else df).copy()
    if len(ok):
        for name, of in columns.items():
            ok[name] = ok.apply(of, axis=1)
    return ok


def _check_columns(df, columns: Iterable[str], where: str = "the results") -> None:
    for c in columns:
        if c is not None and c not in df.columns:
            names = [k for k in df.columns if isinstance(k, str)]
            near = difflib.get_close_matches(c, names, n=3, cutoff=0.6) or [k for k in names if c in k][:3]
            hint = f" (similar: {', '.join(near)})" if near else ""
            raise ValueError(f"column `{c}` not in {where}{hint}")


def _numeric(series, key: str) -> np.ndarray:
    """A column as floats; sizes given as "4MiB" are parsed for byte keys."""
    out = []
    for v in series:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            out.append(math.nan)
        elif is_bytes_key(key):
            out.append(parse_size(v))
        elif isinstance(v, (bool, np.bool_)):
            out.append(float(v))
        else:
            try:
                out.append(float(v))
            except (TypeError, ValueError):
                raise ValueError(f"column `{key}` is not numeric (value {v!r}); plot categories as bars") from None
    return np.asarray(out, dtype=float)


def is_numeric_column(df, key: str) -> bool:
    try:
        _numeric(df[key].dropna(), key)
        return True
    except ValueError:
        return False


def _ordered_values(series, key: str) -> list:
    """Distinct values: ascending for numbers and sizes, first appearance for categories."""
    seen: dict = {}
    for v in series:
        if _norm(v) != ("<missing>",):
            seen.setdefault(_norm(v), v)
    values = list(seen.values())
    if is_numeric_column(series.to_frame(key), key):
        return sorted(values, key=lambda v: _numeric([v], key)[0])
    return values


def _norm(v):
    """A hashable stand-in for a cell value: NaN and None are one value; lists by their repr."""
    if v is None or (isinstance(v, (float, np.floating)) and math.isnan(v)):
        return ("<missing>",)
    if isinstance(v, np.generic):
        v = v.item()
    try:
        hash(v)
    except TypeError:
        return ("<repr>", repr(v))
    return v


def _same(a, b) -> bool:
    return _norm(a) == _norm(b)


def _aggregate(df, keys: Sequence[str], y: str) -> dict[tuple, tuple[float, int]]:
    """{tuple of key values: (mean of y, number of cells)} in first-appearance order (the cells of
    a point are only several where `split` decided to average)."""
    groups: dict[tuple, tuple[tuple, list[int]]] = {}
    for i, key_vals in enumerate(zip(*(df[k] for k in keys), strict=True)):
        groups.setdefault(tuple(_norm(v) for v in key_vals), (key_vals, []))[1].append(i)
    ys = df[y].to_numpy(dtype=float)
    out = {}
    for key_vals, rows in groups.values():
        vals = ys[rows]
        finite = vals[~np.isnan(vals)]
        out[tuple(key_vals)] = (float(finite.mean()) if finite.size else math.nan, len(rows))
    return out


@functools.cache
def _config_keys() -> frozenset[str]:
    """Every configuration key (the dotted keys of the default configuration)."""
    import json

    from .._core import default_config
    from ..frames import flatten

    return frozenset(flatten(json.loads(default_config())))


def axes_of(cell_axes: Any) -> dict:
    """A cell's `axes` entry (a JSON string or a dict) as a dict; {} when absent or malformed."""
    import json

    if isinstance(cell_axes, Mapping):
        return dict(cell_axes)
    if isinstance(cell_axes, str) and cell_axes.strip():
        try:
            d = json.loads(cell_axes)
        except ValueError:
            return {}
        return d if isinstance(d, dict) else {}
    return {}


def select(df, filters: Mapping[str, Any]):
    """The rows where each column equals the given value (or one of a list of values). Numbers
    given as strings ("0.1") and sizes ("4MiB" for a byte column) match their numeric values.
    The rows remember the filter (`attrs["filters"]`): the figures drawn from them name it in their
    title (`selection_note`)."""
    mask = np.ones(len(df), dtype=bool)
    chosen: dict[str, list] = dict((getattr(df, "attrs", {}) or {}).get("filters") or {})
    for col, want in filters.items():
        _check_columns(df, [col])
        wants = list(want) if isinstance(want, (list, tuple, set)) else [want]
        hit = np.zeros(len(df), dtype=bool)
        for w in wants:
            hit |= np.array([_matches(v, w, col) for v in df[col]], dtype=bool)
        mask &= hit
        chosen[col] = wants
    out = df[mask]
    out.attrs = {**df.attrs, "filters": chosen}
    return out


def selection_note(df) -> str | None:
    """The filter that chose `df`'s rows (`select`), as a figure says it: "cells with buffer.bytes =
    4 MiB, buffer.kind = lru or arc"; None for rows chosen otherwise."""
    filters = (getattr(df, "attrs", {}) or {}).get("filters") or {}
    if not filters:
        return None
    parts = []
    for col, wants in filters.items():
        parts.append(f"{col} = {' or '.join(format_value(col, w) for w in wants)}")
    return "cells with " + ", ".join(parts)


def _matches(v: Any, want: Any, key: str) -> bool:
    if _same(v, want) or str(v) == str(want):
        return True
    try:
        a = _numeric([v], key)[0]
        b = parse_size(want) if is_bytes_key(key) else float(want)
    except (TypeError, ValueError):
        return False
    return bool(math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0))


def _dups(df, keys: Sequence[str]) -> bool:
    """Whether two rows share the values of `keys`."""
    seen = set()
    for vals in zip(*(df[k] for k in keys), strict=True) if keys else [() for _ in range(len(df))]:
        t = tuple(_norm(v) for v in vals)
        if t in seen:
            return True
        seen.add(t)
    return False


def _candidates(df) -> list[str]:
    """Configuration columns that may explain cells sharing plotted coordinates: the study's axes
    first, then every other configuration column."""
    attrs = getattr(df, "attrs", {})
    axes = list(attrs.get("axes") or [])
    if "axes" in df.columns:
        axes += [k for a in df["axes"] for k in axes_of(a)]
    config = list(attrs.get("config_columns") or [c for c in df.columns if c in _config_keys()])
    return [c for c in dict.fromkeys(axes + config) if c in df.columns]


def split(df, plotted: Sequence[str | None], mean_over: Iterable[str] = (), agg: str | None = None):
    """Which other keys vary among cells that share the `plotted` coordinates: ([panel keys],
    [averaged keys]). Keys in `mean_over` are averaged; the others become panels. With agg="mean"
    every such key is averaged."""
    if agg not in ("mean", None):
        raise ValueError(f"agg must be 'mean' or None, not {agg!r}")
    mean_over = list(mean_over or ())
    _check_columns(df, mean_over)
    explained = [k for k in plotted if k]
    panels: list[str] = []
    averaged: list[str] = []
    # Greedily, the fewest keys that tell apart the cells sharing a point (derived columns such as
    # the logical size that follows the footprint are not named).
    for c in mean_over + [c for c in _candidates(df) if c not in mean_over]:
        if not _dups(df, explained):
            break
        if c in explained or not _varies_within(df, explained, c):
            continue
        explained.append(c)
        (averaged if (c in mean_over or agg == "mean") else panels).append(c)
    if _dups(df, explained):  # no configuration column tells them apart (e.g. other ssdlab versions)
        averaged.append("cells with equal configurations")
    return panels, averaged


def _varies_within(df, keys: Sequence[str], c: str) -> bool:
    groups: dict = {}
    points = zip(*(df[k] for k in keys), strict=True) if keys else [()] * len(df)
    for vals, v in zip(points, df[c], strict=True):
        groups.setdefault(tuple(_norm(x) for x in vals), set()).add(_norm(v))
    return any(len(g) > 1 for g in groups.values())


def subtitle(df) -> str:
    """What the cells of `df` simulate, from their configuration columns: the workload and device
    facts they all share, e.g. "uniform, 64 MiB footprint, 2,000 requests · 64 MiB logical, 4 KiB pages"."""
    cols = [
        c for c in df.columns if isinstance(c, str) and c.count(".") == 1 and c.split(".")[0] in ("workload", "device")
    ]
    cfgs: dict[str, dict] = {}  # the distinct configurations (cells of a grid share most)
    for rec in df[cols].to_dict("records"):
        cfg: dict = {}
        for c, v in rec.items():
            sec, key = c.split(".")
            cfg.setdefault(sec, {})[key] = v.item() if isinstance(v, np.generic) else v
        cfgs.setdefault(repr(cfg), cfg)
    # Several flows (`flows.<i>.workload.kind` columns): each flow's workload, not [workload]'s.
    kinds = sorted(c for c in df.columns if isinstance(c, str) and re.fullmatch(r"flows\.\d+\.workload\.kind", c))
    if kinds:
        flows = [
            {"workload": {"kind": _common(df, c), "path": _common(df, c.replace(".kind", ".path"))}} for c in kinds
        ]
        for cfg in cfgs.values():
            cfg.pop("workload", None)
            if all(f["workload"]["kind"] for f in flows):
                cfg["flows"] = flows
    return subtitle_of(*cfgs.values())


def _common(df, column: str):
    """The value every cell has in `column` (None: they differ, or no such column)."""
    if column not in df.columns:
        return None
    values = {str(v) for v in df[column]}
    return values.pop() if len(values) == 1 else None


def subtitle_of(*configs: Mapping) -> str:
    """The workload and device facts common to every configuration (resolved dicts)."""
    parts = []
    for fn in (describe.workload_parts, describe.device_parts):
        each = [fn(c) for c in configs] or [[]]
        parts.append(", ".join(p for p in each[0] if all(p in e for e in each[1:])))
    return " · ".join(p for p in parts if p)


def _figure(
    df,
    plotted,
    draw,
    ax,
    mean_over,
    agg,
    width: float,
    height: float,
    legend_labels: Sequence[str] = (),
    legend_title: str | None = None,
    sharey: bool = True,
    logy: bool = False,
):
    """Draw `draw(part, ax)` once, or once per panel when other keys vary (see `split`); give the
    figure one legend of `legend_labels` (right of the panels: never over the data, never cut
    off; none when empty) and title it with the cells' workload and device, the filter that chose
    them (`select`) and what was averaged. `width` and `height` are one panel's; `plotted[-1]` is
    the `by` key (or None); `sharey`: one y scale for all panels; `logy`: a logarithmic one."""
    ok = ok_rows(df, [k for k in plotted if k])
    panels, averaged = split(ok, plotted, mean_over, agg)
    given = ax is not None
    no_by = plotted[-1] is None
    if panels and given:
        raise ValueError(_vary_message(ok, panels, suggest_by=no_by))
    combos: dict = {(): ((), list(range(len(ok))))}
    if panels:
        combos = {}
        for i, vals in enumerate(zip(*(ok[k] for k in panels), strict=True)):
            combos.setdefault(tuple(_norm(v) for v in vals), (vals, []))[1].append(i)
        if len(combos) > MAX_PANELS:
            raise ValueError(_vary_message(ok, panels, f" ({len(combos)} panels is too many)", suggest_by=no_by))
    # panels in the order of each key's values (ascending numbers, else first appearance)
    order = {k: [_norm(v) for v in _ordered_values(ok[k], k)] for k in panels}
    keys = sorted(combos, key=lambda t: tuple(order[k].index(v) for k, v in zip(panels, t, strict=True)))
    labels = list(legend_labels)
    if given:
        fig, axs, ncols = ax.figure, [ax], 1
    else:
        fig, axs, ncols = _panel_grid(len(keys), width, height, labels, legend_title, sharey=sharey)
    for n, (t, a) in enumerate(zip(keys, axs, strict=True)):
        vals, rows = combos[t]
        draw(ok.iloc[rows], a)
        if logy:
            log_scale(a, "y")
        if panels:
            a.set_title(", ".join(f"{k} = {format_value(k, v)}" for k, v in zip(panels, vals, strict=True)), fontsize=7)
            if n % ncols:
                a.set_ylabel("")
    if labels and len(axs) == 1:
        _legend(axs[0], legend_title)
    elif labels:
        figure_legend(fig, legend_title, order=labels)
    note = f"mean over {', '.join(averaged)}" if averaged else None
    if given:  # the caller's figure: only the note, on the axes
        if note:
            ax.set_title(note, fontsize=7, color="#555555")
    else:
        right = legend_size(labels, legend_title, fig.get_figheight())[1]
        _suptitle(fig, subtitle(ok), selection_note(ok), note, right=right)
    return _finish(fig, *axs)


def _panel_grid(
    n: int, width: float, height: float, labels: Sequence[str] = (), title: str | None = None, sharey: bool = True
):
    """A figure of n panels (`width` x `height` inches each, three to a row, sharing y unless told
    not to) with room for a legend of `labels` on the right: (figure, axes, columns)."""
    ncols = min(3, n)
    nrows = math.ceil(n / ncols)
    fig_height = max(height * nrows, min(_legend_height(len(labels), title), 2 * height * nrows))
    legend_width = legend_size(labels, title, fig_height)[1]
    fig = _new_figure(width * ncols + legend_width, fig_height)
    axs = fig.subplots(nrows, ncols, squeeze=False, sharey=sharey and n > 1)
    for j in range(n, nrows * ncols):
        axs[j // ncols][j % ncols].set_visible(False)
    return fig, [axs[i // ncols][i % ncols] for i in range(n)], ncols


def _suptitle(fig, *lines: str | None, right: float = 0.0) -> None:
    """The figure's grey title, each line wrapped to the width of the panels (a long subtitle
    centred on a narrow figure would be cut off at both sides) and centred over them, clear of a
    legend `right` inches wide beside them."""
    import textwrap

    width = max(fig.get_figwidth() - right, 1.0)
    chars = max(20, int(width * 72 / (7 * 0.58)))  # 7 pt text, ~0.58 em a character
    # a number stays on the line of its unit ("4 KiB", "2,000 requests"): held together by a
    # no-break space while wrapping, a plain one again after
    text = "\n".join(
        textwrap.fill(re.sub(r"(\d) (?=\S)", "\\1\u00a0", t), chars).replace("\u00a0", " ") for t in lines if t
    )
    if text:
        fig.suptitle(text, fontsize=7, color="#555555", x=width / 2 / fig.get_figwidth())


def _vary_message(df, keys: Sequence[str], extra: str = "", suggest_by: bool = False) -> str:
    shown = "; ".join(f"{k} takes {', '.join(format_value(k, v) for v in _ordered_values(df[k], k))}" for k in keys)
    first = keys[0]
    by = f"one line per value with --by {first}, " if suggest_by else ""
    return (
        f"cells at the same point differ in {', '.join(keys)} ({shown}){extra}: {by}choose one with "
        f"--filter {first}=VALUE, or average with --mean-over {first}"
    )


LEGEND_ROW = 0.17  # inches per legend entry (7 pt text)


def _legend_height(n: int, title: str | None) -> float:
    """Inches a one-column legend of n entries needs."""
    return 0.3 + LEGEND_ROW * (n + (1 if title else 0)) if n else 0.0


def legend_size(labels: Sequence[str], title: str | None, height: float) -> tuple[int, float]:
    """(columns, width in inches) of a legend of `labels` beside panels `height` inches tall: as
    many columns as its entries need to fit that height."""
    labels = [str(s) for s in labels]
    if not labels:
        return 0, 0.0
    rows = max(1, int((height - 0.3 - (LEGEND_ROW if title else 0)) / LEGEND_ROW))
    ncols = math.ceil(len(labels) / rows)
    return ncols, max(ncols * _legend_width(labels, None), _legend_width([], title))


def _handles(axes, order: Sequence[str] = ()) -> tuple[list, list[str]]:
    """The legend entries of `axes`, one per label, in the order of `order` (then first seen)."""
    found: dict[str, Any] = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            found.setdefault(lab, h)
    rank = {lab: i for i, lab in enumerate(order)}
    labels = sorted(found, key=lambda lab: rank.get(lab, len(rank)))
    return [found[lab] for lab in labels], labels


def figure_legend(fig, title: str | None = None, order: Sequence[str] = (), axes=None):
    """One legend for the figure's panels (or `axes`), right of them: the layout engine makes room
    for it, so it is never over the data nor cut off; as many columns as the figure's height
    needs. Entries in the order of `order` (labels), then as first drawn. Returns the Legend."""
    handles, labels = _handles(axes if axes is not None else fig.axes, order)
    if not handles:
        return None
    ncols = legend_size(labels, title, fig.get_figheight())[0]
    with style():  # the legend's text sizes are read when it is made, also outside style()
        return fig.legend(handles, labels, title=title, loc="outside right upper", ncols=ncols)


def _legend(ax, title: str | None = None) -> None:
    """A legend right of `ax` (outside the data; the layout engine makes room for it)."""
    handles, labels = _handles([ax])
    if handles:
        ncols = legend_size(labels, title, ax.figure.get_figheight())[0]
        with style():
            ax.legend(
                handles,
                labels,
                title=title,
                loc="upper left",
                bbox_to_anchor=(1.02, 1.0),
                borderaxespad=0.0,
                ncols=ncols,
            )


def legend_right(ax, title: str | None = None) -> None:
    """A legend right of `ax` (never over the data), its figure widened to hold it."""
    fig = ax.figure
    width = legend_size(_handles([ax])[1], title, fig.get_figheight())[1]
    fig.set_size_inches(fig.get_figwidth() + width, fig.get_figheight())
    _legend(ax, title)


def _legend_width(labels: Iterable[str], title: str | None) -> float:
    longest = max([len(s) for s in labels] + [len(title or "")], default=0)
    return 0.45 + 0.055 * longest


def _format_bytes_axis(ax, xs: Sequence[float], logx: bool) -> None:
    from matplotlib.ticker import FuncFormatter, NullLocator

    if logx:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_minor_locator(NullLocator())
    ticks = sorted({x for x in xs if not math.isnan(x)})
    if 0 < len(ticks) <= 10:
        ax.set_xticks(ticks)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: format_bytes(v)))


def log_scale(ax, which: str = "x") -> None:
    """A logarithmic x (or y) axis labelled in plain numbers ("50", "100", "2000", not "2×10³");
    over less than two decades the 2s and 5s between the powers of ten are labelled too, over less
    than one every tick."""
    from matplotlib.ticker import FuncFormatter

    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    limits = ax.get_xlim if which == "x" else ax.get_ylim

    def minor(v: float, _pos) -> str:
        lo, hi = sorted(limits())
        text = f"{v:g}"
        if lo <= 0 or hi / lo >= 100:
            return ""
        return text if hi / lo < 10 or text.lstrip("0.")[:1] in ("2", "5") else ""

    axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    axis.set_minor_formatter(FuncFormatter(minor))


def calibration_progress(trial, error, best):
    """A calibration's progress: each trial's error (points) and the best so far (a step), in %,
    on a log scale; `trial`, `error`, `best` are sequences of the same length (failed trials'
    errors NaN)."""
    with style():
        fig = _new_figure(PANEL[0] * 1.6, PANEL[1])
        ax = fig.add_subplot()
        ax.scatter(trial, [e * 100 for e in error], s=6, color=PALETTE[5], label="trial", zorder=2)
        ax.step(trial, [b * 100 for b in best], where="post", color=PALETTE[0], label="best")
        log_scale(ax, "y")
        ax.set_xlabel("trial")
        ax.set_ylabel("error (%)")
        ax.legend(loc="upper right")
        return _finish(fig, ax)


def _finish(fig, *axes):
    """Fix the tick and grid style on `axes` (default: all), so that the figure keeps its look when it is
    drawn outside `style()` (ticks are created lazily, at draw time, from the rcParams then).
    Large values get a "×10ⁿ" offset rather than "1e7"."""
    from matplotlib.ticker import ScalarFormatter

    for ax in axes or fig.axes:
        fmt = ax.yaxis.get_major_formatter()
        lo, hi = ax.get_ylim()
        if isinstance(fmt, ScalarFormatter) and max(abs(lo), abs(hi)) >= 10 ** STYLE["axes.formatter.limits"][1]:
            fmt.set_useMathText(True)
        ax.tick_params(
            labelsize=STYLE["xtick.labelsize"],
            width=STYLE["xtick.major.width"],
            length=STYLE["xtick.major.size"],
            color=STYLE["axes.edgecolor"],
            grid_color=STYLE["grid.color"],
            grid_linewidth=STYLE["grid.linewidth"],
            grid_alpha=STYLE["grid.alpha"],
        )
    return fig


def _target(ax, width: float, height: float, labels: Sequence[str] = (), title: str | None = None):
    """`ax` and its figure, or a new one-panel figure with room for a legend of `labels`."""
    if ax is not None:
        return ax.figure, ax
    fig, axs, _ = _panel_grid(1, width, height, labels, title)
    return fig, axs[0]


# ----------------------------------------------------------------------------------------------
# figures


def line(
    df,
    x: str,
    y: str,
    by: str | None = None,
    logx: bool = False,
    ax=None,
    overlay: tuple | None = None,
    agg: str | None = None,
    legend: bool = True,
    mean_over: Iterable[str] = (),
    logy: bool = False,
    sharey: bool = True,
):
    """A metric `y` against a numeric parameter `x`, one line (with markers) per value of `by`.

    Byte-size x keys (`*_bytes`, `*.bytes`; ints or "4MiB" strings) get KiB/MiB/GiB tick labels
    (and base-2 log scale with `logx`). `overlay=(xs, ys, label)` adds a dashed reference line
    (an analytic curve, say), in the units of the data (x in `x`'s, y in `y`'s own unit, e.g. µs for
    a `*_us` metric shown in seconds): it is scaled as the data are. Other varying keys make panels, or are averaged
    when in `mean_over` (see the module's docstring). Lines come in the order of the `by` values
    (ascending numbers, else first appearance); each line's x data ascend. Values are shown in the
    metric's reading unit (`scale`). `logx`, `logy`: logarithmic axes; `sharey=False`: each panel
    its own y scale. Draws into `ax` if given. Returns the Figure.
    """
    ok = ok_rows(df, [x, y, by])
    if overlay is None and len(_ordered_values(ok[x], x)) == 1:
        # One x value makes no line: bars (a group at that value, a bar per `by` value) read better.
        return _bars(df, x, y, by, agg=agg, ax=ax, legend=legend, mean_over=mean_over, logy=logy, sharey=sharey)
    with style():
        ok = ok.assign(**{x: _numeric(ok[x], x) / scale(x), y: ok[y].to_numpy(dtype=float) / scale(y)})
        by_values = _ordered_values(ok[by], by) if by else [None]
        legend_labels = [format_value(by, v) for v in by_values] if by else []
        if overlay is not None:
            legend_labels.append(str(overlay[2]))

        def draw(part, ax):
            groups = _aggregate(part, [x] + ([by] if by else []), y)
            for i, bv in enumerate(by_values):
                # (x, mean y), x ascending; cells without an x value are left out
                pts = sorted(
                    (g[0], m) for g, (m, _n) in groups.items() if (by is None or _same(g[1], bv)) and g[0] == g[0]
                )
                ax.plot(
                    [p[0] for p in pts],
                    [p[1] for p in pts],
                    label=format_value(by, bv) if by else None,
                    clip_on=False if len(pts) < 50 else True,
                    zorder=3,
                    **series_style(i, dense=len(pts) >= 50),
                )
            _overlay(ax, overlay, x, y)
            if is_bytes_key(x):
                _format_bytes_axis(ax, list(part[x]), logx)
            elif logx:
                log_scale(ax)
            ax.set_xlabel(label(x))
            ax.set_ylabel(label(y))

        labels = legend_labels if legend else []
        return _figure(ok, [x, by], draw, ax, mean_over, agg, PANEL[0], PANEL[1], labels, by, sharey, logy)


def _overlay(ax, overlay: tuple | None, x: str, y: str) -> None:
    """The dashed grey reference line (xs, ys, label) of `line` and `series`, in the data's units."""
    if overlay is not None:
        oxs, oys, olabel = overlay
        ax.plot(
            [float(v) / scale(x) for v in oxs],
            [float(v) / scale(y) for v in oys],
            color="#555555",
            linestyle="--",
            linewidth=1.0,
            label=str(olabel),
            zorder=2,
        )


def bars(
    df,
    x: str,
    y: str,
    by: str | None = None,
    agg: str | None = None,
    ax=None,
    legend: bool = True,
    mean_over: Iterable[str] = (),
    logy: bool = False,
    sharey: bool = True,
):
    """Grouped bars: a group per value of `x` (a category or a few numbers), a bar per value of `by`.

    `ax.patches` holds the bars `by`-major: all bars of the first `by` value (one per x, in x
    order), then the next. A missing (x, by) combination is a bar of height NaN (not drawn). Other
    varying keys make panels, or are averaged when in `mean_over`; `logy`: a logarithmic y axis;
    `sharey=False`: each panel its own. Returns the Figure.
    """
    return _bars(df, x, y, by, agg=agg, ax=ax, legend=legend, mean_over=mean_over, logy=logy, sharey=sharey)


def normalized_bars(
    df,
    x: str,
    y: str,
    by: str,
    baseline: Any,
    agg: str | None = None,
    ax=None,
    legend: bool = True,
    mean_over: Iterable[str] = (),
    logy: bool = False,
    sharey: bool = True,
):
    """Grouped bars of `y` divided by the value of the `baseline` value of `by` at the same x
    (e.g. elapsed time normalised to the no-buffer case, against the number of log blocks).

    The baseline's own bars (all 1) are drawn too, and a dashed line marks 1. `baseline` may be
    given as a string ("4MiB", "0.1") matching a numeric column. Where the baseline is missing or
    zero at some x, that group's bars are NaN. `logy` and `sharey` as for `bars`. Returns the Figure.
    """
    return _bars(
        df, x, y, by, agg=agg, ax=ax, legend=legend, baseline=baseline, mean_over=mean_over, logy=logy, sharey=sharey
    )


def _match_baseline(values: list, by: str, baseline: Any):
    """The value of `by` the baseline names: equal, equal as text, or equal as a number/size."""
    for v in values:
        if _same(v, baseline) or str(v) == str(baseline):
            return v
    for v in values:
        if _matches(v, baseline, by):
            return v
    shown = ", ".join(format_value(by, v) for v in values)
    raise ValueError(f"baseline {baseline!r} is not a value of column `{by}` (values: {shown})")


def _bars(df, x, y, by, agg, ax, legend, baseline=None, mean_over=(), logy=False, sharey=True):
    _sentinel = object()
    with style():
        ok = ok_rows(df, [x, y, by])
        ok = ok.assign(**{y: ok[y].to_numpy(dtype=float) / scale(y)})
        x_values = _ordered_values(ok[x], x)
        by_values = _ordered_values(ok[by], by) if by else [_sentinel]
        base_v = _match_baseline(by_values, by, baseline) if baseline is not None else None
        legend_labels = [format_value(by, v) for v in by_values] if (by and legend) else []
        width = max(PANEL[0], 0.9 + 0.22 * len(x_values) * len(by_values) ** 0.5)

        def draw(part, ax):
            groups = _aggregate(part, [x] + ([by] if by else []), y)

            def value(xv, bv):
                for g, (m, _n) in groups.items():
                    if _same(g[0], xv) and (by is None or _same(g[1], bv)):
                        return m
                return math.nan

            n = len(by_values)
            w = 0.8 / n
            pos = np.arange(len(x_values), dtype=float)
            for i, bv in enumerate(by_values):
                heights = []
                for xv in x_values:
                    v = value(xv, bv)
                    if base_v is not None:
                        b = value(xv, base_v)
                        v = v / b if (b and not math.isnan(b)) else math.nan
                    heights.append(v)
                ax.bar(
                    pos - 0.4 + w * (i + 0.5),
                    heights,
                    width=w,
                    linewidth=0.4,
                    **series_style(i, bars=True),
                    label=format_value(by, bv) if by else None,
                    zorder=3,
                )
            ax.set_xticks(pos)
            rotate = sum(len(format_value(x, v)) for v in x_values) > 6 * len(x_values) + 10
            ax.set_xticklabels(
                [format_value(x, v) for v in x_values], rotation=30 if rotate else 0, ha="right" if rotate else "center"
            )
            ax.grid(axis="x", visible=False)
            ax.set_xlabel(label(x))
            if base_v is not None:
                ax.axhline(1.0, color="#555555", linestyle="--", linewidth=0.8, zorder=2)
                ax.set_ylabel(f"{label(y)}\nnormalised to {format_value(by, base_v)}")
            else:
                ax.set_ylabel(label(y))

        return _figure(ok, [x, by], draw, ax, mean_over, agg, width, PANEL[1], legend_labels, by, sharey, logy)


def cdf(
    samples: Mapping[str, Any],
    xlabel: str,
    logx: bool = False,
    ax=None,
    legend: bool = True,
    title: str | Sequence[str | None] | None = None,
):
    """Empirical CDFs, one step line per label: y = fraction of samples <= x.

    Line i's data are the sorted finite samples and (1..n)/n. NaNs are dropped; a label whose
    samples are all NaN or empty raises ValueError. `title`: the grey title's lines on a new
    figure (say `subtitle(df)` and `selection_note(df)`). Returns the Figure.
    """
    if not isinstance(samples, Mapping) or not samples:
        raise ValueError("cdf: samples must be a non-empty dict {label: values}")
    with style():
        data = {}
        for name, vals in samples.items():
            arr = np.asarray(list(vals) if not hasattr(vals, "__array__") else vals, dtype=float).ravel()
            arr = np.sort(arr[~np.isnan(arr)])
            if arr.size == 0:
                raise ValueError(f"cdf: no finite samples for `{name}`")
            data[str(name)] = arr
        labels = list(data) if (legend and len(data) > 1) else []
        given = ax is not None
        fig, ax = _target(ax, PANEL[0], PANEL[1], labels)
        for i, (name, arr) in enumerate(data.items()):
            ys = np.arange(1, arr.size + 1) / arr.size
            ax.plot(
                arr,
                ys,
                drawstyle="steps-post",
                label=name,
                zorder=3,
                **series_style(i, dense=arr.size > 12),
            )
        if logx:
            log_scale(ax)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("fraction ≤ x (CDF)")
        if labels:
            _legend(ax)
        lines = [title] if isinstance(title, str) else list(title or [])
        if lines and not given:
            _suptitle(fig, *lines, right=legend_size(labels, None, fig.get_figheight())[1])
        return _finish(fig, ax)


def samples_by(df, y: str, by: str | None = None) -> dict[str, np.ndarray]:
    """{label: values of metric y} over the ok cells, one entry per value of `by` (for cdf())."""
    ok = ok_rows(df, [y, by])
    if by is None:
        return {label(y): ok[y].to_numpy(dtype=float) / scale(y)}
    return {
        format_value(by, v): ok[[_same(b, v) for b in ok[by]]][y].to_numpy(dtype=float) / scale(y)
        for v in _ordered_values(ok[by], by)
    }


def series_of(v):
    """A cell's time series (DataFrame, {column: values} or its JSON) as a DataFrame, or None."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    from ..frames import series_frame

    if isinstance(v, str):
        import json

        v = json.loads(v)
    frame = series_frame(v) if isinstance(v, Mapping) else v
    return frame if len(frame) else None


def series(
    df,
    y: str,
    x: str = "requests",
    logx: bool = False,
    ax=None,
    legend: bool = True,
    by: str | None = None,
    mean_over: Iterable[str] = (),
    logy: bool = False,
    sharey: bool = True,
    overlay: tuple | None = None,
):
    """Time series (`run.sample_every`): column `y` of each ok cell's `series` against column `x`
    (default `requests`), one line per value of `by`. Cells without a series are left out; none
    at all is a ValueError. As for `line`, other varying keys make panels, or are averaged when in
    `mean_over` (the mean over the cells at the x values all of them sampled); `overlay=(xs, ys,
    label)` adds a dashed reference line (in the legend too); `logx`, `logy`: logarithmic axes;
    `sharey=False`: each panel its own y scale. Returns the Figure."""
    with style():
        ok, frames, by_values = _cells_with(
            df, "series", series_of, by, "no cell has a time series: set run.sample_every in the study"
        )
        for f in frames:
            _check_columns(f, [x, y], "the time series")

        def draw(part, ax):
            for i, rows in enumerate(_rows_by(part, by, by_values)):
                if rows:
                    xs, ys = _mean_series([frames[r] for r in rows], x, y)
                    text = format_value(by, by_values[i]) if by else None
                    ax.plot(xs / scale(x), ys / scale(y), label=text, zorder=3, **series_style(i, dense=len(xs) > 12))
            _overlay(ax, overlay, x, y)
            if logx:
                log_scale(ax)
            ax.set_xlabel(label(x))
            ax.set_ylabel(label(y))

        labels = [format_value(by, v) for v in by_values] if by else []
        if overlay is not None:
            labels.append(str(overlay[2]))
        labels = labels if legend else []
        return _figure(ok, [by], draw, ax, mean_over, None, PANEL[0], PANEL[1], labels, by, sharey, logy)


_ROW = "__row"  # a column holding each kept cell's index into the parsed series or histograms


def _cells_with(df, column: str, parse, by: str | None, missing: str):
    """The ok cells of `df` whose `column` parses (`parse(value)` is not None), with a `_ROW`
    column indexing their parsed values; those values; and the values of `by` in order. No cell
    parsing is a ValueError(`missing`)."""
    ok = ok_rows(df, [column, by])
    parsed = [parse(v) for v in ok[column]]
    keep = [i for i, p in enumerate(parsed) if p is not None]
    if not keep:
        raise ValueError(missing)
    ok = ok.iloc[keep].assign(**{_ROW: range(len(keep))})
    by_values = _ordered_values(ok[by], by) if by else [None]
    return ok, [parsed[i] for i in keep], by_values


def _rows_by(part, by: str | None, by_values: list) -> list[list[int]]:
    """For each value of `by`, the `_ROW` indices of `part`'s cells with it."""
    keys = part[by] if by else [None] * len(part)
    return [[r for r, b in zip(part[_ROW], keys, strict=True) if by is None or _same(b, bv)] for bv in by_values]


def _mean_series(frames: list, x: str, y: str) -> tuple[np.ndarray, np.ndarray]:
    """Column y against x of one series, or the mean of several at the x values all of them have."""
    import pandas as pd

    cols = [pd.Series(f[y].to_numpy(dtype=float), index=f[x].to_numpy(dtype=float)) for f in frames]
    if len(cols) == 1:
        return cols[0].index.to_numpy(), cols[0].to_numpy()
    joined = pd.concat([c[~c.index.duplicated()] for c in cols], axis=1, join="inner").sort_index()
    if joined.empty:
        raise ValueError(f"cannot average these time series: they share no value of `{x}`")
    return joined.index.to_numpy(), joined.mean(axis=1).to_numpy()


def histogram_of(v, name: str):
    """A cell's distribution `name` from its `histograms` (dict or JSON) as (values, counts)
    arrays, or None when the cell has none."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, str):
        import json

        v = json.loads(v)
    pairs = v.get(name) if isinstance(v, Mapping) else None
    if not pairs:
        return None
    arr = np.asarray(pairs, dtype=float)
    return arr[:, 0], arr[:, 1]


def distribution_cdf(
    df,
    name: str,
    tail: bool = False,
    logx: bool = False,
    ax=None,
    legend: bool = True,
    by: str | None = None,
    mean_over: Iterable[str] = (),
):
    """CDFs of a stored distribution (`Result.histograms`, e.g. timed mode's `latency.read_ns`,
    drawn in µs), one step line per value of `by`. `tail`: the upper tail on a logit axis from
    0.9 to 0.9999, where p99 and p99.99 are read. As for `line`, other varying keys make panels,
    or are averaged when in `mean_over` (the mean of the cells' CDFs). Cells without the
    distribution are left out; none at all is a ValueError. Returns the Figure."""
    with style():
        ok, hists, by_values = _cells_with(
            df,
            "histograms",
            lambda v: histogram_of(v, name),
            by,
            f'no cell has the distribution `{name}` (timed mode: run.mode = "timed")',
        )

        def draw(part, ax):
            drawn = [(i, rows) for i, rows in enumerate(_rows_by(part, by, by_values)) if rows]
            curves = [
                (format_value(by, by_values[i]) if by else None, *_mean_cdf([hists[r] for r in rows]))
                for i, rows in drawn
            ]
            # a value of `by` keeps its style in every panel, also where another lacks a curve
            _draw_cdfs(ax, curves, name, tail, logx, styles=[i for i, _rows in drawn])

        labels = [format_value(by, v) for v in by_values] if (by and legend) else []
        return _figure(ok, [by], draw, ax, mean_over, None, PANEL[0], PANEL[1], labels, by)


def _mean_cdf(hists: list) -> tuple[np.ndarray, np.ndarray]:
    """(values, CDF) of one histogram (values, counts), or the mean of several histograms' CDFs
    at the union of their values."""
    xs = np.unique(np.concatenate([v for v, _c in hists]))
    total = np.zeros(xs.size)
    for values, counts in hists:
        order = np.argsort(values)
        cum = np.cumsum(counts[order]) / counts.sum()
        at = np.searchsorted(values[order], xs, side="right") - 1
        total += np.where(at >= 0, cum[np.maximum(at, 0)], 0.0)
    return xs, total / len(hists)


def _draw_cdfs(ax, curves, name: str, tail: bool, logx: bool, styles: Sequence[int] | None = None) -> None:
    """Step lines of (label, values, CDF) curves of distribution `name` (ns drawn in µs), curve k
    in `series_style(styles[k])` (default k)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    to_us = 1e-3 if name.endswith("_ns") else 1.0
    for k, (text, values, cdf_) in enumerate(curves):
        i = styles[k] if styles is not None else k
        ax.plot(
            values * to_us,
            cdf_,
            drawstyle="steps-post",
            label=text,
            zorder=3,
            **series_style(i, dense=len(values) > 12),
        )
    if logx:
        log_scale(ax)
    ax.set_xlabel(distribution_label(name))
    if tail:
        ax.set_yscale("logit")
        ax.set_ylim(0.9, 0.9999)
        ax.yaxis.set_major_locator(FixedLocator([0.9, 0.99, 0.999, 0.9999]))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:.4g}"))
        ax.yaxis.set_minor_locator(NullLocator())
        ax.set_ylabel("fraction ≤ x (CDF tail)")
    else:
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("fraction ≤ x (CDF)")


def distribution_label(name: str) -> str:
    """An axis label for a stored distribution: `latency.read_ns` -> "read latency (µs)",
    `flow.1.latency.read_ns` -> "flow 1: read latency (µs)"."""
    m = re.fullmatch(r"flow\.(\d+)\.(latency\..*)", name)
    if m:
        return f"flow {m.group(1)}: {distribution_label(m.group(2))}"
    if name.startswith("latency."):
        what = name.removeprefix("latency.").removesuffix("_ns").removesuffix("_us")
        return f"{'request' if what == 'all' else what} latency (µs)"
    return name


LATENCY_DISTRIBUTIONS = ("latency.read_ns", "latency.write_ns")


def flow_distributions(histograms: Mapping[str, Any]) -> list[str]:
    """Each flow's read and write latency distributions, in flow order (none: one flow)."""
    flows = sorted({int(k.split(".")[1]) for k in histograms if re.fullmatch(r"flow\.\d+\.latency\..*_ns", k)})
    return [f"flow.{i}.{n}" for i in flows for n in LATENCY_DISTRIBUTIONS]


def latency_cdf(histograms: Mapping[str, Any], config: Mapping | None = None, names: Sequence[str] = ()):
    """One run's latency distributions (`Result.histograms`; default: reads and writes, those
    with requests), one line each: the whole distribution on a log axis beside its tail (0.9 to
    0.9999, logit axis); a run of several flows (`[[flows]]`), each flow's reads and writes.
    `config` (the resolved configuration) titles it. Returns the Figure."""
    names = list(names) or flow_distributions(histograms) or list(LATENCY_DISTRIBUTIONS)
    curves = []
    for n in names:
        pairs = histograms.get(n)
        if pairs:
            arr = np.asarray(pairs, dtype=float)
            if arr[:, 1].sum() > 0:
                curves.append((distribution_label(n).removesuffix(" (µs)"), *_mean_cdf([(arr[:, 0], arr[:, 1])])))
    if not curves:
        shown = ", ".join(names)
        raise ValueError(f'no latency distribution ({shown}) in this result: run it timed (run.mode = "timed")')
    with style():
        labels = [c[0] for c in curves]
        fig, axs, _ = _panel_grid(2, PANEL[0], PANEL[1], labels, sharey=False)
        for ax, tail in zip(axs, (False, True), strict=True):
            _draw_cdfs(ax, curves, "latency.all_ns", tail, logx=not tail)
            ax.set_xlabel("latency (µs)")
        figure_legend(fig, order=labels)
        if config:
            _suptitle(fig, subtitle_of(config), right=legend_size(labels, None, fig.get_figheight())[1])
        return _finish(fig, *axs)


def heatmap(
    df,
    x: str,
    y: str,
    value: str,
    agg: str | None = None,
    ax=None,
    cmap: str = "viridis",
    mean_over: Iterable[str] = (),
    share_scale: bool = True,
):
    """A metric `value` over two parameters: columns = values of `x`, rows = values of `y`, each
    cell coloured and annotated with its value (blank where no cell ran). `ax.images[0]` holds the
    grid (rows in the order of the `y` values, first row at the top). Other varying keys make
    panels, or are averaged when in `mean_over`; the panels share one colour scale and one colour
    bar, unless `share_scale=False` (each panel its own). Returns the Figure."""
    with style():
        ok = ok_rows(df, [x, y, value])
        ok = ok.assign(**{value: ok[value].to_numpy(dtype=float) / scale(value)})
        xv = _ordered_values(ok[x], x)
        yv = _ordered_values(ok[y], y)
        grids: list[tuple[Any, np.ndarray]] = []  # (axes, grid) of each panel, coloured once all are known

        def draw(part, ax):
            groups = _aggregate(part, [x, y], value)
            grid = np.full((len(yv), len(xv)), math.nan)
            for (gx, gy), (m, _n) in groups.items():
                i = next(i for i, v in enumerate(yv) if _same(v, gy))
                j = next(j for j, v in enumerate(xv) if _same(v, gx))
                grid[i, j] = m
            grids.append((ax, grid))
            ax.grid(False)
            for side in ("top", "right"):
                ax.spines[side].set_visible(True)
            ax.set_xticks(range(len(xv)))
            ax.set_xticklabels([format_value(x, v) for v in xv])
            ax.set_yticks(range(len(yv)))
            ax.set_yticklabels([format_value(y, v) for v in yv])
            ax.set_xlabel(label(x))
            ax.set_ylabel(label(y))

        width = max(PANEL[0], 1.6 + 0.55 * len(xv))
        height = max(PANEL[1], 1.0 + 0.3 * len(yv))
        fig = _figure(ok, [x, y], draw, ax, mean_over, agg, width, height)
        every = np.concatenate([g[~np.isnan(g)] for _ax, g in grids])
        images = []
        for a, grid in grids:
            finite = every if share_scale else grid[~np.isnan(grid)]
            lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
            images.append(_heat_cells(a, grid, cmap, lo, hi))
            if not share_scale:
                _colorbar(fig, images[-1], [a], value)
        if share_scale:
            _colorbar(fig, images[0], [a for a, _g in grids], value)
        return fig


def _heat_cells(ax, grid: np.ndarray, cmap: str, lo: float, hi: float):
    """The grid's image on colour scale lo..hi, each cell annotated in a colour readable on it."""
    im = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, aspect="auto", interpolation="nearest", vmin=lo, vmax=hi)
    cmap_obj = im.get_cmap()
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            v = grid[i, j]
            if math.isnan(v):
                continue
            dark = _luminance(cmap_obj((v - lo) / (hi - lo) if hi > lo else 0.5)[:3]) < 0.5
            ax.text(j, i, short_number(v), ha="center", va="center", fontsize=6.5, color="white" if dark else "black")
    return im


def _colorbar(fig, im, axes: list, value: str) -> None:
    cb = fig.colorbar(im, ax=axes, shrink=0.9)
    cb.set_label(label(value))
    cb.outline.set_linewidth(0.5)
    _finish(fig, cb.ax)


def short_number(v: float) -> str:
    """A compact cell annotation: 3 significant digits, k/M/G for large magnitudes."""
    if math.isnan(v):
        return ""
    a = abs(v)
    for div, suf in ((1e9, "G"), (1e6, "M"), (1e4, "k")):
        if a >= div:
            return f"{v / (div if suf != 'k' else 1e3):.3g}{suf}"
    return f"{v:.3g}"


# ----------------------------------------------------------------------------------------------
# output


def save(fig, path_stem: str | Path, formats: Sequence[str] = ("png", "svg"), close: bool = False) -> list[Path]:
    """Write `fig` as PATH_STEM.png (200 dpi) and .svg and/or .pdf; returns the written paths.

    A known extension on `path_stem` ("fig.png") is dropped; dots elsewhere are kept ("waf.vs.op").
    """
    if isinstance(formats, str):
        formats = [f for f in formats.split(",") if f]
    bad = [f for f in formats if f.lower() not in FORMATS]
    if bad or not formats:
        raise ValueError(f"figure format {', '.join(bad) or '(none)'}: expected some of {', '.join(FORMATS)}")
    stem = Path(path_stem)
    if stem.suffix.lower().lstrip(".") in FORMATS:
        stem = stem.with_suffix("")
    stem.parent.mkdir(parents=True, exist_ok=True)
    out = []
    with style():
        for fmt in formats:
            p = stem.parent / f"{stem.name}.{fmt.lower()}"
            meta = {"Software": "ssdlab"} if fmt.lower() == "png" else {"Creator": "ssdlab", "Date": None}
            if fmt.lower() == "pdf":
                meta = {"Creator": "ssdlab", "CreationDate": None}
            fig.savefig(p, format=fmt.lower(), dpi=DPI, metadata=meta)
            out.append(p)
    if close:
        close_figure(fig)
    return out


def figure_path(path: str | Path) -> tuple[Path, str]:
    """The file a figure written to `path` goes to, and its format: the one its extension names
    (.png, .svg, .pdf), PNG added to a name without one; any other extension ("x.bmp") is a
    ValueError naming the formats (check a path before a long run with it)."""
    p = Path(path)
    ext = p.suffix.lower().lstrip(".")
    if ext in FORMATS:
        return p, ext
    if ext:
        shown = ", ".join(f".{f}" for f in FORMATS)
        raise ValueError(f"{p}: figure format .{ext} unknown: expected {shown} (or no extension: .png added)")
    return p.parent / f"{p.name}.png", "png"


def save_as(fig, path: str | Path) -> Path:
    """Write `fig` to one file, in the format its extension names (see `figure_path`). Returns the
    path written."""
    p, fmt = figure_path(path)
    return save(fig, p, formats=[fmt])[0]


DENSE_POINTS = 1000  # a line or collection with more points is an image inside an embedded SVG
EMBED_DPI = 150


def svg_bytes(fig, dpi: int = EMBED_DPI) -> bytes:
    """The figure as compact SVG for embedding in a page: text as text (in the page's fonts of the
    same families, not as glyph outlines), lines and collections of more than DENSE_POINTS points
    drawn as one image at `dpi` (a CDF of thousands of steps costs more as vectors than as
    pixels), everything else as vectors."""
    import io

    import matplotlib

    for ax in fig.axes:
        for artist in [*ax.lines, *ax.collections]:
            points = len(artist.get_xydata()) if hasattr(artist, "get_xydata") else len(artist.get_offsets())
            if points > DENSE_POINTS:
                artist.set_rasterized(True)
    buf = io.BytesIO()
    with style(), matplotlib.rc_context({"svg.fonttype": "none"}):
        engine = fig.get_layout_engine()
        if engine is not None:
            # Lay the figure out once, then draw it once: savefig would draw it twice (a dry run
            # for the layout, then the output), and drawing is most of a report's time.
            engine.execute(fig)
            fig.set_layout_engine("none")
        fig.savefig(buf, format="svg", dpi=dpi, metadata={"Creator": "ssdlab", "Date": None})
        if engine is not None:
            fig.set_layout_engine(engine)
    return buf.getvalue()


def close_figure(fig) -> None:
    """Release a figure (also removes it from pyplot if it was made there)."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        plt.close(fig)
    fig.clear()
