"""Wrong input is an error or a warning, never silence: the exact messages a user meets."""

import pytest
import ssdlab
from ssdlab import SsdlabError, cli
from ssdlab.sweep import StudyError, load_study

SMALL = {
    "workload": {"kind": "uniform", "requests": 50, "footprint_bytes": "1MiB"},
    "device": {"logical_bytes": "2MiB", "pages_per_block": 16, "op": 0.25},
}
SMALL_SET = [
    "--set",
    "workload.kind=uniform",
    "--set",
    "workload.requests=50",
    "--set",
    "workload.footprint_bytes=1MiB",
    "--set",
    "device.logical_bytes=2MiB",
    "--set",
    "device.pages_per_block=16",
    "--set",
    "device.op=0.25",
]


def small(**sections):
    cfg = ssdlab.Config(SMALL)
    for section, values in sections.items():
        for k, v in values.items():
            cfg = cfg.set(f"{section}.{k}", v)
    return cfg


def run_cli(capsys, *args):
    code = cli.main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_path_with_a_synthetic_kind_is_an_error():
    with pytest.raises(SsdlabError) as e:
        ssdlab.simulate(small(workload={"path": "t.csv"}))
    assert str(e.value) == (
        'config field `workload.path`: is set but workload.kind = "uniform"; '
        'set workload.kind = "trace" to replay the trace'
    )


def test_decimal_size_and_rounding_are_warned(capsys):
    res = ssdlab.simulate(small(device={"logical_bytes": "32MiB"}, buffer={"bytes": "16MB"}))
    assert res.warnings == [
        "buffer.bytes = 16MB is 16,000,000 bytes (decimal); did you mean 16MiB?",
        "buffer.bytes = 16,000,000 bytes is rounded down to 3,906 pages = 15,998,976 bytes",
    ]
    assert res.config["buffer"]["bytes"] == 15_998_976
    code, _, err = run_cli(capsys, "run", *SMALL_SET, "--set", "buffer.bytes=6000")
    assert code == 0
    assert err == "warning: buffer.bytes = 6,000 bytes is rounded down to 1 page = 4,096 bytes\n"


def test_buffer_as_large_as_the_device_is_warned():
    res = ssdlab.simulate(small(buffer={"bytes": "4MiB"}))
    assert res.warnings == [
        "the buffer (1,024 pages) is as large as the device (512 logical pages): every write can stay in it"
    ]


def test_tiny_trace_on_a_filled_auto_device_is_warned(tmp_path):
    trace = tmp_path / "tiny.csv"
    trace.write_text("1,h,0,Write,0,4096,1\n2,h,0,Write,67104768,4096,1\n")
    cfg = {
        "workload": {"kind": "trace", "path": str(trace)},
        "device": {"pages_per_block": 16},
        "buffer": {"kind": "none"},
        "run": {"precondition": "fill"},
    }
    assert ssdlab.simulate(cfg).warnings == [
        "the trace writes 2 pages, under 1% of the automatically sized device (16,384 pages = 64.0 MiB, "
        'sized from the highest address); set workload.address_map = "compact" to size the device to the '
        "blocks the trace touches"
    ]
    cfg["workload"]["address_map"] = "compact"
    assert ssdlab.simulate(cfg).warnings == []


def test_trace_in_the_wrong_format_says_what_was_read(tmp_path, capsys):
    trace = tmp_path / "msr.csv"
    trace.write_text("1,h,0,Write,0,4096,1\n2,h,0,Write,4096,4096,1\n3,h,0,Read,0,4096,1\n")
    code, _, err = run_cli(
        capsys, "run", "--set", "workload.kind=trace", "--set", f"workload.path={trace}",
        "--set", "workload.format=blkparse", "--set", "device.pages_per_block=16", "--set", "buffer.kind=none",
    )  # fmt: skip
    assert code == 2
    assert err == (
        f"ssdlab: error: trace {trace} has no requests: read 3 lines, none parsed as format `blkparse`; "
        "detection suggests format `msr`\n"
    )


