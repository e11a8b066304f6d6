"""Calibrate and validate a device profile on fio measurements (`ssdlab calibrate FIO.json…`,
`ssdlab validate FIO.json… --profile NAME`).

Each fio output file is a point: what ran (its job options) and what the device did (per
direction: IOPS, the mean completion latency and the percentiles fio recorded). A point's
prediction is the profile's simulation of the same job (`workload.job_config`), its statistics
taken as fio takes them: IOPS over the measured window, the mean and nearest-rank percentiles of
the completion latencies. The error of a point is the mean, over its statistics, of
|predicted − measured| / measured; the objective is the mean over every statistic of every
point (`STATS` where fio recorded them).

A campaign can have several host set-ups (the same device measured from two hosts): each file
belongs to a host, named after its folder (`jobs_sweep/` → `jobs-sweep`) unless `host=` names one
for all. Device parameters are fitted jointly over every point; a host's parameters (`host.*`
keys of the space) only over its own points.

A host's per-I/O CPU cost is measured, not fitted, where its points show it: fio reports the
CPU use of a job's threads (`usr_cpu` + `sys_cpu`), and a thread that is busy all the time
(≥ `SATURATED_CPU`) spends 1/IOPS of a second on each I/O, which is what `host.cpu_us` is; of
that, fio's mean submission latency (slat) is `host.submit_us`. The medians over a host's
saturated points are its values; hosts without one fit `cpu_us` (and submit nothing apart).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .. import api, tomlwrite
from .._core import __version__
from ..calibrate.polish import coordinate_search, raw_of
from ..calibrate.space import Param, load_space
from ..sweep.executors import run_local
from .output import FioError, parse_size, read_output
from .profile import PROFILE_DIR, Host, Profile, load_profile
from .workload import simulate_group

STATS = ("iops", "mean", "p50", "p95", "p99")
HISTOGRAMS = {"read": "latency.read_ns", "write": "latency.write_ns"}
DEFAULT_SPACE = Path(__file__).resolve().parent / "space.toml"
DEFAULT_BASE = PROFILE_DIR / "base.toml"
DEFAULT_TRIALS = 160
# Coordinate-search trials after them, from the best (ssdlab.calibrate.polish).
DEFAULT_POLISH = 48
# A job's threads this busy (usr + sys, of one core each) are bound by their CPU.
SATURATED_CPU = 0.95


@dataclass(frozen=True)
class Point:
    """One fio output file as a calibration point."""

    path: str
    host: str
    options: dict
    # op -> statistic -> measured value (IOPS, or µs)
    measured: dict
    # CPU time per I/O of the job's threads and its mean slat (µs) when they were saturated
    # (SATURATED_CPU), else None
    cpu_us_per_io: float | None = None
    slat_us: float | None = None

    @property
    def label(self) -> str:
        return Path(self.path).stem


def _host_of(path: Path) -> str:
    return path.parent.name.replace("_", "-")


def points(files: Sequence[str | Path], host: str | None = None) -> list[Point]:
    """The points of fio output files (a directory stands for its *.json)."""
    out = []
    for f in _expand(files):
        m = read_output(f)
        if len(m.jobs) != 1:
            raise FioError(f"{f}: {len(m.jobs)} job entries; a point is one job (use group_reporting=1)")
        job = m.jobs[0]
        meas = {}
        for op, s in job.ops.items():
            if op not in HISTOGRAMS:
                raise FioError(f"{f}: {op} statistics: trims are not modelled")
            stats = {"iops": s.iops, "mean": s.clat_mean_ns / 1e3}
            for q in (50.0, 95.0, 99.0):
                if q in s.clat_percentiles_ns:
                    stats[f"p{q:g}"] = s.clat_percentiles_ns[q] / 1e3
            meas[op] = stats
        if not meas:
            raise FioError(f"{f}: the job did no I/O")
        busy = (job.usr_cpu_pct + job.sys_cpu_pct) / 100
        iops = sum(s["iops"] for s in meas.values())
        per_io = slat = None
        if busy >= SATURATED_CPU and iops > 0:
            per_io = busy * job.threads / iops * 1e6
            slat = sum(s.slat_mean_ns * s.iops for s in job.ops.values()) / iops / 1e3
            slat = slat if math.isfinite(slat) else None  # fio recorded no slat
        out.append(Point(str(f), host or _host_of(Path(f)), dict(job.options), meas, per_io, slat))
    if not out:
        raise FioError("no fio output file given")
    return out


def _expand(files: Sequence[str | Path]) -> list[Path]:
    paths = []
    for f in files:
        p = Path(f)
        if p.is_dir():
            found = sorted(p.glob("*.json"))
            if not found:
                raise FioError(f"{p}: no *.json in this folder")
            paths += found
        elif not p.is_file():
            raise FioError(f"{p}: no such file")
        else:
            paths.append(p)
    return paths


def histogram_stats(pairs, iops: float) -> dict[str, float]:
    """fio's statistics of a simulated direction: IOPS, and the mean and nearest-rank
    percentiles of its latency histogram [(ns, count)], in µs."""
    if not pairs:
        return {}
    pairs = sorted(pairs)
    n = sum(c for _, c in pairs)
    out = {"iops": iops, "mean": sum(v * c for v, c in pairs) / n / 1e3}
    for q in (50, 95, 99):
        rank, cum = max(1, math.ceil(q / 100 * n - 1e-9)), 0
        for v, c in pairs:
            cum += c
            if cum >= rank:
                out[f"p{q}"] = v / 1e3
                break
    return out


def predicted(res: api.Result) -> dict:
    """op -> statistic of a simulated point."""
    counts = {op: sum(c for _, c in res.histograms.get(h) or []) for op, h in HISTOGRAMS.items()}
    total = sum(counts.values()) or 1
    iops = res.metrics["throughput.iops"]
    return {
        op: histogram_stats(res.histograms.get(h), iops * counts[op] / total)
        for op, h in HISTOGRAMS.items()
        if counts[op]
    }


def errors(point: Point, pred: Mapping) -> dict[str, float]:
    """'op.stat' -> relative error (predicted − measured) / measured; a direction the
    simulation did not produce counts as 100% off."""
    out = {}
    for op, stats in point.measured.items():
        for s, m in stats.items():
            p = pred.get(op, {}).get(s)
            out[f"{op}.{s}"] = (p - m) / m if p is not None and m else -1.0
    return out


def point_error(errs: Mapping[str, float]) -> float:
    return sum(abs(e) for e in errs.values()) / len(errs)


def simulate_point(point: Point, profile: Profile, host: str | None = None, seed: int = 1, progress=None) -> dict:
    """The prediction of `point`: with `host`, else its own host if the profile has it, else the
    profile's default host."""
    h = host or point.host
    _, res = simulate_group([point.options], profile, h if h in profile.hosts else None, seed=seed, progress=progress)
    return predicted(res)


