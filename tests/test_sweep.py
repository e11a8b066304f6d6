"""Sweeps: study expansion, executors, the results store, resume after a kill, the CLI."""

import hashlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import tomllib

import pandas as pd
import pyarrow.parquet as pq
import pytest
import ssdlab
from ssdlab import cli, sweep
from ssdlab.api import flatten
from ssdlab.store import ResultStore, StoreError
from ssdlab.sweep import StudyError, expand_study, load_study, run_sweep

TINY = {"workload": {"kind": "uniform", "requests": 2000, "footprint_bytes": "64MiB"}}
METRICS = ["waf", "nand.erases", "buffer.page_hit_ratio"]


def study_file(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


# -- expansion ---------------------------------------------------------------------------------


def test_product_of_axes_and_zip_groups_in_deterministic_order():
    study = {
        "base": TINY,
        "axes": {"buffer.kind": ["none", "lru"], "device.op": [0.1, 0.2, 0.3]},
        "zip": [{"ftl.gc": ["greedy", "fifo"], "ftl.page.gc_free_blocks": [4, 8]}],
    }
    cells = expand_study(study)
    assert len(cells) == 2 * 3 * 2
    assert [c.index for c in cells] == list(range(12))
    # the last dimension varies fastest; zip keys move together
    assert cells[0].values == {
        "buffer.kind": "none",
        "device.op": 0.1,
        "ftl.gc": "greedy",
        "ftl.page.gc_free_blocks": 4,
    }
    assert cells[1].values == {"buffer.kind": "none", "device.op": 0.1, "ftl.gc": "fifo", "ftl.page.gc_free_blocks": 8}
    assert cells[-1].values == {"buffer.kind": "lru", "device.op": 0.3, "ftl.gc": "fifo", "ftl.page.gc_free_blocks": 8}
    for c in cells:
        assert (c.values["ftl.gc"], c.values["ftl.page.gc_free_blocks"]) in {("greedy", 4), ("fifo", 8)}
        # base deep-merged with the cell's values
        assert c.config["workload"] == TINY["workload"]
        assert c.config["ftl"] == {
            "gc": c.values["ftl.gc"],
            "page": {"gc_free_blocks": c.values["ftl.page.gc_free_blocks"]},
        }
    assert len({c.key for c in cells}) == 12
    assert [c.key for c in expand_study(study)] == [c.key for c in cells]
    # no axes: the base alone
    assert len(expand_study({"base": TINY})) == 1


def test_ranges_geometric_ranges_and_value_tables(tmp_path):
    f = study_file(
        tmp_path / "s.toml",
        """
[base.workload]
kind = "uniform"

[axes]
"device.op" = {start = 0.1, stop = 0.5, step = 0.1}
"workload.requests" = {start = 1000, stop = 3000, step = 1000}
"workload.read_fraction" = {start = 0.0, stop = 1.0, num = 5}
"run.seed" = {geom = [1, 64], factor = 2}
"buffer.bytes" = {geom = ["1MiB", "4MiB"]}
"nand.read_us" = {values = [50, 60.5]}
ftl.gc = ["greedy", "fifo"]
""",
    )
    st = load_study(f)
    dims = dict(zip(st.axis_keys, [[next(iter(v.values())) for v in d] for d in st.dims], strict=True))
    assert dims["device.op"] == [0.1, 0.2, 0.3, 0.4, 0.5]  # inclusive stop, no 0.30000000000000004
    assert dims["workload.requests"] == [1000, 2000, 3000]
    assert all(isinstance(v, int) for v in dims["workload.requests"])
    assert dims["workload.read_fraction"] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert dims["run.seed"] == [1, 2, 4, 8, 16, 32, 64]
    assert dims["buffer.bytes"] == [1 << 20, 2 << 20, 4 << 20]
    assert dims["nand.read_us"] == [50, 60.5]
    assert dims["ftl.gc"] == ["greedy", "fifo"]  # unquoted dotted key (a nested TOML table) works too
    assert st.size == 5 * 3 * 5 * 7 * 3 * 2 * 2

    for spec, msg in [
        ({"start": 0.1, "stop": 0.5, "step": 0}, "must not be 0"),
        ({"start": 0.5, "stop": 0.1, "step": 0.1}, "never reaches"),
        ({"start": 0.1, "stop": 0.5, "stepp": 0.1}, "unknown range key `stepp`"),
        ({"geom": [1, 64], "factor": 1}, "factor"),
        ({"values": []}, "no values"),
        ("lru", "expected a list of values or a range table"),
    ]:
        with pytest.raises(StudyError, match=msg) as e:
            load_study({"axes": {"device.op": spec}})
        assert "device.op" in str(e.value)
    # a decreasing range with a negative step
    st = load_study({"axes": {"device.op": {"start": 0.3, "stop": 0.1, "step": -0.1}}})
    assert [d["device.op"] for d in st.dims[0]] == [0.3, 0.2, 0.1]


def test_study_errors_name_the_table_key_or_cell(tmp_path):
    with pytest.raises(StudyError, match=r"\[\[zip\]\] group 1.*`ftl.kind` has 2.*`ftl.gc` has 3"):
        load_study({"zip": [{"ftl.kind": ["page", "page"], "ftl.gc": ["greedy", "fifo", "cost-benefit"]}]})
    with pytest.raises(StudyError, match="unknown table `axis`"):
        load_study({"axis": {"buffer.kind": ["lru"]}})
    with pytest.raises(StudyError, match="`buffer.kind` appears in both"):
        load_study({"axes": {"buffer.kind": ["lru"]}, "zip": [{"buffer.kind": ["none"], "ftl.gc": ["fifo"]}]})
    with pytest.raises(StudyError, match="`op` is not a dotted configuration key"):
        load_study({"axes": {"op": [0.1]}})
    # invalid configuration keys and values are caught before anything runs, naming the cell
    with pytest.raises(
        StudyError,
        match=r"cell 0 \(buffer.kind=\"lru\", buffer.bites=\"4MiB\"\).*unknown key; did you mean `buffer.bytes`\?",
    ):
        expand_study({"base": TINY, "axes": {"buffer.kind": ["lru"], "buffer.bites": ["4MiB", "1MiB"]}})
    with pytest.raises(StudyError, match=r"cell 0 \(device.op=0\).*must be > 0"):
        expand_study({"base": TINY, "axes": {"device.op": [0, 0.1]}})
    # the CLI: one line, exit 2, naming the key; nothing written
    bad = study_file(tmp_path / "bad.toml", '[axes]\n"buffer.kind" = ["lru", "arc"]\n')
    p = subprocess.run(
        [sys.executable, "-m", "ssdlab", "sweep", str(bad), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2
    assert p.stderr.startswith("ssdlab: error:") and "buffer.kind" in p.stderr and "arc" in p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
    bad.write_text('[axes]\n"buffer.kind" = ["lru"\n')
    assert cli.main(["sweep", str(bad), "--out", str(tmp_path / "out")]) == 2


def test_relative_trace_paths_resolve_against_the_study_directory(tmp_path):
    f = study_file(
        tmp_path / "studies" / "s.toml",
        '[base.workload]\nkind = "trace"\npath = "traces/a.csv"\n'
        '[axes]\n"workload.path" = ["traces/a.csv", "../b.csv", "/abs/c.csv"]\n',
    )
    paths = [c.config["workload"]["path"] for c in expand_study(f)]
    assert paths == [str(tmp_path / "studies/traces/a.csv"), str(tmp_path / "b.csv"), "/abs/c.csv"]
    st = load_study(f)
    assert st.base["workload"]["path"] == str(tmp_path / "studies/traces/a.csv")

    # A flow's trace too, in [base] and on an axis (`flows.1.workload.path`), and in a configuration file.
    flows = '[[base.flows]]\nworkload = { kind = "trace", path = "r.csv" }\n'
    flows += '[[base.flows]]\nworkload = { kind = "uniform" }\n'
    f.write_text(flows + '[axes]\n"flows.1.workload.path" = ["w.csv", "/abs/w.csv"]\n')
    st = load_study(f)
    assert st.base["flows"][0]["workload"]["path"] == str(tmp_path / "studies/r.csv")
    assert [d["flows.1.workload.path"] for d in st.dims[0]] == [str(tmp_path / "studies/w.csv"), "/abs/w.csv"]
    cfg = tmp_path / "studies" / "c.toml"
    cfg.write_text(flows.replace("base.", ""))
    assert ssdlab.Config.from_toml(cfg).to_dict()["flows"][0]["workload"]["path"] == str(tmp_path / "studies/r.csv")


def test_equal_resolved_configurations_share_a_key():
    cells = expand_study({"base": TINY, "axes": {"buffer.bytes": ["16MiB", 16 << 20, "8MiB"]}})
    assert cells[0].key == cells[1].key != cells[2].key
    assert len(cells[0].key) == 64


def test_sweep_says_when_it_deduplicated_cells(tmp_path, capsys):
    spec = {"base": TINY, "axes": {"buffer.bytes": ["16MiB", 16 << 20, "8MiB", 8 << 20]}}
    s = run_sweep(spec, tmp_path / "out", workers=1, progress=True)
    assert (s.total, s.duplicates, s.ran) == (4, 2, 2)
    assert s.duplicate_of == {1: 0, 3: 2}
    line = "2 cells share an earlier cell's configuration and were run once: cell 1 = cell 0, cell 3 = cell 2"
    assert s.duplicates_line() == line
    assert f"study: {line}" in capsys.readouterr().err
    # again: both stored, and still said (a rerun skips the stored cells, not the duplicates)
    f = tmp_path / "out" / "study.toml"
    assert cli.main(["sweep", str(f), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "duplicates 2 (same configuration as an earlier cell, run once)" in out and line in out
    assert "skipped    2 (already stored)" in out


def test_result_to_frame_has_the_columns_of_load_results(tmp_path):
    spec = {"base": TINY, "axes": {"buffer.kind": ["lru"]}}
    run_sweep(spec, tmp_path / "out", workers=1, progress=False)
    df = ssdlab.load_results(tmp_path / "out")
    frame = ssdlab.simulate(expand_study(spec)[0].config).to_frame()
    assert list(frame.columns) == df.attrs["config_columns"] + df.attrs["metric_columns"]
    assert frame["buffer.kind"][0] == df["buffer.kind"][0] == "lru"
    assert frame["waf"][0] == df["waf"][0]


# -- running and the store ---------------------------------------------------------------------


def test_results_match_a_direct_simulation(tmp_path, traces, capfd):
    shutil.copy(traces / "caffeine_msr_hm0_sample" / "msr-cambridge1-sample.csv", tmp_path / "hm0.csv")
    f = study_file(
        tmp_path / "s.toml",
        """
[study]
name = "direct"
[base.workload]
kind = "uniform"
requests = 2000
footprint_bytes = "64MiB"
[base.buffer]
bytes = "1MiB"
[[grid]]
[grid.axes]
"buffer.kind" = ["none", "lru"]
"workload.kind" = ["uniform"]
[[grid]]
[grid.axes]
"buffer.kind" = ["none", "lru"]
"workload.kind" = ["trace"]
"workload.path" = ["hm0.csv"]
"workload.address_map" = ["compact"]
""",
    )
    out = tmp_path / "out"
    summary = run_sweep(f, out, workers=2, progress=True)
    assert (summary.total, summary.skipped, summary.ran, summary.ok, summary.failed) == (4, 0, 4, 4, 0)
    assert "4/4 cells, 0 failed" in capfd.readouterr().err  # not a tty: plain lines
    assert (out / "study.toml").read_text() == f.read_text()

    df = ssdlab.load_results(out)
    assert len(df) == 4 and list(df["status"]) == ["ok"] * 4 and df["error"].isna().all()
    assert df.attrs["axes"] == ["buffer.kind", "workload.kind", "workload.path", "workload.address_map"]
    digest = hashlib.sha256((tmp_path / "hm0.csv").read_bytes()).hexdigest()
    for cell in expand_study(f):
        row = df.loc[df["key"] == cell.key].iloc[0]
        res = ssdlab.simulate(cell.config)
        for name, value in res.metrics.items():
            assert same(row[name], value), name
        for name, value in flatten(res.config).items():
            if value is None:  # a missing value: None, or <NA> in a nullable integer column
                assert row[name] is None or row[name] is pd.NA, name
            else:
                assert row[name] == value, name
        assert json.loads(row["axes"]) == cell.values
        assert row["prov.ssdlab_version"] == ssdlab.__version__
        assert row["prov.trace_digest"] == (digest if cell.values["workload.kind"] == "trace" else None)
        assert row["prov.wall_s"] > 0 and row["prov.host"] and row["prov.finished_at"].endswith("Z")
        rev = row["prov.git_revision"]
        assert rev is None or (len(rev) == 40 and int(rev, 16) >= 0)
    assert df["buffer.bytes"].dtype == "int64" and df["device.op"].dtype == "float64"

    # a second run stores nothing new
    again = run_sweep(f, out, progress=False)
    assert (again.skipped, again.ran) == (4, 0) and again.failure_line() is None
    assert len(ResultStore(out).files()) == 4


def test_failing_cells_are_stored_and_retried(tmp_path):
    study = {
        "base": {**TINY, "device": {"logical_bytes": "64MiB"}},
        # A trace path only with kind = "trace" (with another kind it is an error): two grids.
        "grid": [
            {"axes": {"device.op": [0.001, 0.1], "workload.kind": ["uniform"]}},
            {"axes": {"device.op": [0.001, 0.1], "workload.kind": ["trace"], "workload.path": ["missing.csv"]}},
        ],
    }
    out = tmp_path / "out"
    s = run_sweep(study, out, base_dir=tmp_path, progress=False)
    assert (s.total, s.ran, s.ok, s.failed) == (4, 4, 1, 3)
    line = s.failure_line()
    assert line.startswith("3 of 4 cells failed; first: cell 0 (device.op=0.001, ") and "device.op" in line
    assert line.endswith(f"`ssdlab results {out} --status failed`")
    failed = ssdlab.load_results(out, status="failed")
    assert len(failed) == 3
    errors = dict(zip(failed["cell"], failed["error"], strict=True))
    assert "device.op" in errors[0] and "device.op" in errors[2]
    assert "missing.csv" in errors[3] and "No such file" in errors[3]
    # a failed cell keeps its input configuration, resolved: "auto" next to numbers
    df = ssdlab.load_results(out)
    assert list(df["device.logical_bytes"]) == [64 << 20] * 4
    assert failed["workload.path"].iloc[-1] == str(tmp_path / "missing.csv")
    assert math.isnan(failed["waf"].iloc[0])
    # re-running retries the failed cells only
    s = run_sweep(study, out, base_dir=tmp_path, progress=False)
    assert (s.skipped, s.ran, s.failed) == (1, 3, 3)
    assert len(ssdlab.load_results(out)) == 4  # one row per cell, the latest record

    # a cell that failed once and then succeeds appears once, as ok
    ok_cell = next(
        c for c in expand_study(study, base_dir=tmp_path) if c.values["workload.kind"] == "uniform" and c.index == 1
    )
    other = tmp_path / "other"
    store = ResultStore(other, create=True)
    store.append(sweep._failed(dict(index=ok_cell.index, key=ok_cell.key, values=ok_cell.values,
                                    resolved=ok_cell.resolved), "transient"))  # fmt: skip
    s = run_sweep(study, other, base_dir=tmp_path, progress=False)
    assert s.ran == 4 and s.ok == 1
    df = ssdlab.load_results(other)
    assert len(df) == 4 and len(pq.read_table(other / "cells").column("key")) == 5
    row = df[df["key"] == ok_cell.key].iloc[0]
    assert row["status"] == "ok" and row["error"] is None


def test_cli_sweep_and_results_table_csv_filters(tmp_path, capsys):
    f = study_file(
        tmp_path / "s.toml",
        '[base.workload]\nkind = "uniform"\nrequests = 2000\nfootprint_bytes = "64MiB"\n'
        '[axes]\n"buffer.kind" = ["none", "lru"]\n"buffer.bytes" = ["1MiB", "2MiB", "4MiB"]\n'
        '"device.op" = [0.1, 0.001]\n[base.device]\nlogical_bytes = "64MiB"\n',
    )
    out = tmp_path / "out"
    p = subprocess.run(
        [sys.executable, "-m", "ssdlab", "sweep", str(f), "--out", str(out), "--workers", "2"],
        capture_output=True,
        text=True,
    )
    # failed cells: the table, one summary line on stderr and exit 1
    assert p.returncode == 1, p.stderr
    assert "cells      12" in p.stdout and "failed     6" in p.stdout and "failed cells (first 5 of 6)" in p.stdout
    summary = p.stderr.strip().splitlines()[-1]
    assert summary.startswith('ssdlab: 6 of 12 cells failed; first: cell 1 (buffer.kind="none", buffer.bytes=')
    assert "device.op" in summary and summary.endswith(f"list them with `ssdlab results {out} --status failed`")

    csv = tmp_path / "r.csv"
    p = subprocess.run(
        [sys.executable, "-m", "ssdlab", "results", str(out), "--filter", "buffer.kind=lru", "--status", "ok",
         "--csv", str(csv)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    header = p.stdout.splitlines()[0].split()
    assert header == ["buffer.kind", "buffer.bytes", "device.op", "status"] + METRICS
    assert "3 cells" in p.stdout
    table = pd.read_csv(csv)
    assert len(table) == 3 and set(table["buffer.kind"]) == {"lru"} and set(table["status"]) == {"ok"}
    assert {"key", "waf", "prov.host", "workload.requests"} <= set(table.columns)
    assert sorted(table["buffer.bytes"]) == [1 << 20, 2 << 20, 4 << 20]

    csv2 = tmp_path / "sub" / "r2.csv"
    args = ["results", str(out), "--filter", "buffer.bytes=2MiB", "--columns", "buffer.kind,device.op,status,waf"]
    assert cli.main([*args, "--csv", str(csv2)]) == 0
    t2 = pd.read_csv(csv2)
    assert list(t2.columns) == ["buffer.kind", "device.op", "status", "waf"] and len(t2) == 4
    assert cli.main(["results", str(out), "--columns", "buffer.kindd"]) == 2
    # --allow-failures: the same summary, exit 0 (the failed cells are re-run and fail again)
    assert cli.main(["sweep", str(f), "--out", str(out), "--workers", "2", "--quiet", "--allow-failures"]) == 0
    assert "ssdlab: 6 of 12 cells failed" in capsys.readouterr().err
    assert cli.main(["results", str(tmp_path / "nowhere")]) == 2

    # load_results filters: equality, size strings, any-of lists, numbers with tolerance, status
    df = ssdlab.load_results(out, filters={"buffer.bytes": "2MiB"})
    assert len(df) == 4 and set(df["buffer.bytes"]) == {2 << 20}
    assert len(ssdlab.load_results(out, filters={"buffer.bytes": ["1MiB", 4 << 20], "buffer.kind": "none"})) == 4
    assert len(ssdlab.load_results(out, status="ok", filters={"device.op": 0.1 + 1e-12})) == 6
    assert len(ssdlab.load_results(out, status="failed")) == 6
    with pytest.raises(StoreError, match="buffer.kindd"):
        ssdlab.load_results(out, filters={"buffer.kindd": "lru"})


def test_store_round_trips_mixed_types_and_rejects_foreign_files(tmp_path):
    store = ResultStore(tmp_path, create=True)
    generic = {"delimiter": ",", "read_codes": ["R", "r"], "time_col": 0}
    configs = [
        {"device": {"logical_bytes": 1 << 26, "op": 0.1}, "workload": {"generic": None, "path": None}},
        {"device": {"logical_bytes": "auto", "op": 0.2}, "workload": {"generic": generic, "path": "/t.csv"}},
    ]
    for i, cfg in enumerate(configs):
        rec = sweep._record(
            {"index": i, "key": f"k{i}", "values": {"device.op": cfg["device"]["op"]}}, "ok", None, cfg,
            {"waf": 1.5 + i, "new.metric": math.nan}, 0.1,
        )  # fmt: skip
        store.append(rec)
    df = ssdlab.load_results(tmp_path)
    assert list(df["device.logical_bytes"]) == [1 << 26, "auto"]
    assert df["workload.generic"].iloc[0] is None and df["workload.generic"].iloc[1] == generic
    assert list(df["workload.path"]) == [None, "/t.csv"] and list(df["waf"]) == [1.5, 2.5]
    assert df["new.metric"].isna().all()
    assert df.attrs["config_columns"] == ["device.logical_bytes", "device.op", "workload.generic", "workload.path"]
    # every part file has the same column types
    schemas = {str(pq.read_schema(p).field("device.logical_bytes").type) for p in store.files()}
    assert schemas == {"string"}

    # compaction: one file, same results; a crash between writing it and removing the parts
    # leaves duplicates that load_results drops
    parts = store.files()
    saved = parts[0].read_bytes()
    n, rows, path = store.compact()
    assert (n, rows) == (2, 2) and store.files() == [path]
    parts[0].write_bytes(saved)
    assert ssdlab.load_results(tmp_path)["key"].tolist() == ["k0", "k1"]
    assert store.compact()[:2] == (2, 2)
    assert len(store.files()) == 1

    (store.cells / "notes.txt").write_text("hello")
    with pytest.raises(StoreError, match="notes.txt"):
        ssdlab.load_results(tmp_path)
    assert cli.main(["results", str(tmp_path)]) == 2


def test_dict_study_is_written_as_toml(tmp_path):
    study = {
        "study": {"name": "d", "description": "a dict study"},
        "base": {"workload": {"kind": "uniform", "requests": 2000, "footprint_bytes": "64MiB", "path": None}},
        "axes": {"buffer.bytes": {"geom": ["1MiB", "2MiB"]}, "device.op": [0.1, 0.2]},
        "zip": [{"ftl.gc": ["greedy", "fifo"], "run.seed": [1, 2]}],
    }
    s = run_sweep(study, tmp_path, progress=False)
    assert s.ok == 8 and s.study == "d"
    written = tomllib.loads((tmp_path / "study.toml").read_text())
    del study["base"]["workload"]["path"]  # None is left out (TOML has no null)
    assert written == study
    assert [c.key for c in expand_study(tmp_path / "study.toml")] == [c.key for c in expand_study(study)]


# -- resume after a kill -----------------------------------------------------------------------


def test_resume_after_kill_loses_and_duplicates_nothing(tmp_path):
    f = study_file(
        tmp_path / "s.toml",
        '[base.workload]\nkind = "uniform"\nrequests = 1500000\nfootprint_bytes = "64MiB"\n'
        '[axes]\n"workload.seed" = {start = 1, stop = 30, step = 1}\n',
    )
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "ssdlab", "sweep", str(f), "--out", str(out), "--workers", "2", "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if (out / "cells").is_dir() and len(list((out / "cells").glob("part-*.parquet"))) >= 5:
                break
            time.sleep(0.02)
        assert proc.poll() is None, f"the sweep finished before it could be killed: {proc.stderr.read()}"
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    stored = len(ResultStore(out).files())
    assert 5 <= stored < 30

    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert f"skipped    {stored} (already stored)" in p.stdout and f"ran        {30 - stored} " in p.stdout

    for path in (out / "cells").iterdir():  # no partial or temporary file left behind
        pq.read_table(path)
    keys = pq.read_table(out / "cells").column("key").to_pylist()
    expected = [c.key for c in expand_study(f)]
    assert sorted(keys) == sorted(expected)  # each cell exactly once
    df = ssdlab.load_results(out)
    assert len(df) == 30 and set(df["status"]) == {"ok"}
    assert df["workload.seed"].tolist() == list(range(1, 31))


# -- Dask --------------------------------------------------------------------------------------


def test_dask_executor_matches_the_local_pool(tmp_path):
    study = {
        "base": {**TINY, "device": {"logical_bytes": "64MiB"}},
        "axes": {"buffer.kind": ["none", "lru", "block-lru"], "device.op": [0.001, 0.1]},
        "zip": [{"ftl.gc": ["greedy", "cost-benefit"], "workload.kind": ["uniform", "zipf"]}],
    }
    local = run_sweep(study, tmp_path / "local", workers=2, progress=False)
    dask = run_sweep(study, tmp_path / "dask", executor="dask", workers=2, progress=False)
    assert (local.ran, local.failed) == (dask.ran, dask.failed) == (12, 6)
    a = ssdlab.load_results(tmp_path / "local").set_index("key")
    b = ssdlab.load_results(tmp_path / "dask").set_index("key")
    assert sorted(a.index) == sorted(b.index)
    metrics = a.attrs["metric_columns"]
    assert len(metrics) > 40
    for key in a.index:
        assert a.at[key, "status"] == b.at[key, "status"]
        assert a.at[key, "error"] == b.at[key, "error"]
        for m in metrics:
            assert same(a.at[key, m], b.at[key, m]), (key, m)


_run_cell = sweep.run_cell


def _raising_run_cell(task, progress=None):
    if task["values"].get("run.seed") == 3:
        raise RuntimeError("a cell that breaks")
    return _run_cell(task, progress)


def test_a_cell_that_raises_fails_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(sweep, "run_cell", _raising_run_cell)
    s = run_sweep({"base": TINY, "axes": {"run.seed": list(range(8))}}, tmp_path, workers=2, progress=False)
    assert (s.ran, s.ok, s.failed) == (8, 7, 1)
    df = ssdlab.load_results(tmp_path, status="failed")
    assert df["run.seed"].tolist() == [3] and df["error"].iloc[0] == "RuntimeError: a cell that breaks"


def test_local_workers_run_cells_at_the_same_time(tmp_path, monkeypatch):
    # Every cell waits until another one is running too: with one cell at a time the barrier
    # breaks and the cells fail.
    barrier = threading.Barrier(2, timeout=60)

    def meeting_run_cell(task, progress=None):
        barrier.wait()
        return _run_cell(task, progress)

    monkeypatch.setattr(sweep, "run_cell", meeting_run_cell)
    s = run_sweep({"base": TINY, "axes": {"run.seed": list(range(4))}}, tmp_path, workers=2, progress=False)
    assert (s.workers, s.ok, s.failed) == (2, 4, 0)


def test_stopping_a_local_sweep_cancels_the_runs_in_flight():
    # Cell 0 is tiny, cells 1 and 2 would take many minutes; storing cell 0's record is interrupted
    # (as by Ctrl-C), and the runs in flight stop through their progress callbacks.
    ended = []

    def cell(task, progress=None):
        try:
            return _run_cell(task, progress)
        except BaseException as e:
            ended.append(type(e).__name__)
            raise

    def task(i, requests):
        config = {"workload": {**TINY["workload"], "requests": requests}}
        return {"index": i, "key": str(i), "values": {}, "config": config, "resolved": config}

    def on_record(rec):
        raise KeyboardInterrupt

    tasks = [task(0, 2000), task(1, 10**9), task(2, 10**9)]
    with pytest.raises(KeyboardInterrupt):
        sweep.run_local(tasks, 2, on_record, fn=cell)
    # Cell 1 was cancelled, and so was cell 2 if its thread took it up before the stop.
    assert ended in (["_Cancelled"], ["_Cancelled", "_Cancelled"])


def test_run_sweep_in_a_script_without_a_main_guard(tmp_path):
    script = tmp_path / "sweep_script.py"
    script.write_text(
        "import ssdlab\n"
        f"study = {{'base': {TINY!r}, 'axes': {{'buffer.kind': ['none', 'lru', 'block-lru']}}}}\n"
        "s = ssdlab.run_sweep(study, 'out', workers=2, progress=False)\n"
        "print('done', s.ok, s.failed)\n"
    )
    p = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "done 3 0\n"
    assert "Traceback" not in p.stderr
    assert len(ssdlab.load_results(tmp_path / "out", status="ok")) == 3


def test_several_grids_in_one_study():
    spec = {
        "study": {"name": "grids"},
        "base": {"workload": {"kind": "uniform", "requests": 1000, "footprint_bytes": "64MiB"}},
        "grid": [
            {"name": "sizes", "axes": {"buffer.bytes": ["1MiB", "2MiB"], "buffer.kind": ["lru", "block-lru"]}},
            {"name": "ftl", "base": {"buffer": {"kind": "none"}}, "axes": {"ftl.kind": ["page", "bast", "fast"]}},
        ],
    }
    cells = ssdlab.expand_study(spec)
    assert len(cells) == 4 + 3
    assert [c.index for c in cells] == list(range(7))
    assert all(c.config["buffer"]["kind"] == "none" for c in cells[4:])
    assert [c.values for c in cells[4:]] == [{"ftl.kind": k} for k in ("page", "bast", "fast")]
    assert len({c.key for c in cells}) == 7
    with pytest.raises(ssdlab.SsdlabError, match=r"\[\[grid\]\] 2 \(ftl\): unknown key `axis`"):
        ssdlab.expand_study({**spec, "grid": [spec["grid"][0], {"name": "ftl", "axis": {}}]})
    with pytest.raises(ssdlab.SsdlabError, match=r"puts its \[axes\]"):
        ssdlab.expand_study({**spec, "axes": {"buffer.kind": ["lru"]}})


def test_a_flows_trace_is_part_of_the_cell_key(tmp_path):
    trace = tmp_path / "r.csv"
    trace.write_text("128166385295514663,hm,0,Write,4096,4096,100\n")
    study = {
        "base": {
            "run": {"mode": "timed"},
            "device": {"logical_bytes": "4MiB", "pages_per_block": 16, "op": 0.25},
            "flows": [
                {"queue_depth": 1, "workload": {"kind": "trace", "path": str(trace)}},
                {"queue_depth": 1, "workload": {"kind": "uniform", "requests": 10, "footprint_bytes": "1MiB"}},
            ],
        }
    }
    (before,) = expand_study(study)
    assert before.trace_digest is not None
    trace.write_text("128166385295514663,hm,0,Write,8192,4096,100\n")
    (after,) = expand_study(study)
    assert after.key != before.key and after.trace_digest != before.trace_digest
    # A single workload's key is its trace's digest, as before.
    single = {"base": {"workload": {"kind": "trace", "path": str(trace)}, "device": {"logical_bytes": "auto"}}}
    (cell,) = expand_study(single)
    assert cell.trace_digest == ssdlab.sweep.trace_digest(trace)
