"""The claims ledger: claims.toml files, judges, `ssdlab claims` and `ssdlab reproduce --all`."""

import json

import pytest
import ssdlab
from ssdlab import claims, cli, studies
from ssdlab.studies import robust

STUDY = """[study]
name = "tiny"
description = "two buffers on a small Zipf workload"
[base.workload]
kind = "zipf"
requests = 4000
footprint_bytes = "64MiB"
[base.device]
logical_bytes = "64MiB"
[base.buffer]
bytes = "256KiB"
[axes]
"buffer.kind" = ["none", "lru"]
"""

CLAIMS = """seed = "009"
intro = "A made-up seed's claims."
[[claim]]
id = "lru-fewer-programs"
kind = "seed"
figure = "Fig. 1"
claim = "LRU programs fewer pages than no buffer"
seed_value = "fewer"
reading = "LRU's page programs below no buffer's"
judge = "fewer"
metric = "nand.programs.total"

[[claim]]
id = "needs-missing-cells"
kind = "extension"
figure = "Fig. 2"
claim = "A claim judged on cells this grid lacks"
seed_value = "-"
reading = "-"
judge = "missing"
"""

FIGURES = """
from ssdlab.claims import Outcome


def fewer(df, claim):
    by = df.set_index("buffer.kind")
    none, lru = float(by.loc["none", claim["metric"]]), float(by.loc["lru", claim["metric"]])
    return Outcome(f"lru {lru:,.0f} vs none {none:,.0f}", lru < none, cells=list(df["cell"]))


def missing(df, claim):
    raise KeyError("buffer.kind = fab")
"""


# An open value (LRU's buffer size) and a claim whose verdict turns on it.
ROBUST = """
[[claim]]
id = "small-buffer"
kind = "seed"
figure = "Fig. 3"
claim = "LRU's buffer is at most 1 MiB"
seed_value = "-"
reading = "the LRU cell's buffer.bytes at most 1 MiB"
judge = "small"

[[open]]
id = "lru-bytes"
what = "LRU's buffer size"
key = "buffer.bytes"
values = ["256KiB", "4MiB"]
where = { "buffer.kind" = "lru" }
source = "the seed gives none"

[[open]]
id = "op"
what = "over-provisioning"
key = "device.op"
values = [0.07, 0.25]
source = "the seed gives none"

[[corner]]
id = "big-and-spare"
set = { "lru-bytes" = "4MiB", op = 0.25 }
why = "both at their largest"
"""

SMALL = """

def small(df, claim):
    b = int(df.loc[df["buffer.kind"] == "lru", "buffer.bytes"].iloc[0])
    return Outcome(f"{b} B", b <= 1 << 20)
"""


def make_registry(tmp_path, monkeypatch, claims_text=CLAIMS, figures=FIGURES, quick=STUDY):
    folder = tmp_path / "studies" / "tiny"
    folder.mkdir(parents=True)
    for name, text in (
        ("study.toml", STUDY),
        ("quick.toml", quick),
        ("claims.toml", claims_text),
        ("figures.py", figures),
    ):
        (folder / name).write_text(text)
    study = studies.Study(name="tiny", description="", folder=folder)
    monkeypatch.setattr(studies, "registry", lambda: {"tiny": study})
    return study


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """A registry of one study, `tiny`, whose quick and full grids are the same small grid."""
    return make_registry(tmp_path, monkeypatch)


