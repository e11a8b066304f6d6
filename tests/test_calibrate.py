"""`ssdlab calibrate` and `ssdlab validate`: a known parameter recovered, statistics computed by
hand, the error messages."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import ssdlab
from ssdlab import calibrate as C
from ssdlab.calibrate import measure as M
from ssdlab.calibrate.space import DEFAULT_TARGETS
from ssdlab.cli import main

# A tiny timed device: one die, reads of command + array read + transfer, nothing else in the way.
ONE_DIE = {
    "device": {"channels": 1, "chips_per_channel": 1, "pages_per_block": 64},
    "nand": {"read_us": 50, "transfer_us": 10, "program_us": 200, "erase_us": 1000},
    "buffer": {"kind": "none"},
    "run": {"mode": "timed", "queue_depth": 1, "precondition": "fill"},
}


def msr(path, rows):
    """An MSR CSV of (type, offset, size, response time µs) rows, 1 ms apart."""
    t0 = 128166372000000000
    lines = [f"{t0 + 10_000 * i},h,0,{op},{off},{size},{int(rt * 10)}" for i, (op, off, size, rt) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def space(path, params, targets=("read.p50", "read.p90", "read.p99")):
    text = f"[objective]\ntargets = {json.dumps(list(targets))}\n"
    for p in params:
        text += "\n[[param]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in p.items())
    path.write_text(text)
    return path


READ_US = {"key": "nand.read_us", "low": 20.0, "high": 150.0, "log": True, "source": "test"}


# -- statistics -----------------------------------------------------------------------------


def test_stats_nearest_rank_and_mean():
    s = M.stats(M.from_samples([50, 60, 70, 80]))
    # ranks ⌈0.5·4⌉ = 2, ⌈0.9·4⌉ = 4, ⌈0.99·4⌉ = 4
    assert s == {"count": 4.0, "mean": 65.0, "p50": 60.0, "p90": 80.0, "p99": 80.0, "p99.9": 80.0}
    s = M.stats(M.from_samples(np.arange(1, 1001)))
    assert (s["p50"], s["p90"], s["p99"], s["p99.9"]) == (500.0, 900.0, 990.0, 999.0)


def test_ks_distance_by_hand():
    a = M.from_samples([50, 60, 70, 80])
    assert M.ks_distance(a, M.from_samples([60, 60])) == 0.5  # at 60: 2/4 against 1
    assert M.ks_distance(a, a) == 0.0
    assert M.ks_distance(a, M.from_samples([100])) == 1.0
    assert math.isnan(M.ks_distance(a, M.from_samples([])))


def test_objective_is_mean_absolute_relative_error():
    meas = {"read": {"p50": 100.0, "p99": 200.0}, "write": {"p50": 10.0}}
    pred = {"read": {"p50": 110.0, "p99": 150.0}, "write": {"p50": 10.0}}
    assert M.objective(["read.p50", "read.p99", "write.p50"], meas, pred) == pytest.approx((0.1 + 0.25 + 0) / 3)
    # a prediction without reads cannot be scored
    assert M.objective(["read.p50"], meas, {"read": {"p50": math.nan}}) == math.inf


# -- validate ---------------------------------------------------------------------------------


def test_validate_numbers_by_hand(tmp_path):
    # QD 1 on one die: every read takes command 0 + read 50 + transfer 10 = 60 µs (recorded by
    # the run's histogram within its 0.1% resolution).
    trace = msr(tmp_path / "t.csv", [("Read", 4096 * i, 4096, rt) for i, rt in enumerate([50, 60, 70, 80])])
    v = C.validate(trace, ONE_DIE, format="msr", targets=["read.p50", "read.p90"])
    st = v.stats()["read"]
    assert st["count"] == {"measured": 4.0, "predicted": 4.0, "rel_error": 0.0}
    assert st["mean"]["measured"] == 65.0 and st["mean"]["predicted"] == pytest.approx(60.0, rel=1e-3)
    assert st["p50"]["rel_error"] == pytest.approx(0.0, abs=1e-3)
    assert st["p90"]["rel_error"] == pytest.approx((60 - 80) / 80, abs=1e-3)
    assert v.objective == pytest.approx(0.125, rel=1e-2)  # (0 + 0.25) / 2
    assert v.ks()["read"] == 0.5
    assert v.stats()["write"]["count"]["measured"] == 0.0
    d = v.to_dict()
    assert d["objective"] == v.objective and d["ks"]["read"] == 0.5 and d["format"] == "msr"


def test_validate_cli_json_and_plot(tmp_path, capsys):
    trace = msr(tmp_path / "t.csv", [("Read", 4096 * i, 4096, 60) for i in range(8)])
    profile = tmp_path / "p.toml"
    profile.write_text(ssdlab.Config(ONE_DIE).to_toml())
    assert main(["validate", str(trace), "--config", str(profile), "--format", "msr", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    p99 = out["ops"]["read"]["p99"]
    assert p99["measured"] == 60.0 and p99["predicted"] == pytest.approx(60.0, rel=1e-3)
    assert out["ks"]["read"] == 1.0  # every simulated read just above 60 µs (the histogram's bucket)
    plot = tmp_path / "cdf.png"
    assert main(["validate", str(trace), "-c", str(profile), "-f", "msr", "--plot", str(plot)]) == 0
    text = capsys.readouterr().out
    assert "objective" in text and "KS distance  read 1.000" in text and plot.stat().st_size > 0


# -- calibrate --------------------------------------------------------------------------------


def test_calibrate_recovers_a_known_read_time(tmp_path, monkeypatch):
    """A trace replayed at read_us = 73 µs on 4 dies (QD 4, random reads: queueing as well as
    service); its simulated latencies are the 'measured' ones; calibrating read_us alone finds 73."""
    base = {
        "device": {"channels": 2, "chips_per_channel": 2, "pages_per_block": 64},
        "nand": {"transfer_us": 8},
        "buffer": {"kind": "none"},
        "run": {"mode": "timed", "queue_depth": 4, "precondition": "fill"},
    }
    trace = tmp_path / "reads.csv"
    gen = {"workload": {"kind": "uniform", "requests": 3000, "read_fraction": 1.0, "footprint_bytes": "8MiB"}}
    ssdlab.traces.trace_generate(gen, trace)
    truth = ssdlab.simulate(
        ssdlab.Config(base).set("nand.read_us", 73.0).set("workload.kind", "trace").set("workload.path", str(trace))
    )
    values, counts = np.asarray(truth.histograms["latency.read_ns"], dtype=float).T
    samples = np.repeat(values / 1000.0, counts.astype(int))
    monkeypatch.setattr(M, "_measured", lambda path, fmt: {"read": samples, "write": np.zeros(0)})
    sp = space(tmp_path / "space.toml", [READ_US])
    cal = C.calibrate(trace, format="msr", config=base, space=sp, trials=30, workers=2, seed=3, progress=False)
    best = cal.best
    assert best["values"]["nand.read_us"] == pytest.approx(73.0, rel=0.015)
    assert best["objective"] < 0.01
    assert len(cal.trials) == 30 and cal.best_so_far()[-1] == best["objective"]
    # the profile is an ordinary configuration with the fitted value
    profile = cal.write(tmp_path / "profile.toml")
    cfg = ssdlab.Config.from_toml(profile)
    assert cfg.resolved()["nand"]["read_us"] == best["values"]["nand.read_us"]
    assert profile.read_text().startswith("# ssdlab calibration profile")


def test_calibrate_is_deterministic(tmp_path, monkeypatch):
    trace = msr(tmp_path / "t.csv", [("Read", 4096 * (i % 16), 4096, 55 + i % 7) for i in range(200)])
    sp = space(tmp_path / "space.toml", [READ_US])
    runs = [
        C.calibrate(trace, format="msr", config=ONE_DIE, space=sp, trials=6, workers=2, seed=7, progress=False)
        for _ in range(2)
    ]
    assert [t["values"] for t in runs[0].trials] == [t["values"] for t in runs[1].trials]
    assert runs[0].profile_text().splitlines()[2:] == runs[1].profile_text().splitlines()[2:]
    # the first trial is the base configuration's own value
    assert runs[0].trials[0]["values"] == {"nand.read_us": 50.0}


def test_several_traces_fit_the_mean_of_their_errors(tmp_path, capsys):
    """Two traces: a trial's error is the mean of each trace's error, which is what validate gives
    that trial's profile on each; the profile replays the first and names both."""
    a = msr(tmp_path / "a.csv", [("Read", 4096 * (i % 16), 4096, 55 + i % 7) for i in range(100)])
    b = msr(tmp_path / "b.csv", [("Read", 4096 * (i % 8), 4096, 70 + i % 11) for i in range(80)])
    sp = space(tmp_path / "space.toml", [READ_US])
    cal = C.calibrate([a, b], format="msr", config=ONE_DIE, space=sp, trials=3, workers=2, seed=1, progress=False)
    assert cal.traces == [str(a.resolve()), str(b.resolve())] and cal.trace == str(a.resolve())
    for t in cal.trials:
        profile = ssdlab.Config(ONE_DIE).set("nand.read_us", t["values"]["nand.read_us"])
        each = [C.validate(x, profile, format="msr", targets=sp_targets(sp)).objective for x in (a, b)]
        assert t["errors"] == pytest.approx(each, rel=1e-12)
        assert t["objective"] == pytest.approx(sum(each) / 2, rel=1e-12)
    text = cal.profile_text()
    assert f"# trace: {a.resolve()} (format msr)" in text and f"# trace: {b.resolve()} (format msr)" in text
    assert "averaged over 2 traces" in text and f"#   b.csv: {cal.best['errors'][1]:.2%}" in text
    assert ssdlab.Config.from_toml(cal.write(tmp_path / "p.toml")).resolved()["workload"]["path"] == str(a.resolve())
    recs = cal.records()
    assert recs[0]["metrics"]["calibrate.trace1.error"] == cal.trials[0]["errors"][1]
    # the command line takes several traces
    out = tmp_path / "cli.toml"
    args = ["calibrate", str(a), str(b), "-f", "msr", "-c", str(tmp_path / "base.toml"), "--space", str(sp)]
    (tmp_path / "base.toml").write_text(ssdlab.Config(ONE_DIE).to_toml())
    assert main([*args, "--trials", "2", "--workers", "1", "-q", "--out", str(out)]) == 0
    assert "averaged over 2 traces" in out.read_text()
    capsys.readouterr()


