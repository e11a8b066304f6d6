"""Every error of an input, each with its place: file:line for values as for keys, the nearest
valid value, the key that exists elsewhere, and traces read as a format they are not in."""

import pytest
import ssdlab
from ssdlab import SsdlabError, cli


def run_cli(capsys, *args):
    code = cli.main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_value_errors_in_a_file_name_file_and_line(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[device]\nop = -0.1\n\n[buffer]\nkind = "lur"\n')
    code, out, err = run_cli(capsys, "run", "--config", str(cfg))
    assert (code, out) == (2, "")
    assert err == (
        "ssdlab: error: 2 errors:\n"
        f"  {cfg}:2: config field `device.op`: -0.1 must be > 0 (ρ = physical/logical − 1)\n"
        f"  {cfg}:5: config field `buffer.kind`: unknown buffer `lur`; did you mean `lru`?\n"
    )
    # The same through the Python API, one error alone on one line.
    cfg.write_text('[run]\nseed = 3\nmode = "timd"\n')
    with pytest.raises(SsdlabError) as e:
        ssdlab.Config.from_toml(cfg)
    assert str(e.value) == f"{cfg}:3: config field `run.mode`: unknown value `timd`; did you mean `timed`?"
    assert e.value.kind == "config"


def test_enumerated_values_suggest_the_nearest(capsys):
    for item, msg in {
        "buffer.kind=lur": "config field `buffer.kind`: unknown buffer `lur`; did you mean `lru`?",
        "ftl.kind=dftll": "config field `ftl.kind`: unknown ftl `dftll`; did you mean `dftl`?",
        "workload.format=msrr": "config field `workload.format`: unknown trace format `msrr`; did you mean `msr`?",
        "run.precondition=fil": "config field `run.precondition`: unknown value `fil`; did you mean `fill`?",
    }.items():
        code, _, err = run_cli(capsys, "run", "--set", item)
        assert (code, err) == (2, f"ssdlab: error: {msg}\n")
    code, _, err = run_cli(capsys, "trace", "info", "t.csv", "--format", "blkparce")
    assert (code, err) == (
        2,
        "ssdlab: error: trace options: unknown trace format `blkparce`; did you mean `blkparse`?\n",
    )


def test_unknown_key_suggests_the_key_of_that_name_elsewhere(tmp_path, capsys):
    msg = "config field `workload.rw`: unknown key; did you mean `workload.fio.rw`?"
    code, _, err = run_cli(capsys, "run", "--set", "workload.kind=fio", "--set", "workload.rw=randwrite")
    assert (code, err) == (2, f"ssdlab: error: {msg}\n")
    with pytest.raises(SsdlabError) as e:
        ssdlab.simulate({"workload": {"kind": "fio", "rw": "randwrite"}})
    assert str(e.value) == msg
    with pytest.raises(SsdlabError) as e:
        ssdlab.Config({"workload": {"kind": "fio"}}).set("workload.rw", "randwrite").resolved()
    assert str(e.value) == msg
    cfg = tmp_path / "c.toml"
    cfg.write_text('[workload]\nkind = "fio"\nrw = "randwrite"\n')
    code, _, err = run_cli(capsys, "config", "show", "--config", str(cfg))
    assert (code, err) == (2, f"ssdlab: error: {cfg}:3: {msg}\n")


def test_every_error_of_a_file_is_listed_up_to_twenty(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        '[workload]\nkind = "zipf"\nrequests = "many"\nread_fraction = 2\n'
        '[device]\nop = 0\nchannels = 0\n[run]\nrepeat = 0\nmodee = "timed"\n'
    )
    code, _, err = run_cli(capsys, "run", "--config", str(cfg))
    assert code == 2
    assert err.splitlines() == [
        "ssdlab: error: 6 errors:",
        f'  {cfg}:3: config field `workload.requests`: string "many", expected a whole number ≥ 0',
        f"  {cfg}:4: config field `workload.read_fraction`: 2 is not in [0, 1]",
        f"  {cfg}:6: config field `device.op`: 0 must be > 0 (ρ = physical/logical − 1)",
        f"  {cfg}:7: config field `device.channels`: must be ≥ 1",
        f"  {cfg}:9: config field `run.repeat`: must be ≥ 1",
        f"  {cfg}:10: config field `run.modee`: unknown key; did you mean `run.mode`?",
    ]
    # 25 wrong values: 20 listed, the rest counted.
    cfg.write_text("[nand]\n" + "".join(f"k{i} = 1\n" for i in range(25)))
    code, _, err = run_cli(capsys, "run", "--config", str(cfg))
    lines = err.splitlines()
    assert (code, len(lines)) == (2, 22)
    assert lines[0] == "ssdlab: error: 25 errors:"
    assert lines[1].startswith(f"  {cfg}:2: config field `nand.k0`: unknown key")
    assert lines[20].startswith(f"  {cfg}:21: config field `nand.k19`: unknown key")
    assert lines[21] == "  … and 5 more"


BLKREPLAY = "start ; sector ; length ; op\n0.001 ; 0 ; 8 ; W\n0.002 ; 8 ; 8 ; W\n0.003 ; 0 ; 8 ; R\n"


@pytest.mark.parametrize("command", ["info", "profile", "convert"])
def test_trace_read_as_another_format_fails_naming_the_detected_one(tmp_path, capsys, command):
    trace = tmp_path / "t.load"
    trace.write_text(BLKREPLAY)
    out = tmp_path / "t.ssdt"
    extra = [str(out)] if command == "convert" else []
    code, stdout, err = run_cli(capsys, "trace", command, str(trace), *extra, "--format", "blkparse")
    assert (code, stdout) == (2, "")
    assert err == (
        f"ssdlab: error: trace {trace} has no requests: read 4 lines, none parsed as format `blkparse`; "
        "detection suggests format `blkreplay`\n"
    )
    assert not out.exists()
    # Read as what it is, it has its three requests.
    code, stdout, _ = run_cli(capsys, "trace", command, str(trace), *extra)
    assert code == 0
    if command == "info":
        assert ssdlab.trace_info(trace)["requests"] == 3


def test_empty_trace_is_still_empty_not_an_error(tmp_path):
    trace = tmp_path / "empty.csv"
    trace.write_text("# nothing yet\n\n")
    assert ssdlab.trace_info(trace, format="msr")["requests"] == 0


def test_timestamp_names_its_key(tmp_path, capsys):
    code, _, err = run_cli(capsys, "run", "--set", "workload.timestamp=submitt")
    assert code == 2
    assert "config field `workload.timestamp`: unknown value `submitt`; did you mean `submit`?" in err
    msr = tmp_path / "m.csv"
    msr.write_text("128166385295514663,hm,0,Write,0,4096,2833\n")
    code, _, err = run_cli(
        capsys,
        "run",
        "--set",
        "workload.kind=trace",
        "--set",
        f"workload.path={msr}",
        "--set",
        "workload.timestamp=record",
    )
    assert code == 2
    assert "config field `workload.timestamp`: `record`: format `msr` has a single time stamp" in err, err


def test_oversized_integers_name_their_key(tmp_path, capsys):
    """A whole number past 64 bits: in a file, past TOML's range (the parser alone would say
    `<document>`); in `--set` and a dict, past the engine's (JSON would carry it as a float)."""
    cfg = tmp_path / "c.toml"
    cfg.write_text('[workload]\nkind = "zipf"\nrequests = 99999999999999999999\n')
    code, out, err = run_cli(capsys, "run", "--config", str(cfg))
    assert (code, out) == (2, "")
    assert err == (
        f"ssdlab: error: {cfg}:3: config field `workload.requests`: 99999999999999999999 is too large for a "
        "TOML integer (at most 9223372036854775807)\n"
    )
    code, out, err = run_cli(capsys, "run", "--set", "workload.requests=99999999999999999999")
    assert (code, err) == (
        2,
        "ssdlab: error: config field `workload.requests`: 99999999999999999999 is too large "
        "(at most 18446744073709551615)\n",
    )
    with pytest.raises(SsdlabError, match=r"^config field `flows\[1\]\.queue_depth`: -1\d{19} is too small"):
        ssdlab.Config({"flows": [{}, {"queue_depth": -(10**19)}]}).resolved()
    # The largest whole number the engine holds reaches it: the run's own check answers.
    cfg = ssdlab.Config({"workload": {"requests": 10}, "run": {"warmup_requests": 2**64 - 1}})
    assert cfg.resolved()["run"]["warmup_requests"] == 2**64 - 1
    with pytest.raises(
        SsdlabError, match=r"^config field `run.warmup_requests`: 18446744073709551615 warm-up requests"
    ):
        ssdlab.simulate(cfg)
