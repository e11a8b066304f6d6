"""The page caches `cflru` and `lru-wsr` (ALGORITHMS.md §1.5, §1.8; LRU-WSR is seed 003's
baseline) on real traces: where they coincide with LRU, against `lru` and libCacheSim's LRU fed
page streams derived here, independently of ssdlab's trace readers; every FTL behind them, in
counts and timed mode, with integrity checking.

Where they coincide: on a stream of writes alone every page is dirty, and both are exactly LRU
(CFLRU has no clean page to prefer; LRU-WSR's pages hit since its last second-chance pass are
always the MRU part of the list, so its victim is always the LRU page). On reads alone every page
is clean and both are LRU. On a mixed stream CFLRU with a one-page window is LRU; LRU-WSR then
coincides with none of libCacheSim's policies."""

import math

import pytest
import ssdlab
from conftest import PAGE, TRACES, blkreplay_requests, cloud_requests, lru_hits, msr_requests, page_stream, pages_of
from ssdlab import SsdlabError

MSR = TRACES / "caffeine_msr_hm0_sample" / "msr-cambridge1-sample.csv"
CLOUD = TRACES / "cloudphysics" / "cloudPhysicsIO.csv"
MYSQL = TRACES / "blkreplay_1and1" / "linux-mysql.load.gz"
KINDS = ["cflru", "lru-wsr"]


@pytest.fixture(autouse=True)
def _need_traces(traces):
    return traces


def write_msr(reqs, path, aligned=False):
    """An MSR CSV of `reqs`; `aligned` widens each request to the whole pages it touches (then no
    page is ever partly buffered, and a buffered page is a hit for reads as for writes)."""
    with open(path, "w") as f:
        for i, (op, off, size) in enumerate(reqs):
            if size == 0:
                continue
            if aligned:
                pages = pages_of(off, size)
                off, size = pages[0] * PAGE, len(pages) * PAGE
            f.write(f"{i},h,0,{'Read' if op == 'R' else 'Write'},{off},{size},0\n")


def sim(path, kind, capacity, extra=None, **params):
    cfg = {
        "workload": {"kind": "trace", "path": str(path), "format": "msr", "address_map": "compact"},
        "device": {"op": 0.25},
        "buffer": {"kind": kind, "bytes": capacity * PAGE},
    }
    if params:
        cfg["buffer"][kind] = params
    for k, v in (extra or {}).items():
        cfg.setdefault(k, {}).update(v)
    return ssdlab.simulate(cfg)


def run(path, kind, capacity, extra=None, **params):
    return sim(path, kind, capacity, extra, **params).metrics


def same(a, b):
    return a == b or (math.isnan(a) and math.isnan(b))


def assert_all_equal(m, base, what):
    for k, v in base.items():
        assert same(m[k], v), f"{what}: {k} = {m[k]}, lru: {v}"


@pytest.mark.parametrize("kind", KINDS)
def test_writes_alone_equal_lru(tmp_path, kind):
    """The writes of linux-mysql (sub-page writes included): every metric equals `lru`'s (the
    same pages flushed in the same order), no clean page ever exists, and the write hits equal
    libCacheSim's LRU on the page-write stream."""
    reqs = [r for r in blkreplay_requests(MYSQL) if r[0] == "W"]
    path = tmp_path / "writes.csv"
    write_msr(reqs, path)
    stream = page_stream(reqs)
    for cap in [256, 4096]:
        base = run(path, "lru", cap)
        m = run(path, kind, cap)
        assert_all_equal(m, base, f"{kind} at {cap} pages")
        assert m["buffer.clean_evictions"] == 0
        assert m["buffer.write_hit_pages"] == lru_hits(stream, cap) > 0
        assert m["host.read_pages"] == 0


@pytest.mark.parametrize("kind", KINDS)
def test_reads_not_cached_equal_lru(kind):
    """`cache_reads = false` on a mixed trace (half reads): reads neither insert nor reorder, so
    both policies are LRU over the writes, and reads are served from the same buffered sectors."""
    for cap in [16, 64]:
        base = run(MSR, "lru", cap)
        m = run(MSR, kind, cap, cache_reads=False)
        assert_all_equal(m, base, f"{kind} at {cap} pages")
        assert m["buffer.clean_evictions"] == 0


@pytest.mark.parametrize(
    "kind,params", [("cflru", {}), ("cflru", {"window": 1.0}), ("lru-wsr", {})], ids=["cflru", "cflru-w1", "lru-wsr"]
)
def test_reads_alone_equal_libcachesim_lru(tmp_path, kind, params):
    """The reads of two traces (sub-page reads included) on a filled device: every page is clean,
    so the victim is always the LRU page. Read hits equal libCacheSim's LRU; every miss reads flash
    and nothing is written; every read miss beyond the capacity evicted one clean page."""
    for name, reqs, caps in [("msr", msr_requests(MSR), [16, 64]), ("cloud", cloud_requests(CLOUD), [512, 2048])]:
        reads = [r for r in reqs if r[0] == "R"]
        path = tmp_path / f"{name}.csv"
        write_msr(reads, path)
        stream = page_stream(reads)
        for cap in caps:
            m = run(path, kind, cap, {"run": {"precondition": "fill"}}, **params)
            hits = lru_hits(stream, cap)
            assert m["buffer.read_hit_pages"] == hits > 0, f"{name} at {cap} pages"
            misses = len(stream) - hits
            assert misses > cap
            assert m["buffer.clean_evictions"] == misses - cap
            assert m["nand.programs.total"] == 0 and m["buffer.flushes"] == 0
            assert m["nand.reads.host"] == misses