# --------------------------------------------------------------------------------------------
# the space and the candidates


def _fitted(
    params: Sequence[Param], hosts: Sequence[str], measured: Mapping | None = None, writes: bool = True
) -> list[Param]:
    """The space with every `host.*` key once per host, as `hosts.NAME.KEY`, but for the
    `measured` ones; without `writes` (no point writes), none that only writes depend on."""
    out = []
    for p in params:
        if p.writes and not writes:
            continue
        if p.key.startswith("host.") and p.key.split(".", 1)[1] in ("cpu_us", "wake_us"):
            keys = (f"hosts.{h}.{p.key[5:]}" for h in hosts)
            out += [dataclasses.replace(p, key=k) for k in keys if k not in (measured or {})]
        else:
            out.append(p)
    return out


def measured_cpu(pts: Sequence[Point]) -> dict[str, tuple[float, int]]:
    """`hosts.NAME.cpu_us` and `submit_us` of each host with saturated points (module
    docstring): the medians of the CPU time per I/O and of the slat over them (a submission is
    part of the I/O's CPU time: at most that), and how many there were."""
    by_host: dict[str, list[Point]] = {}
    for pt in pts:
        if pt.cpu_us_per_io is not None:
            by_host.setdefault(pt.host, []).append(pt)
    out = {}
    for h, ps in by_host.items():
        cpu = statistics.median(pt.cpu_us_per_io for pt in ps)
        out[f"hosts.{h}.cpu_us"] = (cpu, len(ps))
        slats = [pt.slat_us for pt in ps if pt.slat_us is not None]
        if slats:
            out[f"hosts.{h}.submit_us"] = (min(statistics.median(slats), cpu), len(slats))
    return out


