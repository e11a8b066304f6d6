"""Figures (ssdlab.report.figures), the HTML report and the `plot` / `report` commands.

The results DataFrames here are built from tiny simulations, with the columns of the results store
(dotted configuration keys, metrics, status, error, key, axes, prov.*). The report is rendered in
headless Chromium: the test is skipped when no chromium binary exists, unless CI is set (then it
fails).
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import matplotlib.image
import numpy as np
import pandas as pd
import pytest
import ssdlab
from ssdlab import cli
from ssdlab.api import flatten
from ssdlab.report import figures as F
from ssdlab.report import write_report

MiB = 1 << 20
BASE = {
    "workload": {"kind": "uniform", "requests": 2000, "footprint_bytes": "64MiB"},
    "device": {"op": 0.07},
    "run": {"precondition": "fill"},
}
KINDS = ["none", "lru", "block-lru"]
SIZES = ["1MiB", "4MiB", "16MiB"]
STUDY_TOML = """[study]
name = "report-test"
description = "Buffers <none, lru & block-lru> at three sizes; tiny uniform workload."

[base.workload]
kind = "uniform"
requests = 2000
footprint_bytes = "64MiB"

[base.run]
precondition = "fill"

[axes]
"buffer.kind" = ["none", "lru", "block-lru", "arc"]
"buffer.bytes" = ["1MiB", "4MiB", "16MiB"]
"""


def run_cells(grid: list[dict], base: dict = BASE) -> pd.DataFrame:
    """A results DataFrame as the store returns it, from simulate() over `grid` (axis dicts)."""
    rows = []
    for i, axes in enumerate(grid):
        cfg = ssdlab.Config(base)
        for k, v in axes.items():
            cfg = cfg.set(k, v)
        t0 = time.monotonic()
        try:
            r = ssdlab.simulate(cfg)
            row = {**flatten(r.config), **r.metrics, "status": "ok", "error": None}
        except ssdlab.SsdlabError as e:
            row = {**flatten(cfg.to_dict()), "status": "failed", "error": str(e)}
        row.update(
            {
                "key": f"k{i:04d}",
                "axes": json.dumps(axes),
                "prov.ssdlab_version": ssdlab.__version__,
                "prov.git_revision": "0123abcd",
                "prov.trace_digest": None,
                "prov.wall_s": time.monotonic() - t0,
                "prov.host": "testhost",
                "prov.finished_at": datetime.datetime(2025, 1, 1, 12, 0, i).isoformat(),
            }
        )
        rows.append(row)
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    grid = [{"buffer.kind": k, "buffer.bytes": b} for k in KINDS for b in SIZES]
    grid.append({"buffer.kind": "arc", "buffer.bytes": "1MiB"})  # fails: unknown buffer
    out = run_cells(grid)
    assert list(out["status"]).count("failed") == 1
    return out


@pytest.fixture
def study_dir(tmp_path, df, monkeypatch):
    """A study directory whose results the CLI loads through a stub `ssdlab.load_results`."""
    d = tmp_path / "study"
    d.mkdir()
    (d / "study.toml").write_text(STUDY_TOML)
    monkeypatch.setattr(ssdlab, "load_results", lambda path: df.copy(), raising=False)
    return d


def value(df, kind, size_bytes, metric):
    row = df[(df["buffer.kind"] == kind) & (df["buffer.bytes"] == size_bytes)]
    assert len(row) == 1
    return float(row[metric].iloc[0])


# ---------------------------------------------------------------------------------------------
# figures


def test_line_one_line_per_value_with_the_frames_values(df):
    fig = F.line(df, x="buffer.bytes", y="nand.erases", by="buffer.kind", logx=True)
    ax = fig.axes[0]
    lines = ax.get_lines()
    assert len(lines) == 3  # the failed `arc` cell is not plotted
    assert [t.get_text() for t in ax.get_legend().get_texts()] == KINDS
    sizes = [1 * MiB, 4 * MiB, 16 * MiB]
    for line, kind in zip(lines, KINDS, strict=True):
        assert list(line.get_xdata()) == sizes
        assert list(line.get_ydata()) == [value(df, kind, s, "nand.erases") for s in sizes]
        assert line.get_marker() not in (None, "", "None")
    assert ax.get_xscale() == "log"
    fig.canvas.draw()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1 MiB", "4 MiB", "16 MiB"]
    assert ax.get_ylabel() == "block erases"
    assert ax.get_title() == ""  # one cell per point: nothing averaged


def test_line_overlay_is_dashed_and_labelled(df):
    xs, ys = [1 * MiB, 16 * MiB], [100.0, 50.0]
    fig = F.line(df, x="buffer.bytes", y="waf", by="buffer.kind", overlay=(xs, ys, "model"))
    lines = fig.axes[0].get_lines()
    assert len(lines) == 4
    assert lines[-1].get_linestyle() == "--" and lines[-1].get_label() == "model"
    assert list(lines[-1].get_ydata()) == ys


def test_line_never_averages_unasked_panels_or_mean_over(df):
    ok = df[df["status"] == "ok"]
    other = ok.assign(**{"workload.seed": 2, "waf": ok["waf"] + 1.0})
    both = pd.concat([ok, other], ignore_index=True)
    # another key varies: one panel per value, each with its cells' own values
    fig = F.line(both, x="buffer.bytes", y="waf", by="buffer.kind")
    assert [ax.get_title() for ax in fig.axes] == ["workload.seed = 1", "workload.seed = 2"]
    for ax, add in zip(fig.axes, [0.0, 1.0], strict=True):
        lru = ax.get_lines()[1]
        assert list(lru.get_ydata()) == pytest.approx([value(df, "lru", s, "waf") + add for s in lru.get_xdata()])
    assert "mean" not in fig.get_suptitle()
    # averaging only when asked, and the figure says so
    fig = F.line(both, x="buffer.bytes", y="waf", by="buffer.kind", mean_over=["workload.seed"])
    ax = fig.axes[0]
    assert len(fig.axes) == 1
    assert fig.get_suptitle().splitlines()[-1] == "mean over workload.seed"
    lru = ax.get_lines()[1]
    assert list(lru.get_ydata()) == pytest.approx([value(df, "lru", s, "waf") + 0.5 for s in lru.get_xdata()])
    # into a given axes there is no room for panels: an error naming the key and the remedies
    target = F._new_figure().add_subplot()
    with pytest.raises(
        ValueError,
        match=r"differ in workload.seed \(workload.seed takes 1, 2\): choose one with "
        r"--filter workload.seed=VALUE, or average with --mean-over workload.seed",
    ):
        F.line(both, x="buffer.bytes", y="waf", by="buffer.kind", ax=target)


def test_figures_name_workload_and_device_and_use_reading_units(df):
    fig = F.line(df, x="buffer.bytes", y="time.program_erase_us", by="buffer.kind")
    assert " ".join(fig.get_suptitle().split()) == (
        "uniform, 64 MiB footprint, 2,000 requests · 64 MiB logical, 4 KiB pages, 128 pages/block, OP 0.07"
    )
    # wrapped to the figure's width, so that a narrow figure does not cut it off at both sides
    fig.canvas.draw()
    title = fig._suptitle.get_window_extent()
    assert 0 <= title.x0 and title.x1 <= fig.bbox.width
    ax = fig.axes[0]
    assert ax.get_ylabel() == "program + erase time (s)"
    lru = ax.get_lines()[1]
    expected = [value(df, "lru", s, "time.program_erase_us") / 1e6 for s in lru.get_xdata()]
    assert list(lru.get_ydata()) == pytest.approx(expected)
    assert F.label("buffer.flushed_groups") == "flushed groups"
    assert F.label("throughput.nand_serial_write_mib_s") == "write throughput over serial NAND time (MiB/s)"
    assert F.label("nand.erases") == "block erases"


def test_line_accepts_size_strings_and_rejects_categories(df):
    ok = df[df["status"] == "ok"].assign(**{"buffer.bytes": lambda d: [f"{v // MiB}MiB" for v in d["buffer.bytes"]]})
    fig = F.line(ok, x="buffer.bytes", y="waf", by="buffer.kind")
    assert list(fig.axes[0].get_lines()[0].get_xdata()) == [1 * MiB, 4 * MiB, 16 * MiB]
    with pytest.raises(ValueError, match="buffer.kind"):
        F.line(df, x="buffer.kind", y="waf")


def test_bars_grouped_heights_equal_the_frames_values(df):
    fig = F.bars(df, x="buffer.bytes", y="waf", by="buffer.kind")
    ax = fig.axes[0]
    patches = ax.patches
    assert len(patches) == 9
    sizes = [1 * MiB, 4 * MiB, 16 * MiB]
    expected = [value(df, k, s, "waf") for k in KINDS for s in sizes]  # by-major
    assert [p.get_height() for p in patches] == pytest.approx(expected)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1 MiB", "4 MiB", "16 MiB"]
    fig = F.bars(df, x="buffer.kind", y="nand.erases")  # no `by`: a panel per size
    assert [ax.get_title() for ax in fig.axes] == [
        "buffer.bytes = 1 MiB",
        "buffer.bytes = 4 MiB",
        "buffer.bytes = 16 MiB",
    ]
    assert fig.axes[1].patches[2].get_height() == value(df, "block-lru", 4 * MiB, "nand.erases")
    fig = F.bars(df, x="buffer.kind", y="nand.erases", mean_over=["buffer.bytes"])  # the mean over sizes, said
    assert len(fig.axes[0].patches) == 3
    assert fig.axes[0].patches[2].get_height() == pytest.approx(
        np.mean([value(df, "block-lru", s, "nand.erases") for s in sizes])
    )
    assert fig.get_suptitle().endswith("\nmean over buffer.bytes")


def test_normalized_bars_divide_by_the_baseline(df):
    fig = F.normalized_bars(df, x="buffer.bytes", y="time.nand_serial_us", by="buffer.kind", baseline="none")
    ax = fig.axes[0]
    sizes = [1 * MiB, 4 * MiB, 16 * MiB]
    expected = [
        value(df, k, s, "time.nand_serial_us") / value(df, "none", s, "time.nand_serial_us")
        for k in KINDS
        for s in sizes
    ]
    heights = [p.get_height() for p in ax.patches]
    assert heights == pytest.approx(expected)
    assert heights[:3] == pytest.approx([1.0, 1.0, 1.0])
    assert "normalised to none" in ax.get_ylabel()
    # a numeric `by` with the baseline written as a size string
    fig = F.normalized_bars(df, x="buffer.kind", y="waf", by="buffer.bytes", baseline="1MiB")
    heights = [p.get_height() for p in fig.axes[0].patches]
    expected = [value(df, k, s, "waf") / value(df, k, 1 * MiB, "waf") for s in sizes for k in KINDS]
    assert heights == pytest.approx(expected)
    with pytest.raises(ValueError, match="baseline 'arc' is not a value of column `buffer.kind`"):
        F.normalized_bars(df, x="buffer.bytes", y="waf", by="buffer.kind", baseline="arc")


def test_cdf_lines_are_the_empirical_distributions():
    a = [3.0, 1.0, 2.0, float("nan")]
    b = np.arange(100, dtype=float)
    fig = F.cdf({"a": a, "b": b}, xlabel="flushed group size (pages)")
    lines = fig.axes[0].get_lines()
    assert len(lines) == 2
    assert list(lines[0].get_xdata()) == [1.0, 2.0, 3.0]
    assert list(lines[0].get_ydata()) == pytest.approx([1 / 3, 2 / 3, 1.0])
    assert list(lines[1].get_ydata()) == pytest.approx(np.arange(1, 101) / 100)
    assert fig.axes[0].get_xlabel() == "flushed group size (pages)"
    with pytest.raises(ValueError, match="`empty`"):
        F.cdf({"empty": [float("nan")]}, xlabel="x")


def test_cdf_of_a_metric_across_cells(df):
    samples = F.samples_by(df, "waf", by="buffer.kind")
    assert list(samples) == KINDS
    fig = F.cdf(samples, xlabel="WAF")
    assert sorted(fig.axes[0].get_lines()[2].get_xdata()) == sorted(
        value(df, "block-lru", s, "waf") for s in (MiB, 4 * MiB, 16 * MiB)
    )


def test_heatmap_cells_hold_the_values(df):
    fig = F.heatmap(df, x="buffer.bytes", y="buffer.kind", value="nand.erases")
    ax = fig.axes[0]
    grid = np.asarray(ax.images[0].get_array())
    expected = [[value(df, k, s, "nand.erases") for s in (MiB, 4 * MiB, 16 * MiB)] for k in KINDS]
    assert grid.tolist() == expected
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == 9 and texts[0] == F.short_number(expected[0][0])
    assert [t.get_text() for t in ax.get_yticklabels()] == KINDS


def test_heatmap_panels_per_other_key_and_times_in_seconds(df):
    ok = df[df["status"] == "ok"]
    both = pd.concat([ok, ok.assign(**{"ftl.gc": "fifo", "time.nand_serial_us": ok["time.nand_serial_us"] * 2})])
    fig = F.heatmap(both, x="buffer.bytes", y="buffer.kind", value="time.nand_serial_us")
    panels = [ax for ax in fig.axes if ax.images]
    assert [ax.get_title() for ax in panels] == ["ftl.gc = greedy", "ftl.gc = fifo"]
    for ax, factor in zip(panels, [1, 2], strict=True):
        expected = [
            [value(df, k, s, "time.nand_serial_us") * factor / 1e6 for s in (MiB, 4 * MiB, 16 * MiB)] for k in KINDS
        ]
        assert np.asarray(ax.images[0].get_array()) == pytest.approx(np.asarray(expected))
    # One colour scale for both panels: one colour bar, from the smallest cell to the largest.
    assert [ax.get_ylabel() for ax in fig.axes if not ax.images] == ["serial NAND time (s)"]
    every = np.concatenate([np.asarray(ax.images[0].get_array()).ravel() for ax in panels])
    for ax in panels:
        assert ax.images[0].get_clim() == pytest.approx((every.min(), every.max()))
    # Told otherwise, each panel its own scale and colour bar.
    fig = F.heatmap(both, x="buffer.bytes", y="buffer.kind", value="time.nand_serial_us", share_scale=False)
    panels = [ax for ax in fig.axes if ax.images]
    assert [ax.get_ylabel() for ax in fig.axes if not ax.images] == ["serial NAND time (s)"] * 2
    for ax in panels:
        grid = np.asarray(ax.images[0].get_array())
        assert ax.images[0].get_clim() == pytest.approx((grid.min(), grid.max()))
    assert panels[0].images[0].get_clim()[1] < panels[1].images[0].get_clim()[1]


def test_save_writes_png_at_200_dpi_and_svg_or_pdf(df, tmp_path):
    fig = F.line(df, x="buffer.bytes", y="waf", by="buffer.kind")
    paths = F.save(fig, tmp_path / "sub" / "waf.vs.size")
    assert [p.name for p in paths] == ["waf.vs.size.png", "waf.vs.size.svg"]
    img = matplotlib.image.imread(paths[0])
    assert img.shape[1] == round(fig.get_figwidth() * 200)
    assert "<svg" in paths[1].read_text()[:2000]
    (pdf,) = F.save(fig, tmp_path / "waf.png", formats=("pdf",))
    assert pdf.name == "waf.pdf" and pdf.read_bytes()[:5] == b"%PDF-"
    with pytest.raises(ValueError, match="gif"):
        F.save(fig, tmp_path / "x", formats=("png", "gif"))


@pytest.mark.parametrize(
    "call",
    [
        lambda d: F.line(d, x="buffer.size", y="waf"),
        lambda d: F.line(d, x="buffer.bytes", y="wafx"),
        lambda d: F.line(d, x="buffer.bytes", y="waf", by="buffer.kindx"),
        lambda d: F.bars(d, x="buffer.kind", y="nand.erasez"),
        lambda d: F.normalized_bars(d, x="buffer.bytes", y="waf", by="buffer.kinx", baseline="none"),
        lambda d: F.heatmap(d, x="buffer.bytes", y="buffer.kind", value="nand.erase"),
        lambda d: F.samples_by(d, "wa", by="buffer.kind"),
    ],
)
def test_missing_columns_are_named(df, call):
    with pytest.raises(ValueError, match=r"column `[a-z._]+` not in the results"):
        call(df)


def test_no_ok_rows_is_an_error(df):
    failed = df[df["status"] == "failed"]
    for call in (
        lambda: F.line(failed, x="buffer.bytes", y="waf"),
        lambda: F.bars(failed, x="buffer.kind", y="waf"),
        lambda: F.heatmap(failed, x="buffer.bytes", y="buffer.kind", value="waf"),
    ):
        with pytest.raises(ValueError, match="no rows with status 'ok'"):
            call()


# ---------------------------------------------------------------------------------------------
# the HTML report


def data_uris(text: str) -> list[str]:
    return re.findall(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', text)


def test_report_is_self_contained_and_complete(df, tmp_path):
    d = tmp_path / "study"
    d.mkdir()
    (d / "study.toml").write_text(STUDY_TOML)
    claims = [("Claims <vs> measurements", "<table><tr><td>block-lru erases least</td><td>yes</td></tr></table>")]
    path = write_report(d, results=df, sections=claims)
    assert path == d / "report.html"
    text = path.read_text()
    # default figures: buffer.kind and buffer.bytes vary; waf, erases and hit ratio against the
    # numeric one, one line per buffer.kind (bars by buffer.kind would show the same cells again)
    images = data_uris(text)
    assert len(images) == 3
    assert all(base64.b64decode(b).startswith(b"<?xml") and b"<svg" in base64.b64decode(b) for b in images)
    assert text.count("<figcaption>") == 3
    assert "nand.erases" in text and "one line per buffer.kind" in text
    # nothing loaded from elsewhere; text escaped; the image check script present
    assert not re.search(r"(src|href)=\"(https?:)?//", text) and "@import" not in text and "url(" not in text
    assert "Buffers &lt;none, lru &amp; block-lru&gt; at three sizes" in text
    assert "<h2>Claims &lt;vs&gt; measurements</h2>" in text and "<td>block-lru erases least</td>" in text
    assert "ssdlab report: BROKEN IMAGES" in text and "naturalWidth" in text
    # the cells table, the failed cell with its error, configuration and provenance
    assert text.count('<span class="badge ok">ok</span>') == 9
    assert "Failed cells (1)" in text and "unknown buffer `arc`" in text
    assert "workload.footprint_bytes" in text and "&quot;64MiB&quot;" in text
    assert "0123abcd" in text and "testhost" in text and ssdlab.__version__ in text
    out = write_report(d, out=tmp_path / "elsewhere" / "r.html", results=df, figures=[])
    assert out.exists() and data_uris(out.read_text()) == []


def test_report_uses_a_studys_figures_callable(df, tmp_path):
    def figures(frame):
        ok = frame[frame["status"] == "ok"]
        return [("erases, lru only", F.line(ok[ok["buffer.kind"] == "lru"], x="buffer.bytes", y="nand.erases"))]

    path = write_report(tmp_path, results=df, figures=figures, sections=lambda frame: [("n", f"<p>{len(frame)}</p>")])
    text = path.read_text()
    assert len(data_uris(text)) == 1 and "erases, lru only" in text and "<p>10</p>" in text
    # no study.toml: the title is the directory's name, the axes come from the `axes` column
    assert f"<h1>{tmp_path.name}</h1>" in text and "<th>buffer.kind</th>" in text


def chromium_binary() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("CI"):
        pytest.fail("CI is set but no chromium binary is installed (apt-get install chromium)")
    pytest.skip("no chromium binary: install Debian's `chromium` to render the report headless")


def headless(binary: str, tmp_path, *args: str) -> subprocess.CompletedProcess:
    cmd = [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
        "--virtual-time-budget=5000",
        *args,
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    return p


def test_report_renders_in_headless_chromium(df, tmp_path):
    binary = chromium_binary()
    d = tmp_path / "study"
    d.mkdir()
    (d / "study.toml").write_text(STUDY_TOML)
    path = write_report(d, results=df)
    n = len(data_uris(path.read_text()))
    assert n == 3
    dom = headless(binary, tmp_path, "--dump-dom", path.as_uri()).stdout
    assert re.search(r"<title>(.*?)</title>", dom).group(1) == f"ssdlab report: {n} figures OK"

    shot = tmp_path / "report.png"
    headless(binary, tmp_path, "--hide-scrollbars", "--window-size=1280,1600", f"--screenshot={shot}", path.as_uri())
    assert shot.stat().st_size > 20_000
    img = matplotlib.image.imread(shot)
    assert img.shape[:2] == (1600, 1280)
    colours = np.unique((img[..., :3] * 255).astype(np.uint8).reshape(-1, 3), axis=0)
    assert len(colours) > 50 and float(img[..., :3].std()) > 0.02

    # the check in the page notices an image that does not decode
    broken = tmp_path / "broken.html"
    broken.write_text(path.read_text().replace("data:image/svg+xml;base64,PD94", "data:image/svg+xml;base64,AAAA", 1))
    dom = headless(binary, tmp_path, "--dump-dom", broken.as_uri()).stdout
    assert "<title>ssdlab report: BROKEN IMAGES</title>" in dom


# ---------------------------------------------------------------------------------------------
# the commands


def test_cli_report_and_plot(study_dir, tmp_path, capsys):
    assert cli.main(["report", str(study_dir)]) == 0
    assert (study_dir / "report.html").exists()
    assert cli.main(["report", str(study_dir), "--out", str(tmp_path / "r.html"), "--default-figures"]) == 0
    assert len(data_uris((tmp_path / "r.html").read_text())) == 3

    argv = ["plot", str(study_dir), "--x", "buffer.bytes", "--y", "nand.erases", "--by", "buffer.kind", "--logx"]
    assert cli.main(argv) == 0
    stem = study_dir / "figures" / "line-nand.erases-vs-buffer.bytes-by-buffer.kind-logx"
    assert Path(f"{stem}.png").exists() and Path(f"{stem}.svg").exists()
    # Figures that differ only in a filter get files of their own (none overwrites another).
    for size in ("4MiB", "16MiB"):
        assert (
            cli.main(
                [*argv[:2], "--kind", "bars", "--x", "buffer.kind", "--y", "waf", "--filter", f"buffer.bytes={size}"]
            )
            == 0
        )
    names = {p.name for p in (study_dir / "figures").glob("bars-waf-*.svg")}
    assert names == {"bars-waf-vs-buffer.kind-buffer.bytes-4MiB.svg", "bars-waf-vs-buffer.kind-buffer.bytes-16MiB.svg"}
    for kind, extra in (
        ("bars", ["--x", "buffer.kind", "--y", "waf"]),
        (
            "normalized",
            ["--x", "buffer.bytes", "--y", "time.nand_serial_us", "--by", "buffer.kind", "--baseline", "none"],
        ),
        ("heatmap", ["--x", "buffer.bytes", "--y", "waf", "--by", "buffer.kind"]),
        ("cdf", ["--y", "waf", "--by", "buffer.kind", "--filter", "buffer.bytes=4MiB"]),
    ):
        out = tmp_path / kind
        assert cli.main(["plot", str(study_dir), "--kind", kind, *extra, "--out", str(out), "--format", "png,pdf"]) == 0
        assert out.with_suffix(".png").stat().st_size > 5000 and out.with_suffix(".pdf").exists()
    assert "wrote" in capsys.readouterr().out


def test_cli_plot_panels_or_mean_over_never_a_silent_mean(study_dir, tmp_path, monkeypatch, df):
    ok = df[df["status"] == "ok"]
    fifo = ok.assign(**{"ftl.gc": "fifo", "nand.erases": ok["nand.erases"] + 10})
    both = pd.concat([ok, fifo], ignore_index=True)
    monkeypatch.setattr(ssdlab, "load_results", lambda path: both.copy(), raising=False)
    drawn = []
    monkeypatch.setattr(F, "save", lambda fig, stem, formats, close: drawn.append(fig) or [])
    base = ["plot", str(study_dir), "--x", "buffer.bytes", "--y", "nand.erases", "--by", "buffer.kind"]
    assert cli.main(base) == 0
    assert [ax.get_title() for ax in drawn[-1].axes] == ["ftl.gc = greedy", "ftl.gc = fifo"]
    assert cli.main([*base, "--mean-over", "ftl.gc"]) == 0
    fig = drawn[-1]
    assert len(fig.axes) == 1 and fig.get_suptitle().endswith("\nmean over ftl.gc")
    assert list(fig.axes[0].get_lines()[0].get_ydata()) == [
        value(df, "none", s, "nand.erases") + 5 for s in (1 * MiB, 4 * MiB, 16 * MiB)
    ]
    assert cli.main([*base, "--filter", "ftl.gc=fifo"]) == 0
    assert len(drawn[-1].axes) == 1 and "mean" not in drawn[-1].get_suptitle()


def test_cli_plot_too_many_panels_asks_for_a_filter(study_dir, monkeypatch, capsys, df):
    ok = df[df["status"] == "ok"]
    seeds = pd.concat([ok.assign(**{"workload.seed": i}) for i in range(1, 14)], ignore_index=True)
    monkeypatch.setattr(ssdlab, "load_results", lambda path: seeds.copy(), raising=False)
    argv = ["plot", str(study_dir), "--x", "buffer.bytes", "--y", "waf", "--by", "buffer.kind"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err == (
        "ssdlab: error: cells at the same point differ in workload.seed (workload.seed takes "
        + ", ".join(str(i) for i in range(1, 14))
        + ") (13 panels is too many): choose one with --filter workload.seed=VALUE, or average with "
        "--mean-over workload.seed\n"
    )
    assert cli.main([*argv, "--mean-over", "workload.seed", "--out", str(study_dir / "f")]) == 0


def test_default_figures_make_panels_of_a_third_axis():
    from ssdlab.report.html import default_figures

    grid = [
        {"buffer.kind": k, "buffer.bytes": b, "ftl.gc": g}
        for k in KINDS[1:]
        for b in SIZES[:2]
        for g in ["greedy", "fifo"]
    ]
    d = run_cells(grid)
    figs = default_figures(d, axes=["buffer.kind", "buffer.bytes", "ftl.gc"], metrics=["buffer.page_hit_ratio"])
    assert figs and not any("mean over" in caption for caption, _fig in figs)
    caption, fig = figs[0]
    assert caption == (
        "page write hit ratio (buffer.page_hit_ratio) against buffer.bytes, one line per buffer.kind; "
        "one panel per ftl.gc"
    )
    assert [ax.get_title() for ax in fig.axes if ax.get_visible()] == ["ftl.gc = greedy", "ftl.gc = fifo"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["plot", "{dir}", "--x", "buffer.size", "--y", "waf"], "column `buffer.size` not in the results"),
        (["plot", "{dir}", "--kind", "heatmap", "--x", "buffer.bytes", "--y", "waf"], "needs --by"),
        (
            ["plot", "{dir}", "--kind", "normalized", "--x", "buffer.bytes", "--y", "waf", "--by", "buffer.kind"],
            "needs --baseline",
        ),
        (["plot", "{dir}", "--x", "buffer.bytes", "--y", "waf", "--format", "png,gif"], "figure format gif"),
        (["plot", "{dir}", "--x", "buffer.kind", "--y", "waf"], "not numeric"),
        (["report", "{dir}/nothing-here"], "no such results directory"),
    ],
)
def test_cli_user_errors_are_one_line(study_dir, capsys, argv, message):
    code = cli.main([a.replace("{dir}", str(study_dir)) for a in argv])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("ssdlab: error: ") and message in err and err.count("\n") == 1


def test_report_command_on_a_real_sweep(tmp_path):
    from ssdlab import sweep

    spec = {
        "study": {"name": "tiny-sweep", "description": "two buffers, two sizes"},
        "base": BASE,
        "axes": {"buffer.kind": ["lru", "block-lru"], "buffer.bytes": ["1MiB", "4MiB"]},
    }
    out = tmp_path / "sweep"
    sweep.run_sweep(spec, out, workers=1, progress=False)
    p = subprocess.run(
        [sys.executable, "-m", "ssdlab", "report", str(out)], capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stderr
    text = (out / "report.html").read_text()
    assert len(data_uris(text)) == 3 and "two buffers, two sizes" in text
    assert text.count('<span class="badge ok">ok</span>') == 4
