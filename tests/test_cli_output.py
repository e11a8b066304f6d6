"""What the commands print and where they write: compare's own folder, `reproduce --list`, trace
and results tables in readable units."""

import json
import re
from pathlib import Path

import pytest
from conftest import ssdlab_cmd
from ssdlab import cli, describe, studies

SMALL = ["--set", "workload.kind=zipf", "--set", "workload.requests=2000", "--set", "workload.footprint_bytes=64MiB"]
VARY = ["--vary", "buffer.kind=none,lru"]


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_compare_writes_its_own_folder_and_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["compare", *SMALL, *VARY, "--quiet"]) == 0
    assert files(tmp_path) == ["results/compare/compare.json", "results/compare/compare.png"]
    out = capsys.readouterr().out
    assert out.rstrip().endswith("wrote results/compare/compare.json, results/compare/compare.png")
    doc = json.loads((tmp_path / "results/compare/compare.json").read_text())
    assert [d["label"] for d in doc] == ["buffer.kind=none", "buffer.kind=lru"]
    # `make run`'s `--out results` still writes results/compare.json, beside (not over) the folder
    assert cli.main(["compare", *SMALL, "--quiet", "--out", "results", "--chart-metrics", "waf"]) == 0
    assert len(json.loads((tmp_path / "results/compare.json").read_text())) == 3
    assert json.loads((tmp_path / "results/compare/compare.json").read_text()) == doc


def test_compare_json_to_stdout_writes_nothing_else(tmp_path):
    p = ssdlab_cmd("compare", *SMALL, *VARY, "--quiet", "--json", "-", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)  # standard output holds the JSON alone
    assert [d["config"]["buffer"]["kind"] for d in doc] == ["none", "lru"]
    assert doc[0]["metrics"]["host.write_pages"] == doc[0]["metrics"]["nand.programs.host"]
    assert files(tmp_path) == []
    assert "wrote" not in p.stderr


