"""Calibrating the timing model to a device's measured latencies, and checking a profile.

    cal = calibrate("dev.trace", format="flashnet", trials=200, workers=2)  # or several traces
    cal.write("profile.toml")                   # the base configuration with the fitted values
    v = validate("other.trace", "profile.toml")  # predicted against measured, per operation
    print(v.text()); v.plot("cdf.png")

A calibration fits the parameters of a space (ssdlab.calibrate.space; default space.toml beside
this module) within their physical ranges, minimising the mean absolute relative error of the
space's target statistics (measure.objective), averaged over the traces when there are several
(windows of one device: a profile that fits them all rather than one). The optimiser is optuna's
TPE sampler with a fixed seed; its trials run `workers` at a time on the sweep executors (threads
of this process, or a Dask cluster), each batch asked for, run, then told in trial order, so a
seed gives one result.
"""

from __future__ import annotations

import math
import os
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .. import api, traces
from .._core import SsdlabError, __version__
from ..sweep.executors import EXECUTORS, local_cluster, run_dask, run_local
from . import measure as M
from .space import DEFAULT_SPACE, CalibrationError, Param, Space, load_space, parse_target

__all__ = [
    "DEFAULT_BASE",
    "DEFAULT_SPACE",
    "DEFAULT_TIMESTAMP",
    "DEFAULT_TRIALS",
    "Calibration",
    "CalibrationError",
    "Param",
    "Space",
    "Validation",
    "calibrate",
    "load_space",
    "validate",
]

DEFAULT_BASE = Path(__file__).resolve().parent / "base.toml"
DEFAULT_TRIALS = 240


# --------------------------------------------------------------------------------------------
# configurations


# Formats whose records carry two time stamps (the engine's `Format::timestamps`; docs/traces.md).
TWO_TIMESTAMPS = ("flashnet",)

# The time stamp calibrate and validate replay a trace with two at, unless the configuration says:
# the original record times, the requests of each record stamp then submitted as the replayer's
# slots free (`run.max_inflight`, fitted). On the FlashNet data a profile fitted so errs by
# 22.7–32.1% on four held-out windows of the device, one fitted to the submit times (the
# format's default for `ssdlab run`) by 18.8–42.8%: a lower error in-sample (9.8% against 16.9%)
# that generalises less well (docs/calibrate.md, "Fitting several windows").
DEFAULT_TIMESTAMP = "record"


def _trace_config(config, trace: str | Path, fmt: str | None) -> api.Config:
    """`config` (a path, dict or Config; None: the package's base.toml) replaying `trace`: a trace
    with two time stamps at `workload.timestamp` (default DEFAULT_TIMESTAMP); for a trace with one,
    a `workload.timestamp` in the configuration (a profile fitted on flashnet) is left out."""
    cfg = api.Config.load(config if config is not None else DEFAULT_BASE)
    cfg = cfg.set("workload.kind", "trace").set("workload.path", str(Path(trace).resolve()))
    if fmt:
        cfg = cfg.set("workload.format", fmt)
    workload = cfg.to_dict().get("workload", {})
    if fmt in TWO_TIMESTAMPS:
        if workload.get("timestamp") is None:
            cfg = cfg.set("workload.timestamp", DEFAULT_TIMESTAMP)
    elif "timestamp" in workload:
        data = cfg.to_dict()
        del data["workload"]["timestamp"]
        cfg = api.Config(data)
    return cfg


def _format_of(trace: str | Path, fmt: str | None) -> str:
    if not Path(trace).is_file():
        raise CalibrationError(f"{trace}: no such trace file")
    return fmt or traces.trace_detect(trace)


def _resolved(cfg: api.Config, what: str) -> dict:
    try:
        resolved = cfg.resolved()
    except SsdlabError as e:
        raise CalibrationError(f"{what}: {e}") from None
    if resolved["run"]["mode"] != "timed":
        raise CalibrationError(f'{what}: run.mode must be "timed" (latencies are only simulated in timed mode)')
    return resolved


