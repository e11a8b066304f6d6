"""`make bench`: engine speed and memory.

1. Host page writes per second, end to end (`ssdlab.simulate`), for the `lru` buffer + page FTL +
   greedy GC on a 10-million-request synthetic trace (4 KiB writes, Zipf(0.9) over 1 GiB),
   replayed from the binary cache and from the text trace.
2. libCacheSim's LRU on the same page stream, for comparison.
3. Peak RSS of a simulation on a 1 TiB device, and the page FTL's bytes per physical page.

Results are printed and written to results/bench.json. Nothing here is asserted: these are
measurements, reported in the issue notes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import ssdlab

ROOT = Path(__file__).resolve().parent.parent
WORK = Path(os.environ.get("SSDLAB_BENCH_DIR", ROOT / "target" / "bench"))
REQUESTS = int(os.environ.get("SSDLAB_BENCH_REQUESTS", 10_000_000))
FOOTPRINT_PAGES = 1 << 18  # 1 GiB of 4 KiB pages
BUFFER = "16MiB"


def zipf_pages(n: int, pages: int, theta: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, pages + 1) ** theta
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    ranks = np.searchsorted(cdf, rng.random(n))
    # Scatter hot ranks over the address space.
    return (ranks * 2654435761 + 12345) % pages


def make_traces(pages: np.ndarray) -> tuple[Path, Path, Path]:
    WORK.mkdir(parents=True, exist_ok=True)
    text = WORK / f"zipf-{len(pages)}.csv"
    if not text.exists():
        t0 = time.time()
        tmp = text.with_suffix(".tmp")
        with open(tmp, "w") as f:
            step = 1_000_000
            for s in range(0, len(pages), step):
                chunk = pages[s : s + step]
                idx = np.arange(s, s + len(chunk))
                f.write("".join(f"{i},{p * 8},8,1,0\n" for i, p in zip(idx.tolist(), chunk.tolist(), strict=False)))
        tmp.rename(text)
        print(f"generated {text} in {time.time() - t0:.1f} s", file=sys.stderr)
    binary = WORK / f"zipf-{len(pages)}.ssdt"
    t0 = time.time()
    n = ssdlab.trace_convert(text, binary, format="tencent")
    convert_s = time.time() - t0
    assert n == len(pages)
    oracle = WORK / f"zipf-{len(pages)}.oracleGeneral.bin"
    if not oracle.exists():
        rec = np.zeros(len(pages), dtype=[("t", "<u4"), ("id", "<u8"), ("sz", "<u4"), ("nv", "<i8")])
        rec["t"] = np.arange(len(pages), dtype=np.uint32)
        rec["id"] = pages
        rec["sz"] = 1
        rec["nv"] = -1
        rec.tofile(oracle)
    return text, binary, oracle, convert_s


REPEATS = int(os.environ.get("SSDLAB_BENCH_REPEATS", 3))


def run_engine(
    path: Path, fmt: str, op: float = 0.07, reader_thread: bool = False, buffer: str = "lru", ftl: str = "page"
) -> dict:
    """Best and median of REPEATS runs (the machine is shared: timings vary by ±20%).
    reader_thread=False keeps the whole run on one core."""
    cfg = {
        "workload": {"kind": "trace", "path": str(path), "format": fmt},
        "device": {"logical_bytes": FOOTPRINT_PAGES * 4096, "op": op},
        "buffer": {"kind": buffer, "bytes": BUFFER},
        "ftl": {"kind": ftl},
        "run": {"reader_thread": reader_thread},
    }
    walls = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        r = ssdlab.simulate(cfg)
        walls.append(time.perf_counter() - t0)
    walls.sort()
    m = r.metrics
    pages = m["host.write_pages"]
    return {
        "op": op,
        "reader_thread": reader_thread,
        "wall_s": walls,
        "host_page_writes_per_s_best": pages / walls[0],
        "host_page_writes_per_s_median": pages / walls[len(walls) // 2],
        "nand_programs_per_s_best": m["nand.programs.total"] / walls[0],
        "waf": m["waf"],
        "hits": m["buffer.write_hit_pages"],
        "gc_moved_pages": m.get("gc.moved_pages", 0.0),
    }


def run_libcachesim(oracle: Path, n: int) -> dict:
    import libcachesim as lcs

    reader = lcs.TraceReader(str(oracle), lcs.TraceType.ORACLE_GENERAL_TRACE)
    cache = lcs.LRU(cache_size=(16 << 20) // 4096)
    t0 = time.perf_counter()
    miss_ratio, _ = cache.process_trace(reader)
    wall = time.perf_counter() - t0
    return {"wall_s": wall, "requests_per_s": n / wall, "hits": round((1 - miss_ratio) * n)}


RSS_CHILD = r"""
import json, sys, time, ssdlab

