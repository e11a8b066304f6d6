"""`ssdlab trace profile`: hand-worked cases, and seed 000 Table 4 against the independent numpy
implementation of tests/test_desktop_table4.py on a real trace and a generated one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import ssdlab
from conftest import ssdlab_cmd
from ssdlab import SsdlabError
from test_desktop_table4 import first_writes_and_counts, read_msr_writes, sequential

TRACES = Path(__file__).resolve().parents[2] / "shared" / "traces"
MSR_SAMPLE = TRACES / "caffeine_msr_hm0_sample" / "msr-cambridge1-sample.csv"


def msr(path: Path, records) -> Path:
    """records: (op 'R'|'W', offset bytes, size bytes) -> MSR Cambridge CSV."""
    lines = [
        f"{i},hm,0,{'Write' if op == 'W' else 'Read'},{off},{size},0\n" for i, (op, off, size) in enumerate(records)
    ]
    path.write_text("".join(lines))
    return path


def numpy_table4(path: Path) -> dict:
    """The Table 4 rows by the numpy definitions, over the sectors up to the largest write end."""
    start, length = read_msr_writes(path)
    seq = sequential(start, start + length)
    device = int((start + length).max())
    first, counts = first_writes_and_counts(start, length, device)
    nbytes = length * 512
    out = {
        "seq_first_writes": int((seq & first).sum()),
        "random_first_writes": int((~seq & first).sum()),
        "seq_updates": int((seq & ~first).sum()),
        "random_updates": int((~seq & ~first).sum()),
        "seq_first_write_bytes": int(nbytes[seq & first].sum()),
        "random_first_write_bytes": int(nbytes[~seq & first].sum()),
        "seq_update_bytes": int(nbytes[seq & ~first].sum()),
        "random_update_bytes": int(nbytes[~seq & ~first].sum()),
    }
    buckets = {"0": (0, 0), "1-100": (1, 100), "101-1000": (101, 1000), "1001-10000": (1001, 10000)}
    buckets |= {"10001-30000": (10001, 30000), ">30000": (30001, 1 << 62)}
    out["sector_write_counts"] = {k: int(((counts >= lo) & (counts <= hi)).sum()) for k, (lo, hi) in buckets.items()}
    return out, device


def check_against_numpy(path: Path) -> dict:
    want, device = numpy_table4(path)
    got = ssdlab.trace_profile(path, format="msr")
    # The profile counts sectors up to the largest end of any request, reads included.
    extra = got["sector_write_counts"]["0"] - want["sector_write_counts"]["0"]
    assert extra == -(-got_max_end(path) // 512) - device
    want["sector_write_counts"]["0"] += extra
    assert {k: got[k] for k in want} == want
    return got


def got_max_end(path: Path) -> int:
    return ssdlab.trace_info(path, format="msr")["max_end_bytes"]


def test_table4_matches_numpy_on_a_real_trace():
    got = check_against_numpy(MSR_SAMPLE)
    assert got["write_requests"] == 492
    assert got["seq_first_writes"] + got["seq_updates"] > 0 and got["random_updates"] > 0


def test_table4_matches_numpy_on_a_generated_desktop_trace(tmp_path):
    out = tmp_path / "desktop.csv"
    cmd = [sys.executable, "-m", "ssdlab", "trace", "generate", "--quiet"]
    for kv in [
        "workload.kind=desktop",
        "workload.footprint_bytes=1GiB",
        "workload.requests=40000",
        "workload.read_fraction=0",
    ]:
        cmd += ["--set", kv]
    subprocess.run(cmd + [str(out)], check=True, capture_output=True)
    got = check_against_numpy(out)
    assert got["write_requests"] == 40000
    assert 0 < got["seq_write_fraction"] < 1 and 0 < got["first_write_fraction"] < 1


def test_hand_worked_trace(tmp_path):
    # 4 KiB pages; writes (page: sectors): A 0-7 (page 0), B 8-15 (page 1, starts where A ends:
    # both sequential), C page 5, D page 0 (an update), E page 1 (update), F page 0 (update), then a
    # read at 1 MiB (its end, sector 2049, is the largest). With seq_window 1 only neighbours
    # count: A-B contiguous (B starts where A ends); B-C no; C-D no; D-E contiguous; E-F too
    # (F ends where E starts): sequential A, B, D, E, F.
    recs = [("W", 0, 4096), ("W", 4096, 4096), ("W", 5 * 4096, 4096), ("W", 0, 4096), ("W", 4096, 4096)]
    recs += [("W", 0, 4096), ("R", 1 << 20, 512)]
    p = ssdlab.trace_profile(msr(tmp_path / "t.csv", recs), format="msr", seq_window=1, short_distance_pages=2)
    assert (p["requests"], p["write_requests"], p["read_requests"]) == (7, 6, 1)
    assert (p["seq_first_writes"], p["random_first_writes"]) == (2, 1)  # A, B; C
    assert (p["seq_updates"], p["random_updates"]) == (3, 0)  # D, E, F
    assert p["seq_write_fraction"] == pytest.approx(5 / 6)
    assert p["first_write_fraction"] == pytest.approx(3 / 6)
    assert p["seq_update_bytes"] == 12288 and p["random_update_bytes"] == 0
    # Sectors: page 0 written 3 times, page 1 twice, page 5 once: 24 sectors 1-100; of the
    # 2049 sectors up to the read's end, 2025 never.
    assert p["sector_write_counts"] == {
        "0": 2025,
        "1-100": 24,
        "101-1000": 0,
        "1001-10000": 0,
        "10001-30000": 0,
        ">30000": 0,
    }
    # Page writes 0 1 5 0 1 0: re-use distances (distinct pages in between) 0: {1, 5} = 2,
    # 1: {5, 0} = 2, 0: {1} = 1. Buckets below 1, 2, 4: [1, 2) once, [2, 4) twice.
    assert p["reuse_distance"] == [[1, 0], [2, 1], [4, 2]]
    # Mean writes per page 6/3 = 2, so "frequent" is 3 writes or more: page 0 (3 writes, mean
    # distance 1.5 < 2: FS); page 1 (2 writes, distance 2: not short: IL); page 5 (once: IL).
    pc = p["page_classes"]
    assert pc["frequent_writes"] == 3
    assert (pc["fs"]["pages"], pc["fl"]["pages"], pc["is"]["pages"], pc["il"]["pages"]) == (1, 0, 0, 2)
    assert pc["fs"]["writes_mean"] == 3 and pc["il"]["writes_mean"] == 1.5
    assert pc["il"]["share"] == pytest.approx(2 / 3)
    # Working set: with 2 writes per window, windows of pages {0, 1}, {5, 0}, {1, 0}.
    p = ssdlab.trace_profile(tmp_path / "t.csv", format="msr", window_requests=2)
    assert [(w["last_write_request"], w["distinct_pages"]) for w in p["working_set"]] == [(2, 2), (4, 2), (6, 2)]


def test_cli_json_and_errors(tmp_path):
    out = ssdlab_cmd("trace", "profile", str(MSR_SAMPLE), "--json", check=True)
    p = json.loads(out.stdout)
    for key in ("write_requests", "seq_write_fraction", "first_write_fraction", "seq_write_mean_bytes"):
        assert key in p
    assert list(p["sector_write_counts"]) == ["0", "1-100", "101-1000", "1001-10000", "10001-30000", ">30000"]
    assert set(p["page_classes"]) >= {"fs", "fl", "is", "il"}
    assert sum(p["page_classes"][c]["share"] for c in ("fs", "fl", "is", "il")) == pytest.approx(1)
    text = ssdlab_cmd("trace", "profile", str(MSR_SAMPLE))
    assert text.returncode == 0 and "class FS pages" in text.stdout
    with pytest.raises(SsdlabError, match="frequent_writes"):
        ssdlab.trace_profile(MSR_SAMPLE, frequent_writes=0)
    with pytest.raises(SsdlabError, match="page_bytes"):
        ssdlab.trace_profile(MSR_SAMPLE, page_bytes=0)
