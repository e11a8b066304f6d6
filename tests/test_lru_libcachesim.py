"""The `lru` buffer's page hit ratio equals libcachesim's LRU fed the same page-write stream, and
so does `ref` with a one-page victim window (it then evicts the LRU page alone, whatever its
recently-evicted block list holds). The page stream is derived here, independently of ssdlab's
trace readers."""

import pytest
import ssdlab
from conftest import PAGE, blkreplay_requests, cloud_requests, msr_requests, page_stream
from conftest import lru_hits as libcachesim_hits


def msr_write_pages(path):
    return page_stream(msr_requests(path), "W")


def blkreplay_write_pages(path):
    return page_stream(blkreplay_requests(path), "W")


def cloudphysics_write_pages(path):
    return page_stream(cloud_requests(path), "W")


CASES = [
    ("caffeine_msr_hm0_sample/msr-cambridge1-sample.csv", msr_write_pages, [16, 64]),
    ("blkreplay_1and1/linux-mysql.load.gz", blkreplay_write_pages, [256, 4096]),
    ("blkreplay_1and1/windows-mssql.load.gz", blkreplay_write_pages, [1024]),
    ("cloudphysics/cloudPhysicsIO.csv", cloudphysics_write_pages, [2048]),
]


@pytest.mark.parametrize("rel,parse,capacities", CASES, ids=[c[0].split("/")[0] for c in CASES])
def test_lru_hit_ratio_equals_libcachesim(traces, rel, parse, capacities):
    path = traces / rel
    stream = parse(path)
    assert len(stream) > 100
    for cap in capacities:
        expected = libcachesim_hits(stream, cap)
        r = ssdlab.simulate(
            {
                "workload": {"kind": "trace", "path": str(path), "address_map": "compact"},
                "buffer": {"kind": "lru", "bytes": cap * PAGE},
                "device": {"op": 0.25},
            }
        )
        m = r.metrics
        assert m["host.write_pages"] == len(stream)
        assert m["buffer.write_hit_pages"] == expected, f"capacity {cap}"
        assert m["buffer.page_hit_ratio"] == pytest.approx(expected / len(stream), abs=1e-12)
        assert expected > 0


@pytest.mark.parametrize("rel,parse,capacities", CASES[:2], ids=[c[0].split("/")[0] for c in CASES[:2]])
def test_ref_one_page_window_equals_libcachesim_lru(traces, rel, parse, capacities):
    path = traces / rel
    stream = parse(path)
    for cap in capacities:
        expected = libcachesim_hits(stream, cap)
        for ftl in ("page", "bast"):
            r = ssdlab.simulate(
                {
                    "workload": {"kind": "trace", "path": str(path), "address_map": "compact"},
                    "buffer": {"kind": "ref", "bytes": cap * PAGE, "ref": {"window": 0.0}},
                    "ftl": {"kind": ftl},
                    "device": {"op": 0.25},
                }
            )
            m = r.metrics
            assert m["host.write_pages"] == len(stream)
            assert m["buffer.write_hit_pages"] == expected, f"capacity {cap}, {ftl}"
            assert m["buffer.ref.rebl_capacity"] >= 2