def test_reproduce_list_is_one_line_per_study(capsys):
    reg = studies.registry()
    assert cli.main(["reproduce", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(reg)
    assert [line.split()[0] for line in lines] == list(reg)
    assert all(len(line) <= 120 for line in lines), max(lines, key=len)
    waf = next(line for line in lines if line.startswith("waf-vs-op "))
    assert " 24 quick,  48 full cells  " in waf  # 2 GC x 2 workloads x 6 (quick) / 12 (full) ρ
    assert waf.endswith(reg["waf-vs-op"].summary)


def test_study_summary_defaults_to_the_first_sentence(tmp_path, monkeypatch):
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "study.toml").write_text('[study]\nname = "s"\ndescription = """One line. Then\n  the details."""\n')
    monkeypatch.setattr(studies, "HERE", tmp_path)
    st = studies.registry()["s"]
    assert st.summary == "One line" and st.description == "One line. Then the details."
    assert st.cells() == 1 and st.cells(quick=True) is None  # no quick.toml
    (folder / "quick.toml").write_text("[axes\n")
    assert st.cells(quick=True) is None  # not TOML: "?" in the list, not a traceback


def msr_trace(path: Path) -> Path:
    """Three MSR records: 1 MiB written at 0, 4 KiB read at 2 GiB, 8 KiB written after the 1 MiB."""
    epoch, t0 = 116_444_736_000_000_000, 1_172_164_929  # FILETIME of 1970-01-01; 2007-02-22 17:22:09 UTC
    stamp = [epoch + (t0 + s) * 10_000_000 for s in (0, 30, 90)]
    path.write_text(
        f"{stamp[0]},hm,0,Write,0,1048576,100\n"
        f"{stamp[1]},hm,0,Read,2147483648,4096,100\n"
        f"{stamp[2]},hm,0,Write,1048576,8192,100\n"
    )
    return path


def test_trace_info_text_has_every_json_field_in_readable_units(tmp_path):
    trace = msr_trace(tmp_path / "t.csv")
    p = ssdlab_cmd("trace", "info", str(trace), "--json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    info = json.loads(p.stdout)  # --json: machine units, as before
    assert info["write_bytes"] == 1056768 and info["max_end_bytes"] == 2147487744
    assert info["first_time_us"] == 1_172_164_929e6 and info["last_time_us"] == 1_172_165_019e6
    p = ssdlab_cmd("trace", "info", str(trace), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    fields, measured = p.stdout.split("\n\n")
    rows = {line.split("  ")[0]: line.split(None, 1)[1] for line in fields.splitlines()[2:]}
    # Every field of the JSON, in its order; the measured latencies (ResponseTime 100 = 10 µs) in
    # a table of their own.
    assert list(rows) == [k for k in info if k not in ("measured_latency", "volumes")]
    assert info["measured_latency"]["write"] == {
        "count": 2,
        "mean_us": 10.0,
        "p50_us": 10.0,
        "p90_us": 10.0,
        "p99_us": 10.0,
        "p99.9_us": 10.0,
    }
    assert measured.splitlines()[3:] == [
        "read       1    10   10   10   10     10",
        "write      2    10   10   10   10     10",
    ]
    assert rows["requests"] == "3" and rows["late"] == "0" and rows["skipped"] == "0"
    assert rows["read_bytes"] == "4 KiB"
    assert rows["write_bytes"] == "1.008 MiB"
    assert rows["max_end_bytes"] == "2 GiB"
    assert rows["footprint_pages"] == "258 pages of 4 KiB (1.008 MiB)"
    assert rows["seq_write_fraction"] == "50%"
    assert rows["first_time_us"] == "2007-02-22 17:22:09.000000 UTC"
    assert rows["last_time_us"] == "2007-02-22 17:23:39.000000 UTC (1.5 min after the first)"


@pytest.mark.parametrize(
    ("us", "text"),
    [
        (850, "850 µs"),
        (1500, "1.5 ms"),
        (2.5e6, "2.5 s"),
        (90e6, "1.5 min"),
        (7200e6, "2 h"),
        (5633898368802, "1,565 h"),
    ],
)
def test_durations_in_the_largest_unit_above_one(us, text):
    assert describe.duration(us) == text
    assert describe.timestamp(us) == text  # times since the trace began, not Unix stamps


def test_unix_stamps_read_as_dates_up_to_the_year_9999():
    assert describe.timestamp(1_172_164_929_551_466.5) == "2007-02-22 17:22:09.551466 UTC"
    assert describe.timestamp(1e19) == "2,777,777,778 h"  # no date that far: a duration, no crash


def test_results_show_byte_columns_as_sizes(tmp_path, capsys):
    study = tmp_path / "s.toml"
    study.write_text(
        '[base.workload]\nkind = "uniform"\nrequests = 2000\nfootprint_bytes = "64MiB"\n'
        '[axes]\n"buffer.bytes" = ["512KiB", "4MiB"]\n'
    )
    out = tmp_path / "out"
    assert cli.main(["sweep", str(study), "--out", str(out), "--workers", "1", "--quiet"]) == 0
    capsys.readouterr()
    cols = "buffer.bytes,workload.footprint_bytes,host.write_bytes,workload.requests"
    assert cli.main(["results", str(out), "--columns", cols, "--csv", str(tmp_path / "r.csv")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == cols.split(",")
    assert [re.split(r"\s{2,}", line.strip()) for line in lines[2:4]] == [
        ["512 KiB", "64 MiB", "7.812 MiB", "2,000"],  # 2,000 writes of 4 KiB
        ["4 MiB", "64 MiB", "7.812 MiB", "2,000"],
    ]
    csv = (tmp_path / "r.csv").read_text().splitlines()  # the CSV keeps bytes
    assert csv[1].split(",")[:2] == ["524288", "67108864"]
