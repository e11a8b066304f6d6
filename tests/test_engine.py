"""Hand-computed small cases, integrity checking, determinism, warm-up and repeat semantics."""

import numpy as np
import pytest
import ssdlab
from ssdlab import SsdlabError


def write_trace(path, records):
    """records: (op 'R'|'W', offset_sectors, size_sectors) -> Tencent CBS CSV."""
    lines = [f"{i},{off},{size},{1 if op == 'W' else 0},0\n" for i, (op, off, size) in enumerate(records)]
    path.write_text("".join(lines))
    return str(path)


def run_trace(tmp_path, records, **sections):
    cfg = {"workload": {"kind": "trace", "path": write_trace(tmp_path / "t.csv", records), "format": "tencent"}}
    for k, v in sections.items():
        cfg.setdefault(k, {}).update(v)
    return ssdlab.simulate(cfg).metrics


SMALL = {"pages_per_block": 4, "logical_bytes": 16 * 4096, "op": 3.0}


def W(page, pages=1):
    return ("W", page * 8, pages * 8)


def test_lru_hand_computed(tmp_path):
    # capacity 2 pages; writes 0,1,0,2,1: one hit (0), flushes 1 (by 2), 0 (by 1), then 2 and 1 at the end.
    m = run_trace(tmp_path, [W(0), W(1), W(0), W(2), W(1)], device=SMALL, buffer={"kind": "lru", "bytes": 2 * 4096})
    assert m["host.write_pages"] == 5
    assert m["buffer.write_hit_pages"] == 1
    assert m["buffer.page_hit_ratio"] == pytest.approx(0.2)
    assert m["buffer.flushes"] == 4
    assert m["nand.programs.host"] == 4
    assert m["waf"] == pytest.approx(4 / 5)


def test_block_lru_hand_computed(tmp_path):
    # 4 pages per block, capacity 3: writes LPN 0,1,4 fill it; LPN 2 misses and evicts the LRU
    # group (LBN 0 = pages 0,1) as one flush; at the end LBN 1 {4} then LBN 0 {2} are flushed.
    m = run_trace(tmp_path, [W(0), W(1), W(4), W(2)], device=SMALL, buffer={"kind": "block-lru", "bytes": 3 * 4096})
    assert m["buffer.flushes"] == 3
    assert m["buffer.flushed_pages"] == 4
    assert m["nand.programs.host"] == 4


def test_partial_page_costs_rmw_read(tmp_path):
    # Page 0 written whole, then sectors 0-1 of it rewritten: flushing the partial page reads the old copy.
    m = run_trace(tmp_path, [W(0), ("W", 0, 2)], device=SMALL, buffer={"kind": "none"})
    assert m["nand.reads.rmw"] == 1
    assert m["nand.programs.host"] == 2
    # A partial write of a never-written page has nothing to merge.
    m = run_trace(tmp_path, [("W", 8, 2)], device=SMALL, buffer={"kind": "none"})
    assert m["nand.reads.rmw"] == 0


def test_reads_hit_buffer_without_changing_order(tmp_path):
    # capacity 2: write 0, 1; read 0 (hit, no NAND read, order unchanged); write 2 evicts 0 (still LRU).
    recs = [W(0), W(1), ("R", 0, 8), W(2), ("R", 0, 8)]
    m = run_trace(tmp_path, recs, device=SMALL, buffer={"kind": "lru", "bytes": 2 * 4096})
    assert m["buffer.read_hit_pages"] == 1
    assert m["nand.reads.host"] == 1  # the second read of page 0 misses (evicted) and reads flash


@pytest.mark.parametrize(
    "gc,erases,moved",
    [
        # At the first GC: b0 holds LPN 1-3 (3 valid), b1-b3 hold only stale copies of LPN 0, b4 holds
        # its latest copy. FIFO takes b0 (moves 3 pages) then b1; greedy and cost-benefit take b1.
        ("fifo", 2, 3),
        ("greedy", 1, 0),
        ("cost-benefit", 1, 0),
    ],
)
def test_page_ftl_gc_hand_computed(tmp_path, gc, erases, moved):
    # 4 pages/block, one logical block, 6 physical blocks, GC when < 2 free blocks.
    # Write LPN 0-3 (block 0), then LPN 0 seventeen times (blocks 1-4 and one page more).
    recs = [W(p) for p in range(4)] + [W(0)] * 17
    m = run_trace(
        tmp_path,
        recs,
        device={"pages_per_block": 4, "logical_bytes": 4 * 4096, "op": 5.0},
        buffer={"kind": "none"},
        ftl={"gc": gc, "page": {"gc_free_blocks": 2}},
        run={"check_integrity": True},
    )
    assert m["device.physical_blocks"] == 6
    assert m["nand.programs.host"] == 21
    assert m["gc.victims"] == erases
    assert m["nand.erases"] == erases
    assert m["gc.moved_pages"] == moved
    assert m["nand.programs.gc"] == moved
    assert m["nand.reads.gc"] == moved
    assert m["waf"] == pytest.approx((21 + moved) / 21)