def candidate(base: Profile, values: Mapping[str, float]) -> Profile:
    """`base` with fitted values: `hosts.NAME.cpu_us`/`submit_us`/`wake_us` on its hosts, the
    rest config keys."""
    cfg = copy.deepcopy(base.config)
    hosts = dict(base.hosts)
    for k, v in values.items():
        if k.startswith("hosts."):
            _, name, field_ = k.split(".", 2)
            h = hosts.get(name) or Host(name, "libaio", 1.0, 0.0)
            hosts[name] = dataclasses.replace(h, **{field_: v})
        else:
            api.set_key(cfg, k, v)
    return dataclasses.replace(base, meta=dict(base.meta), config=cfg, hosts=hosts)


# --------------------------------------------------------------------------------------------
# calibrate


@dataclass
class FioCalibration:
    points: list[Point]
    base: Profile
    params: list[Param]
    seed: int
    trials: list[dict] = field(default_factory=list)
    wall_s: float = 0.0
    # host keys set from fio's CPU use rather than fitted: key -> (value, saturated points)
    measured: dict = field(default_factory=dict)
    # of the trials, those of the coordinate search after the optimiser's
    polish: int = 0

    @property
    def best(self) -> dict:
        ok = [t for t in self.trials if math.isfinite(t["objective"])]
        if not ok:
            why = self.trials[0].get("error", "") if self.trials else ""
            raise FioError(f"no calibration trial succeeded: {why}")
        return min(ok, key=lambda t: (t["objective"], t["number"]))

    def best_so_far(self) -> list[float]:
        out, best = [], math.inf
        for t in self.trials:
            if math.isfinite(t["objective"]):
                best = min(best, t["objective"])
            out.append(best)
        return out

    def profile(self) -> Profile:
        return candidate(self.base, self.best["values"])

    def write(self, path: str | Path, name: str | None = None, notes: Sequence[str] = (), **meta_extra) -> Path:
        """The fitted profile as TOML, headed by what it was fitted on and how well (`notes`:
        further header lines; `meta_extra`: further [profile] keys)."""
        p = self.profile()
        best = self.best
        meta = dict(p.meta) | {"name": name or p.name} | meta_extra
        meta["fitted_on"] = _folders(pt.path for pt in self.points)
        meta["fit"] = {"objective": round(best["objective"], 5), "trials": len(self.trials), "polish": self.polish,
                       "seed": self.seed, "points": len(self.points), "ssdlab": __version__}  # fmt: skip
        lines = [
            f"# ssdlab device profile `{meta['name']}`, fitted by `ssdlab calibrate` (ssdlab {__version__})",
            f"# on {len(self.points)} fio points: {', '.join(meta['fitted_on'])}",
            f"# in-sample error (mean absolute relative error over {', '.join(STATS)} where recorded): "
            f"{best['objective']:.1%} after {len(self.trials)} trials (seed {self.seed}; "
            f"the last {self.polish} a coordinate search from the optimiser's best)",
        ]
        lines += [f"# {n}" for n in notes] + ["# fitted parameters against their physical ranges:"]
        for q in self.params:
            v = best["values"][q.key]
            factor = f" ({q.factor(best['values']):.3g} × {q.relative_to})" if q.relative_to else ""
            lines.append(f"#   {q.key} = {v:g}{factor}   {q.bounds_text()}   {q.source}")
        for k, (v, n) in self.measured.items():
            what = "CPU use per I/O" if k.endswith("cpu_us") else "submission latency (slat)"
            why = f"measured: fio's {what} at the {n} points where the job was CPU-bound"
            lines.append(f"#   {k} = {v:.4g}   {why}")
        hosts = {h.name: {"engine": h.engine, "cpu_us": h.cpu_us, "submit_us": h.submit_us, "wake_us": h.wake_us}
                 for h in p.hosts.values()}  # fmt: skip
        doc = {"profile": meta, "config": p.config, "hosts": hosts}
        out = Path(path)
        out.write_text("\n".join(lines) + "\n\n" + tomlwrite.dumps(doc))
        return out


