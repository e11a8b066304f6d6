"""Time series (`run.sample_every`): exact rows, policy gauges, storage in sweeps, plots."""

import json
import math

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import ssdlab
from conftest import swept
from ssdlab import cli
from ssdlab.report import figures as F
from ssdlab.store import ResultStore, record_table


def write_trace(path, pages):
    """One 4 KiB write per page, Tencent CBS CSV."""
    path.write_text("".join(f"{i},{p * 8},8,1,0\n" for i, p in enumerate(pages)))
    return str(path)


# 4 pages/block, one logical block, 6 physical blocks, GC when < 2 free blocks (greedy): LPN 0-3,
# then LPN 0 seventeen times. The first GC finds a block of stale copies only: 1 erase, no copies.
GC_PAGES = list(range(4)) + [0] * 17


def gc_run(tmp_path, pages, **run):
    return ssdlab.simulate(
        {
            "workload": {
                "kind": "trace",
                "path": write_trace(tmp_path / f"t{len(pages)}.csv", pages),
                "format": "tencent",
            },
            "device": {"pages_per_block": 4, "logical_bytes": 4 * 4096, "op": 5.0},
            "buffer": {"kind": "none"},
            "ftl": {"gc": "greedy", "page": {"gc_free_blocks": 2}},
            "run": {"check_integrity": True, **run},
        }
    )


def test_rows_hand_computed(tmp_path):
    r = gc_run(tmp_path, GC_PAGES, sample_every=5)
    s = r.series
    assert list(s.columns[:2]) == ["requests", "measured"]
    assert list(s["requests"]) == [5, 10, 15, 20, 21]
    assert list(s["measured"]) == [1] * 5
    # No buffer: every write is programmed at once, and greedy GC never copies a page.
    assert list(s["host.write_pages"]) == [5, 10, 15, 20, 21]
    assert list(s["nand.programs.host"]) == [5, 10, 15, 20, 21]
    assert list(s["nand.programs.total"]) == [5, 10, 15, 20, 21]
    assert list(s["waf"]) == [1.0] * 5
    assert list(s["nand.programs.gc"]) == [0] * 5
    # Each row is the end of a run of the first k requests; the one erase comes once 5 blocks are used.
    for k, erases in zip([5, 10, 15, 20], s["nand.erases"], strict=False):
        assert erases == gc_run(tmp_path, GC_PAGES[:k]).metrics["nand.erases"]
    assert list(s["nand.erases"])[-1] == r.metrics["nand.erases"] == 1
    assert list(s["gc.victims"])[-1] == 1
    # Without a buffer there are no write hits and no padding policy.
    assert list(s["buffer.page_hit_ratio"]) == [0.0] * 5
    assert "padding.threshold_fraction" not in s.columns
    assert "padding.threshold_fraction" not in r.metrics


def test_warmup_rows_count_from_the_run_start(tmp_path):
    s = gc_run(tmp_path, GC_PAGES, sample_every=5, warmup_requests=10).series
    assert list(s["requests"]) == [5, 10, 15, 20, 21]
    assert list(s["measured"]) == [0, 0, 1, 1, 1]
    assert list(s["host.write_pages"]) == [5, 10, 5, 10, 11]
    assert list(s["nand.programs.host"]) == [5, 10, 5, 10, 11]


def test_off_by_default_and_sampling_changes_nothing(tmp_path):
    off = gc_run(tmp_path, GC_PAGES)
    assert isinstance(off.series, pd.DataFrame) and off.series.empty
    on = gc_run(tmp_path, GC_PAGES, sample_every=7)
    assert on.metrics == pytest.approx(off.metrics, nan_ok=True)
    # 21 is a multiple of 7: the row at 21 is the one after the final flush, not a duplicate.
    assert list(on.series["requests"]) == [7, 14, 21]