@pytest.mark.parametrize("buffer", ["none", "lru", "block-lru"])
@pytest.mark.parametrize("gc", ["greedy", "cost-benefit", "fifo"])
def test_integrity_synthetic(buffer, gc):
    r = ssdlab.simulate(
        {
            "workload": {"kind": "desktop", "requests": 20000, "footprint_bytes": "64MiB", "read_fraction": 0.2},
            "device": {"op": 0.15, "pages_per_block": 64},
            "buffer": {"kind": buffer, "bytes": "1MiB"},
            "ftl": {"gc": gc, "page": {"streams": 2}},
            "run": {"precondition": "fill", "check_integrity": True},
        }
    )
    assert r.metrics["gc.victims"] > 0
    assert r.metrics["waf"] > 1.0


def test_determinism():
    cfg = {"workload": {"kind": "zipf", "requests": 30000, "footprint_bytes": "64MiB"}, "device": {"op": 0.1}}
    a, b = ssdlab.simulate(cfg), ssdlab.simulate(cfg)
    assert a.metrics == b.metrics
    cfg["run"] = {"seed": 2}
    c = ssdlab.simulate(cfg)
    assert c.metrics["nand.programs.total"] != a.metrics["nand.programs.total"]


def test_warmup_excluded_and_repeat(tmp_path):
    recs = [W(p) for p in range(8)]
    m = run_trace(tmp_path, recs, device=SMALL, buffer={"kind": "none"}, run={"repeat": 3})
    assert m["host.write_pages"] == 24
    assert m["run.requests"] == 24
    m = run_trace(tmp_path, recs, device=SMALL, buffer={"kind": "none"}, run={"repeat": 3, "warmup_requests": 10})
    assert m["host.write_pages"] == 14
    assert m["run.measured_requests"] == 14
    assert m["nand.programs.host"] == 14


def test_repeat_equals_concatenated_trace(tmp_path):
    # Later passes replay the first from memory; they must count exactly as the trace read again.
    rng = np.random.default_rng(7)
    recs = [
        ("W" if rng.random() < 0.6 else "R", int(rng.integers(0, 60)) * 8, int(rng.integers(1, 4)) * 8)
        for _ in range(400)
    ]
    dev = {"pages_per_block": 4, "logical_bytes": 64 * 4096, "op": 0.5}
    common = {"device": dev, "buffer": {"kind": "lru", "bytes": 6 * 4096}}
    three = run_trace(tmp_path, recs, **common, run={"repeat": 3})
    (tmp_path / "once").mkdir()
    once = run_trace(tmp_path / "once", recs * 3, **common)
    assert three["run.requests"] == once["run.requests"] == 1200
    assert three["gc.victims"] > 0
    counts = [k for k in once if k.split(".")[0] in ("host", "nand", "buffer", "gc", "ftl", "wear")]
    assert {k: three[k] for k in counts} == {k: once[k] for k in counts}


def test_precondition_fill_not_measured(tmp_path):
    m = run_trace(tmp_path, [W(0)], device=SMALL, buffer={"kind": "none"}, run={"precondition": "fill"})
    assert m["nand.programs.total"] == 1


def test_result_frame_and_resolved_config():
    r = ssdlab.simulate({"workload": {"kind": "uniform", "requests": 1000, "footprint_bytes": "64MiB"}})
    assert r.config["device"]["logical_bytes"] == 64 << 20
    assert r.config["buffer"]["kind"] == "lru"
    assert r.config["workload"]["seed"] == 1
    df = r.to_frame()
    assert len(df) == 1
    assert df["waf"][0] == r.metrics["waf"]
    assert df["buffer.kind"][0] == "lru"  # the column names of load_results


PUBLIC_METRICS = (
    "host.read_requests host.write_requests host.read_pages host.write_pages buffer.write_hit_pages "
    "buffer.page_hit_ratio buffer.sector_hit_ratio buffer.flushes buffer.flushed_pages nand.erases waf ftl.waf "
    "time.nand_serial_us time.elapsed_us host.unwritten_read_pages throughput.nand_serial_write_mib_s "
    "wear.erase_count.min wear.erase_count.mean wear.erase_count.max "
    "wear.erase_count.stdev gc.victims gc.moved_pages"
).split() + [f"nand.{k}.{c}" for k in ("programs", "reads") for c in "host pad rmw gc merge map total".split()]