def _folders(paths) -> list[str]:
    """The points' folders, named from the folder above them all (`samsung_980pro_1tb/bs_sweep`)."""
    parents = sorted({Path(p).resolve().parent for p in paths})
    base = Path(os.path.commonpath(parents)).parent
    return [str(d.relative_to(base)) for d in parents]


def _capacity(pts: Sequence[Point]) -> int | None:
    """The device's capacity as the points show it: the largest end (offset + size) of an
    absolute region; None if every region is a percentage."""
    ends = []
    for pt in pts:
        size, offset = pt.options.get("size", "100%"), pt.options.get("offset", "0")
        if not size.strip().endswith("%") and not offset.strip().endswith("%"):
            ends.append(parse_size(size, "size") + parse_size(offset, "offset"))
    return max(ends) if ends else None


def _engine_hosts(pts: Sequence[Point], base: Profile, default_host: str | None = None) -> Profile:
    """`base` with the points' hosts: the base's host of that name, else one with the base's
    first host's costs for the engine the points used; `default_host` (else the base's, if the
    points have it, else the first point's) is the default."""
    tmpl = next(iter(base.hosts.values()))
    hosts: dict[str, Host] = {}
    for pt in pts:
        engine = pt.options.get("ioengine", "psync")
        if pt.host not in hosts:
            c = tmpl.costs(engine)
            hosts[pt.host] = base.hosts.get(pt.host) or Host(pt.host, engine, c["cpu_us"], c["wake_us"], c["submit_us"])
    default = default_host or base.meta.get("default_host")
    if default not in hosts:
        if default_host is not None:
            raise FioError(f"default host `{default_host}` is none of the points' hosts ({', '.join(hosts)})")
        default = pts[0].host
    meta = dict(base.meta) | {"default_host": default}
    return dataclasses.replace(base, meta=meta, config=copy.deepcopy(base.config), hosts=hosts)


def _trial(task: Mapping, progress=None) -> dict:
    """One point of one trial (an executor's task): its prediction and error."""
    t0 = time.perf_counter()
    rec = {"cell": task["index"]}
    try:
        pred = simulate_point(task["point"], task["profile"], progress=progress)
    except Exception as e:  # a failing trial is scored, not raised
        return rec | {"status": "failed", "error": str(e), "wall_s": time.perf_counter() - t0}
    return rec | {"status": "ok", "predicted": pred, "wall_s": time.perf_counter() - t0}


def _run(tasks: list[dict], workers: int) -> dict[int, dict]:
    """Every task's record by its index, `workers` at a time."""
    recs: dict[int, dict] = {}
    run_local(tasks, workers, lambda r: recs.__setitem__(r["cell"], r), fn=_trial)
    return recs


