"""The host model in fio's output (`ssdlab.fio.report`, `ssdlab fio JOBFILE`): each I/O's
submission latency (slat) is `host.submit_us`, lat is clat + slat, and usr_cpu + sys_cpu is the
share of the threads' time their I/Os kept the CPU busy, so that reading the output back as a
measurement (`fit.points`) gives the host's costs again."""

from __future__ import annotations

import json

import pytest
from ssdlab.fio import fit
from ssdlab.fio.profile import Host, Profile
from ssdlab.fio.report import USR_SHARE, SimJob, SimOp, SimThread, fio_json, fio_normal
from ssdlab.fio.run import report, simulate_jobfile

HAND = [(10000, 1), (20000, 2), (30000, 1)]


def test_slat_is_the_submit_cost_and_lat_is_clat_shifted_by_it():
    """Every I/O's slat is 1.5 µs: min = max = mean, stddev 0, N = the I/Os, every percentile;
    lat is the clat histogram moved by 1.5 µs (its spread unchanged); the latency distribution
    stays clat's, as fio's."""
    t = SimThread({"read": SimOp(4, 4 * 4096, 2.0, HAND, slat_ns=1500.0)})
    options = {"slat_percentiles": "1", "lat_percentiles": "1", "percentile_list": "50:99"}
    (entry,) = fio_json([SimJob("j", options, [t])], {})["jobs"]
    r = entry["read"]
    pct = {"50.000000": 1500, "99.000000": 1500}
    assert r["slat_ns"] == {"min": 1500, "max": 1500, "mean": 1500.0, "stddev": 0.0, "N": 4, "percentile": pct}
    clat, lat = r["clat_ns"], r["lat_ns"]
    assert (lat["min"], lat["max"], lat["N"]) == (clat["min"] + 1500, clat["max"] + 1500, 4)
    assert lat["mean"] == clat["mean"] + 1500 and lat["stddev"] == clat["stddev"]
    assert lat["percentile"] == {"50.000000": 21500, "99.000000": 31500}
    assert entry["latency_us"]["20"] == 25.0 and entry["latency_us"]["50"] == 75.0  # clat's buckets
    lines = fio_normal([SimJob("j", options, [t])], {}).splitlines()
    i = lines.index("    slat (nsec): min=1500, max=1500, avg=1500.00, stdev= 0.00")
    assert lines[i + 1] == "    clat (nsec): min=10000, max=30000, avg=20000.00, stdev=8164.97"
    assert lines[i + 2] == "     lat (nsec): min=11500, max=31500, avg=21500.00, stdev=8164.97"
    assert lines[i + 3 : i + 5] == ["    slat percentiles (nsec):", "     |  50th=[ 1500],  99th=[ 1500]"]
    assert lines[i + 5] == "    clat percentiles (nsec):" and "    lat percentiles (nsec):" in lines


def test_cpu_use_is_the_threads_cpu_seconds_over_their_run_seconds():
    """fio's usr_cpu + sys_cpu of an entry: CPU seconds over run seconds summed over its threads
    (0.5 s of 1 s and 1 s of 2 s: 50%), split at USR_SHARE; without group_reporting each
    thread its own."""
    a = SimThread({"read": SimOp(100, 409600, 1.0, [(10000, 100)])}, cpu_s=0.5, ctx=40)
    b = SimThread({"read": SimOp(300, 1228800, 2.0, [(30000, 300)])}, cpu_s=1.0, ctx=2)
    (entry,) = fio_json([SimJob("g", {}, [a, b])], {"group_reporting": "1"})["jobs"]
    assert entry["usr_cpu"] + entry["sys_cpu"] == pytest.approx(50.0, abs=1e-9)
    assert entry["usr_cpu"] == pytest.approx(50.0 * USR_SHARE, abs=1e-6) and entry["ctx"] == 42
    idle = SimThread({"read": SimOp(100, 409600, 1.0, [(10000, 100)])}, cpu_s=0.25)
    per_thread = fio_json([SimJob("g", {}, [a, idle])], {})["jobs"]
    assert [e["usr_cpu"] + e["sys_cpu"] for e in per_thread] == pytest.approx([50.0, 25.0], abs=1e-5)
    text = fio_normal([SimJob("g", {}, [a])], {})
    assert f"  cpu          : usr={50 * USR_SHARE:3.2f}%, sys={50 * (1 - USR_SHARE):3.2f}%, ctx=40," in text