def test_public_metric_names_present():
    r = ssdlab.simulate({"workload": {"kind": "uniform", "requests": 2000, "footprint_bytes": "64MiB"}})
    missing = [m for m in PUBLIC_METRICS if m not in r.metrics]
    assert not missing


def test_serial_nand_time_formula_and_its_deprecated_alias():
    cfg = {
        "workload": {"kind": "uniform", "requests": 5000, "footprint_bytes": "64MiB", "read_fraction": 0.3},
        "nand": {"read_us": 50, "program_us": 500, "erase_us": 2000, "transfer_us": 10},
    }
    m = ssdlab.simulate(cfg).metrics
    expected = m["nand.reads.total"] * 60 + m["nand.programs.total"] * 510 + m["nand.erases"] * 2000
    assert m["time.nand_serial_us"] == pytest.approx(expected)
    assert m["time.elapsed_us"] == m["time.nand_serial_us"]  # the deprecated name, same value
    assert m["throughput.nand_serial_write_mib_s"] == pytest.approx(m["host.write_bytes"] / 2**20 / (expected / 1e6))
    assert m["throughput.write_mib_s"] == m["throughput.nand_serial_write_mib_s"]  # deprecated name


# ---- bad input ---------------------------------------------------------------------------


def test_unknown_component_lists_valid():
    with pytest.raises(SsdlabError, match=r"buffer.kind.*valid: none, lru, block-lru"):
        ssdlab.simulate({"buffer": {"kind": "arc"}})


def test_unknown_key_lists_valid():
    valid = "background_gc, background_gc_idle_us, gc, kind, log_blocks, log_utilisation, model_stats"
    with pytest.raises(SsdlabError, match=rf"ftl.wear`: unknown key; valid: {valid}"):
        ssdlab.simulate({"ftl": {"wear": "greedy"}})
    # A key of another table is named.
    with pytest.raises(SsdlabError, match=r"ftl.victim`: unknown key; did you mean `ftl.lines.victim`\?"):
        ssdlab.simulate({"ftl": {"victim": "greedy"}})


def test_bad_value_names_field():
    with pytest.raises(SsdlabError, match=r"buffer.bytes"):
        ssdlab.simulate({"buffer": {"bytes": "12 parsecs"}})
    with pytest.raises(SsdlabError, match=r"device.op"):
        ssdlab.simulate({"device": {"op": -0.1}})


def test_beyond_capacity_is_clear_unless_folded(tmp_path):
    recs = [W(0), W(100)]
    with pytest.raises(SsdlabError, match=r"beyond the device's logical capacity.*address_map") as e:
        run_trace(tmp_path, recs, device=SMALL)
    assert e.value.kind == "capacity"
    m = run_trace(tmp_path, recs, device=SMALL, workload={"address_map": "fold"})
    assert m["host.write_pages"] == 2


def test_empty_trace_is_an_error(tmp_path):
    p = tmp_path / "empty.csv"
    p.write_text("")
    with pytest.raises(SsdlabError, match=r"no requests"):
        ssdlab.simulate({"workload": {"kind": "trace", "path": str(p), "format": "tencent"}})


def test_missing_trace_names_path():
    with pytest.raises(SsdlabError, match=r"/no/such/trace.csv"):
        ssdlab.simulate({"workload": {"kind": "trace", "path": "/no/such/trace.csv"}})


def test_op_too_small_is_clear():
    with pytest.raises(SsdlabError, match=r"device.op"):
        ssdlab.simulate(
            {
                "workload": {"kind": "uniform", "requests": 10, "footprint_bytes": "1MiB"},
                "device": {"op": 0.01, "logical_bytes": "1MiB"},
            }
        )
    # "auto" sizes a device large enough for the GC reserve at this ρ.
    r = ssdlab.simulate(
        {"workload": {"kind": "uniform", "requests": 10, "footprint_bytes": "1MiB"}, "device": {"op": 0.01}}
    )
    assert r.metrics["device.physical_blocks"] >= r.metrics["device.logical_pages"] / 128 + 5


def test_device_too_large_for_memory_is_an_error():
    with pytest.raises(SsdlabError, match=r"device.logical_bytes.*GiB of memory"):
        ssdlab.simulate({"workload": {"kind": "uniform", "requests": 10}, "device": {"logical_bytes": "64TiB"}})