def _rounded(p: Param, v: float) -> float | int:
    """A sampled value as run and written: whole for an integer key, else 4 significant digits."""
    return int(round(v)) if p.integer else float(f"{v:.4g}")


# --------------------------------------------------------------------------------------------
# one trial (what an executor runs; a module-level function, so that Dask can ship it)


def run_trial(task: Mapping, progress: Callable[[int, int], None] | None = None) -> dict:
    """Simulate one trial's configuration; its latency histograms, or its error (never raises for
    a failing simulation)."""
    t0 = time.perf_counter()
    rec = {"cell": task["index"], "values": task["values"]}
    try:
        res = api.simulate(task["config"], progress)
    except Exception as e:
        return rec | {"status": "failed", "error": str(e), "wall_s": time.perf_counter() - t0}
    hist = {name: res.histograms.get(name) for name in M.HISTOGRAMS.values()}
    rec |= {"status": "ok", "error": None, "histograms": hist, "metrics": res.metrics, "config": res.config}
    return rec | {"warnings": res.warnings, "wall_s": time.perf_counter() - t0}


def _task(number: int, values: dict, cfg: api.Config) -> dict:
    for k, v in values.items():
        cfg = cfg.set(k, v)
    # key and resolved: what the executors' record of a task that died needs
    return {"index": number, "key": str(number), "values": values, "config": cfg.to_dict(), "resolved": {}}


# --------------------------------------------------------------------------------------------
# calibrate


