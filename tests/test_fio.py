"""fio's JSON output read as a measurement (`ssdlab.fio.read_output`, `ssdlab fio info`), on the
shared devices' files (../shared/devices) and on files made from them."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from ssdlab.cli import main
from ssdlab.fio import FioError, parse_size, parse_time, read_output

DEVICES = Path(__file__).resolve().parents[2] / "shared" / "devices"
JOBS8 = DEVICES / "samsung_980pro_1tb" / "jobs_sweep" / "randread_4k_jobs8_qd16.json"
BS64 = DEVICES / "samsung_980pro_1tb" / "bs_sweep" / "randread_64k_qd4.json"
EVO_WRITE = DEVICES / "samsung_evo_2tb_partition" / "randwrite_4k_qd16.json"

pytestmark = pytest.mark.skipif(not JOBS8.exists(), reason="../shared/devices is not beside the repository")


def test_group_reported_jobs_sweep_point():
    """Eight io_uring threads at QD 16 reported as one entry (group_reporting): the 980 PRO's
    numbers as fio wrote them, fio's default 17 percentiles, job_runtime summed over threads."""
    m = read_output(JOBS8)
    assert m.fio_version == "fio-3.35"
    (job,) = m.jobs
    assert (job.numjobs, job.group_reporting, job.threads, job.iodepth) == (8, True, 8, 16)
    assert job.option("ioengine") == "io_uring" and job.option("rw") == "randread"
    assert (job.seconds("runtime"), job.seconds("ramp_time"), job.measured_s) == (120.0, 30.0, 120.0)
    assert list(job.ops) == ["read"]
    r = job.ops["read"]
    assert r.iops == pytest.approx(728739.343839)
    assert r.ios == 87_449_450
    assert r.clat_mean_ns == pytest.approx(173643.811474)
    assert len(r.clat_percentiles_ns) == 17 and r.clat_percentiles_ns[99.0] == 569344.0
    # IOPS × measured time per thread = the I/Os fio counted (to within fio's rounding of time).
    assert r.iops * job.measured_s == pytest.approx(r.ios, rel=1e-3)


def test_options_stack_global_then_job():
    """The bs sweep's options are global; the job section only names the job. A pinned CPU."""
    (job,) = read_output(BS64).jobs
    assert job.block_bytes("read") == 65536
    assert job.option("cpus_allowed") == "2" and job.option("name") == "1"


def test_per_job_options_and_two_percentiles():
    """The EVO campaign: options in the job section, libaio, 50th and 95th percentiles only."""
    (job,) = read_output(EVO_WRITE).jobs
    assert (job.option("ioengine"), job.iodepth, job.threads, job.block_bytes("write")) == ("libaio", 16, 1, 4096)
    w = job.ops["write"]
    assert list(job.ops) == ["write"]
    assert w.clat_percentiles_ns == {50.0: 56064.0, 95.0: 58112.0}
    assert w.iops == pytest.approx(266795.40682)


def test_text_before_and_after_the_json(tmp_path):
    """fio prints warnings before the JSON (and `--output-format=normal,json` a report): skipped."""
    f = tmp_path / "out.json"
    before = "fio: file hash not empty on exit\nnote: both iodepth >= 1 and synchronous I/O engine\n"
    f.write_text(before + JOBS8.read_text() + "\nfio: done\n")
    a, b = read_output(f), read_output(JOBS8)
    assert a.jobs == b.jobs and a.fio_version == b.fio_version


def test_entries_per_thread_without_group_reporting(tmp_path):
    """Without group_reporting fio writes one entry per thread; each stands for one."""
    doc = json.loads(EVO_WRITE.read_text())
    doc["jobs"][0]["job options"]["numjobs"] = "2"
    doc["jobs"].append(json.loads(json.dumps(doc["jobs"][0])))
    f = tmp_path / "two.json"
    f.write_text(json.dumps(doc))
    m = read_output(f)
    assert [(j.numjobs, j.threads) for j in m.jobs] == [(2, 1), (2, 1)]
    assert m.jobs[0].measured_s == m.jobs[0].runtime_ms / 1e3


