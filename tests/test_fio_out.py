"""fio's formats from ssdlab's side: job files read and written (`ssdlab.fio.jobfile`), a simulated
run written as fio's JSON and normal output (`ssdlab.fio.report`), and the measurement plan's job
files (`ssdlab.fio.plan`)."""

from __future__ import annotations

import json
import math

import pytest
from ssdlab.fio.jobfile import JobSpec, parse_jobfile_text, read_jobfile, write_jobfile
from ssdlab.fio.output import FioError, read_output
from ssdlab.fio.plan import PERCENTILES, PRECONDITION, write_plan
from ssdlab.fio.report import SimJob, SimOp, SimThread, fio_json, fio_normal, percentile

# --- job files -----------------------------------------------------------------------------

JOBFILE = """\
; a comment
# another
[global]
IOEngine = io_uring
bs=4k
direct

[seq]
rw=read
description=reads ; not a comment in fio

[global]
bs=16k
[rand]
rw = randread
stonewall
new_group
"""


def test_global_sections_stack_on_the_jobs_below():
    """Globals apply to the jobs after them and add up; keys lower-cased, values stripped, a bare
    key is a flag, a `;` after a value is part of it, each job knows its header's line."""
    seq, rand = parse_jobfile_text(JOBFILE)
    assert seq == JobSpec(
        "seq",
        {
            "ioengine": "io_uring",
            "bs": "4k",
            "direct": "1",
            "rw": "read",
            "description": "reads ; not a comment in fio",
        },
        8,
    )
    assert rand.name == "rand" and rand.line == 14
    assert rand.options == {
        "ioengine": "io_uring",
        "bs": "16k",
        "direct": "1",
        "rw": "randread",
        "stonewall": "1",
        "new_group": "1",
    }


def test_include_is_relative_to_the_including_file(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "common.fio").write_text("; shared\nioengine=libaio\ninclude deeper.fio\n")
    (tmp_path / "sub" / "deeper.fio").write_text("iodepth=8\n")
    (tmp_path / "sub" / "job.fio").write_text("[global]\ninclude common.fio\n[a]\nrw=write\n")
    (job,) = read_jobfile(tmp_path / "sub" / "job.fio")
    assert job.options == {"ioengine": "libaio", "iodepth": "8", "rw": "write"}


def test_include_errors_name_file_and_line(tmp_path):
    (tmp_path / "job.fio").write_text("[a]\nrw=read\ninclude missing.fio\n")
    with pytest.raises(FioError, match=r"job\.fio:3: include .*missing\.fio: no such file"):
        read_jobfile(tmp_path / "job.fio")
    (tmp_path / "sect.fio").write_text("bs=4k\n[b]\n")
    (tmp_path / "job2.fio").write_text("[a]\ninclude sect.fio\n")
    with pytest.raises(FioError, match=r"sect\.fio:2: .*may not open sections"):
        read_jobfile(tmp_path / "job2.fio")
    (tmp_path / "loop.fio").write_text("[a]\ninclude loop.fio\n")
    with pytest.raises(FioError, match=r"loop\.fio:2: include loop\.fio: the file includes itself"):
        read_jobfile(tmp_path / "loop.fio")


def test_environment_variables(monkeypatch):
    monkeypatch.setenv("SSDLAB_TEST_SIZE", "64m")
    monkeypatch.delenv("SSDLAB_TEST_UNSET", raising=False)
    (job,) = parse_jobfile_text("[a]\nsize=${SSDLAB_TEST_SIZE}\nfilename=/x/${SSDLAB_TEST_SIZE}.dat\n")
    assert job.options == {"size": "64m", "filename": "/x/64m.dat"}
    with pytest.raises(FioError, match=r"^j\.fio:3: option `numjobs`: environment variable `SSDLAB_TEST_UNSET`"):
        parse_jobfile_text("[a]\nrw=read\nnumjobs=${SSDLAB_TEST_UNSET}\n", "j.fio")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("; nothing\n\n", r"j\.fio: the job file defines no job \(no section"),
        ("[global]\nbs=4k\n", r"j\.fio: the job file defines no job \(only \[global\]"),
        ("\nbs=4k\n[a]\n", r"j\.fio:2: `bs=4k` is outside any \[job\] section"),
        ("[a\nbs=4k\n", r"j\.fio:1: section header `\[a` has no closing"),
        ("[a]\n=4k\n", r"j\.fio:2: `=4k` has no option name"),
    ],
)
def test_job_file_errors(text, message):
    with pytest.raises(FioError, match=message):
        parse_jobfile_text(text, "j.fio")