@dataclass
class Calibration:
    """What `calibrate` did: every trial, the best one, and the profile it makes."""

    traces: list  # the traces fitted (absolute paths); the profile replays the first
    formats: list
    space: Space
    base: dict  # the starting configuration, as given (replaying the first trace)
    seed: int
    measured_each: list  # per trace: op -> stats (measure.stats)
    # [{number, values, status, error, objective, errors (one per trace), wall_s}]
    trials: list = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def trace(self) -> str:
        return self.traces[0]

    @property
    def format(self) -> str:
        return self.formats[0]

    @property
    def measured(self) -> dict:
        """The first trace's measured statistics."""
        return self.measured_each[0]

    @property
    def best(self) -> dict:
        ok = [t for t in self.trials if t["status"] == "ok" and math.isfinite(t["objective"])]
        if not ok:
            errors = [t["error"] for t in self.trials if t.get("error")]
            why = errors[0] if errors else "every run predicted no request of an operation the trace measured"
            raise CalibrationError(f"no trial gave a prediction: {why}")
        return min(ok, key=lambda t: (t["objective"], t["number"]))

    def profile(self) -> dict:
        """The base configuration with the best trial's values: an ordinary configuration."""
        cfg = api.Config(self.base)
        for k, v in self.best["values"].items():
            cfg = cfg.set(k, v)
        return cfg.to_dict()

    def profile_text(self) -> str:
        from ..tomlwrite import dumps

        best = self.best
        ok = sum(t["status"] == "ok" for t in self.trials)
        lines = [
            f"# ssdlab calibration profile (ssdlab {__version__})",
            *(f"# trace: {t} (format {f})" for t, f in zip(self.traces, self.formats, strict=True)),
            f"# objective: mean |relative error| of {', '.join(self.space.targets)}{self._over()} = "
            f"{best['objective']:.2%}",
            *self._each(best),
            f"# best of {len(self.trials)} trials ({ok} ran; trial {best['number']}), seed {self.seed}, "
            f"{self.wall_s:.0f} s; space {self.space.path}",
            "# fitted (physical range):",
            *(f"#   {p.key} = {best['values'][p.key]} {p.bounds_text()}" for p in self.space.params),
            "# Predict another trace: ssdlab run --config THIS.toml --set workload.path=OTHER "
            "--set workload.format=FORMAT",
            "",
        ]
        return "\n".join(lines) + dumps(self.profile())

    def _over(self) -> str:
        return f", averaged over {len(self.traces)} traces" if len(self.traces) > 1 else ""

    def _each(self, best: dict) -> list[str]:
        if len(self.traces) == 1:
            return []
        return [f"#   {Path(t).name}: {e:.2%}" for t, e in zip(self.traces, best["errors"], strict=True)]

    def write(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(self.profile_text())
        return p

    def records(self) -> list[dict]:
        """Every trial as a results-store record (ssdlab.store): its values as the cell's axes, its
        configuration as run, its metrics plus `calibrate.error` (the objective, NaN when it
        failed), `calibrate.best_error` (the best so far), the measured statistics
        (`measured.read.p50_us`, ...) and the predicted ones from the same histograms
        (`predicted.read.p50_us`, ...); its latency histograms. With several traces the metrics,
        statistics and histograms are the first trace's, and `calibrate.trace<j>.error` is trace
        j's own error (j from 0)."""
        from ..store import utc_now
        from ..sweep.task import make_record

        measured = _flat("measured", self.measured)
        out = []
        for t, best in zip(sorted(self.trials, key=lambda t: t["number"]), self.best_so_far(), strict=True):
            task = {"index": t["number"], "key": f"{self.seed}-{t['number']}", "values": t["values"]}
            metrics = dict(t.get("metrics") or {}) | measured | _flat("predicted", t.get("predicted") or {})
            metrics |= {"calibrate.error": t["objective"], "calibrate.best_error": best}
            if len(self.traces) > 1:
                errors = t.get("errors") or [math.nan] * len(self.traces)
                metrics |= {f"calibrate.trace{j}.error": e for j, e in enumerate(errors)}
            rec = make_record(task, t["status"], t.get("error"), t.get("config") or self.base, metrics, t["wall_s"])
            rec["histograms"] = t.get("histograms")
            rec["warnings"] = t.get("warnings") or []
            rec["prov"]["finished_at"] = utc_now()
            out.append(rec)
        return out

    def best_so_far(self) -> list[float]:
        """The best objective after each trial, in trial order."""
        out, best = [], math.inf
        for t in sorted(self.trials, key=lambda t: t["number"]):
            if t["status"] == "ok" and t["objective"] < best:
                best = t["objective"]
            out.append(best)
        return out


def _flat(prefix: str, stats: Mapping) -> dict:
    """{op: {stat: v}} as metric names: `measured.read.p99.9` -> "measured.read.p999_us"."""
    return {
        f"{prefix}.{op}.{s.replace('.', '')}{'' if s == 'count' else '_us'}": v
        for op, d in stats.items()
        for s, v in d.items()
    }


def calibrate(
    trace: str | Path | Sequence[str | Path],
    format: str | None = None,
    config=None,
    space: str | Path | Space | None = None,
    trials: int = DEFAULT_TRIALS,
    workers: int | None = None,
    seed: int = 0,
    executor: str = "local",
    address: str | None = None,
    progress: bool = True,
) -> Calibration:
    """Fit the space's parameters to the trace's measured latencies (module docstring).

    trace: one trace or several (a list; every trial runs each, and the objective is the mean of
    their errors); format applies to each (default: detect each). config: the starting
    configuration (TOML path, dict or Config; default the package's base.toml); the trace
    replaces its workload. space: a space file or Space (default the
    package's space.toml). trials: simulations to run; workers: how many at once (default all
    cores). The first trial is the base configuration's own values of the keys within bounds."""
    if trials < 1:
        raise CalibrationError(f"trials must be >= 1, not {trials}")
    if workers is not None and workers < 1:
        raise CalibrationError(f"workers must be >= 1, not {workers}")
    if executor not in EXECUTORS:
        raise CalibrationError(f"executor must be one of {', '.join(EXECUTORS)}, not `{executor}`")
    t0 = time.monotonic()
    paths = [trace] if isinstance(trace, (str, Path)) else list(trace)
    if not paths:
        raise CalibrationError("calibrate needs at least one trace")
    fmts = [_format_of(p, format) for p in paths]
    cfgs = [_trace_config(config, p, f) for p, f in zip(paths, fmts, strict=True)]
    resolved = _resolved(cfgs[0], f"configuration {config or DEFAULT_BASE}")
    known = api.config_columns(resolved)
    sp = space if isinstance(space, Space) else load_space(space, known)
    meas = [{op: M.stats(d) for op, d in M.measured(p, f).items()} for p, f in zip(paths, fmts, strict=True)]
    for p, m in zip(paths, meas, strict=True):
        for t in M.targets_missing(sp.targets, m):
            print(f"warning: target {t}: {p} has no such requests; not fitted on it", file=sys.stderr)
    _resolved(api.Config(_task(0, _midpoint(sp), cfgs[0])["config"]), "a trial's configuration (the space's midpoint)")

    traces = [str(Path(p).resolve()) for p in paths]
    cal = Calibration(traces, fmts, sp, cfgs[0].to_dict(), seed, meas, wall_s=0.0)
    study = _study(sp, known, seed)
    n_workers = max(1, min(workers or os.cpu_count() or 1, trials))
    cluster = _dask_cluster(n_workers) if executor == "dask" and not address else None
    where = address or (cluster.scheduler_address if cluster is not None else None)
    shown = _Shown(trials, progress)
    try:
        while len(cal.trials) < trials:
            batch = [study.ask() for _ in range(min(n_workers, trials - len(cal.trials)))]
            n = len(cfgs)
            tasks = []  # per trial, its run on each trace: trial k's on trace j is task k·n + j
            for t in batch:
                values = _values(sp, t)
                tasks.append([_task(t.number * n + j, values, c) for j, c in enumerate(cfgs)])
            records: dict[int, dict] = {}

            def on_record(rec: dict, records=records) -> None:
                records[rec["cell"]] = rec

            flat = [task for each in tasks for task in each]
            if executor == "local":
                run_local(flat, n_workers, on_record, fn=run_trial)
            else:
                run_dask(flat, where, n_workers, on_record, fn=run_trial)
            for trial, each in zip(batch, tasks, strict=True):
                recs = [records.get(task["index"]) for task in each]
                cal.trials.append(_tell(study, trial, each[0]["values"], recs, sp, meas))
            shown.update(cal)
    finally:
        if cluster is not None:
            cluster.close()
    cal.wall_s = time.monotonic() - t0
    cal.best  # noqa: B018 -- raises when no trial ran
    shown.done(cal)
    return cal


def _study(sp: Space, known: Mapping, seed: int):
    try:
        import optuna
    except ImportError:
        raise CalibrationError("calibrate needs the `optuna` package: pip install 'optuna>=3'") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # multivariate TPE is marked experimental
        sampler = optuna.samplers.TPESampler(seed=seed, multivariate=True, n_startup_trials=16)
    study = optuna.create_study(direction="minimize", sampler=sampler)
    start = {}
    for p in sp.params:
        v = known.get(p.key)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            v = p.factor(known)  # a relative parameter starts at its base factor
            if p.low <= v <= p.high:
                start[p.key] = int(v) if p.integer else float(v)
    if start:
        study.enqueue_trial(start)
    return study


def _values(sp: Space, trial) -> dict:
    """A trial's configuration values."""
    suggest = {True: lambda p: trial.suggest_int(p.key, int(p.low), int(p.high), log=p.log),
               False: lambda p: trial.suggest_float(p.key, p.low, p.high, log=p.log)}  # fmt: skip
    return _configured(sp, {p.key: suggest[p.integer](p) for p in sp.params})


def _midpoint(sp: Space) -> dict:
    mid = {p.key: p.clip(math.sqrt(p.low * p.high) if p.log else (p.low + p.high) / 2) for p in sp.params}
    return _configured(sp, mid)


def _configured(sp: Space, raw: Mapping) -> dict:
    """Configuration values of the optimiser's values `raw`: a relative parameter's factor times
    its reference's value, each rounded as run."""
    out = {}
    for p in sp.params:
        v = raw[p.key]
        out[p.key] = _rounded(p, v * out[p.relative_to] if p.relative_to else v)
    return out


def _tell(study, trial, values: dict, recs: list, sp: Space, meas: list) -> dict:
    """Score a trial from its runs (one per trace, in order) and tell the optimiser."""
    from optuna.trial import TrialState

    row = {"number": trial.number, "values": values, "status": "failed", "objective": math.nan, "wall_s": None}
    bad = [r for r in recs if r is None or r["status"] != "ok"]
    if bad:
        row["error"] = (bad[0] or {}).get("error") or "the trial's run was lost"
        study.tell(trial, state=TrialState.FAIL)
        return row
    sims = [{op: M.stats(d) for op, d in M.simulated(r["histograms"]).items()} for r in recs]
    errors = [M.objective(sp.targets, m, s) for m, s in zip(meas, sims, strict=True)]
    value = sum(errors) / len(errors)
    rec = recs[0]
    row.update(status="ok", error=None, objective=value, errors=errors, predicted=sims[0])
    row.update(wall_s=sum(r.get("wall_s") or 0.0 for r in recs))
    row.update(metrics=rec["metrics"], config=rec["config"], histograms=rec["histograms"], warnings=rec["warnings"])
    if math.isfinite(value):
        study.tell(trial, value)
    else:
        study.tell(trial, state=TrialState.FAIL)
    return row


def _dask_cluster(workers: int):
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise CalibrationError("the dask executor needs the `distributed` package") from None
    return local_cluster(workers)


class _Shown:
    """Progress on stderr: a line at about every tenth of the trials, and one at the end."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.enabled, self.next = total, enabled, 0.1
        self.t0 = time.monotonic()

    def line(self, cal: Calibration) -> str:
        n = len(cal.trials)
        try:
            b = cal.best
            best = f"best error {b['objective']:.2%} (trial {b['number']})"
        except CalibrationError:
            best = "no trial ran yet"
        failed = sum(t["status"] != "ok" for t in cal.trials)
        extra = f", {failed} failed" if failed else ""
        return f"calibrate: {n}/{self.total} trials{extra}, {best}, {time.monotonic() - self.t0:.0f} s"

    def update(self, cal: Calibration) -> None:
        if self.enabled and len(cal.trials) >= self.next * self.total and len(cal.trials) < self.total:
            print(self.line(cal), file=sys.stderr, flush=True)
            while self.next * self.total <= len(cal.trials):
                self.next += 0.1

    def done(self, cal: Calibration) -> None:
        if self.enabled:
            print(self.line(cal), file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# validate


@dataclass
class Validation:
    """A profile's prediction of a trace against the trace's measured latencies."""

    trace: str
    format: str
    config: dict  # the resolved configuration run
    targets: tuple
    measured: dict  # op -> Dist
    predicted: dict  # op -> Dist

    def stats(self) -> dict:
        """{op: {stat: {"measured", "predicted", "rel_error"}}} for count, mean, p50 … p99.9."""
        out = {}
        for op in M.OPS:
            m, p = M.stats(self.measured[op]), M.stats(self.predicted[op])
            out[op] = {s: {"measured": m[s], "predicted": p[s], "rel_error": M.rel_error(p[s], m[s])} for s in m}
        return out

    @property
    def objective(self) -> float:
        st = self.stats()
        meas = {op: {s: v["measured"] for s, v in d.items()} for op, d in st.items()}
        pred = {op: {s: v["predicted"] for s, v in d.items()} for op, d in st.items()}
        return M.objective(self.targets, meas, pred)

    def ks(self) -> dict:
        return {op: M.ks_distance(self.measured[op], self.predicted[op]) for op in M.OPS}

    def to_dict(self) -> dict:
        return {
            "trace": self.trace,
            "format": self.format,
            "targets": list(self.targets),
            "objective": self.objective,
            "ks": self.ks(),
            "ops": self.stats(),
        }

    def rows(self) -> list[list[str]]:
        """The comparison as text rows: op, statistic, measured, predicted, error."""
        return [
            [op, s, _q(v["measured"], s), _q(v["predicted"], s), _pct(v["rel_error"])]
            for op, d in self.stats().items()
            for s, v in d.items()
        ]

    def summary(self) -> list[str]:
        """The objective and the KS distances, a line each."""
        return [
            f"objective    {_pct(self.objective, signed=False)} (mean |error| of {', '.join(self.targets)})",
            "KS distance  " + ", ".join(f"{op} {_f(v)}" for op, v in self.ks().items()),
        ]

    def plot(self, path: str | Path | None = None):
        """Measured and simulated latency CDFs per operation, on a log axis; returns the Figure
        (and writes it to `path`: .png, .svg or .pdf)."""
        from ..report import figures as F

        ops = [op for op in M.OPS if self.measured[op][1].sum() or self.predicted[op][1].sum()]
        with F.style():
            fig, axs, _ = F._panel_grid(len(ops), F.PANEL[0], F.PANEL[1], ["measured", "simulated"], sharey=False)
            for ax, op in zip(axs, ops, strict=True):
                curves = [
                    (label, *F._mean_cdf([d]))
                    for label, d in (("measured", self.measured[op]), ("simulated", self.predicted[op]))
                    if d[1].sum()
                ]
                F._draw_cdfs(ax, curves, f"latency.{op}_us", tail=False, logx=True)
                ax.set_title(f"{op}s: KS distance {_f(M.ks_distance(self.measured[op], self.predicted[op]))}")
            F.figure_legend(fig, order=["measured", "simulated"])
            if self.config:
                F._suptitle(fig, F.subtitle_of(self.config))
            fig = F._finish(fig, *axs)
        if path is not None:
            F.save_as(fig, path)
        return fig

    def save_plot(self, path: str | Path) -> Path:
        """Write the CDFs (`plot`) to `path` (.png, .svg or .pdf); returns the path written."""
        from ..report import figures as F

        fig = self.plot()
        try:
            return F.save_as(fig, path)
        finally:
            F.close_figure(fig)


def _q(v: float, stat: str) -> str:
    if stat == "count":
        return f"{v:,.0f}"
    return "-" if not math.isfinite(v) else f"{v:,.1f} µs"


def _pct(v: float, signed: bool = True) -> str:
    return "-" if not math.isfinite(v) else (f"{v:+.1%}" if signed else f"{v:.1%}")


def _f(v: float) -> str:
    return "-" if not math.isfinite(v) else f"{v:.3f}"


def validate(
    trace: str | Path,
    config,
    format: str | None = None,
    targets=None,
    progress: Callable[[int, int], None] | None = None,
) -> Validation:
    """Run `config` (a profile: TOML path, dict or Config, in timed mode) on `trace` and compare its
    latencies with the trace's measured ones. `targets`: the objective's statistics (default the
    package space's)."""
    fmt = _format_of(trace, format)
    cfg = _trace_config(config, trace, fmt)
    _resolved(cfg, f"configuration {config}")
    meas = M.measured(trace, fmt, "validate")
    try:
        res = api.simulate(cfg, progress)
    except SsdlabError as e:
        raise CalibrationError(f"{trace}: {e}") from None
    tg = tuple(targets) if targets is not None else load_space().targets
    for t in tg:
        parse_target(t)
    return Validation(str(Path(trace).resolve()), fmt, res.config, tg, meas, M.simulated(res.histograms))
