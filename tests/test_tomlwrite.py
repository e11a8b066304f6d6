"""TOML output (ssdlab.tomlwrite, through tomli-w): what is written reads back the same."""

import math
import tomllib

import pytest
from ssdlab.sweep import StudyError, dump_toml, load_study
from ssdlab.tomlwrite import TomlError, dumps


def test_a_study_reads_back_the_same_with_its_axes_in_order():
    study = {
        "study": {"name": "t", "description": 'é "quoted" \\ back'},
        "base": {"workload": {"kind": "uniform", "path": None, "generic": {"read_codes": ["R", "r"]}}},
        "axes": {"buffer.bytes": {"geom": ["1MiB", "4MiB"], "factor": 2}, "device.op": [0.1, 0.2]},
        "zip": [{"run.seed": {"start": 1, "stop": 2, "step": 1}, "ftl.gc": ["greedy", "fifo"]}],
        "grid": [{"name": "g", "axes": {"x.y": {"values": [1, 2]}, "a.b": [math.inf, -math.inf, 1e300]}}],
    }
    text = dump_toml(study)
    back = tomllib.loads(text)
    del study["base"]["workload"]["path"]  # TOML has no null: the key is left out
    assert back == study
    # a range table before a list stays before it: the grid's order is the axes' order
    assert list(back["axes"]) == ["buffer.bytes", "device.op"]
    assert list(back["zip"][0]) == ["run.seed", "ftl.gc"]
    assert list(back["grid"][0]["axes"]) == ["x.y", "a.b"]
    assert load_study({"grid": back["grid"]}).axis_keys == ["x.y", "a.b"]
    assert math.isnan(tomllib.loads(dumps({"a": {"b": math.nan}}))["a"]["b"])


def test_values_toml_cannot_hold_are_errors():
    with pytest.raises(TomlError, match="`axes.device.op`: TOML has no null"):
        dumps({"axes": {"device.op": [0.1, None]}})
    with pytest.raises(StudyError, match="a study cannot be written as TOML: .*set"):
        dump_toml({"axes": {"device.op": {0.1}}})
