"""`make bench`: engine speed, instruction counts and memory.

The scenario of the speed target (counts mode, one core): a binary-cache trace of 10 M 4 KiB writes
drawn Zipf(0.9) over 2 M pages (8 GiB), replayed through a 64 MiB `lru` buffer onto an 8 GiB `page`
FTL with greedy GC at ρ = 0.07, `run.reader_thread = false`.

1. Host page writes per second of that run (`ssdlab.simulate`, end to end: set-up, replay, final
   flush, metrics), alternated in the same session with libCacheSim's `LRU` (64 MiB = 16 Ki
   objects) processing the same page stream alone (an oracleGeneral file); REPEATS pairs. The ratio
   ssdlab / libCacheSim is printed for the best and for the median run of each. The target is ≥ 2.
   Then the same two as whole processes, alternated: `ssdlab run` on that configuration against a
   Python process that imports libCacheSim and runs its `LRU` over the oracleGeneral file (start,
   imports, reading and exit included on both sides); the ratio is libCacheSim's wall time over
   ssdlab's for the same 10 M requests.
2. The same stream through `hitstat` on `fast` and through `bplru` on `bast` (64 MiB buffer, same
   device, default hybrid-FTL parameters): host page writes per second (target ≥ 3 M); and the
   same two on seed 000's own workload, the `desktop` profile at the thesis's scale (20 GiB,
   1,509,409 write requests, 32 MiB buffer), where the hybrid FTLs meet the locality they are
   built for.
3. Instructions per host page write, from `valgrind --tool=callgrind` running the Rust example
   `simulate` (crates/ssdlab-core/examples/simulate.rs, so that only Rust is measured) on the first
   1 M requests of the stream, for each of the three scenarios; these counts are stable from run to
   run on a noisy machine (wall clock is not). They include the set-up (table allocation) and the
   final flush, divided by the 1 M host page writes.
4. Cache misses per host page write for the lru + page run (`valgrind --tool=cachegrind
   --cache-sim=yes --LL=2097152,16,64`: D1 and simulated 2 MiB L2 data misses, reads + writes), to
   tell how far the run is bound by memory latency.
5. Peak RSS of a simulation on a 1 TiB device, and the page FTL's bytes per physical page.
6. This machine's random-access memory latency at working sets of 1–64 MiB (a pointer chase,
   crates/ssdlab-core/examples/latency.rs): what a miss in the FTL's tables (17 MiB in the
   scenario) costs when no prefetch hides it.

7. Timed mode (`run.mode = "timed"`): the page FTL with greedy GC after a fill (8 GiB, ρ = 0.07),
   8 channels × 4 dies, a closed loop of 32 outstanding requests, 2 M 4 KiB random requests, 70%
   writes / 30% reads: requests per second of wall time, end to end (the fill included; target
   ≥ 1 M), beside the same run in counts mode; and what it simulated (IOPS, latency percentiles).
   Then the demand-based FTL (`dftl`, CMT of 20% of the map) at a queue depth of 128: the same
   70/30 stream, and seed 004's set-up (the `ptsd` study's PART-SCHED cell on a 4 GiB device:
   random writes of twice the device, then random reads, 20% over-provisioning), each with its
   NAND operations per request (the clock's work grows with them). Each also with
   `run.clock_thread = false` (one thread; the default places time on a second thread where the
   run allows it, `time.clock_thread`), alternated with the default. Four fio jobs of QD 32 with
   every mechanism and the host model (`fio_jobs_config`) are reported end to end, and for the
   replay alone: each run's wall minus that of the same configuration with one request per flow
   (the set-up and the fill-random preconditioning, which is counts-mode work, not requests),
   run alternately with it.

8. Every write buffer of the registry on the stream of 1 (64 MiB buffer, `page` FTL), seed
   002's `clc`, `ref`, `integrated` also on `bast`, and the demand-based FTL `dftl` without a
   buffer and behind `lru`: host page writes per second, best and median of 2 (target ≥ 3 M for
   each), with the write hit ratio and WAF.

9. The line FTL (`lines`, seed 001) with every placement of the registry on the stream of 1 (no
   buffer, 16 MiB lines = 32 LUNs x 128-page blocks, pblk victims, 8-page write batches): host page
   writes per second, best and median of 2 (target >= 3 M for each), with the WAF.

Set SSDLAB_BENCH_VALGRIND=0 to skip 3 and 4. Results are printed and written to
results/bench.json. Nothing here is asserted: these are measurements, reported in the issue notes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import ssdlab
from ssdlab.tomlwrite import dumps

ROOT = Path(__file__).resolve().parent.parent
WORK = Path(os.environ.get("SSDLAB_BENCH_DIR", ROOT / "target" / "bench"))
REQUESTS = int(os.environ.get("SSDLAB_BENCH_REQUESTS", 10_000_000))
VALGRIND_REQUESTS = int(os.environ.get("SSDLAB_BENCH_VALGRIND_REQUESTS", 1_000_000))
REPEATS = int(os.environ.get("SSDLAB_BENCH_REPEATS", 5))
VALGRIND = os.environ.get("SSDLAB_BENCH_VALGRIND", "1") != "0"
# The last level cachegrind simulates: this machine's L2 (2 MiB per core, 16-way; lscpu's "4 MiB"
# is two instances). A simulated L3 would only count cold misses; L2 misses are the accesses that
# pay the latency of the memory behind it (item 6 measures it).
LL = os.environ.get("SSDLAB_BENCH_LL", "2097152,16,64")
FOOTPRINT_PAGES = 1 << 21  # 2 Mi pages of 4 KiB = 8 GiB
DEVICE = "8GiB"
BUFFER = "64MiB"
BUFFER_PAGES = (64 << 20) // 4096
OP = 0.07
SCENARIOS = {  # name -> (buffer, ftl)
    "lru+page": ("lru", "page"),
    "hitstat+fast": ("hitstat", "fast"),
    "bplru+bast": ("bplru", "bast"),
}

# The binary cache (trace/binary.rs): 32-byte header, then packed 25-byte records.
RECORD = np.dtype([("t", "<f8"), ("off", "<u8"), ("len", "<u4"), ("dev", "<u4"), ("op", "u1")])


def zipf_pages(n: int, pages: int, theta: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, pages + 1) ** theta
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    ranks = np.searchsorted(cdf, rng.random(n))
    # Scatter hot ranks over the address space.
    return (ranks * 2654435761 + 12345) % pages


def write_binary(pages: np.ndarray, path: Path) -> None:
    """The `.ssdt` cache of 4 KiB writes at `pages` (what `ssdlab.trace_convert` writes for the
    equivalent text trace; written directly, which is much faster than through text)."""
    if path.exists():
        return
    assert RECORD.itemsize == 25
    rec = np.zeros(len(pages), dtype=RECORD)
    rec["t"] = np.arange(len(pages), dtype=np.float64)
    rec["off"] = pages.astype(np.uint64) * 4096
    rec["len"] = 4096
    rec["op"] = 1
    head = bytearray(32)
    head[0:8] = b"SSDLTRC1"
    head[8:10] = (1).to_bytes(2, "little")
    head[10:12] = (25).to_bytes(2, "little")
    head[16:24] = len(pages).to_bytes(8, "little")
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        f.write(head)
        rec.tofile(f)
    tmp.rename(path)


def write_oracle(pages: np.ndarray, path: Path) -> None:
    if path.exists():
        return
    rec = np.zeros(len(pages), dtype=[("t", "<u4"), ("id", "<u8"), ("sz", "<u4"), ("nv", "<i8")])
    rec["t"] = np.arange(len(pages), dtype=np.uint32)
    rec["id"] = pages
    rec["sz"] = 1
    rec["nv"] = -1
    tmp = path.with_suffix(".tmp")
    rec.tofile(tmp)
    tmp.rename(path)


def config(path: Path, buffer: str, ftl: str) -> dict:
    cfg = {
        "workload": {"kind": "trace", "path": str(path), "format": "binary"},
        "device": {"logical_bytes": DEVICE, "op": OP},
        "buffer": {"kind": buffer, "bytes": BUFFER},
        "ftl": {"kind": ftl},
        "run": {"reader_thread": False},
    }
    if ftl == "page":
        cfg["ftl"]["gc"] = "greedy"
    return cfg


def fdp_off_on(path: Path) -> dict:
    """The page FTL behind no buffer with `[fdp]` off and on (8 handles, every write through
    handle 0), runs alternated: FDP's own cost in counts mode."""
    off = config(path, "none", "page")
    on = {**off, "fdp": {"enabled": True, "handles": 8}}
    walls: dict = {"off": [], "on": []}
    waf = {}
    for _ in range(max(2, REPEATS // 2)):
        for name, cfg in (("off", off), ("on", on)):
            wall, m = run_ssdlab(cfg)
            walls[name].append(wall)
            waf[name] = m["waf"]
    out = {name: {**rates(m["host.write_pages"], walls[name]), "waf": waf[name]} for name in walls}
    out["ratio_median"] = out["on"]["per_s_median"] / out["off"]["per_s_median"]
    return out


def lines_config(path: Path, placement: str) -> dict:
    """Item 9: the line FTL behind no buffer, placed by `placement`."""
    cfg = config(path, "none", "lines")
    cfg["placement"] = {"kind": placement}
    # Lines as pblk's span many LUNs: 32 LUNs x 128-page blocks = 16 MiB lines.
    cfg["device"]["pages_per_block"] = 4096
    return cfg


def desktop_config(buffer: str, ftl: str) -> dict:
    """Seed 000's own workload at the thesis's scale: the `desktop` profile (Table 4's 1,509,409
    write requests, generated on the fly, so generation is inside the time) on a 20 GiB device."""
    return {
        "workload": {"kind": "desktop", "requests": 1_509_409, "footprint_bytes": "20GiB"},
        "device": {"logical_bytes": "20GiB", "op": OP},
        "buffer": {"kind": buffer, "bytes": "32MiB"},
        "ftl": {"kind": ftl},
        "run": {"reader_thread": False},
    }


TIMED_REQUESTS = 2_000_000


def timed_config(mode: str) -> dict:
    return {
        "workload": {"kind": "uniform", "requests": TIMED_REQUESTS, "footprint_bytes": "8GiB", "read_fraction": 0.3},
        "device": {"logical_bytes": "8GiB", "op": 0.07, "channels": 8, "chips_per_channel": 4},
        "ftl": {"kind": "page", "gc": "greedy"},
        "run": {"mode": mode, "queue_depth": 32, "precondition": "fill"},
    }


def dftl_timed_configs() -> dict[str, dict]:
    """Item 7's demand-based FTL runs at QD 128, and the page FTL with every timed mechanism on
    (targets >= 1 M requests/s)."""
    mix = timed_config("timed")
    mix["ftl"] = {"kind": "dftl", "gc": "greedy"}
    mix["run"]["queue_depth"] = 128
    pages = 4 << 18  # 4 GiB of 4 KiB pages
    seed004 = {
        "workload": {
            "kind": "fio",
            "requests": 3 * pages,
            "footprint_bytes": "4GiB",
            "fio": {"rw": "randwrite-then-randread", "write_requests": 2 * pages},
        },
        "device": {"logical_bytes": "4GiB", "op": 0.2, "channels": 8, "chips_per_channel": 4},
        "nand": {"read_us": 100.0, "program_us": 800.0, "erase_us": 1500.0, "channel_mb_s": 100.0},
        "buffer": {"kind": "fifo", "bytes": "1MiB", "fifo": {"batch_pages": 0}},
        "ftl": {"kind": "dftl", "dftl": {"granularity": "page", "partition": "fixed"}},
        "run": {"mode": "timed", "queue_depth": 128, "scheduler": "write-stop"},
    }
    return {
        "dftl, QD 128, 70/30 random after a fill": mix,
        "dftl PART-SCHED, seed 004 set-up, 4 GiB": seed004,
        "page, QD 32, every timed mechanism on": mechanisms_timed_config(),
    }


def mechanisms_timed_config() -> dict:
    """The page-FTL timed run with every mechanism of the real-device model on (target >= 1 M
    requests/s): controller cores and firmware time, host link, wake-up, watermark draining,
    suspension, two planes, TLC page types, 16 KiB NAND pages of four mapping units."""
    cfg = timed_config("timed")
    cfg["controller"] = {"cores": 4, "command_us": 3.0, "page_us": 0.5, "wake_us": 1000.0}
    cfg["host"] = {"link_mib_s": 3300.0}
    cfg["buffer"] = {"kind": "lru", "bytes": "16MiB", "drain_watermark": 0.8}
    cfg["device"]["planes_per_die"] = 2
    cfg["nand"] = {
        "suspend": "program-erase",
        "cell": "tlc",
        "read_csb_us": 70.0,
        "read_msb_us": 90.0,
        "program_csb_us": 1200.0,
        "program_msb_us": 2000.0,
        "physical_page_bytes": "16KiB",
    }
    return cfg


def flows_timed_config() -> dict:
    """The page-FTL timed run as four flows of QD 32 each, a quarter of the device and of the
    requests each (target >= 1 M requests/s), beside the same requests as one flow at QD 128."""
    cfg = timed_config("timed")
    workload = {**cfg.pop("workload"), "requests": TIMED_REQUESTS // 4, "footprint_bytes": "2GiB"}
    cfg["flows"] = [{"queue_depth": 32, "workload": {**workload, "seed": i + 1}} for i in range(4)]
    return cfg


def fio_jobs_config(host: bool) -> dict:
    """Four fio jobs (threads) of QD 32 on one namespace, random 4 KiB reads and writes 70/30
    after the campaign's preconditioning (fill, then random overwrites of twice the device), on
    8 x 4 dies with the timed mechanisms of the real-device model, 16 KiB TLC pages and the write
    cache admitting in order behind a 2 GB/s write path (`buffer.drain_mb_s`); `host`: each
    thread's core with its per-I/O cost and wake-up (the target >= 1 M requests/s is with it on)."""
    cfg = mechanisms_timed_config()
    workload = {**cfg.pop("workload"), "requests": TIMED_REQUESTS // 4, "footprint_bytes": "2GiB"}
    cfg["device"]["logical_bytes"] = "2GiB"
    cfg["buffer"] |= {"admission": "in-order", "drain_mb_s": 2000.0}
    cfg["run"] |= {"precondition": "fill-random", "warmup_requests": 20_000}
    cfg["flows"] = [{"queue_depth": 32, "namespace": 0, "workload": {**workload, "seed": i + 1}} for i in range(4)]
    if host:
        cfg["host"] |= {"cpu_us": 2.5, "wake_us": 5.0}
    return cfg


def precondition_only(cfg: dict) -> dict:
    """`cfg` with one request per flow and no warm-up: its wall time is the set-up and the
    preconditioning (fill-random: a fill, then single-page random writes of twice the device, in
    counts mode) with a negligible replay, to be subtracted from the whole run's."""
    cfg = {**cfg, "run": {**cfg["run"], "warmup_requests": 0}}
    cfg["flows"] = [{**f, "workload": {**f["workload"], "requests": 1}} for f in cfg["flows"]]
    return cfg


def fio_calibration() -> dict:
    """`ssdlab calibrate` on one campaign of ../shared/devices (the 980 PRO's block-size sweep,
    27 points) with the default budget, two workers: wall time and the error it reaches."""
    from ssdlab.fio import fit

    folder = ROOT.parent / "shared" / "devices" / "samsung_980pro_1tb" / "bs_sweep"
    if not folder.is_dir():
        return {}
    t0 = time.perf_counter()
    cal = fit.calibrate([folder], workers=2, progress=False, capacity_bytes=1000204886016)
    return {"points": len(cal.points), "trials": len(cal.trials), "wall_s": time.perf_counter() - t0,
            "objective": cal.best["objective"]}  # fmt: skip


def run_ssdlab(cfg: dict) -> tuple[float, dict]:
    """Wall time and metrics of one run from scratch: a device a run before it preconditioned
    is not reused (the engine keeps it for calibrations, docs/config.md `run.precondition`)."""
    ssdlab._core.precondition_cache(clear=True)
    t0 = time.perf_counter()
    r = ssdlab.simulate(cfg)
    return time.perf_counter() - t0, r.metrics


def run_libcachesim(oracle: Path) -> tuple[float, int]:
    import libcachesim as lcs

    reader = lcs.TraceReader(str(oracle), lcs.TraceType.ORACLE_GENERAL_TRACE)
    cache = lcs.LRU(cache_size=BUFFER_PAGES)
    t0 = time.perf_counter()
    miss_ratio, _ = cache.process_trace(reader)
    wall = time.perf_counter() - t0
    return wall, round((1 - miss_ratio) * REQUESTS)


# libCacheSim's LRU over an oracleGeneral file as a process of its own (argv: file, cache objects).
LCS_PROCESS = """
import sys, libcachesim as lcs
reader = lcs.TraceReader(sys.argv[1], lcs.TraceType.ORACLE_GENERAL_TRACE)
print(lcs.LRU(cache_size=int(sys.argv[2])).process_trace(reader)[0])
"""


def whole_processes(cfg: dict, oracle: Path) -> dict:
    """`ssdlab run` and a libCacheSim LRU process on the same stream, alternated REPEATS times:
    wall times from start to exit, and libCacheSim's over ssdlab's (best, median)."""
    toml = WORK / "lru_page.toml"
    write_toml(cfg, toml)
    exe = Path(sys.executable).parent / "ssdlab"
    ours, theirs = [], []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        subprocess.run([str(exe), "run", "-c", str(toml), "-q"], check=True, capture_output=True)
        ours.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        cmd = [sys.executable, "-c", LCS_PROCESS, str(oracle), str(BUFFER_PAGES)]
        subprocess.run(cmd, check=True, capture_output=True)
        theirs.append(time.perf_counter() - t0)
    ours.sort()
    theirs.sort()
    return {
        "ssdlab_wall_s": ours,
        "libcachesim_wall_s": theirs,
        "ratio_best": theirs[0] / ours[0],
        "ratio_median": statistics.median(theirs) / statistics.median(ours),
    }


def rates(pages: float, walls: list[float]) -> dict:
    walls = sorted(walls)
    return {
        "wall_s": walls,
        "per_s_best": pages / walls[0],
        "per_s_median": pages / statistics.median(walls),
    }


def build_example(name: str = "simulate") -> Path:
    # The extension's profile (link-time optimised, Cargo.toml), so that the engine measured
    # alone is the one the Python package runs; --workspace, as `make build` resolves features.
    subprocess.run(
        ["cargo", "build", "--profile", "extension", "-q", "--workspace", "--example", name],
        cwd=ROOT,
        check=True,
    )
    return ROOT / "target" / "extension" / "examples" / name


def latency() -> dict:
    """ns per dependent random load at working sets of 1, 4, 16 and 64 MiB."""
    exe = build_example("latency")
    p = subprocess.run([str(exe), "1", "4", "16", "64"], capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def write_toml(cfg: dict, path: Path) -> None:
    path.write_text(dumps(cfg))


def callgrind(exe: Path, toml: Path, tmp: Path) -> dict:
    out = tmp / f"callgrind.{toml.stem}.out"
    p = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(exe), str(toml)],
        capture_output=True,
        text=True,
        check=True,
    )
    m = json.loads(p.stdout)
    total = int(re.search(r"^(?:summary|totals):\s*(\d+)", out.read_text(), re.M).group(1))
    return {"instructions": total, "host_pages": m["host.write_pages"], "per_page": total / m["host.write_pages"]}


def cachegrind(exe: Path, toml: Path, tmp: Path) -> dict:
    out = tmp / f"cachegrind.{toml.stem}.out"
    p = subprocess.run(
        [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=yes",
            f"--LL={LL}",
            f"--cachegrind-out-file={out}",
            str(exe),
            str(toml),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    m = json.loads(p.stdout)
    text = out.read_text()
    events = re.search(r"^events:\s*(.+)$", text, re.M).group(1).split()
    totals = [int(x) for x in re.search(r"^summary:\s*(.+)$", text, re.M).group(1).split()]
    ev = dict(zip(events, totals, strict=False))
    pages = m["host.write_pages"]
    return {
        "host_pages": pages,
        "instructions_per_page": ev["Ir"] / pages,
        "data_refs_per_page": (ev["Dr"] + ev["Dw"]) / pages,
        "d1_misses_per_page": (ev["D1mr"] + ev["D1mw"]) / pages,
        "ll_misses_per_page": (ev["DLmr"] + ev["DLmw"]) / pages,
        "simulated_ll": LL,
    }


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
    print(f"generating a {REQUESTS:,}-request Zipf(0.9) trace over {FOOTPRINT_PAGES:,} pages ...", file=sys.stderr)
    WORK.mkdir(parents=True, exist_ok=True)
    pages = zipf_pages(REQUESTS, FOOTPRINT_PAGES, 0.9, seed=1)
    binary = WORK / f"zipf2m-{REQUESTS}.ssdt"
    oracle = WORK / f"zipf2m-{REQUESTS}.oracleGeneral.bin"
    write_binary(pages, binary)
    write_oracle(pages, oracle)
    small = WORK / f"zipf2m-{VALGRIND_REQUESTS}.ssdt"
    write_binary(pages[:VALGRIND_REQUESTS], small)
    results: dict = {"requests": REQUESTS, "repeats": REPEATS}

    print(f"lru + page vs libCacheSim LRU, {REPEATS} alternated pairs ...", file=sys.stderr)
    cfg = config(binary, "lru", "page")
    ours, theirs = [], []
    for _ in range(REPEATS):
        wall, m = run_ssdlab(cfg)
        ours.append(wall)
        wall, lcs_hits = run_libcachesim(oracle)
        theirs.append(wall)
    host_pages = m["host.write_pages"]
    a, b = rates(host_pages, ours), rates(REQUESTS, theirs)
    results["lru+page"] = {**a, "waf": m["waf"], "hits": m["buffer.write_hit_pages"]}
    results["libcachesim_lru"] = {**b, "hits": lcs_hits}
    results["ratio_best"] = a["per_s_best"] / b["per_s_best"]
    results["ratio_median"] = a["per_s_median"] / b["per_s_median"]
    results["lru_hits_equal_libcachesim"] = m["buffer.write_hit_pages"] == lcs_hits
    print(f"lru + page vs libCacheSim LRU as whole processes, {REPEATS} alternated pairs ...", file=sys.stderr)
    results["whole_process"] = whole_processes(cfg, oracle)

    for name in ("hitstat+fast", "bplru+bast"):
        print(f"{name} ...", file=sys.stderr)
        cfg = config(binary, *SCENARIOS[name])
        walls = []
        for _ in range(max(2, REPEATS // 2)):
            wall, m = run_ssdlab(cfg)
            walls.append(wall)
        results[name] = {**rates(m["host.write_pages"], walls), "waf": m["waf"]}

    for name in ("hitstat+fast", "bplru+bast"):
        print(f"{name}, desktop profile ...", file=sys.stderr)
        cfg = desktop_config(*SCENARIOS[name])
        walls = []
        for _ in range(max(2, REPEATS // 2)):
            wall, m = run_ssdlab(cfg)
            walls.append(wall)
        results[name + ", desktop"] = {**rates(m["host.write_pages"], walls), "waf": m["waf"]}

    if VALGRIND and shutil.which("valgrind"):
        exe = build_example()
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            results["callgrind"] = {}
            for name, (buf, ftl) in SCENARIOS.items():
                print(f"callgrind, {name}, {VALGRIND_REQUESTS:,} requests ...", file=sys.stderr)
                toml = tmp / f"{buf}-{ftl}.toml"
                write_toml(config(small, buf, ftl), toml)
                results["callgrind"][name] = callgrind(exe, toml, tmp)
            print(f"cachegrind, lru+page, {VALGRIND_REQUESTS:,} requests ...", file=sys.stderr)
            results["cachegrind"] = cachegrind(exe, tmp / "lru-page.toml", tmp)
    print("timed mode, QD 32 on 8 x 4 dies ...", file=sys.stderr)
    timed, counts = [], []
    for _ in range(3):
        wall, tm = run_ssdlab(timed_config("timed"))
        timed.append(wall)
        wall, _ = run_ssdlab(timed_config("counts"))
        counts.append(wall)
    keys = ["throughput.iops", "latency.all.p50_us", "latency.all.p99_us", "latency.all.p9999_us", "waf"]
    results["timed"] = {
        **rates(TIMED_REQUESTS, timed),
        "counts": rates(TIMED_REQUESTS, counts),
        "simulated": {k: tm[k] for k in keys},
    }
    results["timed_dftl"] = {}
    for name, cfg in dftl_timed_configs().items():
        print(f"timed mode, {name} ...", file=sys.stderr)
        one = {**cfg, "run": {**cfg["run"], "clock_thread": False}}
        walls, one_walls = [], []
        for _ in range(2):
            wall, m = run_ssdlab(cfg)
            walls.append(wall)
            one_walls.append(run_ssdlab(one)[0])
        requests = cfg["workload"]["requests"]
        ops = sum(m[f"nand.{k}.total"] for k in ("reads", "programs")) + m["nand.erases"]
        results["timed_dftl"][name] = {
            **rates(requests, walls),
            "one_thread": rates(requests, one_walls),
            "clock_thread": m["time.clock_thread"],
            "nand_ops_per_request": ops / requests,
        }
    print("timed mode, four flows of QD 32 ...", file=sys.stderr)
    single = timed_config("timed")
    single["run"] = {**single["run"], "queue_depth": 128, "clock_thread": False}
    walls, single_walls = [], []
    for _ in range(3):  # alternating with the same requests as one flow on one thread
        wall, m = run_ssdlab(flows_timed_config())
        walls.append(wall)
        single_walls.append(run_ssdlab(single)[0])
    results["timed_flows"] = {
        **rates(TIMED_REQUESTS, walls),
        "one_flow_qd128_one_thread": rates(TIMED_REQUESTS, single_walls),
        "flow_iops": [m[f"flow.{i}.throughput.iops"] for i in range(4)],
    }
    print("fio jobs with the host model ...", file=sys.stderr)
    walls, bare, pre = [], [], []
    for _ in range(3):  # alternating with the same run without the host model, and the precondition alone
        wall, m = run_ssdlab(fio_jobs_config(True))
        walls.append(wall)
        bare.append(run_ssdlab(fio_jobs_config(False))[0])
        pre.append(run_ssdlab(precondition_only(fio_jobs_config(True)))[0])
    results["fio_jobs"] = {
        **rates(TIMED_REQUESTS, walls),
        "no_host_model": rates(TIMED_REQUESTS, bare),
        "iops": m["throughput.iops"],
        # The replay alone: each run's wall minus the precondition's run next to it.
        "precondition_wall_s": sorted(pre),
        "replay_only": rates(TIMED_REQUESTS, [w - p for w, p in zip(walls, pre, strict=True)]),
        "no_host_model_replay_only": rates(TIMED_REQUESTS, [w - p for w, p in zip(bare, pre, strict=True)]),
    }
    print("calibrating on one fio campaign ...", file=sys.stderr)
    results["fio_calibration"] = fio_calibration()
    results["buffers"] = {}
    kinds = sorted(c["name"] for c in ssdlab.components() if c["category"] == "buffer" and c["name"] != "none")
    # Seed 002's buffers also behind BAST, where they read the FTL's log state.
    cells = [(k, "page") for k in kinds] + [(k, "bast") for k in ("clc", "ref", "integrated")]
    # The demand-based FTL (CMT of 20% of the map) with and without a buffer.
    cells += [("none", "dftl"), ("lru", "dftl")]
    for kind, ftl in cells:
        print(f"buffer {kind} + {ftl} ...", file=sys.stderr)
        walls = []
        for _ in range(2):
            wall, m = run_ssdlab(config(binary, kind, ftl))
            walls.append(wall)
        results["buffers"][kind if ftl == "page" else f"{kind}+{ftl}"] = {
            **rates(m["host.write_pages"], walls),
            "hit_ratio": m["buffer.page_hit_ratio"],
            "waf": m["waf"],
        }
    results["lines"] = {}
    for kind in sorted(c["name"] for c in ssdlab.components() if c["category"] == "placement"):
        print(f"lines + placement {kind} ...", file=sys.stderr)
        walls = []
        for _ in range(2):
            wall, m = run_ssdlab(lines_config(binary, kind))
            walls.append(wall)
        results["lines"][kind] = {**rates(m["host.write_pages"], walls), "waf": m["waf"]}
    print("page FTL without a buffer, FDP off and on (8 handles), alternated ...", file=sys.stderr)
    results["fdp"] = fdp_off_on(binary)
    print("peak RSS on a 1 TiB device ...", file=sys.stderr)
    results["rss_1tib"] = rss_1tib()
    print("memory latency ...", file=sys.stderr)
    results["latency_ns"] = latency()

    lru, lc, rss = results["lru+page"], results["libcachesim_lru"], results["rss_1tib"]
    print()
    print(f"{'host page writes/s (best / median of ' + str(REPEATS) + ')':<62}{'best':>14}{'median':>14}")
    print("-" * 90)
    rows = (
        ("lru + page, greedy, ρ=0.07, binary trace, one core", lru["per_s_best"], lru["per_s_median"], ",.0f"),
        ("libCacheSim LRU alone (requests/s), alternated", lc["per_s_best"], lc["per_s_median"], ",.0f"),
        ("  ratio ssdlab / libCacheSim (target >= 2)", results["ratio_best"], results["ratio_median"], ".2f"),
        (
            "  the same as whole processes, `ssdlab run` vs Python + libCacheSim",
            results["whole_process"]["ratio_best"],
            results["whole_process"]["ratio_median"],
            ".2f",
        ),
    )
    for label, best, median, fmt in rows:
        print(f"{label:<62}{best:>14{fmt}}{median:>14{fmt}}")
    for name in ("hitstat+fast", "bplru+bast"):
        d = results[name]
        print(f"{name + ' (target >= 3 M)':<62}{d['per_s_best']:>14,.0f}{d['per_s_median']:>14,.0f}")
    for name in ("hitstat+fast", "bplru+bast"):
        d = results[name + ", desktop"]
        label = f"{name}, desktop profile 20 GiB (WAF {d['waf']:.2f})"
        print(f"{label:<62}{d['per_s_best']:>14,.0f}{d['per_s_median']:>14,.0f}")
    print(
        f"{'  WAF: lru+page / hitstat+fast / bplru+bast':<62}{lru['waf']:>14.3f}"
        f"{results['hitstat+fast']['waf']:>14.3f}{results['bplru+bast']['waf']:>14.3f}"
    )
    print(f"{'LRU hits equal libCacheSim':<62}{str(results['lru_hits_equal_libcachesim']):>14}")
    f = results["fdp"]
    for name in ("off", "on"):
        label = f"page FTL, no buffer, FDP {name} (WAF {f[name]['waf']:.3f})"
        print(f"{label:<62}{f[name]['per_s_best']:>14,.0f}{f[name]['per_s_median']:>14,.0f}")
    print(f"{'  ratio FDP on / off (median; target >= 1)':<62}{'':>14}{f['ratio_median']:>14.2f}")
    if "callgrind" in results:
        print(f"\ninstructions per host page write (callgrind, {VALGRIND_REQUESTS:,} requests, set-up included)")
        for name, d in results["callgrind"].items():
            print(f"  {name:<60}{d['per_page']:>14,.1f}")
        c = results["cachegrind"]
        print(f"cache misses per host page write, lru+page (cachegrind, LL = {LL}: this machine's L2;")
        print("  software prefetches count as loads, so the prefetched L2P / P2L lines are included)")
        print(f"  {'data references':<60}{c['data_refs_per_page']:>14,.1f}")
        print(f"  {'D1 misses':<60}{c['d1_misses_per_page']:>14,.2f}")
        print(f"  {'last-level (L2-sized) misses':<60}{c['ll_misses_per_page']:>14,.2f}")
    t = results["timed"]
    print(f"\n{'requests/s, end to end (best / median of 3)':<62}{'best':>14}{'median':>14}")
    for label, d in (
        ("timed, QD 32, 8 x 4 dies, 70/30 random, after a fill (>= 1 M)", t),
        ("  the same run in counts mode", t["counts"]),
    ):
        print(f"{label:<62}{d['per_s_best']:>14,.0f}{d['per_s_median']:>14,.0f}")
    for name, d in results["timed_dftl"].items():
        label = f"{name} ({d['nand_ops_per_request']:.1f} NAND ops/request)"
        print(f"{label:<62}{d['per_s_best']:>14,.0f}{d['per_s_median']:>14,.0f}")
        one = d["one_thread"]
        label = "  the same on one thread" + ("" if d["clock_thread"] else " (it ran on one anyway)")
        print(f"{label:<62}{one['per_s_best']:>14,.0f}{one['per_s_median']:>14,.0f}")
    f = results["timed_flows"]
    one = f["one_flow_qd128_one_thread"]
    for label, d in (
        ("four flows of QD 32 each, 8 x 4 dies, GC on (>= 1 M)", f),
        ("  the same requests as one flow at QD 128, one thread", one),
    ):
        print(f"{label:<62}{d['per_s_best']:>14,.0f}{d['per_s_median']:>14,.0f}")
    fj = results["fio_jobs"]
    for label, d in (
        ("fio: 4 jobs x QD 32, one namespace, host model, every mechanism (>= 1 M)", fj),
        ("  the same without the host model", fj["no_host_model"]),
        ("  host model, the replay alone (wall minus the precondition's)", fj["replay_only"]),
        ("  without the host model, the replay alone", fj["no_host_model_replay_only"]),
    ):
        print(f"{label:<62}{d['per_s_best']:>14,.0f}{d['per_s_median']:>14,.0f}")
    pre = fj["precondition_wall_s"]
    print(f"  (fill-random precondition alone: {pre[0]:.2f} s best, {statistics.median(pre):.2f} s median)")
    fc = results["fio_calibration"]
    if fc:
        print(f"calibrate, {fc['points']} fio points, {fc['trials']} trials, 2 workers: {fc['wall_s']:,.0f} s "
              f"(target < 600), error {fc['objective']:.1%}")  # fmt: skip
    sim = t["simulated"]
    pct = " / ".join(f"{sim[f'latency.all.{p}_us']:,.0f}" for p in ("p50", "p99", "p9999"))
    print(f"  simulated: {sim['throughput.iops']:,.0f} IOPS, latency p50 / p99 / p99.99 {pct} µs, WAF {sim['waf']:.2f}")
    print(f"\n{'every buffer (+ page unless named), host page writes/s (target >= 3 M)':<62}{'best':>14}{'median':>14}")
    for kind, d in results["buffers"].items():
        label = f"  {kind} (hit ratio {d['hit_ratio']:.3f}, WAF {d['waf']:.2f})"
        print(f"{label:<62}{d['per_s_best']:>14,.0f}{d['per_s_median']:>14,.0f}")
    print(f"\n{'line FTL by placement, host page writes/s (target >= 3 M)':<62}{'best':>14}{'median':>14}")
    for kind, d in results["lines"].items():
        label = f"  lines + {kind} (WAF {d['waf']:.2f})"
        print(f"{label:<62}{d['per_s_best']:>14,.0f}{d['per_s_median']:>14,.0f}")
    print(f"\n{'1 TiB device: peak RSS (MiB)':<62}{rss['peak_rss_kib'] / 1024:>14,.0f}")
    print(f"{'1 TiB device: bytes per physical page (whole process)':<62}{rss['ftl_bytes_per_physical_page']:>14.2f}")
    print("\nrandom-access latency, ns per dependent load (pointer chase), by working set")
    print("  " + "".join(f"{mib + ' MiB':>12}" for mib in results["latency_ns"]))
    print("  " + "".join(f"{ns:>12.1f}" for ns in results["latency_ns"].values()))
    out = ROOT / "results"
    out.mkdir(exist_ok=True)
    (out / "bench.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {out / 'bench.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