def test_typo_in_a_config_file_names_file_line_and_nearest_key(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[buffer]\nkind = "lru"\nbites = 5\n')
    code, _, err = run_cli(capsys, "run", "--config", str(cfg))
    assert code == 2
    assert err == f"ssdlab: error: {cfg}:3: config field `buffer.bites`: unknown key; did you mean `buffer.bytes`?\n"
    code, _, err = run_cli(capsys, "run", "--set", "buffer.bites=5")
    assert code == 2
    assert err == "ssdlab: error: config field `buffer.bites`: unknown key; did you mean `buffer.bytes`?\n"


def test_type_errors_in_plain_words(tmp_path, capsys):
    cases = {
        "run.seed=x": 'config field `run.seed`: string "x", expected a whole number ≥ 0',
        "device.op=lots": 'config field `device.op`: string "lots", expected a number',
        "run.check_integrity=1": "config field `run.check_integrity`: integer `1`, expected true or false",
        "buffer.bytes=true": "config field `buffer.bytes`: boolean `true`, expected a size such as 16MiB",
    }
    for item, msg in cases.items():
        code, _, err = run_cli(capsys, "run", "--set", item)
        assert (code, err) == (2, f"ssdlab: error: {msg}\n")
    cfg = tmp_path / "c.toml"
    cfg.write_text('[run]\nrepeat = "twice"\n')
    with pytest.raises(SsdlabError) as e:
        ssdlab.simulate(cfg)
    assert str(e.value) == f'{cfg}:2: config field `run.repeat`: string "twice", expected a whole number ≥ 0'


def test_compare_checks_every_combination_before_running(tmp_path, capsys):
    code, out, err = run_cli(
        capsys, "compare", *SMALL_SET, "--vary", "buffer.kind=lru,none", "--vary", "device.op=0.25,-1",
        "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert code == 2
    assert "running" not in err and out == ""
    assert err == (
        "ssdlab: error: buffer.kind=lru device.op=-1: config field `device.op`: "
        "-1 must be > 0 (ρ = physical/logical − 1)\n"
    )


def test_relative_trace_path_is_relative_to_the_config_file(tmp_path, monkeypatch):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "t.csv").write_text("1,h,0,Write,0,4096,1\n2,h,0,Write,4096,4096,1\n")
    cfg = sub / "c.toml"
    cfg.write_text(
        '[workload]\nkind = "trace"\npath = "t.csv"\n[device]\nlogical_bytes = "1MiB"\npages_per_block = 16\n'
        'op = 0.5\n[buffer]\nkind = "none"\n'
    )
    monkeypatch.chdir(tmp_path)
    res = ssdlab.simulate("sub/c.toml")
    assert res.config["workload"]["path"] == "sub/t.csv"
    assert res.metrics["host.write_pages"] == 2


def test_sweep_study_expands_traces_and_rejects_unknown_placeholders(tmp_path, capsys):
    study = tmp_path / "s.toml"
    study.write_text('[base]\n"workload.kind" = "trace"\n"workload.path" = "{traces}/t.csv"\n')
    st = load_study(study, traces=tmp_path / "traces")
    assert st.base["workload"]["path"] == str((tmp_path / "traces" / "t.csv").resolve())
    study.write_text('[base]\n"workload.kind" = "trace"\n"workload.path" = "{trace}/t.csv"\n')
    with pytest.raises(StudyError) as e:
        load_study(study)
    assert str(e.value) == f"{study}: unknown placeholder `{{trace}}` in '{{trace}}/t.csv' (known: {{traces}})"
    code, _, err = run_cli(capsys, "sweep", str(study), "--out", str(tmp_path / "out"))
    assert (code, err) == (
        2,
        f"ssdlab: error: {study}: unknown placeholder `{{trace}}` in '{{trace}}/t.csv' (known: {{traces}})\n",
    )


def test_compare_prints_each_runs_warnings(tmp_path, capsys):
    code, _, err = run_cli(
        capsys, "compare", *SMALL_SET, "--vary", "buffer.bytes=6000,4MiB", "--quiet", "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert code == 0
    assert err.splitlines() == [
        "warning: buffer.bytes=6000: buffer.bytes = 6,000 bytes is rounded down to 1 page = 4,096 bytes",
        "warning: buffer.bytes=4MiB: the buffer (1,024 pages) is as large as the device (512 logical pages): "
        "every write can stay in it",
    ]
