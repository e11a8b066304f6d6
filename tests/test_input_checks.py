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


# -- timed runs that do not mislead -------------------------------------------------------------

READS = {"workload": {"read_fraction": 0.5}, "buffer": {"kind": "none"}}
UNWRITTEN = "found no data (host.unwritten_read_pages: never written or trimmed)"
ONE_DIE = "timed mode on a device with one die"


def test_reads_of_a_fresh_device_are_warned_in_the_result_and_the_run_line(capsys):
    fresh = ssdlab.simulate(small(**READS))
    n, reads = fresh.metrics["host.unwritten_read_pages"], fresh.metrics["host.read_pages"]
    assert 0.01 * reads < n <= reads and fresh.metrics["nand.reads.host"] == reads - n
    assert [w for w in fresh.warnings if UNWRITTEN in w] == [
        f"{n:,.0f} of {reads:,.0f} page reads ({100 * n / reads:.1f}%) {UNWRITTEN} and cost no flash read; "
        'set run.precondition = "fill" to start from a device holding data'
    ]
    filled = ssdlab.simulate(small(**READS, run={"precondition": "fill"}))
    assert filled.metrics["host.unwritten_read_pages"] == 0 and filled.warnings == []
    code, out, err = run_cli(
        capsys, "run", *SMALL_SET, "--set", "workload.read_fraction=0.5", "--set", "buffer.kind=none"
    )
    assert (
        code == 0
        and UNWRITTEN in err
        and out.splitlines()[0].endswith("OP 0.25, not preconditioned (empty); FTL page (greedy GC); buffer none")
    )


def test_timed_run_line_names_dies_and_precondition_and_labels_both_times(capsys):
    args = ["run", *SMALL_SET, "--set", "buffer.kind=none", "--set", "run.mode=timed"]
    code, out, err = run_cli(capsys, *args)
    lines = out.splitlines()
    assert code == 0 and err.startswith(f"warning: {ONE_DIE} ")
    assert lines[0] == (
        "workload uniform, 1 MiB footprint, 50 requests, closed loop at QD 32; device 2 MiB logical, 4 KiB pages, "
        "16 pages/block, OP 0.25, 1 die, not preconditioned (empty); FTL page (greedy GC); buffer none"
    )
    serial = next(i for i, line in enumerate(lines) if line.startswith("time.nand_serial_us"))
    assert lines[serial].endswith(" s  (serial: every NAND operation's time, one after another)")
    assert lines[serial + 1].startswith("time.simulated_us")
    assert lines[serial + 1].endswith(" s  (timed clock: first issue to last completion, dies in parallel)")
    more = ["--set", "device.channels=2", "--set", "device.chips_per_channel=2", "--set", "run.precondition=fill"]
    code, out, err = run_cli(capsys, *args, *more)
    assert code == 0 and err == ""
    assert ", OP 0.25, 4 dies (2 channels × 2), preconditioned (filled); FTL" in out.splitlines()[0]


def test_sweep_keeps_each_cells_warnings(tmp_path, capsys):
    from ssdlab.sweep import run_sweep

    spec = {"base": small(**READS).to_dict(), "axes": {"run.precondition": ["none", "fill"]}}
    s = run_sweep(spec, tmp_path / "out", workers=1, progress=True)
    assert (s.ran, s.warned) == (2, 1)
    df = ssdlab.load_results(tmp_path / "out")
    fresh = ssdlab.simulate(small(**READS))
    assert list(df["warnings"]) == [fresh.warnings, []]
    line = (
        f'1 of 2 cells run gave warnings; first: cell 0 (run.precondition="none"): {fresh.warnings[0]}; '
        f"all of them are in the `warnings` column of `ssdlab.load_results({str(tmp_path / 'out')!r})`"
    )
    assert s.warnings_line() == line
    assert f"study: {line}" in capsys.readouterr().err


THREE_DISKS = (
    "128166385295514663,hm,0,Write,4096,4096,100\n"
    "128166385295514878,hm,1,Write,4096,4096,100\n"
    "128166385295515175,hm,2,Write,4096,4096,100\n"
)


def _three_disks(tmp_path):
    p = tmp_path / "three.csv"
    p.write_text(THREE_DISKS)
    return p


def test_merged_volumes_warn_and_separate_does_not_alias(tmp_path, capsys):
    trace = _three_disks(tmp_path)
    base = ssdlab.Config(
        {
            "workload": {"kind": "trace", "path": str(trace)},
            "buffer": {"kind": "lru", "bytes": "64KiB"},
            "device": {"logical_bytes": "auto", "pages_per_block": 16},
        }
    )
    merged = ssdlab.simulate(base)
    assert merged["buffer.page_hit_ratio"] == pytest.approx(2 / 3)
    (w,) = [w for w in merged.warnings if "volumes" in w]
    assert w.startswith("the trace interleaves 3 volumes (by share of requests: 0 (33.3%), 1 (33.3%), 2 (33.3%))")
    assert 'workload.volumes = "separate"' in w and "workload.device = 0" in w
    separate = ssdlab.simulate(base.set("workload.volumes", "separate"))
    assert separate["buffer.page_hit_ratio"] == 0.0 and separate.warnings == []
    assert ssdlab.simulate(base.set("workload.volumes", "merge")).warnings == []
    # `trace info` lists the volumes with their requests and footprints.
    code, out, _ = run_cli(capsys, "trace", "info", str(trace))
    assert code == 0
    assert "\n3 volumes (replayed merged" in out
    rows = [line.split() for line in out.splitlines() if line.startswith(("0 ", "1 ", "2 "))]
    assert [r[:3] for r in rows] == [["0", "1", "33.3%"], ["1", "1", "33.3%"], ["2", "1", "33.3%"]]