def calibrate(
    files: Sequence[str | Path],
    base: str | Path | Profile | None = None,
    space: str | Path | None = None,
    trials: int = DEFAULT_TRIALS,
    workers: int | None = None,
    seed: int = 0,
    host: str | None = None,
    capacity_bytes: int | None = None,
    progress: bool = True,
    default_host: str | None = None,
    polish: int = DEFAULT_POLISH,
) -> FioCalibration:
    """Fit a profile's device and host parameters to fio points (module docstring). `base`: the
    profile to start from (default the package's base.toml); its values within the space's
    ranges are the first trial. `trials` of the optimiser, then up to `polish` more of a
    coordinate search from the best (ssdlab.calibrate.polish)."""
    from ..calibrate import _study, _values  # the optimiser set-up `calibrate` uses for traces

    if trials < 1:
        raise FioError(f"trials must be >= 1, not {trials}")
    if polish < 0:
        raise FioError(f"polish must be >= 0, not {polish}")
    t0 = time.monotonic()
    pts = points(files, host)
    prof = base if isinstance(base, Profile) else load_profile(base or DEFAULT_BASE)
    capacity_bytes = capacity_bytes or (_capacity(pts) if base is None else None)
    if capacity_bytes:
        prof.meta["capacity_bytes"] = int(capacity_bytes)
    prof = _engine_hosts(pts, prof, default_host)
    hosts = sorted({pt.host for pt in pts})
    sp = load_space(space or DEFAULT_SPACE)
    measured = measured_cpu(pts)
    prof = candidate(prof, {k: v for k, (v, _) in measured.items()})
    writes = any("write" in pt.measured for pt in pts)
    sp = dataclasses.replace(sp, params=tuple(_fitted(sp.params, hosts, measured, writes)))
    known = api.config_columns(prof.config) | {
        f"hosts.{h.name}.{k}": getattr(h, k) for h in prof.hosts.values() for k in ("cpu_us", "wake_us")
    }
    cal = FioCalibration(pts, prof, list(sp.params), seed, measured=measured)
    study = _study(sp, known, seed)
    n_workers = max(1, workers or os.cpu_count() or 1)

    def one(fixed: dict | None = None) -> float:
        """Run the optimiser's next trial (or the trial of the optimiser values `fixed`)."""
        if fixed is not None:
            study.enqueue_trial(fixed)
        trial = study.ask()  # one trial at a time; its points run in parallel
        values = _values(sp, trial)
        c = candidate(prof, values)
        recs = _run([{"index": j, "point": pt, "profile": c} for j, pt in enumerate(pts)], n_workers)
        cal.trials.append(_score(study, trial, values, [recs.get(j) for j in range(len(pts))], pts))
        n, total = len(cal.trials), trials + polish
        if progress and (n % max(1, total // 10) == 0 or n in (trials, total)):
            b = min((x["objective"] for x in cal.trials if math.isfinite(x["objective"])), default=math.nan)
            failed = sum(not math.isfinite(x["objective"]) for x in cal.trials)
            print(f"calibrate: {n}/{total} trials ({failed} failed), best {b:.1%}", file=sys.stderr)
        return cal.trials[-1]["objective"]

    while len(cal.trials) < trials:
        one()
    if polish and any(math.isfinite(t["objective"]) for t in cal.trials):
        best = cal.best
        coordinate_search(sp.params, raw_of(sp.params, best["values"]), best["objective"], one, polish)
    cal.polish = len(cal.trials) - trials
    cal.wall_s = time.monotonic() - t0
    return cal


def _score(study, trial, values: dict, recs: list, pts: Sequence[Point]) -> dict:
    from optuna.trial import TrialState

    row = {"number": trial.number, "values": values, "objective": math.nan}
    bad = [r for r in recs if r is None or r["status"] != "ok"]
    if bad:
        row["error"] = (bad[0] or {}).get("error") or "a point's run was lost"
        study.tell(trial, state=TrialState.FAIL)
        return row
    errs = [errors(pt, r["predicted"]) for pt, r in zip(pts, recs, strict=True)]
    flat = [abs(e) for es in errs for e in es.values()]
    row.update(objective=sum(flat) / len(flat), point_errors=[point_error(e) for e in errs])
    row["predicted"] = [r["predicted"] for r in recs]
    row["wall_s"] = sum(r["wall_s"] for r in recs)
    study.tell(trial, row["objective"])
    return row


# --------------------------------------------------------------------------------------------
# validate


@dataclass
class FioValidation:
    profile: str
    host: str | None
    rows: list[dict]  # per point: label, path, host, measured, predicted, errors, error

    @property
    def objective(self) -> float:
        flat = [abs(e) for r in self.rows for e in r["errors"].values()]
        return sum(flat) / len(flat)

    def to_dict(self) -> dict:
        return {"profile": self.profile, "host": self.host, "objective": self.objective, "points": self.rows}

    def table(self) -> str:
        head = f"{'point':34} {'host':12} {'op':5} " + " ".join(f"{s:>22}" for s in STATS) + f" {'error':>7}"
        lines = [head, "-" * len(head)]
        for r in self.rows:
            for op, meas in r["measured"].items():
                cells = []
                for s in STATS:
                    m, p = meas.get(s), r["predicted"].get(op, {}).get(s)
                    cells.append(f"{_num(m)} → {_num(p)} ({(p - m) / m:+.0%})" if m and p is not None else "-")
                lines.append(f"{r['label'][:34]:34} {r['host'][:12]:12} {op:5} " + " ".join(f"{c:>22}" for c in cells)
                             + f" {r['error']:7.1%}")  # fmt: skip
        lines.append(f"objective (mean absolute relative error): {self.objective:.1%} over {len(self.rows)} points")
        return "\n".join(lines)

    def save_plot(self, path: str | Path) -> None:
        """IOPS and mean latency against queue depth, measured (points) and predicted (lines),
        one curve per pattern, size and job count."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        curves: dict[str, list] = {}
        for r in self.rows:
            o = r["options"]
            key = f"{o.get('rw', 'read')} {o.get('bs', '4k')} ×{o.get('numjobs', '1')} [{r['host']}]"
            for op in r["measured"]:
                curves.setdefault(f"{key} {op}", []).append((int(o.get("iodepth", "1")), r, op))
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
        for i, (name, pts) in enumerate(sorted(curves.items())):
            pts.sort(key=lambda x: x[0])
            qd = [q for q, _, _ in pts]
            color = f"C{i % 10}"
            for ax, stat in zip(axes, ("iops", "mean"), strict=True):
                ax.plot(qd, [r["measured"][op].get(stat) for _, r, op in pts], "o", color=color)
                ax.plot(qd, [r["predicted"].get(op, {}).get(stat) for _, r, op in pts], "-", color=color, label=name)
        for ax, label in zip(axes, ("IOPS", "mean completion latency (µs)"), strict=True):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("queue depth (per job)")
            ax.set_ylabel(label)
        axes[1].legend(fontsize=7)
        fig.suptitle(f"{self.profile}: measured (points) and predicted (lines); error {self.objective:.1%}")
        fig.tight_layout()
        fig.savefig(path)
        plt.close(fig)


def _num(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v / 1e3:.0f}K" if v >= 1e4 else f"{v:.3g}"


def validate(
    files: Sequence[str | Path],
    profile: str | Path | Profile,
    host: str | None = None,
    workers: int | None = None,
    on_point: Callable[[dict], None] | None = None,
) -> FioValidation:
    """Predict every point with the profile (its host `host`, else the point's folder's host if
    the profile has it, else its default host) and compare."""
    prof = profile if isinstance(profile, Profile) else load_profile(profile)
    if host is not None:
        prof.host(host)  # an unknown host is an error before anything runs
    pts = points(files)
    tasks = [{"index": i, "point": pt if host is None else Point(pt.path, host, pt.options, pt.measured),
              "profile": prof} for i, pt in enumerate(pts)]  # fmt: skip
    recs = _run(tasks, max(1, workers or os.cpu_count() or 1))
    rows = []
    for i, pt in enumerate(pts):
        r = recs[i]
        if r["status"] != "ok":
            raise FioError(f"{pt.path}: {r['error']}")
        errs = errors(pt, r["predicted"])
        used = host or (pt.host if pt.host in prof.hosts else prof.host().name)
        row = {"label": pt.label, "path": pt.path, "host": used, "options": pt.options, "measured": pt.measured,
               "predicted": r["predicted"], "errors": errs, "error": point_error(errs)}  # fmt: skip
        rows.append(row)
        if on_point:
            on_point(row)
    return FioValidation(prof.name, host, rows)
