"""Component-owned parameters from Python: `[<category>.<name>]` tables, `--set` with dotted
keys, the resolved configuration, results-store columns and `ssdlab policies`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import ssdlab
from ssdlab import SsdlabError, api

SMALL = {
    "workload": {"kind": "zipf", "requests": 2000, "footprint_bytes": "4MiB"},
    "device": {"logical_bytes": "8MiB", "pages_per_block": 32, "op": 0.25},
}


def test_parameters_live_in_the_component_table():
    cfg = ssdlab.Config(SMALL).set("buffer.kind", "hitstat").set("buffer.hitstat.period", 512)
    resolved = cfg.resolved()
    # The selected components' parameters, every default filled in; no table for the others.
    assert resolved["buffer"]["hitstat"] == {
        "hit_log": 64,
        "initial_levels": 32,
        "period": 512,
        "age_threshold": 150000,
    }
    assert resolved["ftl"]["page"] == {"gc_free_blocks": 0, "streams": 1, "separate_gc_frontier": True}
    assert "bplru" not in resolved["buffer"] and "padding" not in resolved
    r = ssdlab.simulate(cfg)
    assert r.config["buffer"]["hitstat"]["period"] == 512
    # Values are checked against each other, naming the key.
    with pytest.raises(
        SsdlabError, match=r"buffer.hitstat.initial_levels`: 32 must be in 1..=buffer.hitstat.hit_log \+ 1 \(17\)"
    ):
        cfg.set("buffer.hitstat.hit_log", 16).resolved()
    # "auto" values of a component are resolved too (page FTL: open frontiers + 2).
    assert r.config["ftl"]["page"]["gc_free_blocks"] == 4


def test_parameters_of_a_component_not_selected_are_an_error():
    cfg = ssdlab.Config(SMALL).set("buffer.kind", "fab").set("buffer.hitstat.hit_log", 16)
    with pytest.raises(
        SsdlabError, match=r"buffer.hitstat`: parameters for buffer `hitstat`, but buffer.kind = \"fab\""
    ):
        ssdlab.simulate(cfg)
    with pytest.raises(
        SsdlabError, match=r"padding.fixed`: parameters for padding `fixed`, but buffer.padding = \"model\""
    ):
        ssdlab.simulate({**SMALL, "buffer": {"kind": "hitstat"}, "padding": {"fixed": {"threshold": 0.3}}})
    with pytest.raises(SsdlabError, match=r"ftl.bast.varient`: unknown key; did you mean `ftl.bast.variant`"):
        ssdlab.simulate({**SMALL, "ftl": {"kind": "bast", "bast": {"varient": "single"}}})


def test_fixed_padding_threshold_changes_what_is_padded():
    def run(threshold):
        r = ssdlab.simulate(
            {
                **SMALL,
                "buffer": {"kind": "bplru", "bytes": "256KiB"},
                "padding": {"fixed": {"threshold": threshold}},
            }
        )
        assert r.config["buffer"]["padding"] == "fixed" and r.config["padding"]["fixed"]["threshold"] == threshold
        return r.metrics["buffer.padded_flushes"], r.metrics["buffer.flushes"]

    (p0, flushes), (p5, _), (p1, _) = run(0.0), run(0.5), run(1.0)
    assert p0 == flushes  # threshold 0: every flushed group is padded
    assert p0 > p5 >= p1


def test_sweep_columns_name_component_parameters(tmp_path):
    study = {
        "base": {**SMALL, "buffer": {"kind": "hitstat", "bytes": "256KiB"}},
        "axes": {"buffer.hitstat.initial_levels": [2, 8]},
    }
    out = tmp_path / "out"
    s = ssdlab.run_sweep(study, out, progress=False)
    assert s.ok == 2
    df = ssdlab.load_results(out)
    assert sorted(df["buffer.hitstat.initial_levels"]) == [2, 8]
    assert set(df["buffer.hitstat.hit_log"]) == {64}


def test_policies_json_lists_parameters_with_defaults_and_docs():
    p = subprocess.run([sys.executable, "-m", "ssdlab", "policies", "--json"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    comps = {(c["category"], c["name"]): c for c in json.loads(p.stdout)}
    bast = comps[("ftl", "bast")]
    assert bast["table"] == "ftl.bast"
    assert [q["key"] for q in bast["params"]] == ["ftl.bast.variant", "ftl.bast.chain_limit", "ftl.bast.lookahead"]
    assert bast["defaults"] == {
        "ftl.bast.variant": "chain",
        "ftl.bast.chain_limit": 4,
        "ftl.bast.lookahead": 50,
        "ftl.log_blocks": 0,
        "ftl.model_stats": "seed",
        "ftl.log_utilisation": "written",
    }
    assert all(q["doc"] for c in comps.values() for q in c["params"])
    assert comps[("buffer", "fifo")]["params"][0]["key"] == "buffer.fifo.batch_pages"
    assert api.component_tables() >= {"buffer.hitstat", "padding.fixed", "workload.desktop"}
