"""`ssdlab trace info` against the figures MANIFEST.md publishes for every real trace, binary
cache round trips, and trace errors."""

import gzip
import json
import re

import pytest
import ssdlab
from conftest import ssdlab_cmd
from ssdlab import SsdlabError


def manifest_entries(traces):
    """(relative path, format, figures) for every file MANIFEST.md describes."""
    text = (traces / "MANIFEST.md").read_text()
    entries = []
    for m in re.finditer(r"^- `([^`]+)` — .*?\n(.*?)(?=^- `|^- \*\*Notes|^## |\Z)", text, re.S | re.M):
        rel, body = m.group(1), m.group(2)
        p = re.search(r"parsed as `(\w+)`: \*\*([\d,]+) requests\*\*; R/W = (\d+)/(\d+)(?: \(\+(\d+) other\))?", body)
        if not p:
            continue
        fig = {
            "requests": int(p.group(2).replace(",", "")),
            "reads": int(p.group(3)),
            "writes": int(p.group(4)),
            "trims": int(p.group(5) or 0),
            "write_bytes": int(re.search(r"bytes written = ([\d,]+)", body).group(1).replace(",", "")),
            "read_bytes": int(re.search(r"bytes read = ([\d,]+)", body).group(1).replace(",", "")),
            "max_end_bytes": int(re.search(r"max\(offset\+size\) = ([\d,]+) B", body).group(1).replace(",", "")),
            "devices": int(re.search(r"devices/volumes in file = (\d+)", body).group(1)),
        }
        seq = re.search(r"same dev\) = ([\d.]+|None)", body).group(1)
        fig["seq"] = None if seq == "None" else float(seq)
        entries.append((rel, p.group(1), fig))
    return entries


def test_manifest_parsed(traces):
    assert len(manifest_entries(traces)) >= 14


def test_trace_info_cli_matches_manifest(traces):
    for rel, _fmt, fig in manifest_entries(traces):
        out = ssdlab_cmd("trace", "info", str(traces / rel), "--json", check=True)
        info = json.loads(out.stdout)
        for key in ("requests", "reads", "writes", "trims", "read_bytes", "write_bytes", "max_end_bytes", "devices"):
            assert info[key] == fig[key], f"{rel}: {key} {info[key]} != {fig[key]}"
        if fig["seq"] is not None:
            assert round(info["seq_write_fraction"], 4) == pytest.approx(fig["seq"], abs=1e-9), rel
        for key in ("format", "footprint_pages", "seq_write_fraction"):
            assert key in info


def test_binary_cache_round_trip(traces, tmp_path):
    src = traces / "blkreplay_1and1/linux-mysql.load.gz"
    out = tmp_path / "mysql.ssdt"
    n = ssdlab.trace_convert(src, out)
    assert n == 80794
    a, b = ssdlab.trace_info(src), ssdlab.trace_info(out)
    assert b["format"] == "binary"
    for k in ("requests", "reads", "writes", "read_bytes", "write_bytes", "footprint_pages", "max_end_bytes"):
        assert a[k] == b[k]
    cfg = {"workload": {"kind": "trace", "address_map": "compact"}, "buffer": {"kind": "block-lru"}}
    cfg["workload"]["path"] = str(src)
    r1 = ssdlab.simulate(cfg)
    cfg["workload"]["path"] = str(out)
    r2 = ssdlab.simulate(cfg)
    assert r1.metrics == r2.metrics


def test_device_filter(traces):
    path = traces / "disksim_ascii_sample/ascii.trace"
    total = ssdlab.trace_info(path)
    per_dev = [ssdlab.trace_info(path, device=d)["requests"] for d in range(64)]
    assert sum(per_dev) == total["requests"] == 100_000
    assert sum(1 for n in per_dev if n) == total["devices"] == 14