def test_units_read_wrong_warn(tmp_path):
    # Byte offsets and sizes of 4 KiB multiples read as DiskSim sectors: 2 MiB requests, and a
    # device of over 1 TiB from a file of a few hundred bytes.
    p = tmp_path / "bytes.trace"
    p.write_text("".join(f"{i}.0 0 {4096 * 10**6 * i} {4096 * (i + 1)} 0\n" for i in range(1, 5)))
    cfg = {
        "workload": {"kind": "trace", "path": str(p), "format": "disksim", "address_map": "compact"},
        "device": {"logical_bytes": "auto"},
    }
    w = ssdlab.simulate(cfg).warnings
    assert any(
        x.startswith("100% of the trace's requests are 1 MiB or larger (read as format `disksim`)") for x in w
    ), w
    # (A device of over 1 TiB from a small file: the unit test of engine/resolve.rs; a run would
    # allocate gigabytes.)


def test_timed_closed_loop_over_a_trace_says_its_times_are_not_used(tmp_path, capsys):
    trace = _three_disks(tmp_path)
    args = ["run", "--set", "workload.kind=trace", "--set", f"workload.path={trace}", "--set", "workload.device=0"]
    args += ["--set", "device.logical_bytes=auto", "--set", "run.mode=timed", "--set", "buffer.kind=none"]
    code, out, _ = run_cli(capsys, *args)
    assert code == 0
    assert (
        ", closed loop at QD 32 (the trace's arrival times are not used; run.queue_depth = 0 replays at them);" in out
    )
    code, out, _ = run_cli(capsys, *args, "--set", "run.queue_depth=0")
    assert code == 0 and "trace three.csv, open loop at the trace's times;" in out


def test_an_early_note_is_shown_at_once_and_not_again(capsys):
    bar = cli.ProgressBar(True)
    bar.note("the request at line 1 is 4.0 TiB")
    assert capsys.readouterr().err == "warning: the request at line 1 is 4.0 TiB\n"
    quiet = cli.ProgressBar(False)
    quiet.note("x")
    assert capsys.readouterr().err == "" and quiet.noted == ["x"]


def test_the_urgent_class_without_a_device_queue_limit_warns():
    flows = [
        {
            "queue_depth": 2,
            "priority": "urgent",
            "workload": {"kind": "uniform", "requests": 50, "footprint_bytes": "1MiB"},
        },
        {"queue_depth": 2, "workload": {"kind": "uniform", "requests": 50, "footprint_bytes": "1MiB"}},
    ]
    cfg = ssdlab.Config(
        {
            "run": {"mode": "timed"},
            "device": {"logical_bytes": "4MiB", "pages_per_block": 16, "op": 0.25, "channels": 2},
            "host": {"arbitration": "weighted-round-robin"},
            "flows": flows,
        }
    )
    (w,) = [w for w in ssdlab.simulate(cfg).warnings if "urgent" in w]
    assert w.startswith("flows[0]: the urgent class changes nothing with host.device_queue_depth = 0")
    assert not [w for w in ssdlab.simulate(cfg.set("host.device_queue_depth", 2)).warnings if "urgent" in w]


def test_the_line_ftl_paced_as_pblk_over_provisions_as_pblk_does():
    def lines(mib, **device):
        return ssdlab.Config(
            {
                "workload": {"kind": "uniform", "requests": 200, "footprint_bytes": f"{mib}MiB"},
                "device": {"logical_bytes": f"{mib}MiB", "pages_per_block": 256, "channels": 2, "chips_per_channel": 4}
                | device,
                "ftl": {"kind": "lines"},
                "buffer": {"kind": "none"},
            }
        )

    # device.op left out: pblk's default 11% of the lines, raised to its reserve of 10 lines.
    res = ssdlab.simulate(lines(22))
    (w,) = [w for w in res.warnings if "device.op" in w]
    assert w.startswith("device.op is not given: the line FTL paced as pblk")
    assert "10 over-provisioned lines beside 22 of data, device.op = 0.4545" in w
    assert res.metrics["device.physical_blocks"] == 32
    assert res.config["device"]["op"] == pytest.approx(10 / 22)
    # Given below pblk's minimum: refused, naming device.op and its least value.
    with pytest.raises(SsdlabError) as e:
        ssdlab.simulate(lines(129, op=0.07))
    msg = str(e.value)
    assert "config field `device.op`: 0.07 gives 10 over-provisioned lines of 139 (OP 7%)" in msg
    assert "needs device.op ≥ 0.1008 (13 over-provisioned lines)" in msg
