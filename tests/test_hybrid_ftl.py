"""Block-mapped and hybrid FTLs (block, bast, fast) on real traces, with integrity checking."""

import pytest
import ssdlab
from ssdlab import SsdlabError

TRACES = ["blkreplay_1and1/windows-mssql.load.gz", "blkreplay_1and1/linux-mysql.load.gz"]
FTLS = ["page", "block", "bast", "fast"]
BUFFERS = ["none", "lru", "block-lru"]
SEED000_BUFFERS = ["fab", "bplru", "hitstat", "hitstat-adj"]
ERASE_KINDS = ["switch", "partial", "full", "gc"]


def run(traces, trace, kind, buf, **extra):
    cfg = {
        "workload": {"kind": "trace", "path": str(traces / trace), "address_map": "compact"},
        "device": {"pages_per_block": 64},
        "ftl": {"kind": kind},
        "buffer": {"kind": buf, "bytes": "1MiB"},
        "run": {"check_integrity": True},
    }
    for k, v in extra.items():
        cfg.setdefault(k, {}).update(v)
    return ssdlab.simulate(cfg)


@pytest.mark.parametrize("trace", TRACES)
@pytest.mark.parametrize("buffer", BUFFERS)
@pytest.mark.parametrize("ftl", FTLS)
def test_ftl_buffer_matrix(traces, trace, ftl, buffer):
    r = run(traces, trace, ftl, buffer)
    m = r.metrics
    if ftl == "page":
        assert not any(k.startswith("ftl.merges.") or k.startswith("ftl.erases.") for k in m)
        return
    erases = sum(m[f"ftl.erases.{k}"] for k in ERASE_KINDS)
    assert m["nand.erases"] == erases
    merges = sum(m[f"ftl.merges.{k}"] for k in ["switch", "partial", "full"])
    assert merges > 0
    assert m["nand.programs.merge"] == m["nand.reads.merge"]
    if ftl == "block":
        # Rewrites of an overwritten block are full merges; whole-block flushes (full groups)
        # replace their data block by a switch. One erase each.
        assert m["ftl.merges.partial"] == 0
        assert m["ftl.erases.full"] == m["ftl.merges.full"]
        assert m["ftl.erases.switch"] == m["ftl.merges.switch"]
        return
    assert r.config["ftl"]["log_blocks"] >= 2
    assert 0 < m["ftl.u_lb"] <= 1 and 0 < m["ftl.log_utilization"] <= 1
    if ftl == "bast":
        assert m["ftl.r_db"] == 1.0
        assert m["ftl.r_lb"] >= 1.0
        if "mssql" in trace:
            assert m["ftl.merges.switch"] > 0
    if ftl == "fast":
        assert m["ftl.r_lb"] == 1.0 and m["ftl.r_db"] >= 1.0
        assert 0 <= m["ftl.fast.overhead_pages"] <= m["nand.programs.host"]


@pytest.mark.parametrize("buffer", SEED000_BUFFERS)
@pytest.mark.parametrize("ftl", FTLS)
def test_seed000_buffers_on_every_ftl(traces, ftl, buffer):
    """Every FTL x seed-000 buffer (with its default padding) keeps every LPN at its latest version."""
    r = run(traces, TRACES[0], ftl, buffer)
    m = r.metrics
    assert m["buffer.flushed_pages"] + m["buffer.write_hit_pages"] == m["host.write_pages"]
    assert m["nand.programs.host"] == m["buffer.flushed_pages"]
    assert m["nand.programs.pad"] == m["nand.reads.pad"] + m["buffer.pad_filler_pages"]
    if ftl != "page":
        assert m["nand.erases"] == sum(m[f"ftl.erases.{k}"] for k in ERASE_KINDS)


@pytest.mark.parametrize("ftl", ["bast", "fast"])
def test_padding_on_hybrid(traces, ftl):
    r = run(
        traces,
        TRACES[0],
        ftl,
        "block-lru",
        buffer={"kind": "block-lru", "padding": "fixed"},
        padding={"fixed": {"threshold": 0.25}},
    )
    m = r.metrics
    assert m["nand.programs.pad"] > 0
    assert m["nand.erases"] == sum(m[f"ftl.erases.{k}"] for k in ERASE_KINDS)


def test_bast_single_variant_and_chain_limit(traces):
    a = run(traces, TRACES[1], "bast", "lru", ftl={"bast": {"variant": "single"}}).metrics
    b = run(traces, TRACES[1], "bast", "lru", ftl={"bast": {"chain_limit": 1}}).metrics
    for m in (a, b):
        assert m["nand.erases"] == sum(m[f"ftl.erases.{k}"] for k in ERASE_KINDS)
        assert m["ftl.r_lb"] == 1.0


def test_config_errors_name_fields(traces):
    with pytest.raises(SsdlabError, match="ftl.bast.variant"):
        run(traces, TRACES[0], "bast", "none", ftl={"bast": {"variant": "double"}})
    with pytest.raises(SsdlabError, match="ftl.log_blocks"):
        run(traces, TRACES[0], "fast", "none", ftl={"log_blocks": 1})
    with pytest.raises(SsdlabError, match="device.op"):
        run(traces, TRACES[0], "bast", "none", ftl={"log_blocks": 100}, device={"logical_bytes": "64MiB"})


