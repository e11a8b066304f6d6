"""Measured against simulated latencies: the statistics (count, mean, nearest-rank percentiles),
the calibration objective and the Kolmogorov–Smirnov distance between the two distributions.

A measured distribution is the trace's per-request latencies (µs); a simulated one is a run's
histogram (`Result.histograms["latency.read_ns"]`: [(value ns, count)]), read in µs. Both are
reduced to (sorted values, counts) so the same code computes every statistic of either.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from .. import traces
from .space import OPS, CalibrationError, parse_target

PERCENTILES = {"p50": 0.50, "p90": 0.90, "p99": 0.99, "p99.9": 0.999}
STAT_NAMES = ("count", "mean", *PERCENTILES)
HISTOGRAMS = {"read": "latency.read_ns", "write": "latency.write_ns"}

Dist = tuple[np.ndarray, np.ndarray]  # (sorted distinct values in µs, counts)


# Where each format that can carry a device's latencies keeps them (docs/traces.md).
LATENCY_SOURCES = {
    "flashnet": "latency_us column",
    "msr": "ResponseTime column",
    "systor": "Response column",
    "blkparse": "C (completion) events after the D (dispatch) events replayed",
}
WITH_LATENCIES = "flashnet (latency_us), msr (ResponseTime), systor (Response) or blkparse (D→C)"


def _measured(path: str | Path, fmt: str) -> dict[str, np.ndarray] | None:
    """{"read": µs array, "write": µs array} of the trace's measured latencies, or None when it
    carries none: no field for them, or 0 in every record (what a writer without them puts in
    MSR's ResponseTime; no device completes every request in no time)."""
    got = traces.measured_latencies(str(path), format=fmt)
    arrays = {op: np.asarray(got[op], dtype=float) for op in OPS}
    if not any(np.any(v > 0) for v in arrays.values()):
        return None
    return arrays


def no_latencies_message(path: str | Path, fmt: str, command: str = "calibrate") -> str:
    """Why a trace cannot be calibrated or validated on: it holds no measured latency."""
    where = LATENCY_SOURCES.get(fmt)
    why = f"format {fmt}: {where} absent or 0 in every record" if where else f"format {fmt} records none"
    return f"trace {path} has no measured latencies ({why}); {command} needs a trace with them: {WITH_LATENCIES}"


# --------------------------------------------------------------------------------------------


def measured(path: str | Path, fmt: str, command: str = "calibrate") -> dict[str, Dist]:
    """The measured latency distribution of each operation of a trace; a CalibrationError when
    the trace has no measured latencies (`command`: what needs them, for the message)."""
    got = _measured(path, fmt)
    if got is None:
        raise CalibrationError(no_latencies_message(path, fmt, command))
    return {op: from_samples(got[op]) for op in OPS}


def from_samples(samples) -> Dist:
    values, counts = np.unique(np.asarray(samples, dtype=float), return_counts=True)
    return values, counts.astype(float)


def from_histogram(pairs: Sequence | None) -> Dist:
    """A run's histogram [(ns, count)] as a distribution in µs."""
    if not pairs:
        return np.zeros(0), np.zeros(0)
    arr = np.asarray(pairs, dtype=float)
    order = np.argsort(arr[:, 0])
    return arr[order, 0] / 1000.0, arr[order, 1]


def simulated(histograms: Mapping) -> dict[str, Dist]:
    return {op: from_histogram(histograms.get(name)) for op, name in HISTOGRAMS.items()}


def stats(dist: Dist) -> dict[str, float]:
    """count, mean and nearest-rank percentiles (the value of rank ⌈q·n⌉) of a distribution; NaN
    for every statistic but the count of an empty one."""
    values, counts = dist
    n = float(counts.sum())
    out = {"count": n}
    if n == 0:
        return out | {s: math.nan for s in ("mean", *PERCENTILES)}
    out["mean"] = float((values * counts).sum() / n)
    cum = np.cumsum(counts)
    for name, q in PERCENTILES.items():
        rank = max(1.0, math.ceil(q * n - 1e-9))
        out[name] = float(values[np.searchsorted(cum, rank)])
    return out


def rel_error(predicted: float, measured: float) -> float:
    """(predicted − measured) / measured; NaN when either is undefined or measured is 0."""
    if not (math.isfinite(predicted) and math.isfinite(measured)) or measured == 0:
        return math.nan
    return (predicted - measured) / measured


def objective(targets: Sequence[str], meas: Mapping[str, Mapping], pred: Mapping[str, Mapping]) -> float:
    """The mean of |relative error| over the targets ("read.p99", ...); infinite when a target the
    measurement has is missing from the prediction (say, a run with no reads)."""
    errs = []
    for t in targets:
        op, stat = parse_target(t)
        e = rel_error(pred[op][stat], meas[op][stat])
        if math.isnan(e):
            if math.isfinite(meas[op][stat]):
                return math.inf
            continue  # the measurement has no such requests: nothing to fit
        errs.append(abs(e))
    return float(np.mean(errs)) if errs else math.nan


def ks_distance(a: Dist, b: Dist) -> float:
    """Kolmogorov–Smirnov statistic sup |F_a − F_b| of two distributions (NaN if either is empty).
    Both CDFs are right-continuous steps, so the supremum is reached at one of their jumps."""
    if a[1].sum() == 0 or b[1].sum() == 0:
        return math.nan
    xs = np.union1d(a[0], b[0])
    return float(np.max(np.abs(cdf_at(a, xs) - cdf_at(b, xs))))


def cdf_at(dist: Dist, xs: np.ndarray) -> np.ndarray:
    values, counts = dist
    cum = np.concatenate([[0.0], np.cumsum(counts) / counts.sum()])
    return cum[np.searchsorted(values, xs, side="right")]


def targets_missing(targets: Sequence[str], meas: Mapping[str, Mapping]) -> list[str]:
    """The targets the measurement cannot give (no request of that operation)."""
    return [t for t in targets if not math.isfinite(meas[parse_target(t)[0]][parse_target(t)[1]])]
