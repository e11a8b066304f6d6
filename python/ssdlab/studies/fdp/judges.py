"""The claim judges (claims.toml names them) of the fdp study: published FDP results (CacheLib,
LMCache, WARP) and ssdlab's checks beyond them.

Each judge picks its cells by their configuration and returns an Outcome with the numbers it
compared; the bands are the claims' own parameters. figures.py takes the cell helpers from here."""

from __future__ import annotations

import json

import numpy as np
from ssdlab.claims import Outcome
from ssdlab.report import figures as F

READ_P99 = "latency.read.p99_us"
READ_P999 = "latency.read.p999_us"
READ_MEAN = "latency.read.mean_us"


def fdp_on(row) -> bool:
    """Whether FDP ran (the section is left out of a configuration where it is at its defaults)."""
    v = row.get("fdp.enabled")
    return isinstance(v, bool | np.bool_) and bool(v)


def num(row, key: str, default: float) -> float:
    """A numeric configuration value of a cell, `default` where its section was left out."""
    v = row.get(key)
    try:
        return default if v is None or v != v else float(v)
    except (TypeError, ValueError):
        return default


def _text(row, key: str, default: str) -> str:
    v = row.get(key)
    return v if isinstance(v, str) and v else default


def setup(row) -> str:
    """What a cell runs, as the figures group it."""
    if _text(row, "run.mode", "counts") == "timed":
        return "read tails"
    if _text(row, "workload.kind", "") == "fio":
        return "adversarial"
    if _text(row, "placement.kind", "none") == "oracle":
        return "handles"
    return "cachelib"


def identifiers(row) -> str:
    """Where a cell's placement identifiers come from."""
    if not fdp_on(row):
        return "FDP off"
    p = _text(row, "placement.kind", "none")
    if p != "none":
        return str(p)
    if _text(row, "workload.kind", "") != "cachelib":
        return "the workload's"
    loc, soc = num(row, "workload.cachelib.loc_placement_id", 1), num(row, "workload.cachelib.soc_placement_id", 0)
    return "CacheLib's engines" if loc != soc else "one identifier"


def _jobs(row) -> list:
    """A fio cell's jobs (stored as a list, or as its JSON text)."""
    j = row.get("workload.fio.jobs")
    if isinstance(j, str):
        j = json.loads(j)
    return [] if j is None or (isinstance(j, float) and j != j) else list(j)


def jumper(row) -> str:
    """The offset distribution of WARP's overwriting stream (the second job), "" elsewhere."""
    jobs = _jobs(row)
    return str(jobs[1].get("random_distribution", "random")) if len(jobs) > 1 else ""


def cells(df):
    return F.ok_cells(
        df,
        setup=setup,
        jumper=jumper,
        fdp=lambda r: "FDP on" if fdp_on(r) else "FDP off",
        handle_type=lambda r: _text(r, "fdp.handle_type", "initially-isolated"),
        ru_mib=lambda r: (int(num(r, "fdp.ru_bytes", 0)) >> 20) or 64,
        source=identifiers,
    )


def with_handles(rows, n: int, off_too: bool = False):
    """The rows whose FDP device has `n` handles (and, with `off_too`, the rows without FDP)."""
    keep = [(off_too and not fdp_on(r)) or int(num(r, "fdp.handles", 8)) == n for _, r in rows.iterrows()]
    return rows[keep] if len(rows) else rows


def cachelib_pair(ok, utilisation: float, precondition: str = "none", handles: int = 8):
    """The CacheLib cells (each engine its identifier) at `utilisation`: (FDP off, FDP on with
    `handles` handles), each None where it did not run."""
    rows = ok[(ok["setup"] == "cachelib") & (ok["workload.cachelib.utilisation"] == utilisation)]
    rows = rows[(rows["run.precondition"] == precondition) & (rows["source"].isin(["FDP off", "CacheLib's engines"]))]
    rows = with_handles(rows, handles, off_too=True)
    off, on = rows[rows["fdp"] == "FDP off"], rows[rows["fdp"] == "FDP on"]
    return (off.iloc[0] if len(off) else None), (on.iloc[0] if len(on) else None)


