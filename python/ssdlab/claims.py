"""Every seed's claims, as data, judged on a study's results: one ledger for reports and `ssdlab claims`.

A registered study declares its seed's claims in `claims.toml` beside its `study.toml`:

    seed = "003"                        # the seed the claims come from
    intro = "…"                         # optional: one paragraph shown above the report's table
    [[claim]]
    id = "hit-ratio"                    # unique within the study, stable (scripts refer to it)
    figure = "Fig. 7"                   # the seed's figure or table
    claim = "HWB has the highest write hit ratio"
    seed_value = "highest on all six traces"   # the seed's number or statement
    judge = "hit_ratio_highest"         # a function of the study's figures.py
    # any further keys are the judge's own parameters

`judge(df, claim) -> Outcome` measures the claim on a results frame (`claim` is the table above,
as a dict). The study's report and `ssdlab claims` both read the claims through `judge_study`, so
what a report says and what the ledger says cannot differ.
"""

from __future__ import annotations

import html
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ._core import SsdlabError

CLAIMS_FILE = "claims.toml"
VERDICTS = {True: "holds", False: "does not hold", None: "not judged"}
REQUIRED = ("id", "figure", "claim", "seed_value", "judge")
# The ledger's columns, in order (the `--json` records carry these names).
COLUMNS = ("seed", "study", "figure", "claim", "seed_value", "measured", "verdict", "cells", "why")


@dataclass(frozen=True)
class Outcome:
    """What a judge measured: `measured` (text, with numbers), `holds` (None: not judged on these
    results), `why` (one line; required when the claim does not hold or is not judged) and the
    `cells` (values of the results' `cell` column) the verdict comes from."""

    measured: str
    holds: bool | None
    why: str = ""
    cells: Sequence[str] = ()


@dataclass
class Claim:
    """One row of the ledger."""

    seed: str
    study: str
    id: str
    figure: str
    claim: str
    seed_value: str
    measured: str
    verdict: str
    cells: list[str] = field(default_factory=list)
    why: str = ""
    results: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


class ClaimsError(SsdlabError):
    """A claims.toml that cannot be read, or a judge that does not exist."""

    kind = "config"


@dataclass
class Declared:
    """A study's claims.toml, checked."""

    path: Path
    seed: str
    intro: str
    claims: list[dict]


