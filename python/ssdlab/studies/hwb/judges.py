"""The claim judges (claims.toml names them) of the hwb study (seed 003, P. Li's HWB).

Each judge computes the quantity its claim's text names from the results frame and returns an
Outcome; the band comes from the claim's own parameters (claims.toml says which words of the seed
they read). figures.py takes the helpers that pick and read cells from here."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import ssdlab
from ssdlab.claims import Outcome
from ssdlab.report import figures as F

HIT = "buffer.page_hit_ratio"  # write hits / host page writes: the seed's "write hit ratio"
ERASES = "nand.erases"
MEAN = "latency.write.mean_us"
OCC = "buffer.occupancy.mean"  # pages held, averaged over write requests
SEED_KINDS = ("lru", "lru-wsr", "bpac", "hwb")  # the seed's four policies
# The "reads cached" grid's LRU-WSR and CFLRU (cache_reads = true), told apart from the
# write-only ones the seed compares.
READS = {"lru-wsr": "lru-wsr+reads", "cflru": "cflru+reads"}
NAMES = {
    "lru": "LRU",
    "lru-wsr": "LRU-WSR",
    "bpac": "BPAC",
    "hwb": "HWB",
    "cflru": "CFLRU",
    "clc": "CLC",
    "ref": "REF",
    "integrated": "integrated",
    "lru-wsr+reads": "LRU-WSR (reads cached)",
    "cflru+reads": "CFLRU (reads cached)",
}
REF_BYTES = 32 << 20  # the seed reports at 32 MB


def short(path) -> str:
    """A trace's file name up to its first dot: linux-mysql, cloudPhysicsIO, ascii, ..."""
    return Path(str(path)).name.split(".")[0]


def _ok(df):
    """The cells that ran, with LRU-WSR and CFLRU caching reads relabelled (READS)."""
    ok = F.ok_cells(df)
    for kind, label in READS.items():
        col = f"buffer.{kind}.cache_reads"
        if col in ok.columns:
            reads = (ok["buffer.kind"] == kind) & (ok[col] == True)  # noqa: E712 (object column)
            ok.loc[reads, "buffer.kind"] = label
    return ok


def _paths(ok) -> list[str]:
    return list(dict.fromkeys(ok["workload.path"]))  # study order


def ref_bytes(ok) -> int:
    """The buffer size the claims are judged at: 32 MiB (the seed's 32 MB), else the nearest."""
    sizes = sorted({int(b) for b in ok["buffer.bytes"]})
    return min(sizes, key=lambda b: abs(b - REF_BYTES))


@lru_cache(maxsize=64)
def profile(path: str) -> dict | str:
    """`ssdlab.trace_profile` of a file, or the error it gave (a string)."""
    try:
        return ssdlab.trace_profile(path)
    except ssdlab.SsdlabError as e:
        return str(e)


def _isil_writes(pc) -> float:
    """Mean writes per page over the IS and IL pages together."""
    n = pc["is"]["pages"] + pc["il"]["pages"]
    return (pc["is"]["pages"] * pc["is"]["writes_mean"] + pc["il"]["pages"] * pc["il"]["writes_mean"]) / n if n else 0.0


def _skip(by, prof, erases: bool) -> str | None:
    """Why a trace cannot judge a claim at this buffer size (None: it can)."""
    cap = float(by["buffer.capacity_pages"].iloc[0])
    if isinstance(prof, dict) and prof["written_pages"] <= cap:
        return f"its {prof['written_pages']:,} written pages fit in the buffer's {cap:,.0f}"
    if erases and (by["gc.victims"] == 0).all():
        return "GC never ran"
    return None


def _fmt(metric, v) -> str:
    if metric == HIT:
        return f"{v:.1%}"
    if metric == ERASES:
        return f"{v:,.0f}"
    return f"{v:,.0f} µs"