def test_malformed_record_names_file_line_and_layout(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("128166385295514663,hm,0,Write,9056014336,2048,2833\n128166385295514878,hm,0,Write,oops,512,2617\n")
    with pytest.raises(SsdlabError, match=r"bad.csv:2: .*Offset.*expected layout"):
        ssdlab.trace_info(p, format="msr")
    info = ssdlab.trace_info(p, format="msr", skip_invalid=True)
    assert info["requests"] == 1 and info["skipped"] == 1


def test_skip_invalid_in_simulation(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("0,0,8,1,0\n1,x,8,1,0\n2,8,8,1,0\n")
    r = ssdlab.simulate({"workload": {"kind": "trace", "path": str(p), "format": "tencent", "skip_invalid": True}})
    assert r.metrics["trace.skipped_records"] == 1
    assert r.metrics["host.write_requests"] == 2
    assert any("bad.csv:2" in w for w in r.warnings)


def test_gzip_and_generic_format(tmp_path):
    p = tmp_path / "t.txt.gz"
    with gzip.open(p, "wt") as f:
        f.write("# time_ns op lba4k pages\n")
        f.write("1000 WR 10 2\n2000 RD 10 1\n3000 WR 12 1\n4000 WR 11 1\n")
    generic = {
        "delimiter": "whitespace",
        "time_col": 0,
        "op_col": 1,
        "offset_col": 2,
        "size_col": 3,
        "offset_unit_bytes": 4096,
        "size_unit_bytes": 4096,
        "time_unit_us": 0.001,
        "read_codes": ["RD"],
        "write_codes": ["WR"],
    }
    info = ssdlab.trace_info(p, format="generic", generic=generic)
    assert (info["reads"], info["writes"], info["write_bytes"]) == (1, 3, 4 * 4096)
    assert info["seq_write_fraction"] == pytest.approx(1 / 3)  # 12 follows 10+2; 11 does not follow 13
    r = ssdlab.simulate(
        {
            "workload": {"kind": "trace", "path": str(p), "format": "generic", "generic": generic},
            "buffer": {"kind": "lru", "bytes": "1MiB"},
        }
    )
    assert r.metrics["host.write_pages"] == 4
    assert r.metrics["buffer.write_hit_pages"] == 1  # page 11 written twice
    assert r.metrics["buffer.read_hit_pages"] == 1


def test_ambiguous_detection_is_explained(tmp_path):
    p = tmp_path / "amb.trace"
    p.write_text("5000 0 100 8 0\n6000 0 200 8 1\n")
    with pytest.raises(SsdlabError, match=r"(?i)format"):
        ssdlab.trace_detect(p)


def test_reader_thread_gives_identical_results_and_errors(traces, tmp_path):
    cfg = {
        "workload": {
            "kind": "trace",
            "path": str(traces / "cloudphysics/cloudPhysicsIO.csv"),
            "address_map": "compact",
        },
        "buffer": {"kind": "block-lru", "bytes": "4MiB"},
        "run": {"precondition": "fill", "repeat": 2},
    }
    a = ssdlab.simulate({**cfg, "run": {**cfg["run"], "reader_thread": True}})
    b = ssdlab.simulate({**cfg, "run": {**cfg["run"], "reader_thread": False}})
    assert a.metrics == b.metrics
    # Errors keep their file:line; skipped records are reported the same way.
    p = tmp_path / "bad.csv"
    p.write_text("".join(f"{i},{i * 8},8,1,0\n" for i in range(10_000)) + "x,0,8,1,0\n" + "1,0,8,1,0\n")
    for rt in (True, False):
        run = {"reader_thread": rt}
        with pytest.raises(SsdlabError, match=r"bad.csv:10001: "):
            ssdlab.simulate({"workload": {"kind": "trace", "path": str(p), "format": "tencent"}, "run": run})
        r = ssdlab.simulate(
            {"workload": {"kind": "trace", "path": str(p), "format": "tencent", "skip_invalid": True}, "run": run}
        )
        assert r.metrics["trace.skipped_records"] == 1 and r.metrics["host.write_requests"] == 10_001
        assert "bad.csv:10001" in r.warnings[0]


def test_trace_generate_round_trip(tmp_path):
    """A generated trace, simulated as a trace, gives the metrics of the synthetic workload."""
    import ssdlab
    from ssdlab import traces

    base = {
        "workload": {"kind": "desktop", "requests": 20000, "footprint_bytes": "64MiB", "read_fraction": 0.1},
        "device": {"logical_bytes": "64MiB"},
        "buffer": {"kind": "lru", "bytes": "1MiB"},
    }
    direct = ssdlab.simulate(base).metrics
    for name in ("t.csv", "t.ssdt"):
        out = tmp_path / name
        assert traces.trace_generate(base, out) == 20000
        cfg = {**base, "workload": {"kind": "trace", "path": str(out)}}
        replay = ssdlab.simulate(cfg).metrics
        assert {k: v for k, v in replay.items() if "time" not in k} == {
            k: v for k, v in direct.items() if "time" not in k
        }, name
    assert traces.trace_detect(tmp_path / "t.csv") == "msr"


FLASHNET = "flashnet_tencent_nvme/tencent.cut.per_50k.rw_60_40.490.trace"
# MANIFEST.md's measured latencies of the window (µs): mean, p50, p90, p99, p99.9.
FLASHNET_READS = (30_012, 1_703, 1_504, 2_965, 5_515, 11_852)
FLASHNET_WRITES = (19_988, 449, 210, 1_092, 2_212, 3_645)


def _rounded(s):
    return (s["count"], round(s["mean_us"]), s["p50_us"], s["p90_us"], s["p99_us"], s["p99.9_us"])


def test_flashnet_measured_latencies(traces):
    path = traces / FLASHNET
    assert ssdlab.traces.trace_detect(path) == "flashnet"
    m = ssdlab.traces.measured_latencies(path)
    assert m["format"] == "flashnet" and m["missing"] == 0
    assert list(m["read"][:3]) == [120.0, 146.0, 136.0]
    assert _rounded(ssdlab.traces.latency_summary(m["read"])) == FLASHNET_READS
    assert _rounded(ssdlab.traces.latency_summary(m["write"])) == FLASHNET_WRITES
    out = ssdlab_cmd("trace", "info", str(path), "--json", check=True)
    full = json.loads(out.stdout)
    assert full["measured_max_outstanding"] == 66  # MANIFEST.md: never more than 66 outstanding
    info = full["measured_latency"]
    assert _rounded(info["read"]) == FLASHNET_READS
    assert _rounded(info["write"]) == FLASHNET_WRITES
    assert "trim" not in info
    text = ssdlab_cmd("trace", "info", str(path), check=True).stdout
    assert re.search(r"read\s+30,012\s+1,703\s+1,504\s+2,965\s+5,515\s+11,852", text), text
    assert re.search(r"write\s+19,988\s+449\s+210\s+1,092\s+2,212\s+3,645", text), text
    assert re.search(r"measured_max_outstanding\s+66 requests at once", text), text


def test_latency_summary_nearest_rank():
    s = ssdlab.traces.latency_summary([5, 1, 3, 2, 4, 3, 7, 6, 9, 8])
    assert s == {"count": 10, "mean_us": 4.8, "p50_us": 4.0, "p90_us": 8.0, "p99_us": 9.0, "p99.9_us": 9.0}
    assert ssdlab.traces.latency_summary([]) is None


def test_measured_latencies_of_other_formats(tmp_path):
    msr = tmp_path / "m.csv"
    msr.write_text("128166385295514663,hm,0,Write,9056014336,2048,2833\n128166385295515175,hm,0,Read,0,4096,2320\n")
    m = ssdlab.traces.measured_latencies(msr)
    assert (m["format"], list(m["read"]), m["missing"]) == ("msr", [232.0], 0)
    assert m["write"][0] == pytest.approx(283.3, abs=1e-4)
    disksim = tmp_path / "d.trace"
    disksim.write_text("0.5 0 8 8 1\n")
    m = ssdlab.traces.measured_latencies(disksim)
    assert (len(m["read"]), len(m["write"]), m["missing"]) == (0, 0, 1)
    assert "measured_latency" not in ssdlab.traces.trace_info(disksim)


def test_timestamp_choice(tmp_path):
    p = tmp_path / "f.trace"
    p.write_text("1000.000,120,1,4096,0,1000.250,4096\n1000.000,90,0,8192,4096,1002.5,8192\n")
    assert ssdlab.traces.trace_info(p)["last_time_us"] == 1_002_500.0
    assert ssdlab.traces.trace_info(p, timestamp="record")["last_time_us"] == 1_000_000.0
    with pytest.raises(SsdlabError, match="timestamp.*single time stamp"):
        ssdlab.traces.trace_info(tmp_path / "f.trace", format="tencent", timestamp="record")
