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