def test_missing_job_file(tmp_path):
    with pytest.raises(FioError, match="no such file"):
        read_jobfile(tmp_path / "nope.fio")


def test_write_then_read_round_trip(tmp_path):
    """Specs read from a file, written back with a [global] section, read again: the same jobs."""
    jobs = parse_jobfile_text(JOBFILE)
    path = write_jobfile(tmp_path / "out.fio", jobs, {"ioengine": "io_uring", "direct": 1}, comment="made by a test")
    text = path.read_text()
    assert text.startswith("; made by a test\n[global]\nioengine=io_uring\ndirect=1\n")
    assert [(j.name, j.options) for j in read_jobfile(path)] == [(j.name, j.options) for j in jobs]
    # Tuples too, and a value equal to the global one is not repeated in the job's section.
    path = write_jobfile(tmp_path / "t.fio", [("x", {"rw": "read", "bs": "4k"})], {"bs": "4k"})
    assert path.read_text() == "[global]\nbs=4k\n\n[x]\nrw=read\n"
    assert read_jobfile(path) == [JobSpec("x", {"bs": "4k", "rw": "read"}, 4)]


def test_write_refuses_what_fio_would_misread(tmp_path):
    with pytest.raises(FioError, match="begins with `global`"):
        write_jobfile(tmp_path / "a.fio", [("global2", {})])
    with pytest.raises(FioError, match="span lines"):
        write_jobfile(tmp_path / "a.fio", [("a", {"description": "x\ny"})])
    with pytest.raises(FioError, match="no job"):
        write_jobfile(tmp_path / "a.fio", [])


# --- fio's output from a simulated run -----------------------------------------------------

HAND = [(10000, 1), (20000, 2), (30000, 1)]


def one_job(hist=HAND, ios=4, runtime_s=2.0, io_bytes=4 * 4096, options=None, threads=1, op="read"):
    op_ = SimOp(ios=ios, io_bytes=io_bytes, runtime_s=runtime_s, clat_hist_ns=list(hist))
    return SimJob("job1", dict(options or {}), [SimThread({op: op_}) for _ in range(threads)])


def test_hand_worked_statistics():
    """Mean 20 us; sample standard deviation sqrt((1e8 + 0 + 0 + 1e8) / 3); nearest rank:
    p25 is rank 1, p50 rank 2, p99 rank 4."""
    doc = fio_json([one_job()], {"bs": "4k"})
    clat = doc["jobs"][0]["read"]["clat_ns"]
    assert (clat["min"], clat["max"], clat["N"]) == (10000, 30000, 4)
    assert clat["mean"] == 20000.0
    assert clat["stddev"] == pytest.approx(math.sqrt(2e8 / 3), abs=1e-6)
    assert clat["stddev"] == 8164.965809
    pct = clat["percentile"]
    assert (pct["1.000000"], pct["50.000000"], pct["99.000000"], pct["99.990000"]) == (10000, 20000, 30000, 30000)
    assert percentile(HAND, 25) == 10000 and percentile(HAND, 75) == 20000 and percentile(HAND, 75.1) == 30000


def test_percentile_rank_is_exact():
    """99.9% of 1000 values is rank 999 (floating point would make it 999.0000000000001 -> 1000)."""
    hist = [(float(v), 1) for v in range(1, 1001)]
    assert percentile(hist, 99.9) == 999.0 and percentile(hist, "99.95") == 1000.0 and percentile(hist, 0.1) == 1.0


def test_percentile_keys_default_and_custom_lists():
    (entry,) = fio_json([one_job()], {})["jobs"]
    keys = list(entry["read"]["clat_ns"]["percentile"])
    assert len(keys) == 17 and keys[0] == "1.000000" and keys[14] == "99.900000" and keys[-1] == "99.990000"
    (entry,) = fio_json([one_job(options={"percentile_list": "99.9:50"})], {})["jobs"]
    assert entry["read"]["clat_ns"]["percentile"] == {"50.000000": 20000, "99.900000": 30000}