def fdp_cuts_waf(df, claim) -> Outcome:
    ok = cells(df)
    off, on = cachelib_pair(ok, claim["utilisation"])
    if off is None or on is None:
        return Outcome("the cells did not run", None, "no CacheLib cells at this utilisation")
    holds = on["waf"] <= claim["on_max"] and off["waf"] >= claim["off_min"]
    why = "" if holds else f"bands: FDP on ≤ {claim['on_max']}, off ≥ {claim['off_min']}"
    return Outcome(f"WAF {off['waf']:.2f} without FDP, {on['waf']:.2f} with", holds, why, [off["cell"], on["cell"]])


def fdp_cuts_waf_both(df, claim) -> Outcome:
    ok = cells(df)
    parts, held, used = [], [], []
    for pre, label in (("none", "formatted"), ("fill", "filled first")):
        off, on = cachelib_pair(ok, claim["utilisation"], pre)
        if off is None or on is None:
            continue
        parts.append(f"{label}: {off['waf']:.2f} → {on['waf']:.2f}")
        held.append(on["waf"] <= claim["on_max"] and off["waf"] >= on["waf"] - 1e-9)
        used += [off["cell"], on["cell"]]
    if not parts:
        return Outcome("the cells did not run", None, "no CacheLib cells at this utilisation")
    why = "" if all(held) else "FDP on above its band, or FDP off below FDP on"
    if all(held):
        why = "the size of the cut depends on whether the unused share held data (the source does not say)"
    return Outcome("WAF without → with FDP, " + "; ".join(parts), all(held), why, used)


def isolation_and_ru(df, claim) -> Outcome:
    ok = cells(df)
    rows = ok[(ok["setup"] == "cachelib") & (ok["workload.cachelib.utilisation"] == 0.89) & (ok["fdp"] == "FDP on")]
    rows = with_handles(rows, 2)
    off, _ = cachelib_pair(ok, 0.89)
    if not len(rows) or off is None:
        return Outcome("the cells did not run", None, "no cells at 89% utilisation")
    waf = {(r["handle_type"], r["ru_mib"]): r["waf"] for _, r in rows.iterrows()}
    sizes = sorted({ru for _, ru in waf})
    ii = [waf.get(("initially-isolated", s)) for s in sizes]
    pi = [waf.get(("persistently-isolated", s)) for s in sizes]
    if None in ii or None in pi or len(sizes) < 2:
        return Outcome("a handle type or RU size is missing", None, "incomplete grid")
    worst = ii[-1]
    floor = worst >= claim["floor"]
    lower = min(pi[-1], ii[0]) <= worst - claim["gap"]
    below = max(ii + pi) < off["waf"]
    table = ", ".join(f"{s} MiB: {a:.3f} / {b:.3f}" for s, a, b in zip(sizes, ii, pi, strict=True))
    measured = f"FDP off {off['waf']:.2f}; FDP on, initially / persistently isolated, {table}"
    why = []
    if not floor:
        why.append(
            f"FDP on reaches {worst:.3f} even with initially isolated handles and {sizes[-1]} MiB RUs: each engine's "
            "units die whole, and this GC policy finds them; the verdict turns on the drive's unpublished GC policy "
            "(open value gc-policy: FIFO keeps FDP's WAF high); LMCache's workload is not CacheLib's"
        )
    elif not lower:
        why.append("persistently isolated handles or small RUs do not lower it")
    if not below:
        why.append("FDP on is not below FDP off")
    return Outcome(measured, floor and lower and below, "; ".join(why), list(rows["cell"]) + [off["cell"]])