def sp_targets(path):
    return C.load_space(path).targets


# -- errors -----------------------------------------------------------------------------------


def test_space_errors(tmp_path):
    known = ssdlab.api.config_columns(ssdlab.Config().resolved())
    bad = space(
        tmp_path / "bad.toml",
        [
            {"key": "nand.read_uss", "low": 1.0, "high": 2.0},
            {"key": "nand.program_us", "low": 900.0, "high": 100.0},
            {"key": "nand.erase_us", "low": 0.0, "high": 10.0, "log": True},
            {"key": "device.channels", "low": 1.5, "high": 4, "integer": True},
            {"key": "buffer.kind", "low": 1, "high": 2},
            {"key": "nand.dram_us", "low": 1, "high": 2, "lo": 3},
        ],
        targets=["read.p75"],
    )
    with pytest.raises(C.CalibrationError) as e:
        C.load_space(bad, known)
    msg = str(e.value)
    assert "param 1 (`nand.read_uss`): unknown configuration key; did you mean `nand.read_us`?" in msg
    assert "param 2 (`nand.program_us`): bounds inverted or empty: low = 900.0 is not below high = 100.0" in msg
    assert "param 3 (`nand.erase_us`): a log-scale range needs low > 0" in msg
    assert "param 4 (`device.channels`): an integer parameter needs whole bounds" in msg
    assert "param 5 (`buffer.kind`): not a numeric key" in msg
    assert "param 6 (`nand.dram_us`): unknown field `lo`" in msg
    assert "target `read.p75`" in msg
    assert all(line.startswith(str(bad)) for line in msg.splitlines())