def profile(cpu_us: float, submit_us: float, read_us: float) -> Profile:
    """8 dies of `read_us` reads, nothing else timed, and a host of the given costs."""
    cfg = {"device": {"channels": 8, "pages_per_block": 64, "op": 0.25}, "nand": {"read_us": read_us, "dram_us": 0.0}}
    meta = {"name": "tiny", "capacity_bytes": 1 << 30, "simulated_bytes": 16 << 20, "precondition": "fill"}
    return Profile("tiny", "", meta, cfg, {"h": Host("h", "libaio", cpu_us, 5.0, submit_us)})


def run(tmp_path, prof: Profile, iodepth: int, numjobs: int = 1) -> dict:
    job = tmp_path / "job.fio"
    job.write_text(
        "[global]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\ngroup_reporting=1\n\n"
        f"[reader]\niodepth={iodepth}\nnumjobs={numjobs}\n"
    )
    return report(simulate_jobfile(job, prof), "json")


def test_a_profile_hosts_submission_cost_is_every_ios_slat(tmp_path):
    """QD 4 on 50 µs reads with a host of 3 µs per I/O, 1.5 of them submitting: slat 1,500 ns
    for every I/O, lat = clat + slat; the thread is mostly idle (usr + sys well under 100%)."""
    (entry,) = run(tmp_path, profile(3.0, 1.5, 50.0), iodepth=4)["jobs"]
    r = entry["read"]
    assert r["slat_ns"] == {"min": 1500, "max": 1500, "mean": 1500.0, "stddev": 0.0, "N": r["total_ios"]}
    assert r["lat_ns"]["mean"] == pytest.approx(r["clat_ns"]["mean"] + 1500.0, abs=1e-5)
    assert (r["lat_ns"]["min"], r["lat_ns"]["max"]) == (r["clat_ns"]["min"] + 1500, r["clat_ns"]["max"] + 1500)
    busy = (entry["usr_cpu"] + entry["sys_cpu"]) / 100
    assert busy == pytest.approx(r["iops"] * 3.0e-6, rel=1e-6) and busy < 0.5


def test_without_a_submission_cost_slat_stays_zero(tmp_path):
    (entry,) = run(tmp_path, profile(3.0, 0.0, 50.0), iodepth=4)["jobs"]
    r = entry["read"]
    assert r["slat_ns"] == {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": r["total_ios"]}
    assert r["lat_ns"] == {k: v for k, v in r["clat_ns"].items() if k != "percentile"}
    assert entry["usr_cpu"] + entry["sys_cpu"] > 0  # the CPU time is still simulated


def test_a_cpu_bound_job_reads_back_as_its_hosts_costs(tmp_path):
    """Two threads at QD 32 on 2 µs reads: each thread's core is the bottleneck (4 µs per I/O:
    250 K IOPS each, the dies could do 4 M). fio's CPU use times threads over IOPS is the
    host's cpu_us, and `fit.points` reads the output back as the host's cpu_us and submit_us."""
    cpu_us, submit_us = 4.0, 2.5
    doc = run(tmp_path, profile(cpu_us, submit_us, 2.0), iodepth=32, numjobs=2)
    (entry,) = doc["jobs"]
    busy = (entry["usr_cpu"] + entry["sys_cpu"]) / 100
    assert busy >= fit.SATURATED_CPU
    assert busy * 2 / entry["read"]["iops"] * 1e6 == pytest.approx(cpu_us, rel=0.01)
    out = tmp_path / "out.json"
    out.write_text(json.dumps(doc))
    (pt,) = fit.points([out])
    assert pt.cpu_us_per_io == pytest.approx(cpu_us, rel=0.01)
    assert pt.slat_us == pytest.approx(submit_us, rel=1e-9)


def test_ctx_counts_the_completions_that_woke_the_thread(tmp_path):
    """fio's ctx is the thread's context switches; the host model's are its wake-ups. At QD 1
    every completion finds the thread asleep: ctx = the I/Os exactly, as in every QD-1 output
    of ../shared/devices. A CPU-bound thread (two at QD 32 on 2 µs reads, 4 µs of CPU each)
    always has a completion waiting: it never sleeps in the measured window. Between the two
    (QD 4 on 50 µs reads, 3 µs of CPU) it sleeps for some completions, not all."""
    (qd1,) = run(tmp_path, profile(3.0, 1.5, 50.0), iodepth=1)["jobs"]
    assert qd1["ctx"] == qd1["read"]["total_ios"] > 0
    (bound,) = run(tmp_path, profile(4.0, 2.5, 2.0), iodepth=32, numjobs=2)["jobs"]
    assert bound["ctx"] == 0
    (mid,) = run(tmp_path, profile(3.0, 1.5, 50.0), iodepth=4)["jobs"]
    assert 0 < mid["ctx"] < mid["read"]["total_ios"]
