"""Every seed's claims, as data, judged on a study's results: one ledger for reports and `ssdlab claims`.

A registered study declares its seed's claims in `claims.toml` beside its `study.toml`:

    seed = "003"                        # the seed the claims come from
    intro = "…"                         # optional: one paragraph shown above the report's table
    [[claim]]
    id = "hit-ratio"                    # unique within the study, stable (scripts refer to it)
    kind = "seed"                       # "seed": the seed states it of its own experiment;
                                        # "extension": ssdlab's own design or a check beyond the seed;
                                        # "external": a published result beyond the seeds
                                        # (then `source = "…"`: where it is published)
    figure = "Fig. 7"                   # the seed's figure or table
    claim = "HWB has the highest write hit ratio"
    seed_value = "highest on all six traces"   # the seed's number or statement
    reading = "every trace: HWB's hit ratio above each other policy's"   # how the judge reads it
    judge = "hit_ratio_highest"         # a function of the study's judges.py
    quick = "…"                         # optional: why the quick grid's verdict may differ
    # any further keys are the judge's own parameters
    # (a statement ssdlab cannot judge: `not_judged = "why"` in place of `judge`)

    [[open]]                            # a value the seed leaves open or ssdlab reconstructs
    id = "ref-window"
    what = "REF's victim window"
    key = "buffer.ref.window"           # one configuration key
    values = [0.1, 0.5, 1.0]            # its plausible range
    where = { "buffer.kind" = "ref" }   # optional: the cells it applies to
    source = "…"                        # where the range comes from

    headline_grids = ["…"]              # optional (top level): the [[grid]]s --robust re-runs

    [[corner]]                          # optional: open values set together
    id = "ref-wide"
    set = { "ref-window" = 1.0 }
    why = "…"

`judge(df, claim) -> Outcome` measures the claim on a results frame (`claim` is the table above,
as a dict). The study's report and `ssdlab claims` both read the claims through
`ssdlab.studies.judge_study` (the ledger: `ssdlab.studies.ledger`), so what a report says and what
the ledger says cannot differ. The open values are what `ssdlab reproduce NAME --robust` varies
(ssdlab.studies.robust); each claim's robustness is its verdict in every setting.
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
#: A claim's kind: the seed's own statement about its experiment, or ssdlab's beyond it.
KINDS = ("seed", "extension", "external")
REQUIRED = ("id", "kind", "figure", "claim", "seed_value", "reading")
#: Keys of a [[claim]] that are the ledger's, not the judge's parameters.
RESERVED = REQUIRED + ("judge", "quick", "not_judged", "robust", "source")
OPEN_REQUIRED = ("id", "what", "key", "source")
#: A claim's robustness over the open values' settings (ssdlab.studies.robust).
ROBUSTNESS = ("holds robustly", "depends", "fails robustly")


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
    kind: str
    figure: str
    claim: str
    seed_value: str
    reading: str
    measured: str
    verdict: str
    cells: list[str] = field(default_factory=list)
    why: str = ""
    results: str = ""
    #: The grid the verdict comes from: "full" or "quick" (the results' `[study] grid`).
    grid: str = "full"
    #: Shown with a quick verdict: why the quick grid may not show what the full grid does.
    quick: str = ""
    #: The verdict in each setting of the open values, when `--robust` ran (see `robustness`).
    robustness: dict | None = None
    #: Where an external claim is published (kind "external").
    source: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


class ClaimsError(SsdlabError):
    """A claims.toml that cannot be read, or a judge that does not exist."""

    kind = "config"


@dataclass
class Open:
    """A value the seed does not give (or ssdlab reconstructs): one configuration key, its
    plausible range and where that range comes from; `where` selects the cells it applies to."""

    id: str
    what: str
    key: str
    values: list
    source: str
    where: dict = field(default_factory=dict)


@dataclass
class Corner:
    """Open values set together (open id -> value)."""

    id: str
    set: dict
    why: str = ""


@dataclass
class Declared:
    """A study's claims.toml, checked."""

    path: Path
    seed: str
    intro: str
    claims: list[dict]
    opens: list[Open] = field(default_factory=list)
    corners: list[Corner] = field(default_factory=list)
    #: The [[grid]] names `--robust` re-runs (the headline grids); empty: every grid.
    headline_grids: list[str] = field(default_factory=list)


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
        if not _text(c.get("judge")) and not _text(c.get("not_judged")):
            missing.append("judge (or not_judged)")
        if missing:
            raise ClaimsError(f"{path}: claim {i} ({c.get('id', 'no id')}) lacks {', '.join(missing)}")
        if c["kind"] not in KINDS:
            raise ClaimsError(f"{path}: claim `{c['id']}`: kind must be one of {', '.join(KINDS)}, not `{c['kind']}`")
        if c["kind"] == "external" and not _text(c.get("source")):
            raise ClaimsError(f"{path}: claim `{c['id']}` is external: give its `source` (where it is published)")
        if c["id"] in seen:
            raise ClaimsError(f"{path}: claim id `{c['id']}` appears twice")
        seen.add(c["id"])
    opens = [_open(path, i, o) for i, o in enumerate(_tables(path, doc, "open"), 1)]
    ids = [o.id for o in opens]
    if len(set(ids)) != len(ids):
        raise ClaimsError(f"{path}: open id `{next(x for x in ids if ids.count(x) > 1)}` appears twice")
    corners = [_corner(path, i, c, {o.id: o for o in opens}) for i, c in enumerate(_tables(path, doc, "corner"), 1)]
    intro = str(doc.get("intro", ""))
    headline = doc.get("headline_grids", [])
    if not isinstance(headline, list) or not all(_text(g) for g in headline):
        raise ClaimsError(f"{path}: headline_grids must be a list of [[grid]] names")
    return Declared(path, seed, intro, claims, opens, corners, list(headline))


