"""The command line as a user meets it."""

import json
import subprocess
import sys
import threading
import time

import pytest
import ssdlab
from conftest import ssdlab_cmd
from ssdlab import cli


def test_run_with_config_set_and_json(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[workload]\nkind = "zipf"\nrequests = 20000\nfootprint_bytes = "64MiB"\n[buffer]\nbytes = "1MiB"\n')
    out = tmp_path / "r.json"
    p = ssdlab_cmd(
        "run", "--config", str(cfg), "--set", "buffer.kind=block-lru", "--set", "device.op=0.2", "--json", str(out)
    )
    assert p.returncode == 0, p.stderr
    assert "waf" in p.stdout
    doc = json.loads(out.read_text())
    assert doc["config"]["buffer"]["kind"] == "block-lru"
    assert doc["config"]["device"]["op"] == 0.2
    api = ssdlab.simulate(doc["config"])
    metrics = {k: float("nan") if v is None else v for k, v in doc["metrics"].items()}  # null: NaN
    assert api.metrics == pytest.approx(metrics, nan_ok=True)


def test_compare_writes_table_json_and_chart(tmp_path):
    p = ssdlab_cmd(
        "compare",
        "--set",
        "workload.requests=20000",
        "--set",
        "workload.footprint_bytes=64MiB",
        "--vary",
        "buffer.kind=none,lru,block-lru",
        "--out",
        str(tmp_path),
    )
    assert p.returncode == 0, p.stderr
    assert "buffer.kind=block-lru" in p.stdout
    doc = json.loads((tmp_path / "compare.json").read_text())
    assert [d["config"]["buffer"]["kind"] for d in doc] == ["none", "lru", "block-lru"]
    assert (tmp_path / "compare.png").stat().st_size > 1000
    # no buffer: every host page is programmed
    assert doc[0]["metrics"]["nand.programs.host"] == doc[0]["metrics"]["host.write_pages"]


def no_nan(text):
    def reject(name):
        raise AssertionError(f"{name} in JSON")

    return json.loads(text, parse_constant=reject)


SMALL = ["--set", "workload.kind=zipf", "--set", "workload.requests=2000", "--set", "workload.footprint_bytes=64MiB"]


def test_run_json_is_valid_with_null_for_nan_and_dash_is_stdout(tmp_path):
    out = tmp_path / "r.json"
    p = ssdlab_cmd("run", *SMALL, "--json", str(out))
    assert p.returncode == 0, p.stderr
    doc = no_nan(out.read_text())
    assert doc["metrics"]["buffer.read_hit_ratio"] is None  # no reads: NaN in Python, null in JSON
    p = ssdlab_cmd("run", *SMALL, "--json", "-")
    assert p.returncode == 0, p.stderr
    assert no_nan(p.stdout) == doc  # standard output holds the JSON alone


def test_run_prints_what_it_simulated_in_readable_units():
    p = ssdlab_cmd("run", *SMALL, "--set", "buffer.kind=block-lru", "--set", "buffer.bytes=1MiB")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == (
        "workload zipf, 64 MiB footprint, 2,000 requests; device 64 MiB logical, 4 KiB pages, 128 pages/block, "
        "OP 0.07, not preconditioned (empty); FTL page (greedy GC); buffer block-lru 1 MiB"
    )
    res = ssdlab.simulate(
        {
            "workload": {"kind": "zipf", "requests": 2000, "footprint_bytes": "64MiB"},
            "buffer": {"kind": "block-lru", "bytes": "1MiB"},
        }
    )
    serial = next(line for line in lines if line.startswith("time.nand_serial_us"))
    value = f"{res.metrics['time.nand_serial_us'] / 1e6:,.4g} s"
    assert serial.endswith(f" {value}  (serial: every NAND operation's time, one after another)")
    assert not any(line.startswith("time.elapsed_us") for line in lines)  # the deprecated alias: JSON only
    assert next(line for line in lines if line.startswith("throughput.nand_serial_write_mib_s")).endswith(" MiB/s")


def test_closed_pipe_ends_quietly():
    p = subprocess.run(
        f"{sys.executable} -m ssdlab run {' '.join(SMALL)} --all | head -c 1",
        shell=True,
        capture_output=True,
        text=True,
    )
    assert p.stdout == "w"
    assert p.stderr == ""  # no BrokenPipeError traceback


def test_config_show_prints_the_resolved_configuration_as_toml(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[workload]\nkind = "zipf"\n[buffer]\nbytes = "1MiB"\n')
    p = ssdlab_cmd("config", "show", "--config", str(cfg), "--set", "device.op=0.2")
    assert p.returncode == 0, p.stderr
    shown = tmp_path / "shown.toml"
    shown.write_text(p.stdout)
    expected = ssdlab.Config.from_toml(cfg).set("device.op", 0.2).resolved()
    assert ssdlab.Config.from_toml(shown).resolved() == expected
    assert '[buffer]\nkind = "lru"\nbytes = 1048576\n' in p.stdout
    # Config.to_toml: reading the text back gives the same configuration
    c = ssdlab.Config(
        {"workload": {"kind": "zipf", "zipf_theta": 0.99}, "buffer": {"bytes": "8MiB"}, "run": {"seed": 3}}
    )
    (tmp_path / "c2.toml").write_text(c.to_toml())
    assert ssdlab.Config.from_toml(tmp_path / "c2.toml") == c
    full = ssdlab.Config(c.resolved())
    (tmp_path / "c3.toml").write_text(c.to_toml(resolved=True))
    assert ssdlab.Config.from_toml(tmp_path / "c3.toml").resolved() == full.resolved()
    assert ssdlab_cmd("config", "show", "--set", "buffer.kind=arc").returncode == 2


def test_compare_grouped_bars_and_json_to_stdout(tmp_path, capsys, monkeypatch):
    from ssdlab.report import figures as F

    drawn = []
    save = F.save
    monkeypatch.setattr(
        F, "save", lambda fig, stem, **kw: drawn.append(fig) or save(fig, stem, **{**kw, "close": False})
    )
    argv = ["compare", *SMALL, "--vary", "buffer.kind=none,lru", "--vary", "buffer.bytes=1MiB,4MiB"]
    assert (
        cli.main([*argv, "--out", str(tmp_path), "--json", "-", "--quiet", "--chart-metrics", "waf,nand.erases"]) == 0
    )
    out, err = capsys.readouterr()
    doc = no_nan(out)  # standard output holds the JSON alone; the table went to stderr
    assert [d["label"] for d in doc] == [
        "buffer.kind=none buffer.bytes=1MiB",
        "buffer.kind=none buffer.bytes=4MiB",
        "buffer.kind=lru buffer.bytes=1MiB",
        "buffer.kind=lru buffer.bytes=4MiB",
    ]
    assert no_nan((tmp_path / "compare.json").read_text()) == doc
    assert err.startswith("workload zipf, 64 MiB footprint, 2,000 requests; device")
    fig = drawn[0]
    waf, erases = fig.axes[:2]
    assert [t.get_text() for t in waf.get_xticklabels()] == ["none", "lru"]  # a group per buffer
    assert waf.get_xlabel() == "buffer" and waf.get_ylabel() == "write amplification (WAF)"
    assert erases.get_ylabel() == "block erases"
    assert [t.get_text() for t in erases.get_legend().get_texts()] == ["1 MiB", "4 MiB"]  # a bar per size
    heights = [p.get_height() for p in erases.patches]  # size-major
    assert heights == [doc[i]["metrics"]["nand.erases"] for i in (0, 2, 1, 3)]
    assert fig.get_suptitle().startswith("zipf, 64 MiB footprint, 2,000 requests · 64 MiB logical, 4 KiB pages")


def test_user_errors_exit_2_without_traceback():
    for args in (
        ["run", "--set", "buffer.kind=arc"],
        ["run", "--set", "ftl.victim=greedy"],
        ["run", "--set", "workload.kind=trace", "--set", "workload.path=/no/such/file"],
        ["run", "--config", "/no/such.toml"],
        ["trace", "info", "/no/such/file"],
    ):
        p = ssdlab_cmd(*args)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert "Traceback" not in p.stderr
        assert p.stderr.startswith("ssdlab: error:")


def test_policies_lists_components_and_docs_are_in_sync():
    p = ssdlab_cmd("policies")
    assert p.returncode == 0
    for name in ("page", "greedy", "cost-benefit", "fifo", "none", "lru", "block-lru", "desktop", "msr"):
        assert name in p.stdout
    doc = (cli.__file__ and __import__("pathlib").Path(__file__).parent.parent / "docs" / "components.md").read_text()
    assert doc == cli.components_markdown(), "docs/components.md is stale: run `ssdlab policies --markdown`"


def test_progress_callback_and_cancel():
    calls = []
    cfg = {"workload": {"kind": "uniform", "requests": 300_000, "footprint_bytes": "64MiB"}}
    ssdlab.simulate(cfg, progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1] == (300_000, 300_000)
    assert all(t == 300_000 for _, t in calls)

    class Stop(Exception):
        pass

    def stop(done, total):
        raise Stop()

    with pytest.raises(Stop):
        ssdlab.simulate(cfg, progress=stop)
    # Timed, with the clock on its own thread: the run stops too, and the thread with it.
    timed = {**cfg, "run": {"mode": "timed"}}
    with pytest.raises(Stop):
        ssdlab.simulate(timed, progress=stop)
    assert ssdlab.simulate(timed).metrics["time.clock_thread"] == 1.0


def test_runs_release_the_gil():
    """Two simulations in threads overlap: each thread's run is in flight while the other's is."""
    cfg = {"workload": {"kind": "uniform", "requests": 400_000, "footprint_bytes": "64MiB"}}
    spans = []

    def work():
        t0 = time.monotonic()
        ssdlab.simulate(cfg)
        spans.append((t0, time.monotonic()))

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    # The main thread keeps running Python while the simulations run.
    ticks = 0
    while any(t.is_alive() for t in threads):
        ticks += 1
        time.sleep(0.001)
    for t in threads:
        t.join()
    (a0, a1), (b0, b1) = spans
    assert max(a0, b0) < min(a1, b1)  # overlapping
    assert ticks > 5


def test_ctrl_c_stops_cleanly(tmp_path):
    script = tmp_path / "long.py"
    script.write_text(
        "import ssdlab\n"
        "try:\n"
        "    ssdlab.simulate({'workload': {'kind': 'uniform', 'requests': 10**9, 'footprint_bytes': '64MiB'}})\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted cleanly')\n"
    )
    import signal

    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    time.sleep(1.5)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=30)
    assert "interrupted cleanly" in out


# Two tenants on a controller that holds 2 commands (as tests/test_api.py's FLOWS): a reader
# beside a writer, no write buffer.
FLOWS_TOML = """\
[device]
channels = 2
chips_per_channel = 2
pages_per_block = 64
logical_bytes = "256MiB"
[buffer]
kind = "none"
[host]
device_queue_depth = 2
arbitration = "weighted-round-robin"
[run]
mode = "timed"
precondition = "fill"
[[flows]]
queue_depth = 4
workload = { kind = "uniform", requests = 1000, footprint_bytes = "64MiB", read_fraction = 1.0 }
[[flows]]
queue_depth = 16
workload = { kind = "uniform", requests = 1000, footprint_bytes = "64MiB", read_fraction = 0.1 }
"""


def test_set_and_vary_address_a_flow_by_its_index(tmp_path):
    cfg = tmp_path / "flows.toml"
    cfg.write_text(FLOWS_TOML)
    runs = {}
    for priority in ("medium", "urgent"):
        p = ssdlab_cmd("run", "-c", str(cfg), "-q", "--set", f"flows.0.priority={priority}", "--json", "-")
        assert p.returncode == 0, p.stderr
        runs[priority] = json.loads(p.stdout)
        assert [f["priority"] for f in runs[priority]["config"]["flows"]] == [priority, "medium"]
    # The urgent class is fetched first: the reader's reads wait far less.
    read = {k: r["metrics"]["flow.0.latency.read.mean_us"] for k, r in runs.items()}
    assert read["urgent"] < 0.2 * read["medium"]
    # Under round robin the priority is not used, and a warning says so.
    p = ssdlab_cmd(
        "run", "-c", str(cfg), "-q", "--set", "flows.0.priority=urgent", "--set", "host.arbitration=round-robin"
    )
    assert p.returncode == 0, p.stderr
    assert "warning: flows[0]: priority and weight are not used by host.arbitration" in p.stderr

    p = ssdlab_cmd(
        "compare",
        "-c",
        str(cfg),
        "-q",
        "--vary",
        "flows.0.priority=medium,urgent",
        "--set",
        "flows.1.queue_depth=16",
        "--json",
        "-",
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert [d["label"] for d in doc] == ["flows.0.priority=medium", "flows.0.priority=urgent"]
    assert [d["metrics"]["flow.0.latency.read.mean_us"] for d in doc] == [read["medium"], read["urgent"]]

    # An index past the flows given names the key and how many there are, before anything runs.
    for args in (["run", "--set", "flows.2.priority=urgent"], ["compare", "--vary", "flows.2.workload.path=a,b"]):
        p = ssdlab_cmd(*args, "-c", str(cfg), "-q")
        assert p.returncode == 2 and "running" not in p.stderr
        key = args[-1].split("=")[0]
        assert (
            p.stderr
            == f"ssdlab: error: config field `{key}`: index 2 is past the 2 flows given (`flows.0` to `flows.1`)\n"
        )


@pytest.fixture
def unwritable(tmp_path):
    """A folder this process cannot create files in: mode 555, or, for root (whom modes do not
    stop), a folder of sysfs."""
    import os
    import tempfile
    from pathlib import Path

    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    for folder in (ro, Path("/sys/fs")):
        try:
            tempfile.NamedTemporaryFile(dir=folder).close()
        except OSError:
            yield folder
            break
    else:
        pytest.skip("no folder here refuses this process's files")
    os.chmod(ro, 0o755)


def test_output_paths_are_checked_before_anything_runs(tmp_path, capsys, unwritable):
    """Every output path of the command line, wrong three ways (a file where a folder goes, a folder
    where a file goes, a folder that takes no files): one line in ssdlab's words, before any run,
    nothing written."""
    afile = tmp_path / "results.csv"
    afile.write_text("kept\n")
    folder = tmp_path / "folder"
    folder.mkdir()
    study = tmp_path / "s.toml"
    study.write_text('[base]\nworkload.requests = 100\n[axes]\n"buffer.kind" = ["none", "lru"]\n')
    t0 = 128166372000000000
    trace = tmp_path / "t.csv"
    trace.write_text("".join(f"{t0 + 10_000 * i},h,0,Read,{4096 * i},4096,600\n" for i in range(20)))
    profile = tmp_path / "p.toml"
    profile.write_text('[run]\nmode = "timed"\n')
    (tmp_path / "store").mkdir()
    small = ["-q", "--set", "workload.requests=500"]
    nope = str(unwritable / "x")
    cases = [
        (["compare", *small, "--out", str(afile)], f"--out {afile}: exists and is a file; expected a folder"),
        (["compare", *small, "--out", nope], f"--out {nope}: cannot write in the folder `{unwritable}`"),
        (["compare", *small, "--json", f"{nope}.json"], f"--json {nope}.json: cannot write in the folder"),
        (["compare", *small, "--out", str(tmp_path / "c"), "--json", str(folder)], f"--json {folder}: is a folder"),
        (["run", *small, "--json", f"{nope}.json"], f"--json {nope}.json: cannot write in the folder `{unwritable}`"),
        (["run", *small, "--json", str(folder)], f"--json {folder}: is a folder; expected a file"),
        (["run", *small, "--json", f"{afile}/r.json"], f"--json {afile}/r.json: `{afile}` is a file, not a folder"),
        (["run", *small, "--set", "run.mode=timed", "--plot-cdf", str(folder)], f"--plot-cdf {folder}: is a folder"),
        (["sweep", str(study), "-q", "--out", str(afile)], f"--out {afile}: exists and is a file; expected a folder"),
        (["sweep", str(study), "-q", "--out", nope], f"--out {nope}: cannot write in the folder `{unwritable}`"),
        (["results", str(tmp_path / "store"), "--csv", str(folder)], f"--csv {folder}: is a folder; expected a file"),
        (["trace", "generate", *small, f"{nope}.csv"], f"output {nope}.csv: cannot write in the folder"),
        (["trace", "convert", str(trace), str(folder)], f"output {folder}: is a folder; expected a file"),
        (["calibrate", str(trace), "--trials", "1", "-q", "--out", str(folder)], f"--out {folder}: is a folder"),
        (
            ["validate", str(trace), "-c", str(profile), "--plot", f"{afile}/c.png"],
            f"--plot {afile}/c.png: `{afile}` is a file, not a",
        ),
        (
            ["plot", str(tmp_path / "store"), "--x", "k", "--y", "waf", "--out", f"{afile}/f"],
            f"--out {afile}/f: `{afile}`",
        ),
        (["report", str(tmp_path / "store"), "--out", str(folder)], f"--out {folder}: is a folder; expected a file"),
        (["reproduce", "hwb", "--quick", "-q", "--out", str(afile)], f"--out {afile}: exists and is a file"),
        (["reproduce", "--all", "--quick", "-q", "--out", str(afile)], f"--out {afile}: exists and is a file"),
    ]
    for argv, message in cases:
        assert cli.main(argv) == 2, argv
        out, err = capsys.readouterr()
        assert err.startswith(f"ssdlab: error: {message}"), (argv, err)
        assert len(err.splitlines()) == 1 and "Errno" not in err and "running" not in err, (argv, err)
        assert out == "", (argv, out)  # nothing ran, nothing was printed
    assert afile.read_text() == "kept\n" and list(folder.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "folder",
        "p.toml",
        "results.csv",
        "ro",
        "s.toml",
        "store",
        "t.csv",
    ]


def test_os_errors_read_in_ssdlab_words(tmp_path):
    import errno

    from ssdlab import api

    assert api.os_error_message(FileNotFoundError(errno.ENOENT, "No such file or directory", "a.toml")) == (
        "a.toml: no such file or folder"
    )
    assert api.os_error_message(OSError(errno.ENOSPC, "No space left on device", "r.json")) == (
        "r.json: no space left on the disk"
    )
    p = ssdlab_cmd("run", "--config", str(tmp_path))
    assert p.returncode == 2 and p.stderr == f"ssdlab: error: {tmp_path}: is a folder; expected a file\n"