def test_shared_gc_frontier_and_streams_keep_integrity():
    r = ssdlab.simulate(
        {
            "workload": {
                "kind": "fio",
                "fio": {"rw": "write"},
                "streams": 4,
                "requests": 30000,
                "footprint_bytes": "64MiB",
            },
            "device": {"op": 0.2, "pages_per_block": 64},
            "buffer": {"kind": "none"},
            "ftl": {"page": {"streams": 4, "separate_gc_frontier": False}},
            "run": {"precondition": "fill", "check_integrity": True},
        }
    )
    # Four sequential streams, each in its own frontier: blocks die whole, GC copies nothing.
    assert r.metrics["gc.victims"] > 0
    assert r.metrics["gc.moved_pages"] == 0


def test_buffer_capacity_as_fraction_of_footprint(traces):
    r = ssdlab.simulate(
        {"workload": {"kind": "uniform", "requests": 1000, "footprint_bytes": "64MiB"}, "buffer": {"fraction": 0.01}}
    )
    assert r.metrics["buffer.capacity_pages"] == int(16384 * 0.01)
    assert r.config["buffer"]["bytes"] == int(16384 * 0.01) * 4096
    path = traces / "blkreplay_1and1/windows-shared-server.load.gz"
    footprint = ssdlab.trace_info(path)["footprint_pages"]
    r = ssdlab.simulate(
        {"workload": {"kind": "trace", "path": str(path), "address_map": "compact"}, "buffer": {"fraction": 0.5}}
    )
    assert r.metrics["buffer.capacity_pages"] == footprint // 2


def test_config_from_toml_path_dict_and_object(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text(
        '[workload]\nkind = "zipf"\nrequests = 5000\nfootprint_bytes = "64MiB"\n[buffer]\nkind = "block-lru"\n'
    )
    a = ssdlab.simulate(p)
    b = ssdlab.simulate(str(p))
    c = ssdlab.simulate(ssdlab.Config.from_toml(p))
    d = ssdlab.simulate(
        ssdlab.Config()
        .set("workload.kind", "zipf")
        .set("workload.requests", 5000)
        .set("workload.footprint_bytes", "64MiB")
        .set("buffer.kind", "block-lru")
    )
    assert a.metrics == b.metrics == c.metrics == d.metrics
    assert a.config["buffer"]["kind"] == "block-lru"
    bad = tmp_path / "bad.toml"
    bad.write_text("[buffer\n")
    with pytest.raises(SsdlabError, match=r"bad.toml"):
        ssdlab.simulate(bad)


def test_fixed_padding_hand_computed(tmp_path):
    # Full device (fill), 4 pages/block, block-lru of 2 pages, pad groups of >= half a block.
    # W0, W1 fill the buffer; W4 evicts group LBN 0 {0,1}: padded, so pages 2,3 are read and
    # rewritten (cause pad). At the end group LBN 1 {4} (1 page) is logged, not padded.
    m = run_trace(
        tmp_path,
        [W(0), W(1), W(4)],
        device=SMALL,
        buffer={"kind": "block-lru", "bytes": 2 * 4096, "padding": "fixed"},
        padding={"fixed": {"threshold": 0.5}},
        run={"precondition": "fill", "check_integrity": True},
    )
    assert m["buffer.flushes"] == 2
    assert m["buffer.padded_flushes"] == 1
    assert m["nand.reads.pad"] == 2
    assert m["nand.programs.pad"] == 2
    assert m["nand.programs.host"] == 3
    assert m["waf"] == pytest.approx(5 / 3)
    assert m["ftl.waf"] == pytest.approx(1.0)


def test_group_histograms_hand_computed(tmp_path):
    # block-lru of 2 pages, 4 pages/block. Writes 0,1,4,5,0,8 flush LBN0{0,1} (evicted by 4),
    # LBN1{4,5} (evicted by 0), then at the end LBN0{0} and LBN2{8}: group sizes 2,2,1,1;
    # LBN 0 is flushed by flushes 1 and 3: one update interval of 2.
    m_res = ssdlab.simulate(
        {
            "workload": {
                "kind": "trace",
                "path": write_trace(tmp_path / "t.csv", [W(0), W(1), W(4), W(5), W(0), W(8)]),
                "format": "tencent",
            },
            "device": SMALL,
            "buffer": {"kind": "block-lru", "bytes": 2 * 4096},
        }
    )
    m, h = m_res.metrics, m_res.histograms
    assert m["buffer.flushed_groups"] == 4
    assert h["buffer.flushed_group_pages"] == [(1, 2), (2, 2)]
    assert h["buffer.group_update_interval"] == [(2, 1)]
    assert m["buffer.group_update_interval.mean"] == 2
    assert m["time.program_erase_us"] == m["nand.programs.total"] * 800 + m["nand.erases"] * 1500
