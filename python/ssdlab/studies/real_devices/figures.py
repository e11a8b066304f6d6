"""The real-devices study: per device, a calibration on the fio points not held out
(ssdlab.fio.fit), the profile's predictions of every point (in-sample and held out), and the
error with each mechanism off; with `calibrate.refit_all`, a second calibration on every point
gives the shipped profile. Cells: one per calibration trial (`kind = trial`, `fit = split` or
`all`) and one per point and mechanism set (`kind = point`; the refitted profile's points have
`mechanisms = refit`)."""

from __future__ import annotations

import copy
import dataclasses
import fnmatch
import html
import json
import math
import time
from pathlib import Path

from ssdlab.fio import fit
from ssdlab.fio.output import parse_size
from ssdlab.fio.profile import Host, Profile
from ssdlab.report import figures as F
from ssdlab.report.html import plain_table, text_row
from ssdlab.store import ResultStore
from ssdlab.sweep import SweepSummary, dump_toml
from ssdlab.sweep.task import make_record


def _without_host(p: Profile) -> Profile:
    hosts = {n: Host(n, h.engine, 0.0, 0.0) for n, h in p.hosts.items()}
    return dataclasses.replace(p, hosts=hosts)


def _config_change(change):
    def apply(p: Profile) -> Profile:
        cfg = copy.deepcopy(p.config)
        change(cfg)
        return dataclasses.replace(p, config=cfg)

    return apply


def _one_page_type(cfg: dict) -> None:
    nand = cfg.setdefault("nand", {})
    for op in ("read", "program"):
        times = [nand.pop(f"{op}_{t}_us", None) for t in ("csb", "msb")]
        times = [nand.get(f"{op}_us", 0.0), *[t for t in times if t is not None]]
        nand[f"{op}_us"] = sum(times) / len(times)
    nand["cell"] = "slc"


def _no_controller(cfg: dict) -> None:
    cfg["controller"] = {"cores": 0}


def _no_queue_affinity(cfg: dict) -> None:
    cfg.get("controller", {}).pop("queue_affinity", None)


def _no_cache(cfg: dict) -> None:
    cfg["buffer"] = {"kind": "none"}


def _no_readahead(cfg: dict) -> None:
    cfg.pop("readahead", None)


def _sequential_fill(p: Profile) -> Profile:
    return dataclasses.replace(p, meta=p.meta | {"precondition": "fill"})


# What each mechanism contributes: the profile with it off (a mechanism the profile does not use
# changes nothing).
MECHANISMS = {
    "host model": _without_host,
    "TLC page types": _config_change(_one_page_type),
    "controller": _config_change(_no_controller),
    "queue affinity": _config_change(_no_queue_affinity),
    "write cache": _config_change(_no_cache),
    "read-ahead": _config_change(_no_readahead),
    "random preconditioning": _sequential_fill,
}


def _split(device: dict) -> tuple[list[Path], list[Path]]:
    files = [f for folder in device["folders"] for f in sorted(Path(folder).glob("*.json"))]
    if not files:
        raise fit.FioError(f"device {device['profile']}: no fio output in {', '.join(device['folders'])}")
    held = [f for f in files if any(fnmatch.fnmatch(f.name, g) for g in device.get("held_out", []))]
    return [f for f in files if f not in held], held


def _record(index: int, axes: dict, metrics: dict, config: dict, status="ok", error=None, wall=0.0) -> dict:
    task = {"index": index, "key": "-".join(str(v) for v in axes.values()), "values": axes}
    return make_record(task, status, error, config, metrics, wall)


def _point_metrics(row: dict) -> dict:
    m = {"point.error": row["error"]}
    for op, stats in row["measured"].items():
        for s, v in stats.items():
            m[f"measured.{op}.{s}"] = v
            m[f"predicted.{op}.{s}"] = row["predicted"].get(op, {}).get(s, math.nan)
    return m