def test_bad_sample_every_names_the_field():
    with pytest.raises(ssdlab.SsdlabError, match="run.sample_every"):
        ssdlab.simulate({"run": {"sample_every": -1}})
    with pytest.raises(ssdlab.SsdlabError, match="run.sample_every"):
        ssdlab.simulate({"workload": {"kind": "uniform", "requests": 3_000_000}, "run": {"sample_every": 2}})


def hybrid(ftl, every, **hitstat):
    return ssdlab.simulate(
        {
            "workload": {"kind": "zipf", "requests": 3000, "request_bytes": 8192, "footprint_bytes": "2MiB"},
            "device": {"logical_bytes": "2MiB", "pages_per_block": 16, "op": 0.25},
            "buffer": {"kind": "hitstat", "bytes": "64KiB", "hitstat": {"period": 200, "hit_log": 16, **hitstat}},
            "ftl": {"kind": ftl},
            "run": {"sample_every": every},
        }
    )


def test_model_threshold_on_fast_is_one_over_r_db_plus_one():
    r = hybrid("fast", 50, initial_levels=4)
    s = r.series
    assert r.config["buffer"]["padding"] == "model"
    merged = s["ftl.r_db"] > 0
    # Before FAST's first merge the model's initial threshold holds; then B_w/N = 1/(R_DB + 1).
    assert not merged.iloc[0] and merged.iloc[-1]
    assert (s.loc[~merged, "padding.threshold_fraction"] == 0.33).all()
    want = 1.0 / (s.loc[merged, "ftl.r_db"] + 1.0)
    np.testing.assert_allclose(s.loc[merged, "padding.threshold_fraction"], want, rtol=1e-12)
    assert r.metrics["padding.threshold_fraction"] == s["padding.threshold_fraction"].iloc[-1]
    # HitStat's levels adapt within [1, hit_log + 1] and end as reported.
    levels = s["buffer.hitstat.levels"]
    assert levels.between(1, 17).all() and levels.nunique() > 1
    assert r.metrics["buffer.hitstat.levels"] == levels.iloc[-1]
    # Metric names never equal configuration keys (the results store keeps both as columns).
    keys = set(ssdlab.api.flatten(r.config)) | {p["key"] for c in ssdlab.api.components() for p in c["params"]}
    assert "buffer.hitstat.initial_levels" in keys
    assert not set(r.metrics) & keys


def test_model_threshold_on_bast_follows_the_padding_model():
    r = hybrid("bast", 20, initial_levels=4)
    s = r.series
    ce, cw, n = r.config["nand"]["erase_us"], r.config["nand"]["program_us"], 16
    r_db, r_lb, u_lb = s["ftl.r_db"], s["ftl.r_lb"], s["ftl.u_lb"]
    merged = (r_db > 0) & (r_lb > 0) & (u_lb > 0)
    assert not merged.iloc[0] and merged.iloc[-1]
    assert (s.loc[~merged, "padding.threshold_fraction"] == 1.0).all()  # BAST's initial threshold
    # B_w / N = R_LB·U_LB·(C_e + N·C_w) / ((R_LB + R_DB)·C_e + (R_LB·U_LB + R_DB)·N·C_w)
    a, b, c = r_lb[merged], r_db[merged], u_lb[merged]
    want = a * c * (ce + n * cw) / ((a + b) * ce + (a * c + b) * n * cw)
    np.testing.assert_allclose(s.loc[merged, "padding.threshold_fraction"], want, rtol=1e-12)


def test_fixed_threshold_gauge():
    r = ssdlab.simulate(
        {
            "workload": {"kind": "uniform", "requests": 200, "footprint_bytes": "1MiB"},
            "buffer": {"kind": "bplru", "bytes": "64KiB"},
            "padding": {"fixed": {"threshold": 0.25}},
            "run": {"sample_every": 100},
        }
    )
    assert list(r.series["padding.threshold_fraction"]) == [0.25, 0.25]
    assert r.metrics["padding.threshold_fraction"] == 0.25
    assert "buffer.hitstat.levels" not in r.metrics


