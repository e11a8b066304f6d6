"""Figures that answer the question: every series its own style, default figures that keep the
compared axis, log and per-panel scales, the filter in the title, figure file formats, and the
layout of the hitstat2009 and real-device figures (ssdlab.report.figures, report.html, the CLI).

The results frames here are synthetic (the columns of the results store, made-up metric values)
except for the study figures, which are drawn from small runs of the studies' own grids.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
import ssdlab
from matplotlib.colors import to_hex
from ssdlab import cli
from ssdlab.report import figures as F
from ssdlab.report.html import default_figures

MiB = 1 << 20
BUFFERS = "none lru block-lru fab bplru clc integrated ref bpac fifo hitstat hitstat-adj cflru lru-wsr hwb".split()
SIZES = [1 * MiB, 4 * MiB, 16 * MiB]
FTLS = ["page", "bast"]
COMMON = {
    "workload.kind": "uniform",
    "workload.requests": 2000,
    "workload.footprint_bytes": 64 * MiB,
    "device.logical_bytes": 64 * MiB,
    "device.page_bytes": 4096,
    "device.pages_per_block": 128,
    "device.op": 0.07,
    "status": "ok",
}


def waf(ftl: int, kind: int, size: int, gc: int = 0) -> float:
    """A made-up metric that differs in every cell, so that an average would show."""
    return 1.0 + ftl + 0.1 * kind + 0.01 * size + 0.001 * gc


def frame(axes: dict[str, list]) -> pd.DataFrame:
    """A results frame over the product of `axes` (as the store returns it: attrs["axes"])."""
    rows = []
    for combo in itertools.product(*(list(enumerate(v)) for v in axes.values())):
        cell = {k: v for k, (_i, v) in zip(axes, combo, strict=True)}
        index = {k: i for k, (i, _v) in zip(axes, combo, strict=True)}
        rows.append(
            {
                **COMMON,
                **cell,
                "waf": waf(
                    index.get("ftl.kind", 0),
                    index.get("buffer.kind", 0),
                    index.get("buffer.bytes", 0),
                    index.get("ftl.gc", 0) + index.get("workload.seed", 0),
                ),
                "axes": json.dumps(cell),
            }
        )
    df = pd.DataFrame(rows)
    df.attrs["axes"] = list(axes)
    return df


def style_of(line) -> tuple:
    return (to_hex(line.get_color()), line.get_marker(), line.get_linestyle())


def assert_pairwise_distinct(styles: list[tuple]) -> None:
    for (i, a), (j, b) in itertools.combinations(enumerate(styles), 2):
        assert a != b, f"series {i} and {j} share the style {a}"


# ---------------------------------------------------------------------------------------------
# every series its own style


def twenty(kind: str = "policy") -> pd.DataFrame:
    return pd.DataFrame(
        [
            {kind: f"p{i:02d}", "device.op": op, "waf": 1 + 0.2 * i + op, "status": "ok"}
            for i in range(20)
            for op in (0.07, 0.15, 0.25)
        ]
    )


def test_series_style_rule_distinct_for_32_series():
    styles = [F.series_style(i) for i in range(32)]
    assert_pairwise_distinct([(s["color"], s["linestyle"]) for s in styles])
    # A series that shares its colour with another differs from it in marker too.
    for i in range(32):
        for j in range(i + 1, 32):
            if styles[i]["color"] == styles[j]["color"]:
                assert styles[i]["marker"] != styles[j]["marker"] and styles[i]["linestyle"] != styles[j]["linestyle"]
    bars = [F.series_style(i, bars=True) for i in range(32)]
    assert_pairwise_distinct([(b["color"], b["hatch"]) for b in bars])
    # The first eight are the plain palette; a hatch on a black bar is drawn in white.
    assert [s["linestyle"] for s in styles[:8]] == ["-"] * 8 and [b["hatch"] for b in bars[:8]] == [None] * 8
    black = F.PALETTE.index("#000000")
    assert bars[black + 8]["edgecolor"] == "white" and bars[8 + 1]["edgecolor"] == "#222222"


def test_twenty_lines_differ_pairwise_in_the_drawn_artists_and_the_legend():
    fig = F.line(twenty(), x="device.op", y="waf", by="policy")
    ax = fig.axes[0]
    lines = [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]
    assert [ln.get_label() for ln in lines] == [f"p{i:02d}" for i in range(20)]
    assert_pairwise_distinct([style_of(ln) for ln in lines])
    # the legend shows the same styles, each entry beside its line's
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == [f"p{i:02d}" for i in range(20)]
    handles = legend.legend_handles
    assert [style_of(h) for h in handles] == [style_of(ln) for ln in lines]
    # readable: 7 pt text, all of it inside the figure and clear of the panel
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    box, fbox, abox = legend.get_window_extent(r), fig.bbox, ax.get_window_extent(r)
    assert all(t.get_fontsize() == 7 for t in legend.get_texts())
    assert box.x0 >= fbox.x0 and box.x1 <= fbox.x1 + 1 and box.y0 >= fbox.y0 and box.y1 <= fbox.y1 + 1
    assert box.x0 >= abox.x1


def test_twenty_bars_cdfs_and_series_differ_pairwise():
    df = twenty()
    fig = F.bars(df, x="device.op", y="waf", by="policy")
    patches = fig.axes[0].patches
    assert len(patches) == 60
    # by-major: bars 3k .. 3k+2 are series k
    per_series = [(to_hex(patches[3 * k].get_facecolor()), patches[3 * k].get_hatch()) for k in range(20)]
    assert_pairwise_distinct(per_series)
    for k in range(20):
        assert {(to_hex(p.get_facecolor()), p.get_hatch()) for p in patches[3 * k : 3 * k + 3]} == {per_series[k]}

    fig = F.cdf({f"p{i:02d}": np.arange(30) + i for i in range(20)}, xlabel="x")
    assert_pairwise_distinct([style_of(ln) for ln in fig.axes[0].get_lines()])

    hist = {"latency.read_ns": [[1000.0 * (v + 1), 1] for v in range(20)]}
    cells = pd.DataFrame([{"policy": f"p{i:02d}", "histograms": json.dumps(hist), "status": "ok"} for i in range(20)])
    fig = F.distribution_cdf(cells, "latency.read_ns", by="policy")
    assert_pairwise_distinct([style_of(ln) for ln in fig.axes[0].get_lines()])

    series = {"requests": [1, 2, 3], "waf": [1.0, 1.5, 2.0]}
    cells = cells.assign(series=[json.dumps(series)] * 20)
    fig = F.series(cells, "waf", by="policy")
    assert_pairwise_distinct([style_of(ln) for ln in fig.axes[0].get_lines()])


def test_a_series_keeps_its_style_in_every_panel():
    """A value of `by` missing from one panel does not shift the others' styles there."""
    hist = {"latency.read_ns": [[1000.0, 1], [2000.0, 1]]}
    rows = [
        {"policy": p, "ftl.gc": gc, "histograms": json.dumps(hist), "status": "ok"}
        for gc, policies in (("greedy", ["a", "b", "c"]), ("fifo", ["b", "c"]))
        for p in policies
    ]
    fig = F.distribution_cdf(pd.DataFrame(rows), "latency.read_ns", by="policy")
    greedy, fifo = fig.axes[:2]
    styles = {ln.get_label(): style_of(ln) for ln in greedy.get_lines()}
    assert {ln.get_label(): style_of(ln) for ln in fifo.get_lines()} == {k: styles[k] for k in ("b", "c")}