def test_robust_settings_rerun_only_the_cells_they_change(tmp_path, monkeypatch, capsys):
    quick = STUDY.replace('name = "tiny"', 'name = "tiny"\ngrid = "quick"')
    make_registry(tmp_path, monkeypatch, CLAIMS + ROBUST, FIGURES + SMALL, quick)
    out = tmp_path / "r"
    studies.reproduce("tiny", quick=True, out=out, progress=False, robust=True)
    robust = out / "robust"
    # Each value alone, then the corner; 256KiB and 0.07 are the study's own (they change nothing).
    assert sorted(p.name for p in robust.iterdir()) == [
        "big-and-spare",
        "lru-bytes=256KiB",
        "lru-bytes=4MiB",
        "op=0.07",
        "op=0.25",
    ]
    replaced = {p.name: json.loads((p / "setting.json").read_text())["replaces"] for p in robust.iterdir()}
    assert [len(replaced[k]) for k in sorted(replaced)] == [2, 0, 1, 0, 2]
    assert len(ssdlab.load_results(robust / "lru-bytes=4MiB")) == 1  # only the LRU cell ran again
    assert not (robust / "op=0.07" / "study.toml").exists()
    assert cli.main(["claims", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    by = {c["id"]: c for c in doc["claims"]}
    small = by["small-buffer"]
    assert small["grid"] == "quick" and small["verdict"] == "holds"
    assert small["robustness"]["verdict"] == "depends"
    assert small["robustness"]["flips"] == ["lru-bytes=4MiB", "big-and-spare"]
    assert [r["setting"] for r in small["robustness"]["settings"]] == ["lru-bytes=4MiB", "op=0.25", "big-and-spare"]
    assert by["needs-missing-cells"]["robustness"]["verdict"] == "not judged"
    lru = by["lru-fewer-programs"]["robustness"]
    assert lru["verdict"] in ("holds robustly", "depends") and len(lru["settings"]) == 3
    (row,) = doc["summary"]
    assert row["claims"] == 2 and row["depends"] + row["holds robustly"] + row["fails robustly"] == 2
    assert row["depends"] >= 1 and row["extensions"] == 1
    # The text ledger marks the quick grid and names the settings that flip a verdict.
    assert cli.main(["claims", str(out)]) == 0
    text = capsys.readouterr().out
    assert "seed · HOLDS (QUICK GRID)" in text and "robust:   depends on lru-bytes=4MiB, big-and-spare" in text
    # The report's robustness table: every open value with its source, every setting's verdict.
    report = (out / "report.html").read_text()
    assert "Robustness: the values the seed leaves open" in report and "the seed gives none" in report
    assert "<b>depends</b>" in report
    # Re-running resumes: nothing runs again.
    studies.reproduce("tiny", quick=True, out=out, progress=False, robust=True)
    assert len(ssdlab.load_results(robust / "lru-bytes=4MiB")) == 1


def test_an_open_value_on_an_axis_is_an_error(tmp_path, monkeypatch):
    text = CLAIMS + ROBUST.replace('key = "buffer.bytes"', 'key = "buffer.kind"').replace(
        'values = ["256KiB", "4MiB"]', 'values = ["lru", "fifo"]'
    ).replace('"lru-bytes" = "4MiB"', '"lru-bytes" = "fifo"')
    make_registry(tmp_path, monkeypatch, text, FIGURES + SMALL)
    with pytest.raises(ssdlab.SsdlabError, match="buffer.kind is an axis of cell 1; exclude such cells with `where`"):
        studies.reproduce("tiny", out=tmp_path / "r", progress=False, robust=True)


@pytest.mark.parametrize(
    "verdict, settings, word, flips",
    [
        ("holds", [("a", True), ("b", True), ("c", None)], "holds robustly", []),
        ("does not hold", [("a", False), ("b", False)], "fails robustly", []),
        ("holds", [("a", False), ("b", True)], "depends", ["a"]),
        ("does not hold", [("a", True), ("b", None)], "depends", ["a"]),
        ("holds", [("a", None)], "not run", []),
        ("not judged", [("a", True)], "not judged", []),
    ],
)
def test_robustness_is_the_verdict_in_every_setting(verdict, settings, word, flips):
    got = claims.robustness(verdict, [(s, claims.Outcome("-", h)) for s, h in settings])
    assert got["verdict"] == word and got["flips"] == flips


def test_reproduce_all_then_claims(tiny, tmp_path, capsys):
    out = tmp_path / "results"
    assert cli.main(["reproduce", "--all", "--quick", "--quiet", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert (out / "tiny-quick" / "report.html").is_file()
    # The ledger printed at the end: both claims, their verdicts and the summary.
    assert "[009] tiny · Fig. 1 · seed · HOLDS" in printed and "extension · NOT JUDGED" in printed
    assert "reading:  LRU's page programs below no buffer's" in printed
    assert "not measurable on these results (KeyError" in printed
    # `ssdlab claims DIR` reads the folder of folders as well as the study's own folder.
    for where in (out, out / "tiny-quick"):
        assert cli.main(["claims", str(where), "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert [c["verdict"] for c in doc["claims"]] == ["holds", "not judged"]
        assert [c["kind"] for c in doc["claims"]] == ["seed", "extension"]
        assert doc["claims"][0]["cells"] and doc["claims"][0]["seed"] == "009"
        assert doc["claims"][0]["grid"] == "full" and doc["claims"][0]["robustness"] is None
        # The seed's claims are counted apart from the extensions.
        assert doc["summary"] == [
            {
                "seed": "009",
                "study": "tiny",
                "results": str(out / "tiny-quick"),
                "grid": "full",
                "claims": 1,
                "holds": 1,
                "does not hold": 0,
                "not judged": 0,
                "holds robustly": 0,
                "depends": 0,
                "fails robustly": 0,
                "extensions": 1,
                "extensions hold": 0,
            }
        ]
    # The report shows the same table.
    text = (out / "tiny-quick" / "report.html").read_text()
    assert "Seed 009 claims against ssdlab" in text and "A made-up seed&#x27;s claims." in text
    assert text.count("<b>holds</b>") == 1 and text.count("<b>not judged</b>") == 1
    assert "reading: LRU&#x27;s page programs below no buffer&#x27;s" in text


def test_the_verdict_follows_the_numbers(tiny, tmp_path):
    """The judge compares what the cells measured: LRU's programs against no buffer's."""
    import ssdlab

    out = tmp_path / "r"
    studies.reproduce("tiny", out=out, progress=False)
    df = ssdlab.load_results(out)
    (c, _) = studies.judge_study(tiny, df)
    by = df.set_index("buffer.kind")["nand.programs.total"]
    assert c.verdict == ("holds" if by["lru"] < by["none"] else "does not hold")
    assert c.measured == f"lru {by['lru']:,.0f} vs none {by['none']:,.0f}"
    df.loc[df["buffer.kind"] == "lru", "nand.programs.total"] = by["none"] + 1
    assert studies.judge_study(tiny, df)[0].verdict == "does not hold"


CLAIM = 'id = "a"\nkind = "seed"\nfigure = "F"\nclaim = "c"\nseed_value = "v"\nreading = "r"\n'
OPEN = 'id = "o"\nwhat = "w"\nkey = "buffer.bytes"\nsource = "s"\n'


@pytest.mark.parametrize(
    "text, message",
    [
        ('[[claim]]\nid = "a"', "top-level `seed`"),
        (f'seed = "001"\n[[claim]]\n{CLAIM}', "lacks judge (or not_judged)"),
        ('seed = "001"\n[[claim]]\nid = "a"\nfigure = "F"\nclaim = "c"\nseed_value = "v"', "lacks kind, reading"),
        (f'seed = "001"\n[[claim]]\n{CLAIM.replace("seed", "paper", 1)}judge = "j"', "kind must be one of seed"),
        ('seed = "001"\n' + f'[[claim]]\n{CLAIM}judge = "j"\n' * 2, "claim id `a` appears twice"),
        (f'seed = "001"\n[[open]]\n{OPEN}values = [1]', "values must list at least two"),
        (f'seed = "001"\n[[open]]\n{OPEN.replace("source", "from")}values = [1, 2]', "lacks source"),
        ('seed = "001"\n' + f"[[open]]\n{OPEN}values = [1, 2]\n" * 2, "open id `o` appears twice"),
        (f'seed = "001"\n[[open]]\n{OPEN}values = [1, 2]\nrange = 3', "unknown key `range`"),
        (f'seed = "001"\n[[open]]\n{OPEN}values = [1, 2]\n[[corner]]\nid = "c"\nset = {{ p = 1 }}', "no [[open]] id"),
        (f'seed = "001"\n[[open]]\n{OPEN}values = [1, 2]\n[[corner]]\nid = "c"\nset = {{ o = 3 }}', "not one of"),
        ('seed = "001"\nclaim = 3', "array of tables"),
        ("seed = ", "claims.toml"),
    ],
)
def test_bad_claims_files_name_the_file_and_the_fault(tmp_path, text, message):
    path = tmp_path / "claims.toml"
    path.write_text(text)
    with pytest.raises(claims.ClaimsError, match="claims.toml") as e:
        claims.read_declared(path)
    assert message in str(e.value)


def test_every_registered_claim_names_a_judge_of_its_study():
    seeds = set()
    for study in studies.registry().values():
        path = study.folder / claims.CLAIMS_FILE
        if not path.exists():
            continue
        declared = claims.read_declared(path)
        seeds.add(declared.seed)
        module = study.judges()
        for c in declared.claims:
            if "not_judged" not in c:
                assert callable(getattr(module, c["judge"], None)), f"{study.name}: {c['id']} -> {c['judge']}"
        # Every setting of the open values resolves in every cell of the quick grid it applies to
        # (`reproduce --robust` checks every cell it changes; an invalid value or an axis raises).
        if declared.opens:
            cells = robust.headline_cells(study.spec(quick=True), declared)
            for s in robust.settings(declared):
                for c in cells:
                    robust.patched(s, c)
    assert "000" in seeds


def test_claims_of_a_folder_without_results_is_a_user_error(tmp_path, capsys):
    assert cli.main(["claims", str(tmp_path / "nowhere")]) == 2
    assert "no such results folder" in capsys.readouterr().err
    assert cli.main(["claims", str(tmp_path)]) == 2
    assert "holds no study results" in capsys.readouterr().err
