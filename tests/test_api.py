"""The Python API holds no traps: `Config.set` derives a new configuration, errors show as
`ssdlab.SsdlabError`."""

import pickle

import pytest
import ssdlab

SMALL = {
    "workload": {"kind": "zipf", "requests": 3000, "footprint_bytes": "8MiB"},
    "device": {"logical_bytes": "16MiB", "op": 0.25},
}


def test_set_returns_a_new_config_and_leaves_the_original_unchanged():
    base = ssdlab.Config(SMALL)
    kinds = ("none", "lru", "block-lru", "fifo")
    configs = [base.set("buffer.kind", k) for k in kinds]
    assert [c.to_dict()["buffer"]["kind"] for c in configs] == list(kinds)
    assert base == ssdlab.Config(SMALL) and "buffer" not in base.to_dict()
    results = [ssdlab.simulate(c) for c in configs]
    assert [r.config["buffer"]["kind"] for r in results] == list(kinds)
    assert len({r.metrics["buffer.write_hit_pages"] for r in results}) > 1  # the runs differ

    # Chained sets build on each other; a nested value is copied, not shared.
    fio = {"rw": "randwrite"}
    cfg = base.set("workload.kind", "fio").set("workload.fio", fio)
    fio["rw"] = "read"
    assert cfg.to_dict()["workload"] == {**SMALL["workload"], "kind": "fio", "fio": {"rw": "randwrite"}}
    assert base.to_dict()["workload"]["kind"] == "zipf"


def test_errors_show_as_ssdlab_errors():
    with pytest.raises(ssdlab.SsdlabError) as info:
        ssdlab.simulate({"buffer": {"kind": "lur"}})
    e = info.value
    assert type(e) is ssdlab.SsdlabError and isinstance(e, ValueError)
    assert type(e).__module__ == "ssdlab" and type(e).__qualname__ == "SsdlabError"
    assert str(type(e)) == "<class 'ssdlab.SsdlabError'>"
    assert e.kind == "config"
    # It pickles by its public name (results travel between processes, e.g. Dask workers).
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is ssdlab.SsdlabError and str(again) == str(e)


# Two tenants on a device whose controller holds 2 commands: a reader at QD 4 beside a writer at
# QD 16, no write buffer. With weighted round robin the reader in the urgent class is fetched
# first, so its reads wait far less (1,814 µs -> 136 µs mean).
FLOWS = {
    "device": {"channels": 2, "chips_per_channel": 2, "pages_per_block": 64, "logical_bytes": "256MiB"},
    "buffer": {"kind": "none"},
    "host": {"device_queue_depth": 2, "arbitration": "weighted-round-robin"},
    "run": {"mode": "timed", "precondition": "fill"},
    "flows": [
        {
            "queue_depth": 4,
            "workload": {"kind": "uniform", "requests": 1000, "footprint_bytes": "64MiB", "read_fraction": 1.0},
        },
        {
            "queue_depth": 16,
            "workload": {"kind": "uniform", "requests": 1000, "footprint_bytes": "64MiB", "read_fraction": 0.1},
        },
    ],
}


def test_set_addresses_a_flow_by_its_index():
    base = ssdlab.Config(FLOWS)
    urgent = base.set("flows.0.priority", "urgent")
    assert urgent.to_dict()["flows"][0]["priority"] == "urgent"
    assert "priority" not in base.to_dict()["flows"][0]  # the original is unchanged
    medium, fast = ssdlab.simulate(base), ssdlab.simulate(urgent)
    assert [f["priority"] for f in fast.config["flows"]] == ["urgent", "medium"]
    assert fast["flow.0.latency.read.mean_us"] < 0.2 * medium["flow.0.latency.read.mean_us"]

    # A flow's workload and its own keys; the whole table by its index.
    cfg = base.set("flows.1.workload.path", "x.trace").set("flows.1.queue_depth", 8).set("flows.0", {"queue_depth": 2})
    d = cfg.to_dict()["flows"]
    assert d[1]["workload"]["path"] == "x.trace" and d[1]["queue_depth"] == 8 and d[0] == {"queue_depth": 2}


@pytest.mark.parametrize(
    "data, key, message",
    [
        (
            FLOWS,
            "flows.2.priority",
            "config field `flows.2.priority`: index 2 is past the 2 flows given (`flows.0` to `flows.1`)",
        ),
        ({}, "flows.0.priority", "config field `flows.0.priority`: the configuration has no flows ([[flows]] tables)"),
        (FLOWS, "flows.reader.priority", "`flows` is an array of tables; expected an index, not `reader`"),
        ({"buffer": {"kind": "lru"}}, "buffer.kind.x", '`buffer.kind` is "lru", not a table'),
        ({}, "buffer..kind", "config field `buffer..kind`: expected dotted names"),
    ],
)
def test_set_errors_name_the_key(data, key, message):
    with pytest.raises(ssdlab.SsdlabError) as info:
        ssdlab.Config(data).set(key, 1)
    assert message in str(info.value)