def read_declared(path: str | Path) -> Declared:
    """Read and check a claims.toml: every claim has the required keys, ids are unique."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ClaimsError(f"{path}: {e}") from None
    seed = doc.get("seed")
    if not isinstance(seed, str) or not seed:
        raise ClaimsError(f'{path}: top-level `seed` (e.g. seed = "003") is missing')
    claims = doc.get("claim", [])
    if not isinstance(claims, list):
        raise ClaimsError(f"{path}: `claim` must be an array of tables ([[claim]])")
    seen: set[str] = set()
    for i, c in enumerate(claims, 1):
        missing = [k for k in REQUIRED if not isinstance(c.get(k), str) or not c.get(k)]
        if missing:
            raise ClaimsError(f"{path}: claim {i} ({c.get('id', 'no id')}) lacks {', '.join(missing)}")
        if c["id"] in seen:
            raise ClaimsError(f"{path}: claim id `{c['id']}` appears twice")
        seen.add(c["id"])
    return Declared(path=path, seed=seed, intro=str(doc.get("intro", "")), claims=claims)


def _judge_one(module, study: str, seed: str, c: Mapping, df) -> Claim:
    fn = getattr(module, c["judge"], None) if module is not None else None
    if not callable(fn):
        raise ClaimsError(f"study {study}: claim `{c['id']}` names judge `{c['judge']}`, not a function of figures.py")
    try:
        out = fn(df, dict(c))
    except (KeyError, IndexError, ValueError, ZeroDivisionError) as e:
        # The results lack the cells this claim needs (a quick grid, failed cells): say so.
        out = Outcome("—", None, f"not measurable on these results ({type(e).__name__}: {e})")
    if not isinstance(out, Outcome):
        raise ClaimsError(f"study {study}: judge `{c['judge']}` returned {type(out).__name__}, not an Outcome")
    return Claim(
        seed=seed,
        study=study,
        id=c["id"],
        figure=c["figure"],
        claim=c["claim"],
        seed_value=c["seed_value"],
        measured=out.measured,
        verdict=VERDICTS[out.holds],
        cells=[str(x) for x in out.cells],
        why=out.why,
    )


def judge_study(study, df) -> list[Claim]:
    """Judge every claim of a registered study (`ssdlab.studies.Study`) on its results frame; []
    when the study declares none."""
    path = study.folder / CLAIMS_FILE
    if not path.exists():
        return []
    declared = read_declared(path)
    module = study.module()
    return [_judge_one(module, study.name, declared.seed, c, df) for c in declared.claims]


def claims_html(claims: Iterable[Claim], intro: str = "") -> str:
    """The report's claims table: claim, the seed's value, ssdlab's, verdict, why."""
    rows = []
    for c in claims:
        cells = f" <small>({len(c.cells)} cells)</small>" if c.cells else ""
        rows.append(
            f"<tr><td>{html.escape(c.figure)}</td><td>{html.escape(c.claim)}</td><td>{html.escape(c.seed_value)}</td>"
            f"<td>{html.escape(c.measured)}{cells}</td><td><b>{c.verdict}</b></td><td>{html.escape(c.why)}</td></tr>"
        )
    head = "".join(f"<th>{h}</th>" for h in ("figure", "claim", "seed", "ssdlab", "verdict", "why"))
    para = f"<p>{html.escape(intro)}</p>" if intro else ""
    return f"{para}<table><tr>{head}</tr>{''.join(rows)}</table>"


def report_section(study, df) -> list[tuple[str, str]]:
    """The report section of a study's claims ([(title, html)]; [] without claims)."""
    path = study.folder / CLAIMS_FILE
    if not path.exists():
        return []
    declared = read_declared(path)
    claims = judge_study(study, df)
    return [(f"Seed {declared.seed} claims against ssdlab", claims_html(claims, declared.intro))]


def results_dirs(paths: Iterable[str | Path]) -> list[Path]:
    """The study results folders among `paths`: each path is one (it holds study.toml) or holds
    them as subfolders (as `ssdlab reproduce --all --out DIR` writes). Sorted, without repeats."""
    out: list[Path] = []
    for p in map(Path, paths):
        if (p / "study.toml").is_file():
            found = [p]
        elif p.is_dir():
            found = sorted(q for q in p.iterdir() if (q / "study.toml").is_file())
            if not found:
                raise SsdlabError(f"{p}: holds no study results (no study.toml in it or in its subfolders)")
        else:
            raise SsdlabError(f"{p}: no such results folder")
        out += [q for q in found if q not in out]
    return out


def ledger(paths: Iterable[str | Path]) -> list[Claim]:
    """Every claim of every registered study found in `paths` (results folders, or folders of them),
    judged on its results; folders of studies without claims.toml (or not registered) add nothing."""
    from . import studies
    from .report.html import load_results, read_study

    reg = studies.registry()
    out: list[Claim] = []
    for d in results_dirs(paths):
        spec, _ = read_study(d)
        study = reg.get((spec.get("study") or {}).get("name", ""))
        if study is None or not (study.folder / CLAIMS_FILE).exists():
            continue
        for c in judge_study(study, load_results(d)):
            c.results = str(d)
            out.append(c)
    return sorted(out, key=lambda c: (c.seed, c.study, c.results))


def summary(claims: Sequence[Claim]) -> list[dict]:
    """Per seed and study: how many claims hold, do not hold, are not judged."""
    rows: dict[tuple, dict] = {}
    for c in claims:
        r = rows.setdefault((c.seed, c.study, c.results), {"seed": c.seed, "study": c.study, "results": c.results})
        for v in VERDICTS.values():
            r.setdefault(v, 0)
        r[c.verdict] += 1
    return list(rows.values())