# ---------------------------------------------------------------------------------------------
# the report's default figures keep the compared axis


def test_default_figures_of_2_ftls_15_buffers_3_sizes():
    """The 15 buffers are the lines, the 2 FTLs the panels, the size (numeric) the x axis:
    nothing averaged, every line the frame's own values."""
    df = frame({"ftl.kind": FTLS, "buffer.kind": BUFFERS, "buffer.bytes": SIZES})
    figs = default_figures(df, metrics=["waf"])
    assert [caption for caption, _fig in figs] == [
        "write amplification (WAF) (waf) against buffer.bytes, one line per buffer.kind; one panel per ftl.kind"
    ]
    fig = figs[0][1]
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["ftl.kind = page", "ftl.kind = bast"]
    assert "mean" not in fig.get_suptitle()
    for f, ax in enumerate(panels):
        lines = ax.get_lines()
        assert [ln.get_label() for ln in lines] == BUFFERS
        assert_pairwise_distinct([style_of(ln) for ln in lines])
        for k, ln in enumerate(lines):
            assert list(ln.get_xdata()) == SIZES
            assert list(ln.get_ydata()) == pytest.approx([waf(f, k, s) for s in range(3)])
    # the panels compare on one y scale
    assert panels[0].get_ylim() == panels[1].get_ylim()


