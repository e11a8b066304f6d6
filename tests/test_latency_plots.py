"""Latency distributions people can read: CDF and series figures split into panels by the rule of
the other figures, one run's CDF (`Result.plot_cdf`, `run --plot-cdf`), histograms in
`Result.to_frame`, and a line figure with one x value drawn as bars."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import ssdlab
from conftest import swept
from ssdlab import cli
from ssdlab.report import figures as F

TIMED = {
    "workload": {"kind": "uniform", "requests": 2000, "footprint_bytes": "8MiB", "read_fraction": 0.5},
    "device": {"logical_bytes": "8MiB", "pages_per_block": 32, "op": 0.25, "channels": 2, "chips_per_channel": 2},
    "buffer": {"kind": "lru", "bytes": "256KiB"},
    "run": {"mode": "timed", "precondition": "fill", "queue_depth": 4},
}


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    """Four timed cells: queue depth 1 and 16 for each of two buffers."""
    study = {"base": TIMED, "axes": {"buffer.kind": ["none", "lru"], "run.queue_depth": [1, 16]}}
    return swept(tmp_path_factory, "cdf", study)


def titles(fig):
    return [ax.get_title() for ax in fig.axes if ax.get_visible() and ax.get_title()]


def test_cdf_panels_follow_the_rule_of_line_figures(grid):
    df = ssdlab.load_results(grid)
    # One line per queue depth; buffer.kind varies too: a panel per buffer, as a line figure gets.
    fig = F.distribution_cdf(df, "latency.read_ns", by="run.queue_depth")
    line = F.line(df, x="run.queue_depth", y="latency.read.p99_us")
    assert titles(fig) == titles(line) == ["buffer.kind = none", "buffer.kind = lru"]
    for ax, kind in zip(fig.axes, ["none", "lru"], strict=True):
        assert [ln.get_label() for ln in ax.get_lines()] == ["1", "16"]
        for ln, qd in zip(ax.get_lines(), [1, 16], strict=True):
            row = df[(df["buffer.kind"] == kind) & (df["run.queue_depth"] == qd)].iloc[0]
            values, counts = F.histogram_of(row["histograms"], "latency.read_ns")
            assert list(ln.get_xdata()) == pytest.approx(values / 1000)
            assert list(ln.get_ydata()) == pytest.approx(np.cumsum(counts) / counts.sum())
    # The legend is the figure's, beside the panels (not on an axes, over the data).
    assert fig.legends and not any(ax.get_legend() for ax in fig.axes)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["1", "16"]
    assert fig.legends[0].get_title().get_text() == "run.queue_depth"
    # Without --by every cell is a panel of its own.
    assert len(titles(F.distribution_cdf(df, "latency.read_ns"))) == 4
    # Drawing into a given ax leaves no room for panels.
    other = F._new_figure()
    with pytest.raises(ValueError, match="differ in buffer.kind"):
        F.distribution_cdf(df, "latency.read_ns", by="run.queue_depth", ax=other.add_subplot())


def test_cdf_mean_over_averages_the_cells_cdfs_and_says_so(grid):
    df = ssdlab.load_results(grid)
    fig = F.distribution_cdf(df, "latency.read_ns", by="run.queue_depth", mean_over=["buffer.kind"])
    assert len(fig.axes) == 1 and "mean over buffer.kind" in fig.get_suptitle()
    deep = df[df["run.queue_depth"] == 16]
    hists = [F.histogram_of(h, "latency.read_ns") for h in deep["histograms"]]
    ln = fig.axes[0].get_lines()[1]
    x = float(np.median(hists[0][0]))  # a latency (ns) inside both distributions
    want = np.mean([counts[values <= x].sum() / counts.sum() for values, counts in hists])
    at = np.searchsorted(ln.get_xdata(), x / 1000, side="right") - 1
    assert ln.get_ydata()[at] == pytest.approx(want)


def test_cli_cdf_with_many_cells_refuses_with_a_message(grid, monkeypatch, capsys, tmp_path):
    df = ssdlab.load_results(grid)
    many = pd.concat([df.assign(**{"workload.seed": s}) for s in range(1, 5)], ignore_index=True)
    monkeypatch.setattr(ssdlab, "load_results", lambda path: many.copy(), raising=False)
    argv = ["plot", str(grid), "--kind", "cdf", "--y", "latency.read_ns", "--tail", "--out", str(tmp_path / "c")]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "(16 panels is too many)" in err and "one line per value with --by buffer.kind" in err
    assert err.count("\n") == 1
    # A line per queue depth, a panel per buffer, the seeds averaged: drawn.
    ok = [*argv, "--by", "run.queue_depth", "--mean-over", "workload.seed", "--format", "png"]
    assert cli.main(ok) == 0
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_result_plot_cdf_writes_a_file(tmp_path):
    r = ssdlab.simulate(TIMED)
    fig = r.plot_cdf(tmp_path / "lat.svg")
    assert (tmp_path / "lat.svg").read_bytes().startswith(b"<?xml")
    whole, tail = fig.axes[:2]
    assert [ln.get_label() for ln in whole.get_lines()] == ["read latency", "write latency"]
    assert whole.get_xscale() == "log" and tail.get_yscale() == "logit"
    values, counts = np.asarray(r.histograms["latency.read_ns"], dtype=float).T
    assert list(whole.get_lines()[0].get_xdata()) == pytest.approx(values / 1000)
    assert whole.get_lines()[0].get_ydata()[-1] == pytest.approx(1.0)
    r.plot_cdf(tmp_path / "lat")  # no extension: PNG
    assert (tmp_path / "lat.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    counts_mode = ssdlab.simulate({**TIMED, "run": {**TIMED["run"], "mode": "counts"}})
    with pytest.raises(ValueError, match="timed"):
        counts_mode.plot_cdf()


def test_run_plot_cdf_writes_a_file(tmp_path, capsys):
    cfg = tmp_path / "t.toml"
    cfg.write_text(
        '[workload]\nkind = "uniform"\nrequests = 2000\nfootprint_bytes = "8MiB"\nread_fraction = 0.5\n'
        '[device]\nlogical_bytes = "8MiB"\npages_per_block = 32\nop = 0.25\nchannels = 2\n'
        '[run]\nmode = "timed"\nprecondition = "fill"\nqueue_depth = 4\n'
    )
    out = tmp_path / "cdf.png"
    assert cli.main(["run", "--config", str(cfg), "--plot-cdf", str(out), "--quiet"]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {out}" in capsys.readouterr().out
    # Counts mode records no latencies: refused before running.
    argv = ["run", "--set", "workload.requests=100", "--plot-cdf", str(tmp_path / "no.png")]
    assert cli.main(argv) == 2
    assert "--plot-cdf" in capsys.readouterr().err and not (tmp_path / "no.png").exists()


def test_to_frame_carries_the_histograms():
    r = ssdlab.simulate(TIMED)
    assert "histograms" not in r.to_frame().columns
    row = r.to_frame(histograms=True).iloc[0]
    hists = json.loads(row["histograms"])
    total = sum(c for _v, c in hists["latency.all_ns"])
    assert total == row["run.measured_requests"] == 2000
    assert sum(c for _v, c in hists["latency.read_ns"]) == row["host.read_requests"] > 0
    assert sum(c for _v, c in hists["latency.write_ns"]) == row["host.write_requests"] > 0
    # Frames of several runs draw as a study's cells do.
    deeper = ssdlab.simulate({**TIMED, "run": {**TIMED["run"], "queue_depth": 16}})
    df = pd.concat([r.to_frame(histograms=True), deeper.to_frame(histograms=True)], ignore_index=True)
    fig = F.distribution_cdf(df, "latency.write_ns", by="run.queue_depth")
    assert [ln.get_label() for ln in fig.axes[0].get_lines()] == ["4", "16"]


def test_series_mean_over_is_the_mean_at_common_points():
    runs = [
        ssdlab.simulate(
            {
                "workload": {"kind": "uniform", "requests": 300, "footprint_bytes": "1MiB", "seed": s},
                "run": {"sample_every": 100},
            }
        )  # fmt: skip
        for s in (1, 2)
    ]
    df = pd.concat([r.to_frame(series=True) for r in runs], ignore_index=True)
    assert len(titles(F.series(df, "nand.programs.total"))) == 2  # workload.seed varies: two panels
    fig = F.series(df, "nand.programs.total", mean_over=["workload.seed"])
    (ln,) = fig.axes[0].get_lines()
    assert list(ln.get_xdata()) == [100, 200, 300]
    want = np.mean([r.series["nand.programs.total"].to_numpy() for r in runs], axis=0)
    assert list(ln.get_ydata()) == pytest.approx(want)
    assert "mean over workload.seed" in fig.get_suptitle()


def test_a_line_with_one_x_value_is_drawn_as_bars():
    df = pd.DataFrame(
        {
            "status": "ok",
            "buffer.bytes": [32 << 20] * 3,
            "buffer.kind": ["lru", "bpac", "hwb"],
            "buffer.page_hit_ratio": [0.24, 0.32, 0.33],
        }
    )
    fig = F.line(df, x="buffer.bytes", y="buffer.page_hit_ratio", by="buffer.kind", logx=True)
    ax = fig.axes[0]
    assert not ax.get_lines()
    assert [p.get_height() for p in ax.patches] == pytest.approx([0.24, 0.32, 0.33])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["32 MiB"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["lru", "bpac", "hwb"]
    # Two x values: lines again.
    two = pd.concat([df, df.assign(**{"buffer.bytes": 64 << 20})], ignore_index=True)
    assert len(F.line(two, x="buffer.bytes", y="buffer.page_hit_ratio", by="buffer.kind").axes[0].get_lines()) == 3