def test_clat_percentiles_off():
    (entry,) = fio_json([one_job()], {"clat_percentiles": "0"})["jobs"]
    assert "percentile" not in entry["read"]["clat_ns"] and entry["read"]["clat_ns"]["N"] == 4


@pytest.mark.parametrize("bad", ["1:abc", "0:50", "50:101", ":".join(["1"] * 21)])
def test_bad_percentile_list(bad):
    with pytest.raises(FioError, match="job `job1`: option `percentile_list"):
        fio_json([one_job(options={"percentile_list": bad})], {})


def test_rates_and_neutral_fields():
    """bw in KiB/s is bytes / 1024 / s; what the simulation does not know is fio's no-data 0;
    slat is zero for every I/O, lat is clat; absent directions are all zeros."""
    job = one_job(ios=3000, io_bytes=3000 * 4096 + 100, runtime_s=1.5, hist=[(80000, 3000)])
    (entry,) = fio_json([job], {"iodepth": "32"})["jobs"]
    r = entry["read"]
    assert r["bw_bytes"] == int((3000 * 4096 + 100) / 1.5) and r["bw"] == int((3000 * 4096 + 100) / 1024 / 1.5)
    assert r["iops"] == 2000.0 and r["runtime"] == 1500 and r["io_kbytes"] == 12000
    assert r["slat_ns"] == {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 3000}
    assert {k: v for k, v in r["lat_ns"].items()} == {k: v for k, v in r["clat_ns"].items() if k != "percentile"}
    assert r["bw_samples"] == r["iops_samples"] == 0 and r["bw_mean"] == 0.0
    assert entry["write"]["total_ios"] == 0 and "percentile" not in entry["write"]["clat_ns"]
    assert entry["usr_cpu"] == entry["sys_cpu"] == 0.0 and entry["job_runtime"] == 1500
    assert entry["iodepth_level"]["32"] == 100.0 and sum(entry["iodepth_level"].values()) == 100.0
    assert entry["latency_us"]["100"] == 100.0 and entry["latency_depth"] == 32


def test_latency_distribution_buckets():
    """fio's buckets: below 1000 ns by ns, below 1 ms by whole us, then by whole ms; a non-empty
    bucket shows at least 0.01%."""
    hist = [(500, 1), (1999, 1), (99_999, 1), (3_500_000, 1), (2_500_000_000, 9996)]
    (entry,) = fio_json([one_job(hist=hist, ios=10000)], {})["jobs"]
    assert entry["latency_ns"]["750"] == 0.01
    assert entry["latency_us"]["2"] == 0.01 and entry["latency_us"]["100"] == 0.01
    assert entry["latency_ms"]["4"] == 0.01 and entry["latency_ms"][">=2000"] == 99.96
    assert list(entry["latency_ms"]) == [
        "2",
        "4",
        "10",
        "20",
        "50",
        "100",
        "250",
        "500",
        "750",
        "1000",
        "2000",
        ">=2000",
    ]


def test_group_reporting_sums_threads():
    """Two threads, one entry: I/Os and bytes summed, the longer runtime, histograms merged,
    IOPS = all I/Os / that runtime, job_runtime summed over threads."""
    a = SimThread({"read": SimOp(100, 409600, 1.0, [(10000, 100)])})
    b = SimThread({"read": SimOp(300, 1228800, 2.0, [(30000, 300)])})
    glob = {"group_reporting": "1", "numjobs": "2"}
    (entry,) = fio_json([SimJob("g", {"rw": "randread"}, [a, b])], glob)["jobs"]
    r = entry["read"]
    assert (r["total_ios"], r["io_bytes"], r["runtime"], r["iops"]) == (400, 1638400, 2000, 200.0)
    assert r["clat_ns"]["mean"] == 25000.0 and r["clat_ns"]["N"] == 400
    assert r["clat_ns"]["percentile"]["20.000000"] == 10000 and r["clat_ns"]["percentile"]["30.000000"] == 30000
    assert entry["job_runtime"] == 3000 and entry["job options"] == {"rw": "randread"}
    # Without group_reporting each thread is an entry of its own, named as the job.
    doc = fio_json([SimJob("g", {"rw": "randread"}, [a, b])], {"numjobs": "2"})
    assert [(e["jobname"], e["read"]["total_ios"], e["job_runtime"]) for e in doc["jobs"]] == [
        ("g", 100, 1000),
        ("g", 300, 2000),
    ]