def test_default_figures_facet_by_the_next_axis_and_average_only_what_does_not_fit():
    # Two categorical axes besides the buffers: the larger (ftl.gc, 3) and the FTL (2) make
    # 6 panels, which fit; the figure averages nothing.
    gcs = ["greedy", "fifo", "cost-benefit"]
    df = frame({"ftl.kind": FTLS, "buffer.kind": BUFFERS, "ftl.gc": gcs, "buffer.bytes": SIZES})
    ((caption, fig),) = default_figures(df, metrics=["waf"])
    assert caption.endswith("one line per buffer.kind; one panel per ftl.kind, ftl.gc")
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == 6 and all(len(ax.get_lines()) == 15 for ax in panels)
    # 13 seeds besides the FTLs would make 26 panels: the seeds are averaged, the FTLs kept.
    df = frame({"ftl.kind": FTLS, "buffer.kind": BUFFERS, "workload.seed": list(range(1, 14)), "buffer.bytes": SIZES})
    (against_seed, _fig), (caption, fig) = default_figures(df, metrics=["waf"])
    assert caption.endswith("one line per buffer.kind; one panel per ftl.kind; mean over workload.seed")
    # (a numeric axis has its own figure too: there the sizes join the FTLs in the panels)
    assert against_seed.endswith(
        "against workload.seed, one line per buffer.kind; one panel per ftl.kind, buffer.bytes"
    )
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["ftl.kind = page", "ftl.kind = bast"]
    assert fig.get_suptitle().endswith("mean over workload.seed")
    seeds_mean = np.mean(range(13)) * 0.001
    assert list(panels[1].get_lines()[3].get_ydata()) == pytest.approx([waf(1, 3, s) + seeds_mean for s in range(3)])


def test_default_figures_bars_when_no_axis_is_numeric():
    df = frame({"ftl.kind": FTLS, "buffer.kind": BUFFERS})
    captions = [c for c, _f in default_figures(df, metrics=["waf"])]
    assert captions == [
        "write amplification (WAF) (waf) by ftl.kind, one bar per buffer.kind",
        "write amplification (WAF) (waf) by buffer.kind, one bar per ftl.kind",
    ]


# ---------------------------------------------------------------------------------------------
# log scales, per-panel scales, the filter in the title


@pytest.fixture
def results_dir(tmp_path, monkeypatch):
    """A results directory whose cells (2 FTLs x 15 buffers x 3 sizes, the bast cells' WAF ten
    times the page cells') the CLI loads through a stub `ssdlab.load_results`; the figures it
    would save are kept in `drawn` instead."""
    df = frame({"ftl.kind": FTLS, "buffer.kind": BUFFERS, "buffer.bytes": SIZES})
    df.loc[df["ftl.kind"] == "bast", "waf"] *= 10
    monkeypatch.setattr(ssdlab, "load_results", lambda path: df.copy(), raising=False)
    drawn = []
    monkeypatch.setattr(F, "save", lambda fig, stem, formats, close: drawn.append((fig, stem)) or [])
    d = tmp_path / "study"
    d.mkdir()
    return d, drawn