def test_relative_parameter_errors(tmp_path):
    bad = space(
        tmp_path / "rel.toml",
        [
            {"key": "nand.read_msb_us", "relative_to": "nand.read_us", "low": 1.0, "high": 2.0},
            {"key": "nand.read_us", "low": 20.0, "high": 120.0},
            {"key": "nand.read_csb_us", "relative_to": "nand.read_us", "low": 0.0, "high": 2.0},
            {"key": "nand.program_us", "low": 100.0, "high": 3000.0, "writes": True},
            {"key": "nand.program_msb_us", "relative_to": "nand.program_us", "low": 1.0, "high": 10.0},
            {"key": "nand.program_csb_us", "relative_to": "nand.program_msb_us", "low": 1.0, "high": 2.0},
        ],
    )
    with pytest.raises(C.CalibrationError) as e:
        C.load_space(bad)
    msg = str(e.value)
    assert "param `nand.read_msb_us`: relative_to `nand.read_us` is not a parameter listed before it" in msg
    assert "param 3 (`nand.read_csb_us`): a factor's range needs low > 0, not 0.0" in msg
    assert "param `nand.program_msb_us`: relative_to `nand.program_us` is only fitted where points write" in msg
    assert "relative_to `nand.program_msb_us` is itself relative" in msg


