"""The command line as a user meets it."""

import json
import subprocess
import sys
import threading
import time

import pytest
import ssdlab
from ssdlab import cli


def ssdlab_cmd(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "ssdlab", *args], capture_output=True, text=True, cwd=cwd)


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
    assert api.metrics == pytest.approx(doc["metrics"], nan_ok=True)


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