def test_cli_logy_logx_and_sharey_false(results_dir):
    d, drawn = results_dir
    base = ["plot", str(d), "--x", "buffer.bytes", "--y", "waf", "--by", "buffer.kind"]
    assert cli.main(base) == 0
    fig, stem = drawn[-1]
    a, b = [ax for ax in fig.axes if ax.get_visible()]
    assert (a.get_xscale(), a.get_yscale()) == ("linear", "linear")
    assert a.get_ylim() == b.get_ylim()  # one y scale: the page FTL's lines squashed at the bottom
    assert cli.main([*base, "--logx", "--logy"]) == 0
    fig, stem = drawn[-1]
    assert stem.name.endswith("-logx-logy")
    for ax in fig.axes:
        assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    assert cli.main([*base, "--sharey", "false"]) == 0
    fig, stem = drawn[-1]
    a, b = fig.axes
    assert stem.name.endswith("-own-y")
    lo, hi = a.get_ylim()
    page = [y for ln in a.get_lines() for y in ln.get_ydata()]
    assert lo <= min(page) and hi >= max(page) and hi < min(y for ln in b.get_lines() for y in ln.get_ydata())
    # Bars and series take them too; a heatmap's and a CDF's axes are not scales.
    assert cli.main(["plot", str(d), "--kind", "bars", "--x", "buffer.kind", "--y", "waf", "--logy"]) == 0
    assert all(ax.get_yscale() == "log" for ax in drawn[-1][0].axes)
    with pytest.raises(SystemExit, match="2"):
        cli.main([*base, "--sharey", "maybe"])
    for argv, message in (
        (["--kind", "heatmap", "--x", "buffer.bytes", "--by", "buffer.kind", "--y", "waf", "--logy"], "--kind heatmap"),
        (["--kind", "cdf", "--y", "waf", "--logy"], "the y axis is a fraction"),
    ):
        with pytest.raises(ssdlab.SsdlabError, match=message):
            cli.cmd_plot(cli.build_parser().parse_args(["plot", str(d), *argv]))