def test_a_relative_parameter_is_its_factor_times_its_reference(tmp_path):
    """Every trial's value is the sampled factor times the reference's value, so the bounds hold
    as an order between the two keys; the base configuration's factor is the first trial."""
    import optuna

    sp = C.load_space(
        space(
            tmp_path / "rel.toml",
            [
                {"key": "nand.read_us", "low": 20.0, "high": 120.0, "log": True},
                {"key": "nand.read_msb_us", "relative_to": "nand.read_us", "low": 1.0, "high": 2.0},
            ],
        )
    )
    study = C._study(sp, {"nand.read_us": 40.0, "nand.read_msb_us": 60.0}, seed=3)
    first = study.ask()
    assert C._values(sp, first) == {"nand.read_us": 40.0, "nand.read_msb_us": 60.0}
    assert first.params["nand.read_msb_us"] == 1.5  # the factor is what the optimiser sees
    study.tell(first, 1.0)
    for _ in range(20):
        t = study.ask()
        v = C._values(sp, t)
        assert v["nand.read_msb_us"] == float(f"{t.params['nand.read_msb_us'] * v['nand.read_us']:.4g}")
        assert v["nand.read_us"] <= v["nand.read_msb_us"] <= 2 * v["nand.read_us"] * 1.0001
        study.tell(t, 1.0, state=optuna.trial.TrialState.COMPLETE)
    assert sp.params[1].bounds_text() == "[1 … 2 × nand.read_us]"
    assert sp.params[1].factor({"nand.read_us": 40.0, "nand.read_msb_us": 50.0}) == 1.25


def test_default_space_is_valid_and_documented():
    known = ssdlab.api.config_columns(ssdlab.Config().resolved())
    sp = C.load_space(None, known)
    assert sp.targets == DEFAULT_TARGETS
    assert all(p.source for p in sp.params)
    doc = (C.DEFAULT_SPACE.parents[3] / "docs" / "calibrate.md").read_text()
    for p in sp.params:
        assert f"`{p.key}`" in doc


def test_trace_without_measured_latencies(tmp_path, capsys):
    # Tencent CBS records carry no latency.
    trace = tmp_path / "t.csv"
    trace.write_text("1538323200,0,8,0,1\n1538323201,8,8,1,1\n")
    out = str(tmp_path / "p.toml")
    assert main(["calibrate", str(trace), "--format", "tencent", "--trials", "2", "--out", out]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"ssdlab: error: trace {trace} has no measured latencies (format tencent records none); calibrate needs "
        "a trace with them: flashnet (latency_us), msr (ResponseTime), systor (Response) or blkparse (D→C)\n"
    )
    assert not (tmp_path / "p.toml").exists()