def run(spec, out_dir, executor="local", address=None, workers=None, progress=True) -> SweepSummary:
    """Calibrate each device on its points not held out and predict every point with it, with
    every mechanism on and with each one off; write its profile beside the results, or (with
    `calibrate.refit_all`) the profile of a second calibration on every point, started from the
    first's best."""
    t0 = time.monotonic()
    c = spec.get("calibrate", {})
    trials, seed = int(c.get("trials", fit.DEFAULT_TRIALS)), int(c.get("seed", 0))
    polish = int(c.get("polish", fit.DEFAULT_POLISH))
    refit_all = bool(c.get("refit_all", False))
    store = ResultStore(out_dir, create=True)
    store.clean_temps()
    for old in store.files():
        old.unlink()
    store.write_study(dump_toml(spec))
    records: list[dict] = []

    def calibrate(files, device, base=None):
        return fit.calibrate(
            files,
            base=base,
            trials=trials,
            workers=workers,
            seed=seed,
            progress=progress,
            capacity_bytes=device.get("capacity_bytes"),
            default_host=device.get("default_host"),
            space=fit.DEFAULT_SPACE.with_name(device["space"]) if "space" in device else None,
            polish=polish,
        )

    def add_trials(cal, name, fitted_on):
        for t, best in zip(cal.trials, cal.best_so_far(), strict=True):
            m = {"calibrate.error": t["objective"], "calibrate.best_error": best}
            ok = "ok" if math.isfinite(t["objective"]) else "failed"
            axes = {"kind": "trial", "device": name, "trial": t["number"], "fit": fitted_on}
            records.append(_record(len(records), axes, m, t["values"], ok, t.get("error"), t.get("wall_s")))

    for device in spec["device"]:
        name = device["profile"]
        fitted, held = _split(device)
        cal = calibrate(fitted, device)
        add_trials(cal, name, "split")
        prof = cal.profile()
        for mech, off in {"all on": None, **MECHANISMS}.items():
            v = fit.validate(fitted + held, off(prof) if off else prof, workers=workers)
            if off is None:
                check = _held_out(v, held, device)
                if not (refit_all and held):
                    _write_profile(cal, Path(out_dir) / f"{name}.toml", device, check)
            for row in v.rows:
                split = "held out" if Path(row["path"]) in held else "fitted"
                axes = {"kind": "point", "device": name, "point": row["label"], "split": split, "mechanisms": mech}
                records.append(_record(len(records), axes, _point_metrics(row), row["options"]))
        if refit_all and held:
            # The held-out check done, the shipped profile uses every point the device has; its
            # first trial is the split fit's best, so it predicts every point at least as well.
            full = calibrate(fitted + held, device, base=prof)
            add_trials(full, name, "all")
            _write_profile(full, Path(out_dir) / f"{name}.toml", device, check, refit=True)
            for row in fit.validate(fitted + held, full.profile(), workers=workers).rows:
                axes = {"kind": "point", "device": name, "point": row["label"], "split": "all", "mechanisms": "refit"}
                records.append(_record(len(records), axes, _point_metrics(row), row["options"]))
    for rec in records:
        store.append(rec)
    failed = [r for r in records if r["status"] != "ok"]
    return SweepSummary(
        study=str(spec["study"]["name"]), out_dir=str(out_dir), executor=executor, workers=workers,
        total=len(records), skipped=0, duplicates=0, ran=len(records), ok=len(records) - len(failed),
        failed=len(failed), wall_s=time.monotonic() - t0,
        errors=[(r["cell"], r["axes"], r["error"]) for r in failed[:20]],
    )  # fmt: skip


def _held_out(v, held: list[Path], device: dict) -> dict:
    """The held-out check of a calibration on the other points: how many, which, the error."""
    errs = [abs(e) for r in v.rows if Path(r["path"]) in held for e in r["errors"].values()]
    if not errs:
        return {}
    return {"points": len(held), "patterns": device.get("held_out", []), "objective": round(sum(errs) / len(errs), 5)}