def _text(v) -> bool:
    return isinstance(v, str) and bool(v)


def _tables(path: Path, doc: Mapping, name: str) -> list:
    tables = doc.get(name, [])
    if not isinstance(tables, list) or not all(isinstance(t, Mapping) for t in tables):
        raise ClaimsError(f"{path}: `{name}` must be an array of tables ([[{name}]])")
    return tables


def _open(path: Path, i: int, o: Mapping) -> Open:
    missing = [k for k in OPEN_REQUIRED if not _text(o.get(k))]
    if missing:
        raise ClaimsError(f"{path}: open {i} ({o.get('id', 'no id')}) lacks {', '.join(missing)}")
    values, where = o.get("values"), o.get("where", {})
    if not isinstance(values, list) or len(values) < 2:
        raise ClaimsError(f"{path}: open `{o['id']}`: values must list at least two settings of {o['key']}")
    if not isinstance(where, Mapping):
        raise ClaimsError(f"{path}: open `{o['id']}`: where must be a table of configuration keys")
    unknown = set(o) - {"id", "what", "key", "values", "where", "source"}
    if unknown:
        raise ClaimsError(f"{path}: open `{o['id']}` has unknown key `{sorted(unknown)[0]}`")
    return Open(o["id"], o["what"], o["key"], list(values), o["source"], dict(where))


def _corner(path: Path, i: int, c: Mapping, opens: Mapping[str, Open]) -> Corner:
    if not _text(c.get("id")) or not isinstance(c.get("set"), Mapping) or not c["set"]:
        raise ClaimsError(f"{path}: corner {i} needs an id and a `set` table (open id = value)")
    for oid, v in c["set"].items():
        if oid not in opens:
            raise ClaimsError(f"{path}: corner `{c['id']}` sets `{oid}`, which is no [[open]] id")
        if v not in opens[oid].values:
            raise ClaimsError(f"{path}: corner `{c['id']}` sets {oid} = {v!r}, not one of its values")
    return Corner(c["id"], dict(c["set"]), str(c.get("why", "")))


def judge_function(module, study: str, c: Mapping):
    """The judge of claim `c`, a function of `module` (None for a claim declared `not_judged`)."""
    if _text(c.get("not_judged")):
        return None
    fn = getattr(module, c["judge"], None) if module is not None else None
    if not callable(fn):
        where = Path(getattr(module, "__file__", None) or "judges.py").name
        raise ClaimsError(f"study {study}: claim `{c['id']}` names judge `{c['judge']}`, not a function of {where}")
    return fn