def _band(prof, lo_pages: float, hi_pages: float) -> tuple[float, int, int, bool]:
    """Share of page writes that are re-writes at distances in [lo_pages, hi_pages), from the
    profile's power-of-two buckets: those lying wholly inside (exact: True) or, when none does,
    those overlapping the range (an upper bound: False); with the buckets' range."""
    buckets = [(u // 2 if u > 1 else 0, u, c) for u, c in prof["reuse_distance"]]
    exact = True
    inside = [(lo, up, c) for lo, up, c in buckets if lo >= lo_pages and up <= hi_pages]
    if not inside:
        exact = False
        inside = [(lo, up, c) for lo, up, c in buckets if up > lo_pages and lo < hi_pages]
    if not inside or not prof["page_writes"]:
        return 0.0, 0, 0, exact
    return sum(c for _, _, c in inside) / prof["page_writes"], inside[0][0], inside[-1][1], exact


def _why_hit(name, by, prof, a, b) -> str:
    """Where pages wait for their first re-write in `a` and `b` (HWB: its cold region; BPAC: its
    block region; LRU, LRU-WSR: the whole buffer) and the re-writes at distances in between."""
    cap = float(by.loc[a, "buffer.capacity_pages"])

    def waiting(k):
        if k == "hwb":
            return float(by.loc[k, "buffer.hwb.cold_size"]), "cold region"
        if k == "bpac":
            return cap - float(by.loc[k, "buffer.bpac.page_target"]), "block region"
        return cap, "whole buffer"

    (wa, ra), (wb, rb) = waiting(a), waiting(b)
    text = (
        f"{name}: new pages wait for their first re-write in {NAMES[a]}'s {ra} ({wa:,.0f} pages at the end) "
        f"and {NAMES[b]}'s {rb} ({wb:,.0f} of {cap:,.0f})"
    )
    if isinstance(prof, dict) and wb > wa:
        share, lo, hi, exact = _band(prof, wa, wb)
        if hi:
            text += (
                f"; {share:.1%} of its page writes are re-writes at distances of {lo:,}–{hi - 1:,} pages, between "
                "the two"
                if exact
                else f"; at most {share:.1%} of its page writes are re-writes at distances between the two "
                f"(the profile's bucket {lo:,}–{hi - 1:,} pages holds both sizes)"
            )
    text += f"; {NAMES[a]} sent {_units(by, a)}, {NAMES[b]} {_units(by, b)}"
    text += f"; mean occupancy {_vs(by, a, b, OCC)} pages"
    return text


def _per(by, k, num, den) -> float:
    d = float(by.loc[k, den])
    return float(by.loc[k, num]) / d if d else float("nan")


def _units(by, k) -> str:
    """How a policy sent its pages to flash: flush units and their mean size."""
    return (
        f"{by.loc[k, 'buffer.flushes']:,.0f} flush units of "
        f"{_per(by, k, 'buffer.flushed_pages', 'buffer.flushes'):.1f} pages"
    )


def _vs(by, a, b, key, fmt=",.0f", unit="") -> str:
    return f"{format(float(by.loc[a, key]), fmt)}{unit} vs {format(float(by.loc[b, key]), fmt)}{unit}"


def _why_counts(name, by, a, b, latency: bool) -> str:
    """Erases (and response times) decomposed, `a` against `b`: pages the buffer sent to flash and
    in what units, GC copies; for response times also the queue and the reads."""
    text = (
        f"{name}, {NAMES[a]} vs {NAMES[b]}: host page programs {_vs(by, a, b, 'nand.programs.host')} in "
        f"{_units(by, a)} vs {_units(by, b)}"
    )
    if (by.loc[[a, b], "gc.victims"] > 0).any():
        text += (
            f"; GC copies {_vs(by, a, b, 'gc.moved_pages')} ({_per(by, a, 'gc.moved_pages', 'gc.victims'):.1f} vs "
            f"{_per(by, b, 'gc.moved_pages', 'gc.victims'):.1f} valid pages per victim), erases {_vs(by, a, b, ERASES)}"
        )
    else:
        text += "; no GC"
    if latency:
        text += (
            f"; median write response {_vs(by, a, b, 'latency.write.p50_us', unit=' µs')}, mean read response "
            f"{_vs(by, a, b, 'latency.read.mean_us', unit=' µs')}, requests in the device "
            f"{_vs(by, a, b, 'queue.mean_outstanding', ',.1f')} on average"
        )
        for k in (a, b):
            if k in READS.values():
                text += (
                    f"; {NAMES[k]} dropped {by.loc[k, 'buffer.clean_evictions']:,.0f} clean (read-cached) pages "
                    "without a write, and a read miss waits for the flush of a dirty victim"
                )
    return text


def _at_ref(df):
    """The cells at the claims' buffer size (32 MiB, else the nearest), and that size in bytes."""
    ok = _ok(df)
    if not len(ok):
        raise ValueError("no cell ran")
    ref = ref_bytes(ok)
    return ok[ok["buffer.bytes"].astype(int) == ref], ref


ON = {"every": "every trace", "most": "more than half of the traces"}


def _better(metric, va, vb) -> bool:
    return va > vb if metric == HIT else va < vb


def _judged(at, metric, kinds):
    """[(trace name, cells by policy)] of the traces that can judge `metric` at this buffer size,
    and the reasons the others cannot."""
    out, skipped = [], []
    for path in _paths(at):
        by = at[at["workload.path"] == path].set_index("buffer.kind")
        reason = _skip(by, profile(str(path)), metric == ERASES)
        if reason:
            skipped.append(f"{short(path)}: {reason}")
        elif set(kinds) <= set(by.index):
            out.append((path, by))
    return out, skipped


def beats(df, claim) -> Outcome:
    """Policy `a` better than each of `b` on `metric` (hit ratio: higher; erases and response
    times: lower) at the claims' buffer size, trace by trace, over the traces that can judge it
    (not one whose written pages fit in the buffer, nor for erases one where GC never ran). `on`:
    "every" (the seed's "under all workloads": every such trace) or "most" (more than half)."""
    at, ref = _at_ref(df)
    metric, a, bs, on = claim["metric"], claim["a"], list(claim["b"]), claim["on"]
    if on not in ON:
        raise ValueError(f"claim {claim['id']}: on = {on!r}, expected one of {', '.join(ON)}")
    if not ({a, *bs} <= set(at["buffer.kind"])):
        return Outcome("—", None, f"{', '.join(NAMES[k] for k in (a, *bs))} are not all in this grid")
    traces, skipped = _judged(at, metric, (a, *bs))
    parts, whys, cells, judged = [], [], [], []
    for path, by in traces:
        name = short(path)
        va = float(by.loc[a, metric])
        vb = [float(by.loc[b, metric]) for b in bs]
        good = all(_better(metric, va, v) for v in vb)
        judged.append(good)
        cells += [str(by.loc[k, "cell"]) for k in (a, *bs)]
        parts.append(
            f"{name} {_fmt(metric, va)} vs " + " / ".join(_fmt(metric, v) for v in vb) + (" ✓" if good else " ✗")
        )
        for b, v in zip(bs, vb, strict=True):
            if not _better(metric, va, v):
                whys.append(
                    _why_hit(name, by, profile(str(path)), a, b)
                    if metric == HIT
                    else _why_counts(name, by, a, b, metric == MEAN)
                )
    n, k = len(judged), sum(judged)
    who = f"{NAMES[a]} vs " + " / ".join(NAMES[b] for b in bs)
    measured = "; ".join([f"{ref >> 20} MiB, {who}: " + ", ".join(parts), f"{k} of {n} traces (needed: {ON[on]})"])
    if n == 0:
        return Outcome(measured, None, "no trace can judge it: " + "; ".join(skipped), cells)
    why = "; ".join(whys + [f"not judged: {x}" for x in skipped])
    return Outcome(measured, k == n if on == "every" else k > n / 2, why, cells)


def _gain(metric, va, vb) -> float:
    """How much better `va` is than `vb`: the relative rise of a hit ratio, the relative cut of a
    count or a time."""
    if metric == HIT:
        return va / vb - 1 if vb else float("inf") if va else 0.0
    return 1 - va / vb if vb else 0.0


def gain(df, claim) -> Outcome:
    """The seed's best case of `a` against `b` on `metric` ("up to X": `best`) at the claims'
    buffer size: holds when the best trace's gain reaches `fraction` of `best`, over the traces
    that can judge it (as `beats`)."""
    at, ref = _at_ref(df)
    metric, a, b = claim["metric"], claim["a"], claim["b"]
    need = float(claim["fraction"]) * float(claim["best"])
    if not ({a, b} <= set(at["buffer.kind"])):
        return Outcome("—", None, f"{NAMES[a]} and {NAMES[b]} are not both in this grid")
    traces, skipped = _judged(at, metric, (a, b))
    if not traces:
        return Outcome("—", None, "no trace can judge it: " + "; ".join(skipped))
    gains = [(short(p), _gain(metric, float(by.loc[a, metric]), float(by.loc[b, metric])), by) for p, by in traces]
    best = max(gains, key=lambda g: g[1])
    worst = min(gains, key=lambda g: g[1])
    measured = (
        f"{ref >> 20} MiB, {NAMES[a]} against {NAMES[b]}: "
        + ", ".join(f"{n} {g:+.0%}" for n, g, _ in gains)
        + f"; best {best[0]} {best[1]:+.0%} (needed: at least {need:+.0%}), worst {worst[0]} {worst[1]:+.0%}"
    )
    holds = bool(best[1] >= need)
    by = best[2]
    why = "" if holds else _why_hit(best[0], by, profile(str(by["workload.path"].iloc[0])), a, b)
    cells = [str(by.loc[k, "cell"]) for _, _, by in gains for k in (a, b)]
    return Outcome(measured, holds, why, cells)


def hot_pages_order(df, claim) -> Outcome:
    """Seed 003 on Fig. 5: the workload with the fewest hot (FS and FL) pages has the lowest mean
    write hit ratio of the seed's four policies, the one with the most the highest; over the
    traces that can judge hit ratios, at least three."""
    at, ref = _at_ref(df)
    kinds = [k for k in SEED_KINDS if k in set(at["buffer.kind"])]
    traces, skipped = _judged(at, HIT, kinds)
    rows = []
    for path, by in traces:
        p = profile(str(path))
        if isinstance(p, dict):
            pc = p["page_classes"]
            rows.append((short(path), pc["fs"]["share"] + pc["fl"]["share"], float(by.loc[kinds, HIT].mean()), by))
    measured = (
        f"{ref >> 20} MiB, FS + FL share of written pages / mean hit ratio of {', '.join(NAMES[k] for k in kinds)}: "
    )
    measured += ", ".join(f"{n} {s:.1%} / {h:.1%}" for n, s, h, _ in rows)
    if len(rows) < 3:
        return Outcome(measured, None, f"{len(rows)} traces can judge it; an order of fewest to most needs three")
    few, most = min(rows, key=lambda r: r[1]), max(rows, key=lambda r: r[1])
    low, high = min(rows, key=lambda r: r[2]), max(rows, key=lambda r: r[2])
    holds = few[0] == low[0] and most[0] == high[0]
    measured += f"; fewest hot pages {few[0]}, most {most[0]}; lowest hit ratio {low[0]}, highest {high[0]}"
    why = ""
    if not holds:
        # What a hit ratio follows: the page writes that are re-writes within the buffer's reach.
        reach = []
        for n, _, _, by in rows:
            p = profile(str(by["workload.path"].iloc[0]))
            cap = float(by["buffer.capacity_pages"].iloc[0])
            near = sum(c for upper, c in p["reuse_distance"] if upper <= cap)
            reach.append(f"{n} {near / p['page_writes']:.1%}" if p["page_writes"] else f"{n} —")
        why = (
            "the share of hot pages is not the share of writes within the buffer's reach: re-writes at a re-use "
            "distance below the buffer's pages, of all page writes: " + ", ".join(reach)
        )
    cells = [str(by.loc[k, "cell"]) for *_, by in rows for k in kinds]
    return Outcome(measured, holds, why, cells)


def frequency_factors(df, claim) -> Outcome:
    """Seed 003 Fig 1(b): FS pages updated about 10^4 times, FL pages 10^2 times as often as IS / IL
    pages (from the trace profiles of the grid's traces); within an order of magnitude of the seed's
    factors counts, on more than half of the traces that have FS and FL pages."""
    at, _ = _at_ref(df)
    judged, parts, whys = [], [], []
    for path in _paths(at):
        p = profile(str(path))
        if not isinstance(p, dict):
            continue
        pc = p["page_classes"]
        base = _isil_writes(pc)
        if not (base and pc["fs"]["pages"] and pc["fl"]["pages"]):
            continue
        fs, fl = pc["fs"]["writes_mean"] / base, pc["fl"]["writes_mean"] / base
        good = fs >= 1e3 and fl >= 1e1
        judged.append(good)
        parts.append(f"{short(path)} FS {fs:.1f}×, FL {fl:.1f}×" + (" ✓" if good else " ✗"))
        if not good:
            why = (
                f"{short(path)}: FS pages are written {pc['fs']['writes_mean']:.1f} times on average, FL pages "
                f"{pc['fl']['writes_mean']:.1f}, IS / IL pages {base:.2f} (every written page at least once)"
            )
            top = [k for k, v in p["sector_write_counts"].items() if v and k != "0"]
            if top and top[-1] != ">30000":
                most = top[-1].split("-")[-1]
                why += f"; no 512-byte sector is written more than {int(most):,} times"
                secs = float(at[at["workload.path"] == path]["time.simulated_us"].max()) / 1e6
                if secs:
                    why += f" in the trace's {secs / 3600:.2f} h"
            whys.append(why)
    n, k = len(judged), sum(judged)
    measured = "FS and FL mean writes per page over the IS and IL pages': " + ", ".join(parts)
    measured += f"; {k} of {n} traces at least 10³× and 10×"
    if n == 0:
        return Outcome(measured, None, "no trace of the grid has both FS and FL pages")
    return Outcome(measured, k > n / 2, "; ".join(whys))
