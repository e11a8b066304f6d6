"""Greedy GC under uniform random 4 KiB writes against Xiang & Kurkoski's expression
WA = (1+ρ) / ((1+ρ) + W0(−(1+ρ)·e^{−(1+ρ)})), and against an independent pure-Python greedy
simulator fed the very same page stream."""

import math
import random

import pytest
import ssdlab
from ssdlab.analytic import greedy_waf as xiang_kurkoski
from ssdlab.analytic import greedy_waf_config, lambert_w0


def test_lambert_w():
    for w in (-0.9, -0.5, -0.1):
        assert lambert_w0(w * math.exp(w)) == pytest.approx(w, abs=1e-12)
    assert xiang_kurkoski(0.1) == pytest.approx(5.6775, abs=1e-4)


def greedy_waf(rho: float, ppb: int, logical_pages: int = 1 << 18) -> float:
    r = ssdlab.simulate(greedy_waf_config(rho, ppb, logical_pages))
    return r.metrics["waf"]


@pytest.mark.parametrize("ppb", [128, 256])
@pytest.mark.parametrize("rho", [0.1, 0.2, 0.3, 0.5])
def test_greedy_waf_matches_xiang_kurkoski(rho, ppb):
    waf = greedy_waf(rho, ppb)
    expected = xiang_kurkoski(rho)
    # The expression is the limit of many pages per block; greedy does slightly better with finite
    # blocks (see test_finite_block_effect_vanishes_as_blocks_grow): −3.4% at 128 pages and
    # ρ = 0.1, the only case outside 3%.
    tol = 0.04 if (ppb == 128 and rho == 0.1) else 0.03
    assert waf == pytest.approx(expected, rel=tol), f"ρ={rho} ppb={ppb}: {waf:.4f} vs {expected:.4f}"


def reference_greedy(stream, logical_pages, ppb, physical_blocks, reserve):
    """Independent greedy page-FTL model: one host frontier, one GC frontier, GC while free < reserve."""
    l2p = {}
    owner = {}  # ppn -> lpn
    valid = [0] * physical_blocks
    wp = [0] * physical_blocks
    free = list(range(physical_blocks))
    sealed = set()
    open_blk = {"host": None, "gc": None}
    programs = 0

    def next_ppn(kind, in_gc):
        while True:
            b = open_blk[kind]
            if b is not None and wp[b] < ppb:
                wp[b] += 1
                return b * ppb + wp[b] - 1
            if b is not None:
                sealed.add(b)
                open_blk[kind] = None
            if not in_gc and len(free) < reserve:
                collect()
                continue
            open_blk[kind] = free.pop(0)

    def program(lpn, kind, in_gc):
        nonlocal programs
        ppn = next_ppn(kind, in_gc)
        old = l2p.get(lpn)
        if old is not None:
            del owner[old]
            valid[old // ppb] -= 1
        l2p[lpn] = ppn
        owner[ppn] = lpn
        valid[ppn // ppb] += 1
        programs += 1

    def collect():
        while len(free) < reserve:
            victim = min(sealed, key=lambda b: valid[b])
            sealed.discard(victim)
            for ppn in range(victim * ppb, victim * ppb + ppb):
                if ppn in owner:
                    program(owner[ppn], "gc", True)
            wp[victim] = 0
            free.append(victim)

    for lpn in range(logical_pages):
        program(lpn, "host", False)
    programs = 0
    for lpn in stream:
        program(lpn, "host", False)
    return programs / len(stream)


def test_greedy_matches_independent_model(tmp_path):
    """Same page stream through ssdlab and through the reference model: WAF within 1%
    (ties between equally empty victims may be broken differently)."""
    logical_pages, ppb, rho = 4096, 32, 0.15
    rng = random.Random(5)
    stream = [rng.randrange(logical_pages) for _ in range(logical_pages * 6)]
    trace = tmp_path / "stream.csv"
    trace.write_text("".join(f"{i},{lpn * 8},8,1,0\n" for i, lpn in enumerate(stream)))
    physical_blocks = math.ceil(logical_pages // ppb * (1 + rho))
    r = ssdlab.simulate(
        {
            "workload": {"kind": "trace", "path": str(trace), "format": "tencent"},
            "device": {"pages_per_block": ppb, "op": rho, "logical_bytes": logical_pages * 4096},
            "buffer": {"kind": "none"},
            "ftl": {"page": {"gc_free_blocks": 2}},
            "run": {"precondition": "fill", "check_integrity": True},
        }
    )
    ref = reference_greedy(stream, logical_pages, ppb, physical_blocks, reserve=2)
    assert r.metrics["device.physical_blocks"] == physical_blocks
    assert r.metrics["waf"] == pytest.approx(ref, rel=0.01)
    assert r.metrics["waf"] > 1.5  # GC really ran


def test_finite_block_effect_vanishes_as_blocks_grow():
    """The expression is the many-pages-per-block limit: greedy's WAF approaches it from below,
    the gap roughly halving with each doubling of pages per block."""
    expected = xiang_kurkoski(0.1)
    gaps = [greedy_waf(0.1, ppb, logical_pages=1 << 19) / expected - 1 for ppb in (32, 64, 128, 256)]
    assert all(g < 0 for g in gaps)
    assert all(0.35 < gaps[i + 1] / gaps[i] < 0.65 for i in range(3)), gaps
