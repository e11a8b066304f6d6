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
        assert m["ftl.merges.switch"] == m["ftl.merges.partial"] == 0
        assert m["ftl.erases.full"] == m["ftl.merges.full"]
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
    assert m["nand.programs.pad"] == m["nand.reads.pad"]
    if ftl != "page":
        assert m["nand.erases"] == sum(m[f"ftl.erases.{k}"] for k in ERASE_KINDS)


@pytest.mark.parametrize("ftl", ["bast", "fast"])
def test_padding_on_hybrid(traces, ftl):
    r = run(
        traces, TRACES[0], ftl, "block-lru", buffer={"kind": "block-lru", "padding": "fixed", "padding_threshold": 0.25}
    )
    m = r.metrics
    assert m["nand.programs.pad"] > 0
    assert m["nand.erases"] == sum(m[f"ftl.erases.{k}"] for k in ERASE_KINDS)


def test_bast_single_variant_and_chain_limit(traces):
    a = run(traces, TRACES[1], "bast", "lru", ftl={"bast_variant": "single"}).metrics
    b = run(traces, TRACES[1], "bast", "lru", ftl={"bast_chain_limit": 1}).metrics
    for m in (a, b):
        assert m["nand.erases"] == sum(m[f"ftl.erases.{k}"] for k in ERASE_KINDS)
        assert m["ftl.r_lb"] == 1.0


def test_config_errors_name_fields(traces):
    with pytest.raises(SsdlabError, match="ftl.bast_variant"):
        run(traces, TRACES[0], "bast", "none", ftl={"bast_variant": "double"})
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