def outcome(module, study: str, c: Mapping, df) -> Outcome:
    """What the judge of claim `c` measures on `df`."""
    fn = judge_function(module, study, c)
    if fn is None:
        return Outcome("—", None, c["not_judged"])
    try:
        out = fn(df, dict(c))
    except (KeyError, IndexError, ValueError, ZeroDivisionError) as e:
        # The results lack the cells this claim needs (a quick grid, failed cells): say so.
        out = Outcome("—", None, f"not measurable on these results ({type(e).__name__}: {e})")
    if not isinstance(out, Outcome):
        raise ClaimsError(f"study {study}: judge `{c['judge']}` returned {type(out).__name__}, not an Outcome")
    return out


def judge_one(module, study: str, seed: str, c: Mapping, df, grid: str = "full") -> Claim:
    """Judge one declared claim `c` of `study` with its judge, a function of `module`, on results
    of the `grid` ("full" or "quick") grid."""
    out = outcome(module, study, c, df)
    return Claim(
        seed=seed,
        study=study,
        id=c["id"],
        kind=c["kind"],
        figure=c["figure"],
        claim=c["claim"],
        seed_value=c["seed_value"],
        reading=c["reading"],
        measured=out.measured,
        verdict=VERDICTS[out.holds],
        cells=[str(x) for x in out.cells],
        why=out.why,
        grid=grid,
        quick=str(c.get("quick", "")) if grid == "quick" else "",
        source=str(c.get("source", "")),
    )


def robustness(verdict: str, settings: Sequence[tuple[str, Outcome]]) -> dict:
    """A claim's robustness from its verdict under the study's set-up and its outcome in each
    setting of the open values ((setting id, Outcome)): `verdict` is "holds robustly" (holds in
    every setting that judges it), "fails robustly" (in none), "depends" (`flips` names the
    settings whose verdict differs from the set-up's), "not judged" (the set-up cannot judge it)
    or "not run" (no setting judged it)."""
    rows = [{"setting": sid, "verdict": VERDICTS[o.holds], "measured": o.measured} for sid, o in settings]
    judged = [r["verdict"] for r in rows if r["verdict"] != VERDICTS[None]]
    flips = [r["setting"] for r in rows if r["verdict"] not in (verdict, VERDICTS[None])]
    if verdict == VERDICTS[None]:
        word, flips = "not judged", []
    elif not judged:
        word = "not run"
    elif flips:
        word = "depends"
    else:
        word = "holds robustly" if verdict == VERDICTS[True] else "fails robustly"
    return {"verdict": word, "flips": flips, "settings": rows}


def verdict_text(c: Claim) -> str:
    """The verdict as the ledger prints it: marked when it comes from the quick grid."""
    return c.verdict + (" (quick grid)" if c.grid == "quick" else "")


def claims_html(claims: Iterable[Claim], intro: str = "") -> str:
    """The report's claims table: figure, kind, claim (with the judge's reading), the seed's value,
    ssdlab's, verdict (with its robustness when `--robust` ran), why."""
    rows = []
    for c in claims:
        cells = f" <small>({len(c.cells)} cells)</small>" if c.cells else ""
        robust = c.robustness or {}
        depends = f" on {', '.join(robust['flips'])}" if robust.get("flips") else ""
        robust_text = f"<br><small>{robust['verdict']}{html.escape(depends)}</small>" if robust else ""
        why = "; ".join(x for x in (c.why, c.quick) if x)
        quick = " <small>(quick grid)</small>" if c.grid == "quick" else ""
        source = f"<br><small>{html.escape(c.source)}</small>" if c.source else ""
        rows.append(
            f"<tr><td>{html.escape(c.figure)}{source}</td><td>{c.kind}</td>"
            f"<td>{html.escape(c.claim)}<br><small>reading: {html.escape(c.reading)}</small></td>"
            f"<td>{html.escape(c.seed_value)}</td><td>{html.escape(c.measured)}{cells}</td>"
            f"<td><b>{c.verdict}</b>{quick}{robust_text}</td><td>{html.escape(why)}</td></tr>"
        )
    head = "".join(f"<th>{h}</th>" for h in ("figure", "kind", "claim", "seed", "ssdlab", "verdict", "why"))
    para = f"<p>{html.escape(intro)}</p>" if intro else ""
    return f"{para}<table><tr>{head}</tr>{''.join(rows)}</table>"


