"""fio jobs simulated (`ssdlab.fio.workload`, `ssdlab fio JOBFILE`), device profiles, and
calibration and validation on fio's outputs (`ssdlab calibrate FIO.json…`, `ssdlab validate
… --profile`): options honoured or refused by name, the host's per-I/O costs, fio's JSON
read back as fio's, and a scaled-down device that predicts what a larger one does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ssdlab import api
from ssdlab.cli import main
from ssdlab.fio import FioError, fit, read_output, workload
from ssdlab.fio.jobfile import parse_jobfile_text
from ssdlab.fio.profile import ENGINES, Host, Profile, load_profile, profile_names

DEVICES = Path(__file__).resolve().parents[2] / "shared" / "devices"
JOBS2 = DEVICES / "samsung_980pro_1tb" / "jobs_sweep" / "randread_4k_jobs2_qd16.json"
ZNS = DEVICES / "zns_ssd_conventional_ns"

needs_devices = pytest.mark.skipif(not JOBS2.exists(), reason="../shared/devices is not beside the repository")


def tiny(cpu_us: float = 2.0, wake_us: float = 5.0, engine: str = "libaio") -> Profile:
    """A small profile: 8 dies of 50 µs reads, nothing else timed, on 16 MiB."""
    cfg = {
        "device": {"channels": 8, "pages_per_block": 64, "op": 0.25},
        "nand": {"read_us": 50.0, "dram_us": 0.0},
    }
    meta = {"name": "tiny", "capacity_bytes": 1 << 30, "simulated_bytes": 16 << 20, "precondition": "fill"}
    return Profile("tiny", "", meta, cfg, {"h": Host("h", engine, cpu_us, wake_us)})


BASE = {"rw": "randread", "bs": "4k", "direct": "1", "ioengine": "libaio", "iodepth": "1"}


def simulate(options: dict, profile: Profile | None = None) -> api.Result:
    return api.simulate(workload.job_config([BASE | options], profile or tiny()))


def test_a_job_is_a_flow_per_thread_on_one_namespace():
    cfg = workload.job_config([BASE | {"numjobs": "4", "iodepth": "8"}], tiny())
    assert [f["queue_depth"] for f in cfg["flows"]] == [8, 8, 8, 8]
    assert {f["namespace"] for f in cfg["flows"]} == {0}
    assert "cpu" not in cfg["flows"][0]  # a core each
    assert cfg["host"] == {"cpu_us": 2.0, "wake_us": 5.0}
    # Settled: max(20,000, 100 × 32) measured after max(2,000, 10 × 32) warm-up, split over the threads.
    assert cfg["run"]["warmup_requests"] == 2000
    assert sum(f["workload"]["requests"] for f in cfg["flows"]) == 22_000
    # Four threads pinned to one CPU share its core; a synchronous engine has one I/O in flight.
    pinned = workload.job_config([BASE | {"numjobs": "4", "cpus_allowed": "2"}], tiny())
    assert [f["cpu"] for f in pinned["flows"]] == [2, 2, 2, 2]
    sync = workload.job_config([BASE | {"ioengine": "psync", "iodepth": "32"}], tiny())
    assert sync["flows"][0]["queue_depth"] == 1
    # The scaled device: at least 2,048 blocks (of 64 pages here), 512 MiB rather than the
    # profile's 16 MiB; size and offset are fractions of the real device (1 GiB) applied to it.
    half = workload.job_config([BASE | {"offset": "25%", "size": "256m"}], tiny())
    assert half["device"]["logical_bytes"] == workload.MIN_BLOCKS * 64 * 4096 == 512 << 20
    job = half["flows"][0]["workload"]["fio"]["jobs"][0]
    assert (job["offset"], job["size"]) == (128 << 20, 128 << 20)
    # A block stripes over every die with every page type: 16 KiB NAND pages on 32 dies need
    # rows of 128 units, three of them for TLC.
    wide = tiny()
    wide.config["device"] |= {"channels": 8, "chips_per_channel": 4}
    wide.config["nand"]["physical_page_bytes"] = 16384
    assert workload.job_config([BASE], wide)["device"]["pages_per_block"] == 128
    wide.config["nand"]["cell"] = "tlc"
    assert workload.job_config([BASE], wide)["device"]["pages_per_block"] == 384


def test_the_engines_costs_follow_the_fitted_ones():
    h = Host("h", "libaio", 3.0, 6.0, submit_us=2.0)
    assert h.costs("libaio") == {"cpu_us": 3.0, "submit_us": 2.0, "wake_us": 6.0}
    c = h.costs("io_uring")
    assert c["cpu_us"] == pytest.approx(3.0 * ENGINES["io_uring"].cpu) and c["wake_us"] == 6.0
    assert c["submit_us"] == pytest.approx(2.0 * ENGINES["io_uring"].cpu)  # the same share of it
    assert h.costs("spdk")["wake_us"] == 0.0  # polled: no interrupt, no wake-up
    with pytest.raises(FioError, match="`ioengine`: `mmap` is not modelled"):
        h.costs("mmap")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"hipri": "1"}, "fio option `hipri` is not modelled"),
        ({"direct": "0"}, "fio option `direct`: buffered I/O"),
        ({"rw": "randtrim"}, "fio option `rw`: `randtrim` is not modelled"),
        ({"random_distribution": "pareto:0.9"}, "`random_distribution`: `pareto:0.9` is not modelled"),
        ({"bs": "4k,64k", "rw": "randrw"}, "gives reads and writes different sizes"),
        ({"offset": "90%", "size": "20%"}, "does not fit"),
        ({"iodepth": "0"}, "`iodepth`: 0 must be >= 1"),
    ],
)
def test_an_option_that_cannot_be_honoured_is_refused_by_name(options, message):
    with pytest.raises(FioError, match=message.replace("(", r"\(").replace(")", r"\)")):
        workload.job_config([BASE | options], tiny())


def test_queue_depth_one_latency_and_a_threads_ceiling():
    """QD 1 on an idle device: a 50 µs read, the wake-up (5) and the thread's handling (2): 57 µs.
    64 outstanding: the device could do 160 K reads/s, the thread handles one every 4 µs."""
    r = simulate({})
    assert r["latency.read.mean_us"] == pytest.approx(57.0, abs=1e-9)
    fast = simulate({"iodepth": "64"}, tiny(cpu_us=4.0))
    assert fast["throughput.iops"] < 160_000 and fast["throughput.iops"] > 0.9 * 160_000
    ceiling = simulate({"iodepth": "64"}, tiny(cpu_us=10.0))
    assert ceiling["throughput.iops"] == pytest.approx(100_000, rel=0.01)


def test_halving_the_simulated_device_moves_no_prediction_by_more_than_1_percent():
    """The scaled-down device against one twice its size: random reads and writes over all of it
    (offsets drawn afresh, as the 980 PRO campaign's norandommap=1) predict the same. Each statistic is averaged over
    ten seeds (a percentile of service times with a few distinct values moves by a step of
    them from one seed to the next)."""

    def stats(rw: str, simulated_bytes: int) -> dict:
        p = load_profile("base")
        p.meta["simulated_bytes"] = simulated_bytes
        op = "read" if rw == "randread" else "write"
        job = BASE | {"rw": rw, "iodepth": "8", "norandommap": "1"}
        runs = [fit.predicted(api.simulate(workload.job_config([job], p, seed=s)))[op] for s in range(1, 11)]
        return {k: sum(r[k] for r in runs) / len(runs) for k in runs[0]}

    # The device a point runs on (the profile's size, or MIN_BLOCKS blocks if more), and twice it.
    used = workload.job_config([BASE], load_profile("base"))["device"]["logical_bytes"]
    for rw in ("randread", "randwrite"):
        a, b = stats(rw, 2 * used), stats(rw, used)
        for stat in ("iops", "mean", "p50", "p95", "p99"):
            # Measured: at most 0.8% (read p99; write IOPS 0.56%), GC's finite-size effect and ten
            # seeds' noise; 2,048 blocks against 4,096.
            assert b[stat] == pytest.approx(a[stat], rel=0.01), (rw, stat)


def test_fio_jobfile_output_parses_as_fio(tmp_path, capsys, monkeypatch):
    """`ssdlab fio JOBFILE --output-format json` is fio's schema: read_output reads it back, and
    its IOPS, latency and thread count obey Little's law."""
    prof = tmp_path / "tiny.toml"
    from ssdlab import tomlwrite

    t = tiny()
    hosts = {"h": {"engine": "libaio", "cpu_us": 2.0, "wake_us": 5.0}}
    prof.write_text(tomlwrite.dumps({"profile": t.meta | {"name": "tiny"}, "config": t.config, "hosts": hosts}))
    job = tmp_path / "qd8.fio"
    job.write_text(
        "[global]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\ngroup_reporting=1\n\n[reader]\niodepth=8\nnumjobs=2\n"
    )
    assert main(["fio", str(job), "--profile", str(prof), "--output-format", "json"]) == 0
    out = tmp_path / "out.json"
    out.write_text("fio: a note before the JSON, as fio prints it\n" + capsys.readouterr().out)
    m = read_output(out)
    (j,) = m.jobs
    assert j.numjobs == 2 and j.iodepth == 8 and j.group_reporting
    r = j.ops["read"]
    assert r.iops * r.clat_mean_ns * 1e-9 == pytest.approx(16, rel=0.02)
    assert 50.0 in r.clat_percentiles_ns
    # The normal format names the job and its IOPS.
    assert main(["fio", str(job), "--profile", str(prof)]) == 0
    text = capsys.readouterr().out
    assert "reader: (groupid=0, jobs=2)" in text and "IOPS=" in text
    # A refused option is an error naming it, from the command line too.
    job.write_text(job.read_text() + "hipri=1\n")
    assert main(["fio", str(job), "--profile", str(prof)]) == 2
    assert "fio option `hipri` is not modelled" in capsys.readouterr().err


def test_stonewall_runs_groups_one_after_the_other():
    jobs = parse_jobfile_text("[a]\nrw=randwrite\n[b]\nrw=randread\n[c]\nstonewall\nrw=read\n")
    assert [[j.name for j in g] for g in workload.groups(jobs)] == [["a", "b"], ["c"]]


def test_shipped_profiles_load_and_list(capsys):
    names = profile_names()
    assert "base" in names
    for n in names:
        p = load_profile(n)
        assert p.hosts and p.simulated_bytes > 0
        p.host()  # its default host exists
    assert main(["profiles"]) == 0
    assert "base" in capsys.readouterr().out
    with pytest.raises(FioError, match="no profile `nope`"):
        load_profile("nope")


@needs_devices
def test_calibrate_and_validate_on_fio_outputs(tmp_path, capsys):
    """Two trials on three of the ZNS SSD's points write a profile whose header gives what it was
    fitted on and its error; validate prints the same objective in its JSON."""
    files = [str(ZNS / f) for f in ("randread_4k_qd1.json", "randread_4k_qd16.json", "randwrite_4k_qd1.json")]
    out = tmp_path / "zns.toml"
    args = ["calibrate", *files, "--trials", "2", "--polish", "3", "--workers", "2", "--out", str(out), "-q"]
    assert main(args) == 0
    text = out.read_text()
    assert text.startswith("# ssdlab device profile `zns`") and "on 3 fio points" in text
    assert "after 5 trials (seed 0; the last 3 a coordinate search from the optimiser's best)" in text
    p = load_profile(out)
    assert (p.meta["fit"]["trials"], p.meta["fit"]["polish"]) == (5, 3)
    assert p.capacity_bytes == 4 << 30  # the points' size=4294967296
    assert set(p.hosts) >= {"zns-ssd-conventional-ns"}
    fitted = p.meta["fit"]["objective"]
    capsys.readouterr()
    assert main(["validate", *files, "--profile", str(out), "--json"]) == 0
    v = json.loads(capsys.readouterr().out)
    assert v["objective"] == pytest.approx(fitted, abs=1e-4)
    assert [pt["label"] for pt in v["points"]] == ["randread_4k_qd1", "randread_4k_qd16", "randwrite_4k_qd1"]
    # A trace's options do not mix with fio outputs.
    assert main(["validate", *files]) == 2
    assert "--profile NAME" in capsys.readouterr().err


@needs_devices
def test_a_cpu_bound_point_measures_its_hosts_costs():
    """At QD 256 the ZNS campaign's job used 99.95% of its core (usr 33.60 + sys 66.36) for
    295,065 reads/s: 3.3875 µs of CPU each, of which fio's mean slat, 2.220 µs, submits. The
    points where the thread idled (QD 1 and 16) measure nothing; calibrate fixes those values
    rather than fitting them."""
    files = [ZNS / f for f in ("randread_4k_qd1.json", "randread_4k_qd16.json", "randread_4k_qd256.json")]
    pts = fit.points(files)
    assert [pt.cpu_us_per_io is None for pt in pts] == [True, True, False]
    m = fit.measured_cpu(pts)
    assert m["hosts.zns-ssd-conventional-ns.cpu_us"] == (pytest.approx(3.3875, abs=1e-4), 1)
    assert m["hosts.zns-ssd-conventional-ns.submit_us"] == (pytest.approx(2.2200, abs=1e-4), 1)
    cal = fit.calibrate(files[1:], trials=1, workers=1, progress=False, polish=0)
    assert "hosts.zns-ssd-conventional-ns.cpu_us" not in [p.key for p in cal.params]
    assert "hosts.zns-ssd-conventional-ns.wake_us" in [p.key for p in cal.params]
    assert cal.profile().hosts["zns-ssd-conventional-ns"].cpu_us == pytest.approx(3.3875, abs=1e-4)
    # Reads only: what only writes depend on (program and erase times, a write command's
    # firmware time) is not fitted and keeps the base's value; a point that writes fits it.
    writes_only = {"nand.program_us", "nand.erase_us", "controller.write_command_us"}
    assert not writes_only & {p.key for p in cal.params}
    assert cal.profile().config["nand"]["program_us"] == load_profile(fit.DEFAULT_BASE).config["nand"]["program_us"]
    both = fit.calibrate([*files[1:], ZNS / "randwrite_4k_qd1.json"], trials=1, workers=1, progress=False, polish=0)
    assert writes_only <= {p.key for p in both.params}


FLASHNET = DEVICES.parent / "traces" / "flashnet_tencent_nvme" / "tencent.cut.per_50k.rw_60_40.490.trace"


@pytest.mark.skipif(not FLASHNET.exists(), reason="../shared/traces is not beside the repository")
def test_the_flashnet_profile_predicts_its_window_as_fitted(capsys):
    """`validate TRACE --profile flashnet-nvme`: the shipped profile of the FlashNet device gives the
    error its header states (16.9%, golden)."""
    assert main(["validate", str(FLASHNET), "--profile", "flashnet-nvme", "--json"]) == 0
    v = json.loads(capsys.readouterr().out)
    assert v["objective"] == pytest.approx(load_profile("flashnet-nvme").meta["fit"]["objective"], abs=5e-4)


def test_run_with_a_profile_under_the_configuration(tmp_path):
    """`run --profile NAME`: the profile's device in timed mode with its preconditioning, the
    configuration's keys on top; --host needs flows."""
    out = tmp_path / "r.json"
    args = ["run", "--profile", "base", "--set", "workload.requests=2000", "--set", "workload.footprint_bytes=64MiB"]
    assert main([*args, "--set", "device.logical_bytes=64MiB", "--set", "device.channels=4", "--json", str(out)]) == 0
    cfg = json.loads(out.read_text())["config"]
    assert (cfg["run"]["mode"], cfg["run"]["precondition"]) == ("timed", "fill-random")
    assert (cfg["device"]["channels"], cfg["device"]["chips_per_channel"], cfg["nand"]["cell"]) == (4, 4, "tlc")
    assert main([*args, "--host", "host"]) == 2


def test_fast_forward_runs_a_writing_job_from_the_state_its_ramp_leaves():
    """With the profile's `fast_forward`, each writing thread first applies the requests fio's
    ramp and half its runtime issue at the first run's rate (scaled to the simulated device),
    then the measured ones; reads and profiles without it run once, unchanged."""
    cfg_meta = tiny().meta | {"fast_forward": True}
    prof = Profile("tiny", "", cfg_meta, tiny().config | {"buffer": {"kind": "none"}}, tiny().hosts)
    job = BASE | {"rw": "write", "iodepth": "4", "numjobs": "2", "ramp_time": "2s", "runtime": "6s"}
    plain = workload.job_config([job], prof)
    first = api.simulate(plain)
    cfg, res = workload.simulate_group([job], prof)
    scale = plain["device"]["logical_bytes"] / prof.capacity_bytes
    for i, f in enumerate(cfg["flows"]):
        k = round(first.metrics[f"flow.{i}.throughput.iops"] * (2 + 6 / 2) * scale)
        assert k > 0 and f["fast_forward_requests"] == k
        assert f["workload"]["requests"] == plain["flows"][i]["workload"]["requests"] + k
        # The measured window is the same number of requests as without the fast-forward.
        assert res.metrics[f"flow.{i}.requests"] == first.metrics[f"flow.{i}.requests"]
    # A sequential overwrite fast-forwarded over the scaled device leaves GC nothing to copy.
    assert res.metrics["waf"] == pytest.approx(1.0, abs=0.01)
    # Reads, and the profile without the key, run once as before.
    cfg_r, res_r = workload.simulate_group([BASE], prof)
    assert "fast_forward_requests" not in cfg_r["flows"][0]
    assert res_r.metrics == api.simulate(workload.job_config([BASE], tiny())).metrics
    cfg_w, _ = workload.simulate_group([job], Profile("tiny", "", tiny().meta, prof.config, tiny().hosts))
    assert all("fast_forward_requests" not in f for f in cfg_w["flows"])
    with pytest.raises(FioError, match="fast_forward must be true or false"):
        _ = Profile("t", "", tiny().meta | {"fast_forward": "yes"}, {}, {}).fast_forward


def test_fdp_options_are_placement_identifiers():
    """fio's fdp=1 / fdp_pli / plid_select: the job's writes carry those identifiers, through
    the handles of a device with FDP; a device without it, or an index beyond it, is refused."""
    fdp = tiny()
    fdp.config["fdp"] = {"enabled": True, "handles": 4}
    writes = {"rw": "randwrite", "fdp": "1", "fdp_pli": "1,3"}
    cfg = workload.job_config([BASE | writes], fdp)
    job = cfg["flows"][0]["workload"]["fio"]["jobs"][0]
    assert (job["fdp_pli"], job["plid_select"]) == ([1, 3], "roundrobin")
    m = api.simulate(cfg).metrics
    host = [m[f"fdp.handle.{h}.host_bytes_written"] for h in range(4)]
    assert host[0] == host[2] == 0 and host[1] > 0 and abs(host[1] - host[3]) <= 4096
    # Without fdp_pli a job cycles through every identifier; without fdp=1 fio ignores the others.
    every = workload.job_config([BASE | {"rw": "randwrite", "fdp": "1"}], fdp)
    assert every["flows"][0]["workload"]["fio"]["jobs"][0]["fdp_pli"] == [0, 1, 2, 3]
    plain = workload.job_config([BASE | {"rw": "randwrite", "fdp_pli": "1"}], fdp)
    assert "fdp_pli" not in plain["flows"][0]["workload"]["fio"]["jobs"][0]
    for options, says in [
        ({"fdp": "1"}, "has no FDP"),
        ({"fdp": "1", "fdp_pli": "0-4"}, "index 4"),
        ({"fdp": "1", "fdp_pli": "a"}, "not a list"),
        ({"fdp": "1", "plid_select": "scheme"}, "plid_select"),
    ]:
        with pytest.raises(FioError, match=says):
            workload.job_config([BASE | {"rw": "randwrite"} | options], tiny() if "FDP" in says else fdp)


def test_a_zoned_distribution_passes_to_the_engine():
    """fio's random_distribution=zoned (WARP's overwriting job): the job keeps it, the engine runs
    it (its draws are tested in the engine), and a zone list that does not sum to 100 is the
    engine's error naming the key."""
    options = {"rw": "randwrite", "norandommap": "1", "random_distribution": "zoned:80/20:20/80"}
    cfg = workload.job_config([BASE | options], tiny())
    assert cfg["flows"][0]["workload"]["fio"]["random_distribution"] == "zoned:80/20:20/80"
    assert api.simulate(cfg).metrics["host.write_requests"] > 0
    bad = workload.job_config([BASE | options | {"random_distribution": "zoned:80/20:10/80"}], tiny())
    with pytest.raises(api.SsdlabError, match=r"random_distribution.*sum to 90"):
        api.simulate(bad)
