"""Timed mode from Python: the latency metrics and distributions a run returns, what a sweep
stores, and the latency CDF figure (whole, and its tail) drawn from the stored distributions."""

from __future__ import annotations

import numpy as np
import pytest
import ssdlab
from conftest import swept
from ssdlab import cli
from ssdlab.report import figures as F

# Reads of a filled device at QD 1: every read takes command + array read + transfer.
QD1 = {
    "workload": {"kind": "uniform", "requests": 2000, "footprint_bytes": "8MiB", "read_fraction": 1.0},
    "device": {"logical_bytes": "8MiB", "pages_per_block": 32, "op": 0.25, "channels": 2, "chips_per_channel": 2},
    "nand": {"read_us": 40.0, "command_us": 2.0, "channel_mb_s": 409.6},
    "buffer": {"kind": "none"},
    "run": {"mode": "timed", "queue_depth": 1, "precondition": "fill"},
}


def test_qd1_reads_from_python():
    r = ssdlab.simulate(QD1)
    exact = 2.0 + 40.0 + 4096 / 409.6
    assert r.metrics["latency.read.mean_us"] == pytest.approx(exact, rel=1e-9)
    assert r.metrics["latency.read.max_us"] == pytest.approx(exact, rel=1e-9)
    assert r.metrics["throughput.iops"] == pytest.approx(1e6 / exact, rel=1e-9)
    (value, count), *rest = r.histograms["latency.read_ns"]
    assert rest == [] and count == 2000 and value == pytest.approx(exact * 1000, rel=1e-3)
    # Counts mode gives the same counts.
    counts = ssdlab.simulate({**QD1, "run": {**QD1["run"], "mode": "counts"}})
    for k, v in counts.metrics.items():
        assert r.metrics[k] == v or (np.isnan(v) and np.isnan(r.metrics[k])), k


STUDY = {
    "base": {
        "workload": {"kind": "uniform", "requests": 3000, "footprint_bytes": "8MiB", "read_fraction": 0.5},
        "device": {"logical_bytes": "8MiB", "pages_per_block": 32, "op": 0.25, "channels": 2, "chips_per_channel": 2},
        "buffer": {"kind": "lru", "bytes": "256KiB"},
        "run": {"mode": "timed", "precondition": "fill"},
    },
    "axes": {"run.queue_depth": [1, 16]},
}


@pytest.fixture(scope="module")
def timed_dir(tmp_path_factory):
    return swept(tmp_path_factory, "timed", STUDY)


def test_sweep_stores_distributions_and_cdf_is_their_cumulative_share(timed_dir):
    df = ssdlab.load_results(timed_dir)
    assert list(df["run.queue_depth"]) == [1, 16]
    # Deeper queue: more throughput, longer waits.
    assert df["throughput.iops"].iloc[1] > df["throughput.iops"].iloc[0]
    assert df["latency.read.p99_us"].iloc[1] > df["latency.read.p99_us"].iloc[0]
    fig = F.distribution_cdf(df, "latency.read_ns", by="run.queue_depth")
    lines = fig.axes[0].get_lines()
    assert [ln.get_label() for ln in lines] == ["1", "16"]
    for ln, (_, row) in zip(lines, df.iterrows(), strict=True):
        values, counts = F.histogram_of(row["histograms"], "latency.read_ns")
        assert list(ln.get_xdata()) == pytest.approx(values / 1000)
        assert ln.get_ydata()[-1] == pytest.approx(1.0)
        assert counts.sum() == row["host.read_requests"]
        # The p99 metric sits where the CDF crosses 0.99 (one histogram bucket, 0.1%).
        x99 = ln.get_xdata()[np.searchsorted(ln.get_ydata(), 0.99)]
        assert x99 == pytest.approx(row["latency.read.p99_us"], rel=2e-3)
    assert fig.axes[0].get_xlabel() == "read latency (µs)"
    tail = F.distribution_cdf(df, "latency.write_ns", tail=True)
    assert tail.axes[0].get_yscale() == "logit" and tail.axes[0].get_ylim() == pytest.approx((0.9, 0.9999))
    with pytest.raises(ValueError, match="latency.nope_ns"):
        F.distribution_cdf(df, "latency.nope_ns")


def test_cli_plot_latency_cdf(timed_dir, tmp_path):
    out = tmp_path / "cdf"
    argv = ["plot", str(timed_dir), "--kind", "cdf", "--y", "latency.all_ns", "--tail"]
    assert cli.main([*argv, "--out", str(out), "--format", "png"]) == 0
    assert (tmp_path / "cdf.png").stat().st_size > 0


def test_timed_keys_are_checked():
    with pytest.raises(ssdlab.SsdlabError, match="run.mode"):
        ssdlab.simulate({**QD1, "run": {"mode": "clocked"}})
    with pytest.raises(ssdlab.SsdlabError, match="nand.channel_mb_s"):
        ssdlab.simulate({**QD1, "nand": {"channel_mb_s": 100.0, "transfer_us": 5.0}})
    with pytest.raises(ssdlab.SsdlabError, match="device.stripe"):
        ssdlab.simulate({**QD1, "device": {"stripe": "plane-first"}})
    with pytest.raises(ssdlab.SsdlabError, match="device.scheduler"):
        ssdlab.simulate({**QD1, "device": {"scheduler": "sjf"}})
    with pytest.raises(ssdlab.SsdlabError, match="device.channels"):
        ssdlab.simulate({**QD1, "device": {"channels": 0}})