def test_mixed_stream(tmp_path):
    """Reads and writes of two traces, widened to whole pages. CFLRU with a one-page window
    evicts the LRU page whether clean or dirty: its hits (reads + writes) equal libCacheSim's LRU
    on the page-access stream. On the larger trace, the default window and LRU-WSR, which let
    clean pages leave before dirty ones, flush fewer dirty pages than that."""
    for name, reqs, caps in [("msr", msr_requests(MSR), [16, 64]), ("cloud", cloud_requests(CLOUD), [512, 2048])]:
        path = tmp_path / f"{name}.csv"
        write_msr(reqs, path, aligned=True)
        stream = page_stream(reqs)
        for cap in caps:
            lru = run(path, "cflru", cap, window=1 / cap)
            hits = lru_hits(stream, cap)
            # A write to a page cached clean for a read is an access hit, counted apart from write hits.
            found = lru["buffer.read_hit_pages"] + lru["buffer.write_hit_pages"] + lru["buffer.clean_write_hit_pages"]
            assert found == hits, f"{name} at {cap}"
            assert lru["buffer.read_hit_pages"] > 0 and lru["buffer.write_hit_pages"] > 0
            assert name != "cloud" or lru["buffer.clean_write_hit_pages"] > 0
            for kind in KINDS:
                m = run(path, kind, cap)
                assert m["host.write_pages"] == lru["host.write_pages"]
                if name == "cloud":
                    assert m["buffer.flushed_pages"] < lru["buffer.flushed_pages"], f"{kind} at {cap}"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("ftl", ["page", "block", "bast", "fast"])
def test_every_ftl_counts_and_timed(ftl, kind):
    """A mixed real trace (half reads, sub-page requests) replayed 4 times on a filled device
    behind each FTL, with integrity checking: the latest version of every page reaches flash,
    timed mode counts exactly what counts mode does, each flush is one page."""
    extra = {
        "device": {"pages_per_block": 16},
        "ftl": {"kind": ftl},
        "run": {"check_integrity": True, "precondition": "fill", "repeat": 4},
    }
    counts = run(MSR, kind, 32, extra)
    extra["run"].update(mode="timed", queue_depth=8)
    timed = run(MSR, kind, 32, extra)
    for k, v in counts.items():
        assert same(timed[k], v), f"{k}: counts {v}, timed {timed[k]}"
    assert counts["buffer.read_hit_pages"] > 0 and counts["buffer.clean_evictions"] > 0
    assert counts["buffer.flushes"] == counts["buffer.flushed_pages"] > 0
    assert counts["nand.programs.host"] == counts["buffer.flushed_pages"]
    if ftl == "page":
        assert counts["gc.victims"] > 0
    else:
        assert counts["ftl.merges.full"] > 0
    assert timed["latency.read.mean_us"] > 0


@pytest.mark.parametrize("kind", KINDS)
def test_timed_read_hit_and_dirty_victim(tmp_path, kind):
    """Queue depth 1 on a filled device, a one-page buffer. `R 5, R 5`: the first read comes
    from flash, the second from DRAM (`nand.dram_us` = 1 µs), so the mean is (flash + 1) / 2.
    `W 1, R 2`: the read miss must first flush dirty page 1, so it lasts at least a program."""
    path = tmp_path / "t.csv"
    write_msr([("R", 5 * PAGE, PAGE), ("R", 5 * PAGE, PAGE)], path)
    extra = {
        "device": {"logical_bytes": "64MiB"},
        "workload": {"address_map": "none"},
        "run": {"mode": "timed", "queue_depth": 1, "precondition": "fill"},
    }
    r = sim(path, kind, 1, extra)
    m, nand = r.metrics, r.config["nand"]
    assert m["buffer.read_hit_pages"] == 1 and m["nand.reads.host"] == 1
    flash = m["latency.read.max_us"]
    assert flash >= nand["read_us"] and m["latency.read.mean_us"] == pytest.approx((flash + nand["dram_us"]) / 2)
    write_msr([("W", 1 * PAGE, PAGE), ("R", 2 * PAGE, PAGE)], path)
    m = run(path, kind, 1, extra)
    assert m["buffer.flushes"] == 1 and m["buffer.clean_evictions"] == 0
    assert m["latency.read.mean_us"] >= nand["program_us"] + nand["read_us"]
    m = run(path, "lru", 1, extra)
    assert m["latency.read.mean_us"] < nand["program_us"]


def test_parameters_are_checked():
    base = {"workload": {"kind": "uniform", "requests": 100}, "buffer": {"kind": "cflru"}}
    for bad in [0, 1.5, -0.1]:
        with pytest.raises(SsdlabError, match=r"buffer\.cflru\.window"):
            ssdlab.simulate({**base, "buffer": {"kind": "cflru", "cflru": {"window": bad}}})
    with pytest.raises(SsdlabError, match=r"buffer\.lru-wsr\.window"):
        ssdlab.simulate({**base, "buffer": {"kind": "lru-wsr", "lru-wsr": {"window": 0.5}}})
    r = ssdlab.simulate(base)
    assert r.config["buffer"]["cflru"] == {"cache_reads": True, "window": 0.5}


def test_clean_evictions_in_the_series():
    cfg = {
        "workload": {"kind": "zipf", "requests": 4000, "read_fraction": 0.5, "footprint_bytes": "8MiB"},
        "device": {"logical_bytes": "64MiB"},
        "buffer": {"kind": "lru-wsr", "bytes": "256KiB"},
        "run": {"sample_every": 1000},
    }
    r = ssdlab.simulate(cfg)
    col = list(r.series["buffer.clean_evictions"])
    assert len(col) == 4 and col == sorted(col) and col[0] > 0
    assert col[-1] == r.metrics["buffer.clean_evictions"]