def test_cli_heatmap_panels_share_one_colour_scale_unless_told_otherwise(results_dir):
    d, drawn = results_dir
    argv = ["plot", str(d), "--kind", "heatmap", "--x", "buffer.bytes", "--by", "buffer.kind", "--y", "waf"]
    assert cli.main(argv) == 0
    fig = drawn[-1][0]
    panels = [ax for ax in fig.axes if ax.images]
    bars = [ax for ax in fig.axes if not ax.images and ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["ftl.kind = page", "ftl.kind = bast"] and len(bars) == 1
    lo = min(float(np.nanmin(ax.images[0].get_array())) for ax in panels)
    hi = max(float(np.nanmax(ax.images[0].get_array())) for ax in panels)
    assert [ax.images[0].get_clim() for ax in panels] == [pytest.approx((lo, hi))] * 2
    assert cli.main([*argv, "--sharey", "false"]) == 0
    fig = drawn[-1][0]
    panels = [ax for ax in fig.axes if ax.images]
    assert len([ax for ax in fig.axes if not ax.images]) == 2
    for ax in panels:
        grid = np.asarray(ax.images[0].get_array())
        assert ax.images[0].get_clim() == pytest.approx((grid.min(), grid.max()))


def test_a_filtered_figure_names_the_filter_in_its_title(results_dir):
    d, drawn = results_dir
    argv = ["plot", str(d), "--x", "buffer.bytes", "--y", "waf", "--by", "buffer.kind"]
    assert cli.main([*argv, "--filter", "ftl.kind=bast"]) == 0
    fig = drawn[-1][0]
    assert len(fig.axes) == 1
    assert fig.get_suptitle().splitlines()[-1] == "cells with ftl.kind = bast"
    assert cli.main(argv) == 0 and "cells with" not in drawn[-1][0].get_suptitle()
    # a size in a byte column is shown as one; a repeated key is "or"; every kind of figure says so
    two = ["--filter", "buffer.bytes=4MiB", "--filter", "buffer.bytes=16777216", "--filter", "ftl.kind=page"]
    note = "cells with buffer.bytes = 4 MiB or 16 MiB, ftl.kind = page"
    for kind in (
        ["--kind", "bars", "--x", "buffer.kind", "--y", "waf"],
        ["--kind", "heatmap", "--x", "buffer.bytes", "--by", "buffer.kind", "--y", "waf"],
        ["--kind", "cdf", "--y", "waf", "--by", "buffer.bytes"],
        ["--x", "buffer.bytes", "--y", "waf", "--by", "buffer.kind"],
    ):
        assert cli.main(["plot", str(d), *kind, *two]) == 0
        assert note in drawn[-1][0].get_suptitle().replace("\n", " "), kind
    # In Python: `select` remembers the filter, and the figures of its rows say it.
    df = ssdlab.load_results(d)
    part = F.select(df, {"buffer.kind": ["lru", "fab"]})
    assert F.selection_note(part) == "cells with buffer.kind = lru or fab" and F.selection_note(df) is None
    assert (
        F.line(part, x="buffer.bytes", y="waf", by="buffer.kind")
        .get_suptitle()
        .endswith("cells with buffer.kind = lru or fab")
    )


# ---------------------------------------------------------------------------------------------
# figure files


def test_a_figure_file_with_an_unknown_extension_is_an_error_naming_the_formats(tmp_path, capsys):
    fig = F.line(twenty(), x="device.op", y="waf", by="policy")
    with pytest.raises(ValueError, match=r"x\.bmp: figure format \.bmp unknown: expected \.png, \.svg, \.pdf"):
        F.save_as(fig, tmp_path / "x.bmp")
    assert list(tmp_path.iterdir()) == []
    assert F.save_as(fig, tmp_path / "x") == tmp_path / "x.png"
    assert F.save_as(fig, tmp_path / "y.SVG") == tmp_path / "y.svg"
    # `ssdlab run --plot-cdf x.bmp` says so before it runs, and writes nothing
    timed = ["run", "--set", "run.mode=timed", "--set", "workload.requests=200", "--quiet"]
    assert cli.main([*timed, "--plot-cdf", str(tmp_path / "x.bmp")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ssdlab: error: --plot-cdf ") and "expected .png, .svg, .pdf" in err
    assert err.count("\n") == 1 and not (tmp_path / "x.bmp").exists() and not (tmp_path / "x.bmp.png").exists()
    r = ssdlab.simulate({"run": {"mode": "timed"}, "workload": {"requests": 200}})
    with pytest.raises(ValueError, match="expected .png, .svg, .pdf"):
        r.plot_cdf(tmp_path / "lat.bmp")
    r.plot_cdf(tmp_path / "lat.pdf")
    assert (tmp_path / "lat.pdf").read_bytes()[:5] == b"%PDF-"


# ---------------------------------------------------------------------------------------------
# the studies' figures: hitstat2009's B_w/N, real-device's fitted parameters


@pytest.fixture(scope="module")
def hitstat_padding(tmp_path_factory):
    """The padding grids of hitstat2009's quick study on a 1 GiB device (60,000 requests, sampled
    every 5,000): the cells of its elapsed-time and B_w/N figures."""
    from ssdlab import studies, sweep

    spec = studies.get("hitstat2009").spec(quick=True)
    spec["grid"] = [g for g in spec["grid"] if g["name"].startswith("padding")]
    spec["base"]["workload"].update(requests=60000, footprint_bytes="1GiB")
    spec["base"]["device"].update(logical_bytes="1GiB")
    for g in spec["grid"]:
        g["base"]["ftl"]["log_blocks"] = 64 if g["base"]["ftl"]["kind"] == "bast" else 16
        g["base"]["run"]["sample_every"] = 5000
    out = tmp_path_factory.mktemp("hitstat") / "padding"
    summary = sweep.run_sweep(spec, out, workers=2, progress=False)
    assert summary.ok == summary.total == 18
    return out


def legends(fig) -> list:
    return list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]


def test_hitstat2009_bw_figures_one_legend_clear_of_the_title_and_a_full_panel(hitstat_padding):
    from ssdlab import studies

    mod = studies.get("hitstat2009").module()
    df = ssdlab.load_results(hitstat_padding)
    figs = [(c, f) for c, f in mod.figures(df) if "B_w/N as the run proceeds" in c]
    assert [c.split(" analogue")[0] for c, _f in figs] == ["Table 5", "Table 6"]
    for caption, fig in figs:
        ftl = "bast" if caption.startswith("Table 5") else "fast"
        fixed = df[(df["ftl.kind"] == ftl) & (df["buffer.padding"] == "fixed")]
        best = float(fixed.loc[fixed[mod.ELAPSED].idxmin(), "padding.fixed.threshold"])
        fig.canvas.draw()
        r = fig.canvas.get_renderer()
        (legend,) = legends(fig)  # one legend, its entries the two readings and the threshold
        assert [t.get_text() for t in legend.get_texts()] == ["seed", "all-merges", f"best fixed threshold ({best:g})"]
        assert all(t.get_fontsize() == 7 for t in legend.get_texts())
        title = fig._suptitle.get_window_extent(r)
        box = legend.get_window_extent(r)
        assert not box.overlaps(title) and box.y1 <= fig.bbox.y1 + 1 and box.x1 <= fig.bbox.x1 + 1
        (ax,) = fig.axes
        panel = ax.get_window_extent(r)
        assert panel.width > 0.5 * fig.bbox.width and panel.height > 0.55 * fig.bbox.height
        dashed = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
        assert len(dashed) == 1 and list(dashed[0].get_ydata()) == [best, best]
        assert dashed[0].get_xdata()[-1] == 60000
        assert "dashed: the best fixed threshold" in caption


@pytest.fixture(scope="module")
def real_device_cells(tmp_path_factory):
    """A 6-trial calibration of the real-device study on a small MSR trace (as test_calibrate)."""
    from ssdlab import studies

    d = tmp_path_factory.mktemp("real-device")
    t0 = 128166372000000000
    rows = [("Read" if i % 3 else "Write", 4096 * (i % 64), 4096, 80 + (i * 37) % 400) for i in range(600)]
    trace = d / "t.csv"
    trace.write_text(
        "".join(f"{t0 + 10_000 * i},h,0,{o},{off},{n},{rt * 10}\n" for i, (o, off, n, rt) in enumerate(rows))
    )
    st = studies.get("real-device")
    spec = st.spec(quick=True)
    spec["calibrate"].update(trace=str(trace), format="msr", trials=6)
    del spec["calibrate"]["config"]  # the FlashNet replay's record times: msr has one time stamp
    summary = st.module().run(spec, d / "out", workers=2, progress=False)
    assert summary.ok == 6
    return d / "out"


def test_real_device_fitted_values_clear_of_their_diamonds_and_of_each_other(real_device_cells):
    from ssdlab import studies

    mod = studies.get("real-device").module()
    df = ssdlab.load_results(real_device_cells)
    (fig,) = [f for c, f in mod.figures(df) if c.startswith("Fitted parameters")]
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    (ax,) = fig.axes
    diamonds = [ln for ln in ax.get_lines() if ln.get_marker() == "D"]
    params = [t.get_text() for t in ax.get_yticklabels()]
    assert len(diamonds) == len(params) >= 5
    values = [t for t in ax.texts if t.get_color() == F.PALETTE[1]]
    assert len(values) == len(params)
    best = df.loc[df["calibrate.error"].idxmin()]
    half = diamonds[0].get_markersize() * fig.dpi / 72 / 2
    boxes = [t.get_window_extent(r) for t in ax.texts]
    for key, text, diamond in zip(params, values, diamonds, strict=True):
        assert text.get_text() == mod._g(float(best[key]))
        x, y = ax.transData.transform((diamond.get_xdata()[0], diamond.get_ydata()[0]))
        box = text.get_window_extent(r)
        assert box.y0 >= y + half, f"{key}: the value's text is over its diamond"
        assert abs((box.x0 + box.x1) / 2 - x) < 1.0  # centred over it
    for a, b in itertools.combinations(boxes, 2):
        assert not a.overlaps(b), "two labels of the strip overlap"
    for b in boxes:
        assert fig.bbox.x0 <= b.x0 and b.x1 <= fig.bbox.x1 and fig.bbox.y0 <= b.y0 and b.y1 <= fig.bbox.y1


def test_the_study_reports_render_in_headless_chromium(hitstat_padding, real_device_cells, tmp_path):
    from ssdlab import studies
    from ssdlab.report import write_report
    from test_report import chromium_binary, headless

    binary = chromium_binary()
    for name, d, n in (("hitstat2009", hitstat_padding, 4), ("real-device", real_device_cells, 3)):
        figures, sections = studies.get(name).report_hooks()
        path = write_report(d, out=tmp_path / f"{name}.html", figures=figures, sections=sections)
        dom = headless(binary, tmp_path, "--dump-dom", path.as_uri()).stdout
        assert f"<title>ssdlab report: {n} figures OK</title>" in dom
