"""Registered studies: `ssdlab reproduce NAME --quick` produces a report from the real grid."""

import subprocess
import sys

import pytest
import ssdlab
from ssdlab import studies
from ssdlab.analytic import greedy_waf


def test_registry_lists_both_studies():
    reg = studies.registry()
    assert {"waf-vs-op", "buffers-basic"} <= set(reg)
    p = subprocess.run([sys.executable, "-m", "ssdlab", "reproduce", "--list"], capture_output=True, text=True)
    assert p.returncode == 0 and "waf-vs-op" in p.stdout and "buffers-basic" in p.stdout


def test_unknown_study_is_a_user_error():
    p = subprocess.run([sys.executable, "-m", "ssdlab", "reproduce", "nope"], capture_output=True, text=True)
    assert p.returncode == 2 and "unknown study `nope`" in p.stderr and "Traceback" not in p.stderr


def test_waf_vs_op_quick(tmp_path):
    out = tmp_path / "waf"
    p = subprocess.run(
        [sys.executable, "-m", "ssdlab", "reproduce", "waf-vs-op", "--quick", "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    html = (out / "report.html").read_text()
    assert "Greedy GC against the analytic model" in html and "data:image/png;base64," in html
    df = ssdlab.load_results(out)
    assert len(df) == 24 and (df["status"] == "ok").all()
    greedy = df[(df["ftl.gc"] == "greedy") & (df["workload.kind"] == "uniform")]
    for _, row in greedy.iterrows():
        assert row["waf"] == pytest.approx(greedy_waf(row["device.op"]), rel=0.03)
    # More spare area, less write amplification, for every policy and workload.
    for _, part in df.groupby(["ftl.gc", "workload.kind"]):
        wafs = part.sort_values("device.op")["waf"].tolist()
        assert wafs == sorted(wafs, reverse=True)
    # Cost-benefit beats greedy under skew (Zipf), where greedy mixes hot and cold data.
    zipf = df[(df["workload.kind"] == "zipf") & (df["device.op"] == 0.1)].set_index("ftl.gc")["waf"]
    assert zipf["cost-benefit"] < zipf["greedy"] < zipf["fifo"]


def test_buffers_basic_quick(tmp_path, traces):
    out = tmp_path / "buf"
    report = studies.reproduce("buffers-basic", quick=True, out=out, progress=False)
    assert report.exists() and "Fewest erases by trace and buffer size" in report.read_text()
    df = ssdlab.load_results(out)
    assert len(df) == 27 and (df["status"] == "ok").all()
    assert df["gc.victims"].min() > 0  # preconditioning makes GC run on every trace
    for _, part in df.groupby("workload.path"):
        none = part[part["buffer.kind"] == "none"]
        assert (none["buffer.page_hit_ratio"] == 0).all()
        lru = part[part["buffer.kind"] == "lru"].sort_values("buffer.bytes")
        # LRU's page hit ratio grows with its size (inclusion property).
        assert lru["buffer.page_hit_ratio"].is_monotonic_increasing


def test_hitstat2009_quick_states_every_claim(tmp_path):
    out = tmp_path / "hs"
    report = studies.reproduce("hitstat2009", quick=True, out=out, progress=False)
    text = report.read_text()
    assert "Thesis claims against ssdlab" in text
    claims = [
        "Flushed groups: HitStat &lt; BPLRU &lt; FAB",
        "Write throughput on BAST",
        "Write throughput on FAST",
        "Full-merge share of erases on FAST",
        "Padding Model within a few percent of the best fixed threshold (BAST)",
        "Padding Model within a few percent of the best fixed threshold (FAST)",
    ]
    for claim in claims:
        assert claim in text, claim
    assert text.count("<b>holds</b>") + text.count("<b>does not hold</b>") == len(claims)
    df = ssdlab.load_results(out)
    assert (df["status"] == "ok").all() and len(df) >= 40
    # The verdict on flushed groups is the measured order, at the reference buffer size.
    grid = df[df["axes"].str.contains('"buffer.bytes"')]  # the cells of the buffers grid
    at = grid[(grid["ftl.kind"] == "bast") & (grid["buffer.bytes"] == 2 << 20)]
    fg = at.set_index("buffer.kind")["buffer.flushed_groups"]
    holds = fg["hitstat"] < fg["bplru"] < fg["fab"]
    row = text[text.index("Flushed groups: HitStat") :].split("</tr>")[0]
    assert ("<b>holds</b>" in row) == holds