@pytest.mark.parametrize("kind", ["block", "bast", "fast"])
def test_auto_capacity_leaves_room_for_log_blocks(kind):
    # A 1 MiB footprint is 4 blocks of 64 pages: the auto-sized device grows until ρ covers the
    # log blocks plus the merge block.
    r = ssdlab.simulate(
        {
            "workload": {"kind": "uniform", "requests": 3000, "footprint_bytes": "1MiB"},
            "device": {"pages_per_block": 64},
            "ftl": {"kind": kind},
            "buffer": {"kind": "none"},
            "run": {"check_integrity": True},
        }
    )
    m = r.metrics
    logical_blocks = r.config["device"]["logical_bytes"] // (64 * 4096)
    logs = r.config["ftl"]["log_blocks"] if kind != "block" else 0
    assert m["device.physical_blocks"] >= logical_blocks + logs + 1
    if kind != "block":
        assert logs == max(2, -(-logical_blocks * 3 // 100))
    assert m["nand.erases"] == sum(m[f"ftl.erases.{k}"] for k in ERASE_KINDS)


def _always_pad(ftl, fill, precondition):
    return ssdlab.simulate(
        {
            "workload": {"kind": "zipf", "requests": 20000, "footprint_bytes": "32MiB", "request_bytes": "8KiB"},
            "device": {"pages_per_block": 32, "op": 0.25},
            "ftl": {"kind": ftl, "log_blocks": 8},
            "buffer": {
                "kind": "hitstat",
                "bytes": "1MiB",
                "padding": "fixed",
                "padding_fill": fill,
            },
            "padding": {"fixed": {"threshold": 0.0}},
            "run": {"check_integrity": True, "precondition": precondition},
        }
    )


@pytest.mark.parametrize("ftl", ["block", "bast", "fast"])
def test_always_pad_is_one_switch_per_flush(ftl):
    """Seed 000 Table 5 row 0.00 (always pad): every flushed group is written as a whole block and
    switch-merged, so erases = flushed groups and page writes = N x erases (131,960 and
    16,890,880 = 128 x 131,960 in the thesis)."""
    m = _always_pad(ftl, "all", "fill").metrics
    groups = m["buffer.flushed_groups"]
    assert groups > 100
    assert m["nand.erases"] == groups == m["ftl.merges.switch"] == m["ftl.erases.switch"]
    assert m["nand.programs.total"] == 32 * groups
    assert m["ftl.merges.full"] == m["ftl.merges.partial"] == 0
    assert m["nand.programs.merge"] == 0
    assert m["buffer.pad_filler_pages"] == 0, "a filled device has data at every offset"
    assert m["nand.programs.pad"] == m["nand.reads.pad"]


@pytest.mark.parametrize("ftl", ["bast", "fast"])
def test_padding_fill_all_vs_existing(ftl):
    """On a device not filled first, a padded flush programs all N pages with `all` (filler for
    offsets never written) and only the pages holding data with `existing`. An LBN's first flush
    replaces nothing (no erase); every later one is a switch merge."""
    r = _always_pad(ftl, "all", "none")
    m = r.metrics
    groups = m["buffer.flushed_groups"]
    repeat_flushes = sum(c for _, c in r.histograms["buffer.group_update_interval"])
    assert m["nand.programs.total"] == 32 * groups
    assert m["nand.programs.pad"] == m["nand.reads.pad"] + m["buffer.pad_filler_pages"]
    assert m["buffer.pad_filler_pages"] > 0
    assert m["nand.erases"] == m["ftl.merges.switch"] == repeat_flushes
    e = _always_pad(ftl, "existing", "none").metrics
    assert e["buffer.flushed_groups"] == groups
    assert e["buffer.pad_filler_pages"] == 0
    assert e["nand.programs.pad"] == e["nand.reads.pad"]
    assert e["nand.programs.total"] == m["nand.programs.total"] - m["buffer.pad_filler_pages"]
    assert e["nand.programs.total"] < 32 * groups


@pytest.mark.parametrize("ftl", ["bast", "fast"])
def test_model_stats_readings_differ_only_in_samples(traces, ftl):
    """`ftl.model_stats` changes what feeds R_DB / R_LB / U_LB, and through B_w the padding."""
    a = run(traces, TRACES[0], ftl, "hitstat", ftl={"model_stats": "seed"}).metrics
    b = run(traces, TRACES[0], ftl, "hitstat", ftl={"model_stats": "all-merges"}).metrics
    assert a["ftl.model_samples"] > 0 and b["ftl.model_samples"] > a["ftl.model_samples"]
    if ftl == "bast":
        # Seed samples are full merges (plus early reclaims): never more than the merges.
        assert a["ftl.model_samples"] <= a["ftl.merges.full"] + a["ftl.merges.switch"]
    with pytest.raises(SsdlabError, match="ftl.model_stats"):
        run(traces, TRACES[0], ftl, "hitstat", ftl={"model_stats": "every"})
    with pytest.raises(SsdlabError, match="buffer.padding_fill"):
        run(traces, TRACES[0], ftl, "hitstat", buffer={"kind": "hitstat", "padding_fill": "some"})