def test_reporting_groups_follow_stonewall():
    """Consecutive group-reporting jobs of one reporting group are one entry (fio's rule); a
    stonewall starts the next group."""
    t = SimThread({"read": SimOp(10, 40960, 1.0, [(1000, 10)])})
    jobs = [SimJob("a", {}, [t]), SimJob("b", {}, [t]), SimJob("c", {"stonewall": "1"}, [t])]
    doc = fio_json(jobs, {"group_reporting": "1"})
    assert [(e["jobname"], e["groupid"], e["read"]["total_ios"]) for e in doc["jobs"]] == [("a", 0, 20), ("c", 1, 10)]


def test_json_reads_back_as_a_measurement(tmp_path):
    """The document ssdlab writes is read by ssdlab's own fio reader with the same numbers."""
    hist = [(float(v * 1000), v % 7 + 1) for v in range(50, 400)]
    n = sum(c for _, c in hist)
    threads = [SimThread({"read": SimOp(n, n * 4096, 2.0, hist)}) for _ in range(4)]
    glob = {"ioengine": "io_uring", "iodepth": "16", "numjobs": "4", "group_reporting": "1", "rw": "randread"}
    doc = fio_json([SimJob("1", {"bs": "4k"}, threads)], glob, fio_version="ssdlab-fio", timestamp=1_700_000_000)
    assert doc["global options"] == glob and doc["disk_util"] == [] and doc["timestamp_ms"] == 1_700_000_000_000
    assert doc["time"] == "Tue Nov 14 22:13:20 2023"
    path = tmp_path / "sim.json"
    path.write_text(json.dumps(doc, indent=1))
    (job,) = read_output(path).jobs
    r = job.ops["read"]
    mean = sum(v * c for v, c in hist) / n
    assert (job.threads, job.iodepth, job.measured_s, job.block_bytes("read")) == (4, 16, 2.0, 4096)
    assert r.iops == pytest.approx(4 * n / 2.0) and r.ios == 4 * n
    assert r.clat_mean_ns == pytest.approx(mean, abs=1e-6) and r.lat_mean_ns == pytest.approx(mean, abs=1e-6)
    assert r.clat_percentiles_ns == {
        float(k): float(v) for k, v in doc["jobs"][0]["read"]["clat_ns"]["percentile"].items()
    }
    assert r.clat_percentiles_ns[50.0] == percentile(hist, 50)


def test_normal_output():
    """fio's text: the job line, the IOPS/BW line, latency lines in the unit fio picks, the
    percentile block, the distribution and the group's aggregate."""
    hist = [(150_000, 500), (250_000, 500)]
    job = one_job(hist=hist, ios=1000, io_bytes=1000 * 4096, runtime_s=1.0, options={"iodepth": "4"})
    text = fio_normal([job], {"rw": "randread", "ioengine": "libaio"}, fio_version="fio-x")
    assert "job1: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio" in text
    lines = text.splitlines()
    assert "job1: (groupid=0, jobs=1): err= 0: pid=0: Thu Jan  1 00:00:00 1970" in lines
    assert "  read: IOPS=1000, BW=4000KiB/s (4096kB/s)(4000KiB/1000msec)" in lines
    assert "    clat (usec): min=150, max=250, avg=200.00, stdev=50.03" in lines
    assert "    clat percentiles (usec):" in lines
    assert "     |  1.00th=[  150],  5.00th=[  150], 10.00th=[  150], 20.00th=[  150]," in lines
    assert "     | 99.99th=[  250]" in lines
    assert "  lat (usec)   : 250=50.00%, 500=50.00%" in lines
    assert "  IO depths    : 1=0.0%, 2=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%" in lines
    assert "Run status group 0 (all jobs):" in lines
    read = "   READ: bw=4000KiB/s (4096kB/s), 4000KiB/s-4000KiB/s (4096kB/s-4096kB/s), io=4000KiB (4096kB), "
    assert read + "run=1000-1000msec" in lines
    assert "  WRITE:" not in text
    big = one_job(hist=[(1_234_567, 10)], ios=500_000, io_bytes=500_000 * 131072, runtime_s=2.0, op="write")
    assert "  write: IOPS=250k, BW=30.5GiB/s (32.8GB/s)(61.0GiB/2000msec)" in fio_normal([big], {}).splitlines()