def _write_profile(cal, path: Path, device: dict, check: dict, refit: bool = False) -> None:
    """The device's profile, its header adding the held-out check (`refit`: the profile was
    fitted again on every point after the check, which was made by a fit without them)."""
    notes, extra = [], {}
    if check:
        which = f"{check['points']} points ({', '.join(check['patterns'])})"
        if refit:
            notes = [f"held-out check before this fit: the same calibration without {which} predicted them "
                     f"with an error of {check['objective']:.1%} (the same measure); this profile is refitted "
                     "on every point"]  # fmt: skip
        else:
            notes = [f"held out: {which}, predicted with an error of {check['objective']:.1%} (the same measure)"]
        extra = {"held_out": {"points": check["points"], "objective": check["objective"], "refitted": refit}}
    cal.write(path, name=device["profile"], notes=notes, device=device.get("device", device["profile"]), **extra)


# -- reading the cells back --------------------------------------------------------------------


def _axes(df):
    return df.assign(**{k: df["axes"].map(lambda a, k=k: json.loads(a).get(k)) for k in
                        ("kind", "device", "trial", "point", "split", "mechanisms", "fit")})  # fmt: skip


def _points(df, mech="all on"):
    d = _axes(df)
    return d[(d["kind"] == "point") & (d["mechanisms"] == mech)]


def _mean_error(rows) -> float:
    """The objective over rows: mean |relative error| over every statistic of every point."""
    errs = []
    for _, r in rows.iterrows():
        for k, v in r.items():
            if isinstance(k, str) and k.startswith("measured.") and isinstance(v, float) and math.isfinite(v) and v:
                p = r.get("predicted." + k[len("measured.") :])
                errs.append(abs((p - v) / v) if isinstance(p, float) and math.isfinite(p) else 1.0)
    return sum(errs) / len(errs) if errs else math.nan


# The fio options a curve is drawn by (a point's options are its cell's configuration columns).
CURVE_OPTIONS = ("rw", "readwrite", "bs", "iodepth", "numjobs", "cpus_allowed")


def _options(row) -> dict:
    return {k: str(row[k]) for k in CURVE_OPTIONS if isinstance(row.get(k), str)}


def _curve(o: dict) -> str:
    """A curve's label: pattern, block size, threads, and the CPUs a pinned campaign used."""
    bs = parse_size(o.get("bs", "4k").split(",")[0], "bs")
    label = f"{o.get('rw', o.get('readwrite', 'read'))} {bs // 1024} KiB ×{o.get('numjobs', '1')}"
    return label + (f" cpus {o['cpus_allowed']}" if "cpus_allowed" in o else "")


# -- figures -------------------------------------------------------------------------------------


def figures(df):
    d = _axes(df)
    out = []
    for device in dict.fromkeys(d["device"].dropna()):
        trials = d[(d["kind"] == "trial") & (d["device"] == device) & (d["fit"] != "all")]
        if len(trials):
            best = float(trials["calibrate.best_error"].min())
            out.append((f"{device}: each trial's error and the best so far (best {best:.1%})", _progress(trials)))
        pts = _points(df)
        pts = pts[pts["device"] == device]
        if len(pts):
            out.append(
                (
                    f"{device}: IOPS and mean completion latency against queue depth per pattern, block size and "
                    "job count; measured (points) and predicted (lines); hollow points were held out",
                    _curves(pts),
                )
            )
    return out


def _progress(trials):
    t = trials.sort_values("trial")
    return F.calibration_progress(t["trial"], t["calibrate.error"], t["calibrate.best_error"])