def _pairs(table: Mapping) -> str:
    return ", ".join(f"{k} = {v}" for k, v in table.items())


MARKS = {VERDICTS[True]: "✓", VERDICTS[False]: "✗", VERDICTS[None]: "–"}


def robustness_html(declared: Declared, claims: Sequence[Claim]) -> str:
    """The report's robustness section: the open values (range, cells, source), the corners, then
    every claim's verdict in each setting that ran (✓ holds, ✗ does not, – not judged)."""
    esc = html.escape
    opens = "".join(
        f"<tr><td>{esc(o.id)}</td><td>{esc(o.what)}</td><td><code>{esc(o.key)}</code></td>"
        f"<td>{esc(', '.join(map(str, o.values)))}</td>"
        f"<td>{esc(_pairs(o.where) or 'every cell')}</td><td>{esc(o.source)}</td></tr>"
        for o in declared.opens
    )
    parts = [
        "<p>Values the seed does not give, or that ssdlab reconstructs, each with its plausible range; "
        "<code>ssdlab reproduce NAME --robust</code> runs the grid once per value, then per corner.</p>",
        "<table><tr><th>open</th><th>what</th><th>key</th><th>range</th><th>cells</th><th>source</th></tr>"
        f"{opens}</table>",
    ]
    if declared.corners:
        rows = "".join(
            f"<tr><td>{esc(c.id)}</td><td>{esc(_pairs(c.set))}</td><td>{esc(c.why)}</td></tr>" for c in declared.corners
        )
        parts.append(f"<table><tr><th>corner</th><th>settings</th><th>why</th></tr>{rows}</table>")
    ran = list(dict.fromkeys(r["setting"] for c in claims if c.robustness for r in c.robustness["settings"]))
    if not ran:
        parts.append("<p>No setting has run on these results (<code>--robust</code> was not given).</p>")
        return "".join(parts)
    head = "".join(f"<th><small>{esc(x)}</small></th>" for x in ran)
    rows = []
    for c in claims:
        got = {r["setting"]: r["verdict"] for r in (c.robustness or {}).get("settings", [])}
        marks = "".join(f"<td>{MARKS.get(got.get(x, ''), '')}</td>" for x in ran)
        word = (c.robustness or {}).get("verdict", "not run")
        rows.append(
            f"<tr><td>{esc(c.id)}</td><td>{c.kind}</td><td>{MARKS[c.verdict]}</td>{marks}<td><b>{word}</b></td></tr>"
        )
    parts.append(
        f"<table><tr><th>claim</th><th>kind</th><th>set-up</th>{head}<th>robustness</th></tr>{''.join(rows)}</table>"
    )
    return "".join(parts)


#: The summary's count columns: the seed's claims by verdict, by robustness, then the extensions.
SUMMARY_COUNTS = ("claims", *VERDICTS.values(), *ROBUSTNESS, "extensions", "extensions hold")


def summary(claims: Sequence[Claim]) -> list[dict]:
    """Per seed, study and results folder: the seed's claims (kind "seed") by verdict and, where
    `--robust` ran, by robustness; the extensions (kind "extension") apart."""
    rows: dict[tuple, dict] = {}
    for c in claims:
        key = (c.seed, c.study, c.results)
        r = rows.setdefault(key, {"seed": c.seed, "study": c.study, "results": c.results, "grid": c.grid})
        for k in SUMMARY_COUNTS:
            r.setdefault(k, 0)
        if c.kind == "extension":
            r["extensions"] += 1
            r["extensions hold"] += c.verdict == VERDICTS[True]
            continue
        r["claims"] += 1
        r[c.verdict] += 1
        if c.robustness and c.robustness["verdict"] in ROBUSTNESS:
            r[c.robustness["verdict"]] += 1
    return list(rows.values())