def hwm_kib():
    # VmHWM is reset by exec (ru_maxrss is not: it would include the parent's peak).
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])

base = hwm_kib()
t0 = time.time()
r = ssdlab.simulate({
    "workload": {"kind": "uniform", "requests": 200000, "footprint_bytes": "1TiB"},
    "device": {"logical_bytes": "1TiB", "op": 0.07, "pages_per_block": 256},
    "buffer": {"kind": "lru", "bytes": "64MiB"},
})
peak = hwm_kib()
print(json.dumps({"peak_rss_kib": peak, "baseline_rss_kib": base, "wall_s": time.time() - t0,
                  "physical_pages": r.metrics["device.physical_blocks"] * 256,
                  "logical_pages": r.metrics["device.logical_pages"]}))
"""


def rss_1tib() -> dict:
    out = subprocess.run([sys.executable, "-c", RSS_CHILD], capture_output=True, text=True, check=True)
    d = json.loads(out.stdout)
    d["ftl_bytes_per_physical_page"] = (d["peak_rss_kib"] - d["baseline_rss_kib"]) * 1024 / d["physical_pages"]
    return d


def main() -> int:
    print(f"generating a {REQUESTS:,}-request Zipf(0.9) trace over 1 GiB ...", file=sys.stderr)
    pages = zipf_pages(REQUESTS, FOOTPRINT_PAGES, 0.9, seed=1)
    text, binary, oracle, convert_s = make_traces(pages)
    results = {"requests": REQUESTS, "trace_convert_s": convert_s}
    print("engine, binary cache ...", file=sys.stderr)
    results["engine_binary"] = run_engine(binary, "binary")
    print("engine, text trace ...", file=sys.stderr)
    results["engine_text"] = run_engine(text, "tencent")
    print("engine, text trace, reader thread ...", file=sys.stderr)
    results["engine_text_reader_thread"] = run_engine(text, "tencent", reader_thread=True)
    print("engine, binary cache, 28% over-provisioning ...", file=sys.stderr)
    results["engine_binary_op28"] = run_engine(binary, "binary", op=0.28)
    print("engine, binary cache, hitstat + FAST ...", file=sys.stderr)
    results["engine_binary_hitstat_fast"] = run_engine(binary, "binary", buffer="hitstat", ftl="fast")
    print("libCacheSim LRU ...", file=sys.stderr)
    results["libcachesim_lru"] = run_libcachesim(oracle, REQUESTS)
    print("peak RSS on a 1 TiB device ...", file=sys.stderr)
    results["rss_1tib"] = rss_1tib()
    same = results["engine_binary"]["hits"] == results["libcachesim_lru"]["hits"]
    results["lru_hits_equal_libcachesim"] = same

    b, t, b28 = results["engine_binary"], results["engine_text"], results["engine_binary_op28"]
    lc, rss = results["libcachesim_lru"], results["rss_1tib"]
    print()
    print(f"{'measurement (best / median of ' + str(REPEATS) + ')':<58}{'best':>14}{'median':>14}")
    print("-" * 86)
    for label, d in (
        ("one core: binary cache, ρ=0.07 (host pages/s)", b),
        ("one core: text trace, ρ=0.07 (host pages/s)", t),
        ("one core: binary cache, ρ=0.28 (host pages/s)", b28),
        ("two cores: text trace + reader thread, ρ=0.07", results["engine_text_reader_thread"]),
        ("one core: hitstat + FAST, binary cache, ρ=0.07", results["engine_binary_hitstat_fast"]),
    ):
        best, med = d["host_page_writes_per_s_best"], d["host_page_writes_per_s_median"]
        print(f"{label:<58}{best:>14,.0f}{med:>14,.0f}")
    print(f"{'  WAF at ρ=0.07 / ρ=0.28':<58}{b['waf']:>14.3f}{b28['waf']:>14.3f}")
    print(f"{'  WAF of hitstat + FAST':<58}{results['engine_binary_hitstat_fast']['waf']:>14.3f}")
    print(f"{'  NAND programs/s, binary, ρ=0.07':<58}{b['nand_programs_per_s_best']:>14,.0f}")
    print(f"{'libCacheSim LRU alone (requests/s)':<58}{lc['requests_per_s']:>14,.0f}")
    print(f"{'LRU hits equal libCacheSim':<58}{str(same):>14}")
    print(f"{'trace convert, text -> binary (s)':<58}{convert_s:>14.1f}")
    print(f"{'1 TiB device: peak RSS (MiB)':<58}{rss['peak_rss_kib'] / 1024:>14,.0f}")
    print(f"{'1 TiB device: bytes per physical page (whole process)':<58}{rss['ftl_bytes_per_physical_page']:>14.2f}")
    out = ROOT / "results"
    out.mkdir(exist_ok=True)
    (out / "bench.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {out / 'bench.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