# --- the measurement plan ------------------------------------------------------------------


def test_plan_files(tmp_path):
    """Defaults: 4 patterns x 4 sizes x 9 depths with one job, 2 x 9 x 3 more for 4 KiB random
    reads and writes; the precondition file first; a README."""
    files = write_plan(tmp_path / "plan", device="/dev/nvme9n1")
    assert len(files) == 1 + 144 + 54 and files[0].name == PRECONDITION
    names = {f.name for f in files}
    assert "randread_4k_qd16_jobs4.fio" in names and "write_128k_qd256_jobs1.fio" in names
    assert "read_4k_qd16_jobs4.fio" not in names and "randread_16k_qd16_jobs2.fio" not in names
    assert sorted(p.name for p in (tmp_path / "plan").iterdir()) == sorted([*names, "README.txt"])
    (job,) = read_jobfile(tmp_path / "plan" / "randread_4k_qd16_jobs4.fio")
    assert job.name == "randread_4k_qd16_jobs4"
    assert job.options == {
        "ioengine": "io_uring",
        "direct": "1",
        "time_based": "1",
        "runtime": "60",
        "ramp_time": "10",
        "filename": "/dev/nvme9n1",
        "allow_file_create": "0",
        "norandommap": "1",
        "random_generator": "tausworthe64",
        "group_reporting": "1",
        "size": "100%",
        "percentile_list": PERCENTILES,
        "rw": "randread",
        "bs": "4k",
        "iodepth": "16",
        "numjobs": "4",
    }
    readme = (tmp_path / "plan" / "README.txt").read_text()
    assert "for f in *.fio; do fio --output-format=json --output=${f%.fio}.json $f; done" in readme
    assert "/dev/nvme9n1 AND DESTROY EVERYTHING" in readme and "ssdlab calibrate" in readme


def test_plan_precondition(tmp_path):
    write_plan(tmp_path, device="/dev/sdz", patterns=["randread"], sizes=["4k"], depths=[1], jobs=[1])
    fill, scramble = read_jobfile(tmp_path / PRECONDITION)
    assert {k: fill.options[k] for k in ("rw", "bs", "iodepth", "size", "filename", "direct")} == {
        "rw": "write",
        "bs": "128k",
        "iodepth": "32",
        "size": "100%",
        "filename": "/dev/sdz",
        "direct": "1",
    }
    assert "stonewall" not in fill.options and "time_based" not in fill.options
    assert scramble.options["stonewall"] == "1" and scramble.options["rw"] == "randwrite"
    assert scramble.options["bs"] == "4k" and scramble.options["loops"] == "2"
    assert scramble.options["norandommap"] == "1" and scramble.options["size"] == "100%"
    assert "OVERWRITES THE WHOLE DEVICE" in (tmp_path / PRECONDITION).read_text()


def test_plan_refusals(tmp_path):
    with pytest.raises(FioError, match="`device` is required"):
        write_plan(tmp_path / "a", device=" ")
    with pytest.raises(FioError, match="jobs_patterns"):
        write_plan(tmp_path / "b", device="/dev/x", jobs_patterns=["randread_8k"])
    with pytest.raises(FioError, match="pattern `randomread`"):
        write_plan(tmp_path / "c", device="/dev/x", patterns=["randomread"])
    out = tmp_path / "d"
    out.mkdir()
    (out / "stale_qd1_jobs1.fio").write_text("[x]\n")
    with pytest.raises(FioError, match="not empty"):
        write_plan(out, device="/dev/x")
    files = write_plan(out, device="/dev/x", patterns=["read"], sizes=["4k"], depths=[1, 2], overwrite=True)
    assert [f.name for f in files] == [PRECONDITION, "read_4k_qd1_jobs1.fio", "read_4k_qd2_jobs1.fio"]
    assert not (out / "stale_qd1_jobs1.fio").exists()