def _curves(pts):
    curves: dict[str, list] = {}
    for _, r in pts.iterrows():
        o = _options(r)
        for op in ("read", "write"):
            if isinstance(r.get(f"measured.{op}.iops"), float) and math.isfinite(r[f"measured.{op}.iops"]):
                curves.setdefault(_curve(o), []).append((int(o.get("iodepth", "1")), r, op))
    with F.style():
        fig = F._new_figure(F.PANEL[0] * 2.2, F.PANEL[1] * 1.1)
        axes = [fig.add_subplot(1, 2, i + 1) for i in range(2)]
        for i, (name, rows) in enumerate(sorted(curves.items())):
            rows.sort(key=lambda x: x[0])
            color = F.PALETTE[i % len(F.PALETTE)]
            for ax, stat in zip(axes, ("iops", "mean"), strict=True):
                qd = [q for q, _, _ in rows]
                ax.plot(qd, [r[f"predicted.{op}.{stat}"] for _, r, op in rows], "-", color=color, label=name, lw=1)
                for q, r, op in rows:
                    held = r["split"] == "held out"
                    ax.plot([q], [r[f"measured.{op}.{stat}"]], "o", ms=3.5, color=color,
                            markerfacecolor="none" if held else color)  # fmt: skip
        for ax, label in zip(axes, ("IOPS", "mean completion latency (µs)"), strict=True):
            ax.set_xscale("log", base=2)
            F.log_scale(ax, "y")
            ax.set_xlabel("queue depth per job")
            ax.set_ylabel(label)
        axes[0].legend(fontsize=6, loc="upper left")
        return fig


# -- sections ------------------------------------------------------------------------------------


def _g(v) -> str:
    if not isinstance(v, (int, float)) or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v / 1e3:,.0f}K" if abs(v) >= 1e4 else f"{v:.3g}"


def sections(df):
    d = _axes(df)
    out = []
    summary = []
    for device in dict.fromkeys(d["device"].dropna()):
        pts = _points(df)
        pts = pts[pts["device"] == device]
        fitted, held = pts[pts["split"] == "fitted"], pts[pts["split"] == "held out"]
        refit = _points(df, "refit")
        refit = refit[refit["device"] == device]
        summary.append([device, str(len(fitted)), f"{_mean_error(fitted):.1%}", str(len(held)),
                        f"{_mean_error(held):.1%}" if len(held) else "-",
                        f"{_mean_error(refit):.1%}" if len(refit) else "-"])  # fmt: skip
        rows = []
        for _, r in pts.sort_values(["split", "point"]).iterrows():
            for op in ("read", "write"):
                if not (isinstance(r.get(f"measured.{op}.iops"), float) and math.isfinite(r[f"measured.{op}.iops"])):
                    continue
                cells = []
                for s in fit.STATS:
                    m, p = r.get(f"measured.{op}.{s}"), r.get(f"predicted.{op}.{s}")
                    ok = isinstance(m, float) and math.isfinite(m) and isinstance(p, float) and math.isfinite(p)
                    cells.append(f"{_g(m)} → {_g(p)} ({(p - m) / m:+.0%})" if ok else "-")
                rows.append([r["point"], r["split"], op, *cells, f"{r['point.error']:.1%}"])
        table = plain_table(["point", "split", "op", *fit.STATS, "error"], map(text_row, rows))
        mech = []
        for name in ("all on", *MECHANISMS):
            m = _points(df, name)
            m = m[m["device"] == device]
            if len(m):
                mech.append([name if name == "all on" else f"{name} off", f"{_mean_error(m):.1%}"])
        out.append((f"{html.escape(device)}: measured against predicted", table))
        out.append(
            (
                f"{html.escape(device)}: what each mechanism contributes",
                plain_table(["profile", "error over every point"], map(text_row, mech))
                + "<p>A mechanism the profile does not use changes nothing with it off.</p>",
            )
        )
    head = plain_table(["device", "fitted points", "in-sample error", "held-out points", "held-out error",
                        "shipped profile: error over every point"], map(text_row, summary))  # fmt: skip
    why = (
        "<p>Profiles are beside this report. With <code>refit_all</code>, the shipped profile is "
        "calibrated again on every point once the held-out check is made; its error is in-sample.</p>"
    )
    return [("Profiles: in-sample and held-out error", head + why), *out]
