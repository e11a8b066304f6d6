"""The real-device study: a calibration (ssdlab.calibrate) whose trials are the cells, then its
report — best error against trial, the fitted parameters within their physical ranges, the
in-sample errors, measured and simulated CDFs."""

from __future__ import annotations

import html
import json
import math
import time
from pathlib import Path

import numpy as np
from ssdlab import calibrate as C
from ssdlab.api import Config
from ssdlab.calibrate import measure as M
from ssdlab.report import figures as F
from ssdlab.report.html import plain_table, text_row
from ssdlab.store import ResultStore
from ssdlab.sweep import SweepSummary, dump_toml


def _base(config):
    """The calibration's starting configuration: a file as given, or a table of keys set on the
    package's base (a study states only what it changes)."""
    if not isinstance(config, dict):
        return config
    cfg = Config.load(C.DEFAULT_BASE)
    for key, value in _flat_keys(config):
        cfg = cfg.set(key, value)
    return cfg


def _flat_keys(table, prefix=""):
    for k, v in table.items():
        if isinstance(v, dict):
            yield from _flat_keys(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", v


def run(spec, out_dir, executor="local", address=None, workers=None, progress=True) -> SweepSummary:
    """Calibrate as [calibrate] says (trace, format, trials, seed; optional config and space) and
    store every trial as a cell of `out_dir`. A calibration does not resume: the cells of an
    earlier run there are replaced."""
    t0 = time.monotonic()
    c = spec["calibrate"]
    cal = C.calibrate(
        c["trace"],
        format=c.get("format"),
        config=_base(c.get("config")),
        space=c.get("space"),
        trials=int(c.get("trials", C.DEFAULT_TRIALS)),
        seed=int(c.get("seed", 0)),
        workers=workers,
        executor=executor,
        address=address,
        progress=progress,
    )
    store = ResultStore(out_dir, create=True)
    store.clean_temps()
    for old in store.files():
        old.unlink()
    store.write_study(dump_toml(spec))
    records = cal.records()
    for rec in records:
        store.append(rec)
    (Path(out_dir) / "profile.toml").write_text(cal.profile_text())
    failed = [r for r in records if r["status"] != "ok"]
    return SweepSummary(
        study=str(spec["study"]["name"]),
        out_dir=str(out_dir),
        executor=executor,
        workers=workers,
        total=len(records),
        skipped=0,
        duplicates=0,
        ran=len(records),
        ok=len(records) - len(failed),
        failed=len(failed),
        wall_s=time.monotonic() - t0,
        errors=[(r["cell"], r["axes"], r["error"]) for r in failed[:20]],
    )


# -- reading the cells back --------------------------------------------------------------------


def _ok(df):
    return df[(df["status"] == "ok") & df["calibrate.error"].notna()].sort_values("cell")


def _best(df):
    ok = _ok(df)
    return ok.loc[ok["calibrate.error"].idxmin()] if len(ok) else None


def _space(df):
    """The parameters the trials fitted, with their ranges in the package's default space (NaN for
    a key it does not have), and its targets."""
    keys = list(json.loads(df["axes"].iloc[0]))
    sp = C.load_space()
    known = {p.key: p for p in sp.params}
    return [known.get(k, C.Param(k, math.nan, math.nan)) for k in keys], sp.targets


def _validation(row):
    """A Validation of the best trial: the trace's measured latencies (None when the trace is no
    longer there) against the trial's histograms."""
    trace, fmt = row["workload.path"], row["workload.format"]
    try:
        meas = M.measured(trace, fmt)
    except (OSError, C.CalibrationError):
        return None
    hist = json.loads(row["histograms"])
    return C.Validation(trace, fmt, {}, C.load_space().targets, meas, M.simulated(hist))


# -- figures -------------------------------------------------------------------------------------


def figures(df):
    best = _best(df)
    if best is None:
        return []
    out = [
        (
            f"Calibration: each trial's error (mean |relative error| of the targets) and the best so far; "
            f"best {best['calibrate.error']:.1%} at trial {int(best['cell'])} of {len(df)}",
            _progress(df),
        ),
        (
            "Fitted parameters (diamonds) within their physical ranges (bars; log-scale ranges drawn on a log "
            "scale): a value at an end of its range says the range, or the model, limits the fit",
            _ranges(df, best),
        ),
    ]
    v = _validation(best)
    if v is not None:
        out.append(
            (
                "Measured (the trace) and simulated (the best trial) latency CDFs, reads and writes; "
                "KS distance = largest vertical gap",
                v.plot(),
            )
        )
    return out


def _progress(df):
    rows = df.sort_values("cell")
    return F.calibration_progress(rows["cell"], rows["calibrate.error"], rows["calibrate.best_error"])


def _ranges(df, best):
    params, _ = _space(df)
    with F.style():
        fig = F._new_figure(F.PANEL[0] * 1.6, 0.45 + 0.32 * len(params))
        ax = fig.add_subplot()
        for i, p in enumerate(params):
            v = p.factor(best)
            if math.isnan(p.low) or math.isnan(v):
                continue
            lo, hi, x = (np.log10(max(p.low, 1e-12)), np.log10(p.high), np.log10(v)) if p.log else (p.low, p.high, v)
            pos = (x - lo) / (hi - lo) if hi > lo else 0.5
            ax.barh(i, 1.0, left=0.0, height=0.5, color="#e4e4e4", zorder=1)
            ax.plot([pos], [i], marker="D", color=F.PALETTE[1], zorder=3)
            ax.text(-0.04, i, f"{_g(p.low)}", ha="right", va="center", fontsize=6)
            ax.text(1.04, i, _high(p), ha="left", va="center", fontsize=6)
            # the fitted value over its diamond, in the gap above the bar (the y axis runs down)
            ax.text(pos, i - 0.3, _g(v), ha="center", va="bottom", fontsize=6, color=F.PALETTE[1])
        ax.set_yticks(range(len(params)), [p.key for p in params])
        ax.set_xlim(-0.15, 1.15)
        ax.set_ylim(len(params) - 0.5, -0.8)
        ax.set_xticks([])
        ax.grid(False)
        for side in ("left", "bottom"):
            ax.spines[side].set_visible(False)
        F._finish(fig, ax)
        ax.tick_params(axis="y", length=0)
        return fig


def _high(p) -> str:
    """A parameter's upper bound as shown: `2 × nand.read_us` for a relative one."""
    return _g(p.high) + (f" × {p.relative_to}" if p.relative_to else "")


def _g(v) -> str:
    return f"{int(v):,}" if float(v).is_integer() else f"{v:.4g}"


# -- sections ------------------------------------------------------------------------------------


def _table(header, rows) -> str:
    return plain_table(header, map(text_row, rows))


def sections(df):
    best = _best(df)
    if best is None:
        return [("Calibration", "<p>No trial ran.</p>")]
    params, targets = _space(df)
    failed = int((df["status"] != "ok").sum())
    calib = (
        f"<p>{len(df)} trials ({failed} failed), optimiser seed {html.escape(str(best['key']).split('-')[0])}; "
        f"best trial {int(best['cell'])}: "
        f"error {best['calibrate.error']:.2%} over {html.escape(', '.join(targets))}. Trace "
        f"<code>{html.escape(str(best['workload.path']))}</code> (format {html.escape(str(best['workload.format']))}); "
        "the fitted configuration is <code>profile.toml</code> beside this report.</p>"
    )
    prow = [
        [p.key, _g(float(best[p.key])), _g(p.low), _high(p), "log" if p.log else "linear", p.source] for p in params
    ]
    rows = []
    for op in M.OPS:
        for s in M.STAT_NAMES:
            name = s.replace(".", "") + ("" if s == "count" else "_us")
            m, pr = best[f"measured.{op}.{name}"], best[f"predicted.{op}.{name}"]
            err = M.rel_error(pr, m)
            target = "target" if f"{op}.{s}" in targets else ""
            rows.append([op, s, _num(m, s), _num(pr, s), "-" if math.isnan(err) else f"{err:+.1%}", target])
    v = _validation(best)
    ks = "" if v is None else "<p>KS distance: " + ", ".join(f"{k} {x:.3f}" for k, x in v.ks().items()) + "</p>"
    return [
        ("Calibration", calib),
        (
            "Fitted parameters and their physical ranges",
            _table(["key", "fitted", "low", "high", "scale", "source"], prow),
        ),
        (
            "In-sample error",
            _table(["op", "statistic", "measured", "predicted", "error", ""], rows)
            + f"<p>Objective: {best['calibrate.error']:.2%}.</p>"
            + ks,
        ),
    ]


def _num(v, stat: str) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:,.0f}" if stat == "count" else f"{v:,.1f} µs"
