"""The claims ledger: claims.toml files, judges, `ssdlab claims` and `ssdlab reproduce --all`."""

import json

import pytest
from ssdlab import claims, cli, studies

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
figure = "Fig. 1"
claim = "LRU programs fewer pages than no buffer"
seed_value = "fewer"
judge = "fewer"
metric = "nand.programs.total"

[[claim]]
id = "needs-missing-cells"
figure = "Fig. 2"
claim = "A claim judged on cells this grid lacks"
seed_value = "-"
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


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """A registry of one study, `tiny`, whose quick and full grids are the same small grid."""
    folder = tmp_path / "studies" / "tiny"
    folder.mkdir(parents=True)
    for name, text in (("study.toml", STUDY), ("quick.toml", STUDY), ("claims.toml", CLAIMS), ("figures.py", FIGURES)):
        (folder / name).write_text(text)
    study = studies.Study(name="tiny", description="", folder=folder)
    monkeypatch.setattr(studies, "registry", lambda: {"tiny": study})
    return study


def test_reproduce_all_then_claims(tiny, tmp_path, capsys):
    out = tmp_path / "results"
    assert cli.main(["reproduce", "--all", "--quick", "--quiet", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert (out / "tiny-quick" / "report.html").is_file()
    # The ledger printed at the end: both claims, their verdicts and the summary.
    assert "[009] tiny · Fig. 1 · HOLDS" in printed and "NOT JUDGED" in printed
    assert "not measurable on these results (KeyError" in printed
    # `ssdlab claims DIR` reads the folder of folders as well as the study's own folder.
    for where in (out, out / "tiny-quick"):
        assert cli.main(["claims", str(where), "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert [c["verdict"] for c in doc["claims"]] == ["holds", "not judged"]
        assert doc["claims"][0]["cells"] and doc["claims"][0]["seed"] == "009"
        assert doc["summary"] == [
            {
                "seed": "009",
                "study": "tiny",
                "results": str(out / "tiny-quick"),
                "holds": 1,
                "does not hold": 0,
                "not judged": 1,
            }
        ]
    # The report shows the same table.
    text = (out / "tiny-quick" / "report.html").read_text()
    assert "Seed 009 claims against ssdlab" in text and "A made-up seed&#x27;s claims." in text
    assert text.count("<b>holds</b>") == 1 and text.count("<b>not judged</b>") == 1


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


@pytest.mark.parametrize(
    "text, message",
    [
        ('[[claim]]\nid = "a"', "top-level `seed`"),
        ('seed = "001"\n[[claim]]\nid = "a"\nfigure = "F"\nclaim = "c"\nseed_value = "v"', "lacks judge"),
        (
            'seed = "001"\n' + '[[claim]]\nid = "a"\nfigure = "F"\nclaim = "c"\nseed_value = "v"\njudge = "j"\n' * 2,
            "claim id `a` appears twice",
        ),
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
        module = study.module()
        for c in declared.claims:
            if "not_judged" in c:  # a statement that cannot be judged says why instead
                continue
            assert callable(getattr(module, c["judge"], None)), f"{study.name}: {c['id']} -> {c['judge']}"
    assert "000" in seeds


def test_claims_of_a_folder_without_results_is_a_user_error(tmp_path, capsys):
    assert cli.main(["claims", str(tmp_path / "nowhere")]) == 2
    assert "no such results folder" in capsys.readouterr().err
    assert cli.main(["claims", str(tmp_path)]) == 2
    assert "holds no study results" in capsys.readouterr().err
