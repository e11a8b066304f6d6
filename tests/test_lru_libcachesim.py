"""The `lru` buffer's page hit ratio equals libcachesim's LRU fed the same page-write stream, and
so does `ref` with a one-page victim window (it then evicts the LRU page alone, whatever its
recently-evicted block list holds). The page stream is derived here, independently of ssdlab's
trace readers."""

import csv
import gzip

import pytest
import ssdlab
from conftest import PAGE, pages_of
from conftest import lru_hits as libcachesim_hits


def msr_write_pages(path):
    out = []
    with open(path) as f:
        for row in csv.reader(f):
            if row[3].strip().lower() == "write":
                out += pages_of(int(row[4]), int(row[5]))
    return out


def blkreplay_write_pages(path):
    out = []
    with gzip.open(path, "rt") as f:
        for line in f:
            parts = [p.strip() for p in line.split(";")]
            if len(parts) < 4 or parts[3] not in ("R", "W"):
                continue
            try:
                sector, length = int(parts[1]), int(parts[2])
            except ValueError:
                continue
            if parts[3] == "W":
                out += pages_of(sector * 512, length * 512)
    return out


def cloudphysics_write_pages(path):
    out = []
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["op"].lower() == "2a":
                out += pages_of(int(row["lbn"]) * 512, int(row["size"]))
    return out


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