STUDY = {
    "base": {
        "workload": {"kind": "uniform", "requests": 600, "footprint_bytes": "2MiB"},
        "device": {"logical_bytes": "2MiB", "pages_per_block": 16, "op": 0.25},
        "buffer": {"bytes": "64KiB"},
        "run": {"precondition": "fill", "sample_every": 200},
    },
    "axes": {"buffer.kind": ["lru", "block-lru"]},
}


@pytest.fixture(scope="module")
def series_dir(tmp_path_factory):
    return swept(tmp_path_factory, "series", STUDY)


def test_sweep_stores_the_series(series_dir):
    df = ssdlab.load_results(series_dir)
    assert list(df["buffer.kind"]) == ["lru", "block-lru"]
    for _, row in df.iterrows():
        cfg = json.loads(json.dumps(STUDY["base"]))
        cfg["buffer"]["kind"] = row["buffer.kind"]
        direct = ssdlab.simulate(cfg).series
        pd.testing.assert_frame_equal(row["series"], direct)
        assert list(row["series"]["requests"]) == [200, 400, 600]
        assert row["series"]["waf"].iloc[-1] == row["waf"]


def test_store_without_series_still_loads(tmp_path):
    # A file written before time series existed (no `series` column), next to a current one.
    store = ResultStore(tmp_path / "old", create=True)
    rec = {"key": "k1", "cell": 0, "status": "ok", "axes": {}, "config": {}, "metrics": {"waf": 1.5}}
    old = record_table(rec)
    old = old.drop_columns(["series"]).replace_schema_metadata(old.schema.metadata)
    pq.write_table(old, store.cells / "part-0-old.parquet")
    df = ssdlab.load_results(tmp_path / "old")
    assert list(df["waf"]) == [1.5]
    store.append({**rec, "key": "k2", "cell": 1, "metrics": {"waf": 2.0}, "series": {"requests": [1.0]}})
    df = ssdlab.load_results(tmp_path / "old")
    assert list(df["waf"]) == [1.5, 2.0]
    assert df["series"].iloc[0] is None
    assert list(df["series"].iloc[1]["requests"]) == [1.0]


def test_series_figure_data(series_dir):
    df = ssdlab.load_results(series_dir)
    fig = F.series(df, "nand.programs.total", by="buffer.kind")
    lines = fig.axes[0].get_lines()
    assert [ln.get_label() for ln in lines] == ["lru", "block-lru"]
    for ln, (_, row) in zip(lines, df.iterrows(), strict=True):
        assert list(ln.get_xdata()) == [200, 400, 600]
        assert list(ln.get_ydata()) == list(row["series"]["nand.programs.total"])
    assert fig.axes[0].get_xlabel() == "requests"
    with pytest.raises(ValueError, match="column `wafx` not in the time series"):
        F.series(df, "wafx")
    with pytest.raises(ValueError, match="run.sample_every"):
        F.series(df.assign(series=None), "waf")


def test_cli_plot_series_and_run_json(series_dir, tmp_path, capsys):
    out = tmp_path / "fig"
    argv = ["plot", str(series_dir), "--kind", "series", "--y", "waf", "--filter", "buffer.kind=lru"]
    assert cli.main([*argv, "--out", str(out), "--format", "png"]) == 0
    assert (tmp_path / "fig.png").stat().st_size > 0
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        '[workload]\nkind = "uniform"\nrequests = 300\nfootprint_bytes = "1MiB"\n[run]\nsample_every = 100\n'
    )
    assert cli.main(["run", "--config", str(cfg), "--json", str(tmp_path / "r.json"), "--quiet"]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["series"]["requests"] == [100, 200, 300]
    assert doc["series"]["waf"][-1] == doc["metrics"]["waf"] or math.isnan(doc["metrics"]["waf"])