@pytest.mark.parametrize("response", ["0", ""], ids=["ResponseTime 0", "no ResponseTime"])
def test_msr_trace_without_response_times_says_so(tmp_path, capsys, response):
    """An MSR trace whose ResponseTime is 0 in every record (what a writer without latencies puts
    there) or absent: calibrate and validate say the trace has none, before any trial runs."""
    t0 = 128166372000000000
    rows = [f"{t0 + 10_000 * i},h,0,{'Read' if i % 2 else 'Write'},{4096 * i},4096" for i in range(50)]
    trace = tmp_path / "nolat.csv"
    trace.write_text("".join(f"{r},{response}\n" if response else f"{r}\n" for r in rows))
    assert ssdlab.traces.trace_detect(trace) == "msr"
    why = "format msr: ResponseTime column absent or 0 in every record"
    profile = tmp_path / "p.toml"
    profile.write_text(ssdlab.Config(ONE_DIE).to_toml())
    for command, args in (
        ("calibrate", ["--trials", "2", "--out", str(tmp_path / "out.toml")]),
        ("validate", ["-c", str(profile)]),
    ):
        assert main([command, str(trace), *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"ssdlab: error: trace {trace} has no measured latencies ({why}); {command} needs")
        assert "calibrate: " not in err  # no trial ran
    assert not (tmp_path / "out.toml").exists()


def flashnet(path, rows):
    """A FlashNet replay of (record ms, submit ms, latency µs, io_type 1 = read) rows, 4 KiB each."""
    lines = [f"{rec:.3f},{lat},{op},4096,{4096 * i},{sub:.3f},4096" for i, (rec, sub, lat, op) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_calibrate_replays_record_times_unless_told(tmp_path):
    """The default time stamp of a trace with two is the record time (docs/calibrate.md: it
    generalises better); a configuration's own choice stays; a trace with one gets none."""
    # Eight requests per one-second record stamp, submitted 1 ms apart by the replayer.
    rows = [(1000.0 * (i // 8), 1000.0 * (i // 8) + i % 8, 60 + i % 5, 1) for i in range(64)]
    trace = flashnet(tmp_path / "f.trace", rows)
    assert ssdlab.traces.trace_detect(trace) == "flashnet" and C.DEFAULT_TIMESTAMP == "record"
    sp = space(tmp_path / "space.toml", [READ_US])
    run = dict(space=sp, trials=1, workers=1, progress=False)
    cal = C.calibrate(trace, **run)
    assert cal.base["workload"]["timestamp"] == "record"
    assert cal.trials[0]["config"]["workload"]["timestamp"] == "record"
    profile = cal.write(tmp_path / "p.toml")
    assert ssdlab.Config.from_toml(profile).to_dict()["workload"]["timestamp"] == "record"
    # The record stamps put 8 requests at once, the submit times 1 ms apart: the replays differ.
    open_loop = ssdlab.Config(ONE_DIE).set("run.queue_depth", 0)  # at the trace's times
    submit = C.calibrate(trace, config=open_loop.set("workload.timestamp", "submit"), **run)
    assert submit.base["workload"]["timestamp"] == "submit"
    record = C.calibrate(trace, config=open_loop, **run)
    assert record.trials[0]["predicted"]["read"]["p99"] > 2 * submit.trials[0]["predicted"]["read"]["p99"]
    # A profile fitted on flashnet validates an MSR trace (one time stamp): its choice is left out.
    other = msr(tmp_path / "m.csv", [("Read", 4096 * i, 4096, 60) for i in range(8)])
    v = C.validate(other, profile, format="msr")
    assert v.config["workload"]["timestamp"] is None and v.stats()["read"]["count"]["predicted"] == 8


def test_calibrate_argument_errors(tmp_path, capsys):
    from ssdlab import cli

    assert cli.CALIBRATE_TRIALS == C.DEFAULT_TRIALS
    trace = msr(tmp_path / "t.csv", [("Read", 0, 4096, 60)])
    out = str(tmp_path / "p.toml")
    assert main(["calibrate", str(tmp_path / "none.csv"), "--out", out]) == 2
    assert "none.csv: no such trace file" in capsys.readouterr().err
    assert main(["calibrate", str(trace), "-f", "msr", "--trials", "0", "--out", out]) == 2
    assert "trials must be >= 1, not 0" in capsys.readouterr().err
    counts = tmp_path / "counts.toml"
    counts.write_text('[run]\nmode = "counts"\n')
    assert main(["calibrate", str(trace), "-f", "msr", "-c", str(counts), "--out", out]) == 2
    assert 'run.mode must be "timed"' in capsys.readouterr().err


# -- the study ----------------------------------------------------------------------------------


def test_real_device_study_runs_and_reports(tmp_path):
    """The study's runner on a small trace with measured latencies: one cell per trial, the
    profile beside them, a report with the calibration, the ranges, the errors and the CDFs."""
    from ssdlab import studies
    from ssdlab.report import write_report

    rows = [("Read" if i % 3 else "Write", 4096 * (i % 64), 4096, 80 + (i * 37) % 400) for i in range(600)]
    trace = msr(tmp_path / "t.csv", rows)
    st = studies.get("real-device")
    assert st.cells(quick=True) == 48 and st.trace_files() == [
        "flashnet_tencent_nvme/tencent.cut.per_50k.rw_60_40.490.trace"
    ]
    spec = st.spec(quick=True)
    spec["calibrate"].update(trace=str(trace), format="msr", trials=6)
    del spec["calibrate"]["config"]  # the FlashNet replay's record times: msr has one time stamp
    out = tmp_path / "out"
    summary = st.module().run(spec, out, workers=2, progress=False)
    assert (summary.ran, summary.ok, summary.failed) == (6, 6, 0)
    df = ssdlab.load_results(out)
    assert sorted(df["cell"]) == list(range(6))
    best = df.loc[df["calibrate.error"].idxmin()]
    assert df["calibrate.best_error"].min() == best["calibrate.error"]
    assert best["measured.read.count"] == 400 and best["measured.write.p50_us"] == pytest.approx(
        M.stats(M.from_samples([r[3] for r in rows if r[0] == "Write"]))["p50"]
    )
    profile = (out / "profile.toml").read_text()
    assert f"= {best['calibrate.error']:.2%}" in profile
    figures, sections = st.report_hooks()
    report = write_report(out, figures=figures, sections=sections).read_text()
    for title in ("Calibration", "Fitted parameters and their physical ranges", "In-sample error"):
        assert f"<h2>{title}</h2>" in report
    assert report.count("<figure") == 3 and "KS distance" in report


def test_every_trial_failing_is_an_error_naming_the_first(tmp_path, monkeypatch):
    trace = msr(tmp_path / "t.csv", [("Read", 0, 4096, 60)])

    def boom(config, progress=None):
        raise ssdlab.SsdlabError("disk on fire")

    monkeypatch.setattr(ssdlab.api, "simulate", boom)
    sp = space(tmp_path / "space.toml", [READ_US])
    with pytest.raises(C.CalibrationError, match="no trial gave a prediction: disk on fire"):
        C.calibrate(trace, format="msr", config=ONE_DIE, space=sp, trials=2, workers=1, progress=False)


# -- polishing: the coordinate search after the optimiser -----------------------------------------


def _bowl_space():
    from ssdlab.calibrate.space import Param

    return [
        Param("a", 1.0, 100.0, log=True),
        Param("b", 0.0, 10.0),
        Param("c", 1.0, 2.0, relative_to="a"),
        Param("n", 1, 8, integer=True),
    ]


def _bowl(raw: dict) -> float:
    """A bowl in the optimiser's scale with its floor, 0, at a = 20, b = 3.3, factor 1.5, n = 5."""
    return (
        (math.log(raw["a"]) - math.log(20)) ** 2 + ((raw["b"] - 3.3) / 10) ** 2 + (raw["c"] - 1.5) ** 2
        + ((raw["n"] - 5) / 8) ** 2
    )  # fmt: skip


def test_coordinate_search_reaches_the_floor_of_a_bowl_within_its_budget():
    from ssdlab.calibrate.polish import coordinate_search

    calls = []

    def evaluate(raw):
        calls.append(raw)
        return _bowl(raw)

    start = {"a": 90.0, "b": 9.5, "c": 1.0, "n": 1}
    best, err = coordinate_search(_bowl_space(), start, _bowl(start), evaluate, budget=400)
    assert len(calls) <= 400
    assert best["a"] == pytest.approx(20, rel=0.02) and best["b"] == pytest.approx(3.3, abs=0.05)
    assert best["c"] == pytest.approx(1.5, abs=0.01) and best["n"] == 5
    assert err == _bowl(best) < 1e-3
    for raw in calls:  # every candidate inside its bounds, integers whole
        assert 1 <= raw["a"] <= 100 and 0 <= raw["b"] <= 10 and 1 <= raw["c"] <= 2 and isinstance(raw["n"], int)
    # Deterministic, and stopped by its budget.
    again = []
    coordinate_search(_bowl_space(), start, _bowl(start), lambda r: again.append(r) or _bowl(r), budget=400)
    assert again == calls
    few = []
    coordinate_search(_bowl_space(), start, _bowl(start), lambda r: few.append(r) or _bowl(r), budget=5)
    assert len(few) == 5


def test_coordinate_search_never_keeps_a_failed_trial():
    from ssdlab.calibrate.polish import coordinate_search

    start = {"a": 20.0, "b": 3.3, "c": 1.5, "n": 5}
    best, err = coordinate_search(_bowl_space(), start, 1.0, lambda raw: math.nan, budget=50)
    assert (best, err) == (start, 1.0)


def test_raw_values_of_a_relative_parameter_are_its_factor():
    from ssdlab.calibrate.polish import moved, raw_of

    sp = _bowl_space()
    assert raw_of(sp, {"a": 40.0, "b": 1.0, "c": 60.0, "n": 3}) == {"a": 40.0, "b": 1.0, "c": 1.5, "n": 3}
    assert moved(sp[0], 10.0, 0.5, 1) == pytest.approx(100.0)  # half the log range: ×10
    assert moved(sp[0], 10.0, 0.5, -1) == pytest.approx(1.0)
    assert moved(sp[1], 9.0, 0.5, 1) == 10.0  # clipped at the bound
    assert moved(sp[3], 4, 0.01, -1) == 3  # an integer moves at least one


def test_the_fio_spaces_differ_only_in_how_page_types_are_fitted():
    """space.toml fits the centre and upper pages' times as factors of the lower page's;
    space-unordered.toml (the 980 PRO's, the real-devices study's `space` key) in free ranges;
    every other parameter is the same in both."""
    from ssdlab.fio import fit

    ordered = {p.key: p for p in C.load_space(fit.DEFAULT_SPACE).params}
    free = {p.key: p for p in C.load_space(fit.DEFAULT_SPACE.with_name("space-unordered.toml")).params}
    assert ordered.keys() == free.keys()
    page_types = {f"nand.{op}_{t}_us" for op in ("read", "program") for t in ("csb", "msb")}
    assert {k for k, p in ordered.items() if p.relative_to} == page_types
    assert {k: ordered[k].relative_to for k in page_types} == {
        "nand.read_csb_us": "nand.read_us", "nand.read_msb_us": "nand.read_us",
        "nand.program_csb_us": "nand.program_us", "nand.program_msb_us": "nand.program_us",
    }  # fmt: skip
    assert not any(p.relative_to for p in free.values())
    assert all(ordered[k] == free[k] for k in ordered.keys() - page_types)
    study = (C.DEFAULT_SPACE.parents[1] / "studies" / "real_devices" / "study.toml").read_text()
    assert 'space = "space-unordered.toml"' in study