def adversarial_stays_high(df, claim) -> Outcome:
    ok = cells(df)
    rows = ok[ok["setup"] == "adversarial"]
    if not len(rows):
        return Outcome("the cells did not run", None, "no adversarial cells")
    parts, on, judged = [], [], []
    for dist, d in rows.groupby("jumper", sort=True):
        waf = []
        for _, r in d.sort_values(["fdp", "handle_type"]).iterrows():
            label = "off" if r["fdp"] == "FDP off" else r["handle_type"].split("-")[0]
            waf.append(f"{label} {r['waf']:.2f}")
            if dist == claim["distribution"] and r["fdp"] == "FDP on":
                on.append(r["waf"])
        if dist == claim["distribution"]:
            judged += list(d["cell"])
        parts.append(f"{dist}: " + ", ".join(waf))
    if not on:
        return Outcome("; ".join(parts), None, f"no FDP cell with the overwrites drawn {claim['distribution']}")
    holds = min(on) >= claim["on_min"]
    why = (
        ""
        if holds
        else f"FDP on brings WAF below {claim['on_min']} with the overwrites drawn {claim['distribution']}: "
        "the verdict turns on the drive's unpublished spare area and GC policy and on the streams' shares"
    )
    measured = "WAF by the overwrites' distribution (FDP off, initially, persistently isolated): " + "; ".join(parts)
    return Outcome(measured, holds, why, judged)


def explicit_best(df, claim) -> Outcome:
    ok = cells(df)
    rows = ok[(ok["setup"] == "cachelib") & (ok["workload.cachelib.utilisation"] == 1.0)]
    rows = rows[(rows["run.precondition"] == "none") & (rows["fdp"] == "FDP on")]
    waf = {s: g["waf"].iloc[0] for s, g in rows.groupby("source")}
    if "CacheLib's engines" not in waf or "one identifier" not in waf:
        return Outcome("the cells did not run", None, "no identifier cells")
    ours = waf["CacheLib's engines"]
    others = {k: v for k, v in waf.items() if k != "CacheLib's engines"}
    holds = all(ours <= v + 1e-9 for v in others.values()) and ours < waf["one identifier"]
    measured = f"CacheLib's engines {ours:.3f}; " + ", ".join(f"{k} {v:.3f}" for k, v in sorted(others.items()))
    return Outcome(measured, holds, "" if holds else "a classifier or one identifier does as well", list(rows["cell"]))


def handles_help(df, claim) -> Outcome:
    ok = cells(df)
    rows = ok[ok["setup"] == "handles"]
    if len(rows) < 2:
        return Outcome("the cells did not run", None, "no oracle cells")
    by = {int(num(r, "fdp.handles", 8)): r["waf"] for _, r in rows.iterrows()}
    first = by[min(by)]
    holds = all(w <= first + 0.01 for w in by.values())
    measured = ", ".join(f"{h} handles {w:.3f}" for h, w in sorted(by.items()))
    return Outcome(measured, holds, "" if holds else "more handles raised WAF", list(rows["cell"]))


def read_tail(df, claim) -> Outcome:
    ok = cells(df)
    rows = ok[ok["setup"] == "read tails"]
    tail = {(r["fdp"], r["nand.suspend"]): r for _, r in rows.iterrows()}
    need = [("FDP off", "none"), ("FDP on", "none"), ("FDP off", "program-erase")]
    if any(k not in tail for k in need):
        return Outcome("the cells did not run", None, "no timed cells")
    p999 = {k: r[READ_P999] for k, r in tail.items()}
    holds = p999[need[1]] < p999[need[0]] and p999[need[2]] < p999[need[0]]
    measured = "; ".join(
        f"{f}, suspend {s}: p99.9 {r[READ_P999] / 1000:,.1f} ms, p99 {r[READ_P99]:,.0f} µs, mean {r[READ_MEAN]:,.0f} µs"
        for (f, s), r in sorted(tail.items())
    )
    why = "" if holds else "separation or suspend did not shorten the tail"
    if holds and abs(tail[need[1]][READ_P99] - tail[need[0]][READ_P99]) < 1e-6 * tail[need[0]][READ_P99] + 1:
        why = "GC reaches fewer than 1% of the reads: p99 is a program's wait either way, p99.9 is GC's"
    return Outcome(measured, holds, why, list(rows["cell"]))