def test_fio2_clat_in_microseconds(tmp_path):
    """fio 2.x wrote `clat` in µs: read as ns."""
    doc = json.loads(EVO_WRITE.read_text())
    w = doc["jobs"][0]["write"]
    ns = w.pop("clat_ns")
    w["clat"] = {"mean": ns["mean"] / 1000, "percentile": {p: x / 1000 for p, x in ns["percentile"].items()}}
    f = tmp_path / "old.json"
    f.write_text(json.dumps(doc))
    s = read_output(f).jobs[0].ops["write"]
    assert s.clat_mean_ns == pytest.approx(56873.307895) and s.clat_percentiles_ns[95.0] == pytest.approx(58112.0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no json here\n", "no JSON in the file"),
        ('{\n  "fio version": "fio-3.35",\n  "jobs": [\n    {"jobname": \n', ":5: "),
        ('{"fio version": "fio-3.35"}\n', "no `jobs` list"),
        ('{"jobs": []}\n', "lists no job"),
        ('{"jobs": [{"jobname": "x", "read": {"total_ios": 5, "iops": 1}}]}\n', "no completion latency"),
        ('{"jobs": [{"jobname": "x", "read": {"total_ios": 5, "clat_ns": {"mean": 3}}}]}\n', "jobs[0].read: missing"),
    ],
)
def test_errors_name_the_file(tmp_path, text, message):
    f = tmp_path / "bad.json"
    f.write_text(text)
    with pytest.raises(FioError) as e:
        read_output(f)
    assert str(f) in str(e.value) and message in str(e.value)


def test_missing_file():
    with pytest.raises(FioError, match="no such file"):
        read_output("no/such/fio.json")


def test_sizes_and_times_as_fio_reads_them():
    assert [parse_size(v, "bs") for v in ("4k", "4kb", "4Ki", "4KiB", "16K", "1m", "512", "107373134336")] == [
        4096,
        4096,
        4096,
        4096,
        16384,
        1 << 20,
        512,
        107373134336,
    ]
    assert [parse_time(v, "runtime") for v in ("120s", "30", "2m", "500ms", "1h", "250us")] == [
        120,
        30,
        120,
        0.5,
        3600,
        pytest.approx(250e-6),
    ]
    with pytest.raises(FioError, match="fio option `bs`: `4q` is not a size"):
        parse_size("4q", "bs")
    with pytest.raises(FioError, match="fio option `ramp_time`: `soon` is not a time"):
        parse_time("soon", "ramp_time")


def test_bs_per_direction(tmp_path):
    """`bs=4k,16k`: reads of 4 KiB, writes (and trims, the last one given) of 16 KiB."""
    doc = json.loads(EVO_WRITE.read_text())
    doc["jobs"][0]["job options"]["bs"] = "4k,16k"
    f = tmp_path / "bs.json"
    f.write_text(json.dumps(doc))
    (job,) = read_output(f).jobs
    assert [job.block_bytes(op) for op in ("read", "write", "trim")] == [4096, 16384, 16384]


def test_cli_info(capsys):
    assert main(["fio", "info", str(JOBS8)]) == 0
    out = capsys.readouterr().out
    assert "io_uring" in out and "728,739" in out and "8 (group_reporting" in out and "2 min per thread" in out
    sweep = sorted((DEVICES / "samsung_evo_2tb_partition").glob("*.json"))
    assert main(["fio", "info", *map(str, sweep)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.endswith(".json") or ".json " in line]
    assert len(rows) == len(sweep) == 18


def test_cli_info_json_and_error(capsys, tmp_path):
    assert main(["fio", "info", "--json", str(EVO_WRITE)]) == 0
    (doc,) = json.loads(capsys.readouterr().out)
    w = doc["jobs"][0]["ops"]["write"]
    assert w["clat_percentiles_ns"] == {"p50": 56064.0, "p95": 58112.0}
    assert math.isclose(w["iops"], 266795.40682)
    bad = tmp_path / "bad.json"
    bad.write_text("garbage")
    assert main(["fio", "info", str(bad)]) == 2
    assert f"ssdlab: error: {bad}: no JSON in the file" in capsys.readouterr().err
