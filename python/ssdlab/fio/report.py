"""A simulated run written in fio's output formats, so that scripts that parse fio parse ssdlab.

`fio_json` gives fio 3.x's `--output-format=json` document, `fio_normal` its human-readable
text. The input is what the simulation measured, per job and thread: for each direction the I/Os,
bytes, measured seconds, a completion-latency histogram and each I/O's submission latency; per
thread the CPU time its I/Os took. Every clat statistic (min, max, mean, standard deviation,
percentiles, the latency_ns/us/ms distribution, which is of clat as in fio) comes from the
histogram.

The host model's part (`host.submit_us`, `host.cpu_us`; `run.simulate_jobfile` fills it in):
- slat_ns: each I/O's submission latency is the model's constant submission cost, so min = max
  = mean = it, stddev 0, N = the I/Os (percentiles all it, with `slat_percentiles`); 0 when no
  submission cost is simulated. lat_ns (submission + completion) is the clat histogram shifted
  by each thread's slat (clat_ns itself when it is 0);
- usr_cpu + sys_cpu: the share of the entry's thread time spent on the CPU, in percent of one
  core per thread as fio computes it (CPU seconds summed over the threads / their run seconds
  summed × 100): fit.points reads (usr + sys) / 100 × threads / IOPS back as the CPU time per
  I/O. How that time splits between user and kernel is not modelled: it is split at a fixed
  `USR_SHARE` of it in usr_cpu, the median usr / (usr + sys) of the 99 fio outputs in
  ../shared/devices (0.34; 0.23 to 0.45 among them).
- ctx: the thread's context switches, the completions it slept before and woke for (the host
  model's `flow.<i>.host.wakes`; summed over a reporting group's threads). fio counts each as
  one: its outputs in ../shared/devices show ctx = the I/Os at QD 1, where every completion
  wakes the thread, falling towards 0 as the thread's core fills.

What the simulation cannot know is written as fio writes it when it has no data:
- bw_min, bw_max, bw_agg, bw_mean, bw_dev, bw_samples and iops_min ... iops_samples: 0, as fio
  writes them with no per-interval samples (disable_bw_measurement);
- majf, minf: 0 (no page faults are modelled);
- iodepth_submit and iodepth_complete: 0 everywhere; iodepth_level: 100% at the job's
  `iodepth` (the simulated queue is kept full);
- error 0, eta 0, pid 0, short_ios and drop_ios 0, sync: none; disk_util: an empty list;
- elapsed: the longest measured time plus ramp_time; `time` is `timestamp` in UTC.

Rates (iops, bw_bytes, bw) divide by the exact simulated seconds; `runtime` is those seconds in
whole ms. Entries follow fio: one per thread, or with `group_reporting` one for the consecutive
group-reporting jobs of a reporting group (a group starts at a job with `stonewall`,
`wait_for_previous` or `new_group`), named by its first job, sums of I/Os and bytes, the longest
runtime, merged histograms and `job_runtime` summed over its threads. `unified_rw_reporting`
and `kb_base` are not applied.
"""

from __future__ import annotations

import math
import time
from bisect import bisect_right
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from .output import OPS, FioError, option_flag, option_int, parse_size, parse_time

DEFAULT_PERCENTILES = "1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99"
_MAX_PERCENTILES = 20  # fio's FIO_IO_U_LIST_MAX_LEN
# fio's latency distribution: a bucket holds values below its bound and at or above the one before.
_LAT_BOUNDS = (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000)
_LAT_MS_BOUNDS = (*_LAT_BOUNDS, 2000)
_LAT_MS_KEYS = (*map(str, _LAT_MS_BOUNDS), ">=2000")
_DEPTH_KEYS = ("1", "2", "4", "8", "16", "32", ">=64")
_SUBMIT_KEYS = ("0", "4", "8", "16", "32", "64", ">=64")
# The share of a thread's CPU time written as usr_cpu, the rest sys_cpu (module docstring).
USR_SHARE = 0.34


@dataclass
class SimOp:
    """One direction of one simulated thread: I/Os, bytes, the seconds measured, the
    completion latencies as a histogram of (value in ns, count), values ascending, and each
    I/O's submission latency (the host model's constant cost; 0: none simulated)."""

    ios: int
    io_bytes: int
    runtime_s: float
    clat_hist_ns: list[tuple[float, int]] = field(default_factory=list)
    slat_ns: float = 0.0


@dataclass
class SimThread:
    """One submitting thread; `ops` keys are "read", "write", "trim" (absent: none of it);
    `cpu_s`: the CPU seconds its I/Os took over the measured window (0: no host CPU simulated);
    `ctx`: its context switches, the completions it slept before and woke for."""

    ops: dict[str, SimOp]
    cpu_s: float = 0.0
    ctx: int = 0


@dataclass
class SimJob:
    """One job section as simulated: its name, options (its own, or stacked on the global
    ones: those equal to the global ones are not repeated in `job options`) and threads."""

    name: str
    options: dict[str, str]
    threads: list[SimThread]


@dataclass
class _Dir:
    """A direction's I/Os, bytes, seconds and histograms (ns): clat, slat and lat (slat + clat)."""

    ios: int
    io_bytes: int
    runtime_s: float
    hist: list[tuple[float, int]] = field(default_factory=list)
    slat_hist: list[tuple[float, int]] = field(default_factory=list)
    lat_hist: list[tuple[float, int]] = field(default_factory=list)


@dataclass
class _Entry:
    """One entry of fio's report: a thread, or a reporting group's threads summed."""

    name: str
    groupid: int
    members: int
    own: dict[str, str]
    options: dict[str, str]
    dirs: dict[str, _Dir]
    job_runtime_ms: int
    # CPU seconds, run seconds and context switches of its threads, summed
    cpu_s: float = 0.0
    thread_s: float = 0.0
    ctx: int = 0


# --- latency statistics from a histogram ---------------------------------------------------


def _normalise(hist) -> list[tuple[float, int]]:
    """Histogram pairs with equal values merged, zero counts dropped, values ascending."""
    counts: Counter[float] = Counter()
    for value, count in hist:
        if count < 0 or value < 0:
            raise ValueError(f"latency histogram entry ({value}, {count}) is negative")
        if count:
            counts[float(value)] += int(count)
    return sorted(counts.items())


def _lat_stats(hist: list[tuple[float, int]]) -> dict:
    """fio's min, max, mean, stddev (of a sample: n - 1) and N of a histogram."""
    n = sum(c for _, c in hist)
    if not n:
        return {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}
    mean = sum(v * c for v, c in hist) / n
    var = sum(c * (v - mean) ** 2 for v, c in hist) / (n - 1) if n > 1 else 0.0
    return {"min": round(hist[0][0]), "max": round(hist[-1][0]), "mean": mean, "stddev": math.sqrt(var), "N": n}


def percentile(hist: list[tuple[float, int]], q: Fraction | float | str) -> float:
    """The nearest-rank q-th percentile of a histogram: the value of rank ceil(q/100 * N), as
    fio picks it from its own histogram (exact arithmetic, so 99.9% of 1000 is rank 999)."""
    return _ranked(_normalise(hist), [Fraction(str(q))])[0]


def _ranked(hist: list[tuple[float, int]], qs: list[Fraction]) -> list[float]:
    """The nearest-rank percentiles `qs` (ascending) of a normalised histogram, in one pass."""
    n = sum(c for _, c in hist)
    if not n:
        raise ValueError("percentile of an empty histogram")
    ranks = [max(1, math.ceil(q * n / 100)) for q in qs]
    out, seen, i = [], 0, 0
    for value, count in hist:
        seen += count
        while i < len(ranks) and seen >= ranks[i]:
            out.append(value)
            i += 1
    return out + [hist[-1][0]] * (len(ranks) - i)


@dataclass(frozen=True)
class _Percentiles:
    """A job's percentile list: exact values, fio's keys, and the decimals fio prints."""

    values: tuple[Fraction, ...]
    precision: int

    @property
    def keys(self) -> list[str]:
        return [f"{float(q):f}" for q in self.values]


def _percentile_list(options: Mapping[str, str], job: str) -> _Percentiles:
    text = options.get("percentile_list", DEFAULT_PERCENTILES)
    parts = [s.strip() for s in str(text).split(":") if s.strip()]
    if not parts or len(parts) > _MAX_PERCENTILES:
        raise FioError(f"job `{job}`: option `percentile_list={text}`: 1 to {_MAX_PERCENTILES} values, `:` between")
    values = set()
    for s in parts:
        try:
            q = Fraction(s)
        except (ValueError, ZeroDivisionError):
            raise FioError(f"job `{job}`: option `percentile_list`: `{s}` is not a number") from None
        if not 0 < q <= 100:
            raise FioError(f"job `{job}`: option `percentile_list`: `{s}` is not in (0, 100]")
        values.add(q)
    precision = max(len(s.partition(".")[2]) for s in parts)
    return _Percentiles(tuple(sorted(values)), precision)


def _pct_values(hist: list[tuple[float, int]], pct: _Percentiles) -> list[int]:
    return [round(v) for v in _ranked(hist, list(pct.values))]


# --- entries: threads, or groups of them ---------------------------------------------------


def _groupids(jobs: list[SimJob], glob: Mapping[str, str]) -> list[int]:
    """fio's reporting groups: a job with stonewall or new_group after others starts a new one."""
    ids, gid = [], 0
    for i, job in enumerate(jobs):
        o = {**glob, **job.options}
        if i and any(option_flag(o, k) for k in ("stonewall", "wait_for_previous", "new_group")):
            gid += 1
        ids.append(gid)
    return ids


def _thread_dirs(t: SimThread, job: str) -> dict[str, _Dir]:
    dirs = {}
    for op, s in t.ops.items():
        if op not in OPS:
            raise ValueError(f"job {job}: direction {op!r} is not one of {OPS}")
        if s.ios < 0 or s.io_bytes < 0 or s.runtime_s < 0 or (s.ios and not s.runtime_s > 0):
            raise ValueError(f"job {job}: {op}: I/Os, bytes and seconds must be >= 0 (seconds > 0 with I/Os)")
        clat = _normalise(s.clat_hist_ns)
        slat = _normalise([(s.slat_ns, s.ios)])
        dirs[op] = _Dir(s.ios, s.io_bytes, float(s.runtime_s), clat, slat, [(v + s.slat_ns, c) for v, c in clat])
    if t.cpu_s < 0:
        raise ValueError(f"job {job}: CPU seconds {t.cpu_s} are negative")
    return dirs


def _thread_s(dirs: dict[str, _Dir]) -> float:
    return max((d.runtime_s for d in dirs.values()), default=0.0)


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000)) if seconds > 0 else 0


def _merge(a: dict[str, _Dir], b: dict[str, _Dir]) -> dict[str, _Dir]:
    """Two sets of directions summed as fio sums a group: I/Os and bytes added, the longer
    runtime, histograms merged."""
    out = dict(a)
    for op, d in b.items():
        if op in out:
            o = out[op]
            runtime_s = max(o.runtime_s, d.runtime_s)
            hists = (o.hist + d.hist, o.slat_hist + d.slat_hist, o.lat_hist + d.lat_hist)
            out[op] = _Dir(o.ios + d.ios, o.io_bytes + d.io_bytes, runtime_s, *hists)
        else:
            out[op] = d
    return out


def _entries(jobs: list[SimJob], glob: Mapping[str, str]) -> list[_Entry]:
    entries: list[_Entry] = []
    grouped_last = False
    for job, gid in zip(jobs, _groupids(jobs, glob), strict=True):
        if not job.threads:
            raise ValueError(f"job {job.name}: no thread")
        options = {**glob, **{str(k): str(v) for k, v in job.options.items()}}
        own = {k: v for k, v in options.items() if k not in glob or glob[k] != v}
        threads = [(t, _thread_dirs(t, job.name)) for t in job.threads]
        if not option_flag(options, "group_reporting"):
            for t, d in threads:
                entries.append(
                    _Entry(job.name, gid, 1, own, options, d, _ms(_thread_s(d)), t.cpu_s, _thread_s(d), t.ctx)
                )
            grouped_last = False
            continue
        if not (grouped_last and entries[-1].groupid == gid):
            entries.append(_Entry(job.name, gid, 0, own, options, {}, 0))
        e = entries[-1]
        for t, d in threads:
            e.dirs, e.members, e.job_runtime_ms = _merge(e.dirs, d), e.members + 1, e.job_runtime_ms + _ms(_thread_s(d))
            e.cpu_s, e.thread_s, e.ctx = e.cpu_s + t.cpu_s, e.thread_s + _thread_s(d), e.ctx + t.ctx
        e.own, e.options = own, options  # fio shows the last member's options
        grouped_last = True
    for e in entries:
        for d in e.dirs.values():
            d.hist, d.slat_hist, d.lat_hist = _normalise(d.hist), _normalise(d.slat_hist), _normalise(d.lat_hist)
    return entries


def _cpu_pct(e: _Entry) -> tuple[float, float]:
    """fio's usr_cpu and sys_cpu: the entry's CPU seconds over its threads' run seconds, in
    percent, split at USR_SHARE (module docstring)."""
    busy = 100.0 * e.cpu_s / e.thread_s if e.thread_s > 0 else 0.0
    return busy * USR_SHARE, busy * (1 - USR_SHARE)


# --- JSON ----------------------------------------------------------------------------------


def _f6(x: float) -> float:
    """A float as fio prints it (%f: six decimals)."""
    return round(float(x), 6)


def _lat_json(hist: list[tuple[float, int]], pct: _Percentiles | None) -> dict:
    s = _lat_stats(hist)
    out = {**s, "mean": _f6(s["mean"]), "stddev": _f6(s["stddev"])}
    if pct is not None and s["N"]:
        out["percentile"] = dict(zip(pct.keys, _pct_values(hist, pct), strict=True))
    return out


def _zero_lat(n: int = 0) -> dict:
    return {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": n}


def _rates(d: _Dir) -> tuple[float, int]:
    """IOPS and bytes per second over the exact simulated seconds (0 without time)."""
    if d.runtime_s <= 0:
        return 0.0, 0
    return d.ios / d.runtime_s, int(d.io_bytes / d.runtime_s)


def _dir_json(d: _Dir | None, options: Mapping[str, str], pct: _Percentiles) -> dict:
    d = d or _Dir(0, 0, 0.0)
    iops, bw_bytes = _rates(d)
    clat_pct = pct if option_flag(options, "clat_percentiles", True) else None
    lat_pct = pct if option_flag(options, "lat_percentiles") else None
    slat_pct = pct if option_flag(options, "slat_percentiles") else None
    out = {
        "io_bytes": d.io_bytes,
        "io_kbytes": d.io_bytes >> 10,
        "bw_bytes": bw_bytes,
        "bw": bw_bytes // 1024,
        "iops": _f6(iops),
        "runtime": _ms(d.runtime_s),
        "total_ios": d.ios,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": _lat_json(d.slat_hist, slat_pct),
        "clat_ns": _lat_json(d.hist, clat_pct),
        "lat_ns": _lat_json(d.lat_hist, lat_pct),
    }
    for k in ("bw_min", "bw_max", "bw_agg", "bw_mean", "bw_dev", "bw_samples"):
        out[k] = 0.0 if k in ("bw_agg", "bw_mean", "bw_dev") else 0
    for k in ("iops_min", "iops_max", "iops_mean", "iops_stddev", "iops_samples"):
        out[k] = 0.0 if k in ("iops_mean", "iops_stddev") else 0
    return out


def _all_hist(e: _Entry) -> list[tuple[float, int]]:
    return _normalise([pair for d in e.dirs.values() for pair in d.hist])


def _lat_distribution(hist: list[tuple[float, int]]) -> tuple[list[float], list[float], list[float]]:
    """fio's latency_ns, latency_us and latency_ms: the percentage of completions per bucket
    (a bucket with any completion shows at least 0.01)."""
    ns, us, ms = [0] * len(_LAT_BOUNDS), [0] * len(_LAT_BOUNDS), [0] * len(_LAT_MS_KEYS)
    for value, count in hist:
        v = int(round(value))
        if v < 1000:
            ns[bisect_right(_LAT_BOUNDS, v)] += count
        elif v < 1_000_000:
            us[bisect_right(_LAT_BOUNDS, v // 1000)] += count
        else:
            ms[bisect_right(_LAT_MS_BOUNDS, v // 1_000_000)] += count
    total = sum(c for _, c in hist)

    def pct(counts: list[int]) -> list[float]:
        return [0.0 if not c else max(0.01, _f6(100.0 * c / total)) for c in counts]

    return pct(ns), pct(us), pct(ms)


def _depth_level(options: Mapping[str, str], ios: int, job: str) -> list[float]:
    levels = [0.0] * len(_DEPTH_KEYS)
    if ios:
        levels[bisect_right((2, 4, 8, 16, 32, 64), option_int(options, "iodepth", 1))] = 100.0
    return levels


def _entry_json(e: _Entry, elapsed: int) -> dict:
    pct = _percentile_list(e.options, e.name)
    out: dict = {"jobname": e.name, "groupid": e.groupid, "error": 0, "eta": 0, "elapsed": elapsed}
    if e.own:
        out["job options"] = dict(e.own)
    for op in OPS:
        out[op] = _dir_json(e.dirs.get(op), e.options, pct)
    out["sync"] = {"total_ios": 0, "lat_ns": _zero_lat()}
    usr_pct, sys_pct = _cpu_pct(e)
    out |= {"job_runtime": e.job_runtime_ms, "usr_cpu": _f6(usr_pct), "sys_cpu": _f6(sys_pct)}
    out |= {"ctx": e.ctx, "majf": 0, "minf": 0}
    ios = sum(d.ios for d in e.dirs.values())
    out["iodepth_level"] = dict(zip(_DEPTH_KEYS, _depth_level(e.options, ios, e.name), strict=True))
    out["iodepth_submit"] = dict.fromkeys(_SUBMIT_KEYS, 0.0)
    out["iodepth_complete"] = dict.fromkeys(_SUBMIT_KEYS, 0.0)
    ns, us, ms = _lat_distribution(_all_hist(e))
    out["latency_ns"] = dict(zip(map(str, _LAT_BOUNDS), ns, strict=True))
    out["latency_us"] = dict(zip(map(str, _LAT_BOUNDS), us, strict=True))
    out["latency_ms"] = dict(zip(_LAT_MS_KEYS, ms, strict=True))
    depth = option_int(e.options, "iodepth", 1)
    out |= {"latency_depth": depth, "latency_target": 0, "latency_percentile": 100.0, "latency_window": 0}
    return out


def _elapsed(entries: list[_Entry]) -> int:
    longest = max((d.runtime_s for e in entries for d in e.dirs.values()), default=0.0)
    ramps = [parse_time(e.options["ramp_time"], "ramp_time") for e in entries if "ramp_time" in e.options]
    ramp = max(ramps, default=0.0)
    return round(longest + ramp)


def _clock(timestamp: int) -> str:
    """fio's `time` (C's ctime layout), in UTC so that a report does not depend on the host."""
    return time.asctime(time.gmtime(timestamp))


def fio_json(
    jobs: list[SimJob],
    global_options: Mapping[str, str],
    *,
    fio_version: str = "ssdlab-fio",
    timestamp: int = 0,
) -> dict:
    """The simulated run as fio 3.x's `--output-format=json` document (a dict for json.dump).
    Raises FioError for an option it cannot read (`percentile_list`, `iodepth`)."""
    glob = {str(k): str(v) for k, v in global_options.items()}
    entries = _entries(list(jobs), glob)
    elapsed = _elapsed(entries)
    doc: dict = {
        "fio version": fio_version,
        "timestamp": int(timestamp),
        "timestamp_ms": int(timestamp) * 1000,
        "time": _clock(timestamp),
    }
    if glob:
        doc["global options"] = glob
    doc["jobs"] = [_entry_json(e, elapsed) for e in entries]
    doc["disk_util"] = []
    return doc


# --- normal (human-readable) text ----------------------------------------------------------

_SI = ("", "k", "M", "G", "T", "P", "E")
_IEC = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def _num2str(num: float, maxlen: int, pow2: bool, unit: str = "") -> str:
    """A count in fio's compact form: at most `maxlen` digits (the point counted), a unit prefix
    for each factor of 1000 (1024 with `pow2`) divided out, rounded at the last digit kept."""
    step, prefixes = (1024, _IEC) if pow2 else (1000, _SI)
    num, index, rest = int(num), 0, None
    while len(str(num)) > maxlen and index < len(prefixes) - 1:
        num, rest = divmod(num, step)
        index += 1
    if rest is None:
        return f"{num}{prefixes[index]}{unit}"
    room = maxlen - len(str(num)) - 1
    if room <= 0:
        return f"{num + (rest >= step // 2)}{prefixes[index]}{unit}"
    frac = f"{rest / step:.{room}f}"
    if frac.startswith("1"):
        num += 1
    return f"{num}.{frac[2:]}{prefixes[index]}{unit}"


def _lat_line(name: str, s: dict) -> str:
    """fio's `clat (usec): min=..., max=..., avg=..., stdev=...`, in the unit fio picks."""
    lo, hi, mean, dev, unit = s["min"], s["max"], s["mean"], s["stddev"], "nsec"
    for div, u, lo_min, hi_min in ((1_000_000, "msec", 2_000_000, 99_999_999), (1000, "usec", 2000, 99_999)):
        if lo > lo_min and hi > hi_min and dev > div:
            lo, hi, mean, dev, unit = lo // div, hi // div, mean / div, dev / div, u
            break
    lo_s, hi_s = _num2str(lo, 6, False), _num2str(hi, 6, False)
    return f"    {name} ({unit}): min={lo_s}, max={hi_s}, avg={mean:5.02f}, stdev={dev:5.02f}"


def _pct_block(name: str, hist: list[tuple[float, int]], pct: _Percentiles) -> list[str]:
    """fio's percentile block: `|  1.00th=[   62],` a few per line, in nsec, usec or msec."""
    vals = _pct_values(hist, pct)
    lo, hi = min(vals), max(vals)
    if lo > 2_000_000 and hi > 99_999_999:
        unit, steps = "msec", 2
    elif lo > 2000 and hi > 99_999:
        unit, steps = "usec", 1
    else:
        unit, steps = "nsec", 0
    for _ in range(steps):
        vals = [(v + 999) // 1000 for v in vals]
    width = max(5, len(str(hi // 1000**steps)))
    per_line = 73 // (pct.precision + 10 + width)
    p = pct.precision
    cells = [f" {float(q):{p + 3}.{p}f}th=[{v:{width}d}]" for q, v in zip(pct.values, vals, strict=True)]
    rows = [cells[i : i + per_line] for i in range(0, len(cells), per_line)]
    lines = ["     |" + ",".join(r) + ("," if i < len(rows) - 1 else "") for i, r in enumerate(rows)]
    return [f"    {name} percentiles ({unit}):", *lines]


def _dist_lines(values: list[float], keys: tuple[str, ...], unit: str) -> list[str]:
    shown = [f"{k}={v:3.2f}%" for k, v in zip(keys, values, strict=True) if v > 0]
    return [f"  lat ({unit})   : " + ", ".join(shown[i : i + 5]) for i in range(0, len(shown), 5)]


def _dir_lines(op: str, d: _Dir, options: Mapping[str, str], pct: _Percentiles) -> list[str]:
    iops, bw = _rates(d)
    rate, rate_alt = _num2str(bw, 4, True, "B/s"), _num2str(bw, 4, False, "B/s")
    io = _num2str(d.io_bytes, 4, True, "B")
    lines = [f"  {op}: IOPS={_num2str(iops, 4, False)}, BW={rate} ({rate_alt})({io}/{_ms(d.runtime_s)}msec)"]
    slat, clat = _lat_stats(d.slat_hist), _lat_stats(d.hist)
    if slat["N"]:
        lines.append(_lat_line("slat", slat))
    if clat["N"]:
        lines += [_lat_line("clat", clat), _lat_line(" lat", _lat_stats(d.lat_hist))]
    if slat["N"] and option_flag(options, "slat_percentiles"):
        lines += _pct_block("slat", d.slat_hist, pct)
    if clat["N"] and option_flag(options, "clat_percentiles", True):
        lines += _pct_block("clat", d.hist, pct)
    if clat["N"] and option_flag(options, "lat_percentiles"):
        lines += _pct_block("lat", d.lat_hist, pct)
    return lines


def _entry_text(e: _Entry, stamp: str) -> list[str]:
    pct = _percentile_list(e.options, e.name)
    lines = [f"{e.name}: (groupid={e.groupid}, jobs={e.members}): err= 0: pid=0: {stamp}"]
    for op in OPS:
        d = e.dirs.get(op)
        if d is not None and d.io_bytes and d.runtime_s > 0:
            lines += _dir_lines(op, d, e.options, pct)
    ns, us, ms = _lat_distribution(_all_hist(e))
    keys = tuple(map(str, _LAT_BOUNDS))
    lines += _dist_lines(ns, keys, "nsec") + _dist_lines(us, keys, "usec") + _dist_lines(ms, _LAT_MS_KEYS, "msec")
    ios = [e.dirs[op].ios if op in e.dirs else 0 for op in OPS]
    levels = _depth_level(e.options, sum(ios), e.name)
    depths = ", ".join(f"{k}={v:3.1f}%" for k, v in zip(_DEPTH_KEYS, levels, strict=True))
    zeros = ", ".join(f"{k}=0.0%" for k in _SUBMIT_KEYS)
    total = ",".join(map(str, ios))
    usr_pct, sys_pct = _cpu_pct(e)
    return [
        *lines,
        f"  cpu          : usr={usr_pct:3.2f}%, sys={sys_pct:3.2f}%, ctx={e.ctx}, majf=0, minf=0",
        f"  IO depths    : {depths}",
        f"     submit    : {zeros}",
        f"     complete  : {zeros}",
        f"     issued rwts: total={total},0 short=0,0,0,0 dropped=0,0,0,0",
        f"     latency   : target=0, window=0, percentile=100.00%, depth={option_int(e.options, 'iodepth', 1)}",
    ]


def _group_lines(gid: int, entries: list[_Entry]) -> list[str]:
    """fio's `Run status group N (all jobs):` with each direction's aggregate bandwidth, the
    slowest and fastest entry's, the bytes and the shortest and longest runtime."""
    lines = ["", f"Run status group {gid} (all jobs):"]
    for op, label in zip(OPS, ("   READ", "  WRITE", "   TRIM"), strict=True):
        ds = [e.dirs[op] for e in entries if op in e.dirs and e.dirs[op].runtime_s > 0]
        if not ds:
            continue
        total, longest = sum(d.io_bytes for d in ds), max(d.runtime_s for d in ds)
        bws = [_rates(d)[1] for d in ds]
        agg = int(total / longest)
        fmt = [(_num2str(x, 4, True, "B/s"), _num2str(x, 4, False, "B/s")) for x in (agg, min(bws), max(bws))]
        io = (_num2str(total, 4, True, "B"), _num2str(total, 4, False, "B"))
        runs = f"{min(_ms(d.runtime_s) for d in ds)}-{_ms(longest)}msec"
        lines.append(
            f"{label}: bw={fmt[0][0]} ({fmt[0][1]}), {fmt[1][0]}-{fmt[2][0]} ({fmt[1][1]}-{fmt[2][1]}), "
            f"io={io[0]} ({io[1]}), run={runs}"
        )
    return lines


def _bs_text(options: Mapping[str, str], job: str) -> str:
    """fio's `bs=(R) 4096B-4096B, (W) ..., (T) ...` of the job's description line."""
    parts = [p.strip() for p in str(options.get("bs", "4k")).split(",") if p.strip()] or ["4k"]
    sizes = [parse_size(parts[min(i, len(parts) - 1)], f"bs (job {job})") for i in range(3)]
    s = [_num2str(b, 4, True, "B") for b in sizes]
    return f"(R) {s[0]}-{s[0]}, (W) {s[1]}-{s[1]}, (T) {s[2]}-{s[2]}"


def _preamble(jobs: list[SimJob], glob: Mapping[str, str], gids: list[int], fio_version: str) -> list[str]:
    """What fio prints before running: one line per job section, its version, the threads."""
    lines = []
    for job, gid in zip(jobs, gids, strict=True):
        o = {**glob, **job.options}
        lines.append(
            f"{job.name}: (g={gid}): rw={o.get('rw', o.get('readwrite', 'read'))}, bs={_bs_text(o, job.name)}, "
            f"ioengine={o.get('ioengine', 'psync')}, iodepth={option_int(o, 'iodepth', 1)}"
        )
        if len(job.threads) > 1:
            lines.append("...")
    n = sum(len(j.threads) for j in jobs)
    return [*lines, fio_version, f"Starting {n} process{'es' if n > 1 else ''}", ""]


def fio_normal(
    jobs: list[SimJob],
    global_options: Mapping[str, str],
    *,
    fio_version: str = "ssdlab-fio",
    timestamp: int = 0,
) -> str:
    """The simulated run as fio's `--output-format=normal` text: the same numbers as
    `fio_json`, laid out as fio lays them out (for people; columns may differ in detail)."""
    glob = {str(k): str(v) for k, v in global_options.items()}
    jobs = list(jobs)
    entries = _entries(jobs, glob)
    stamp = _clock(timestamp)
    lines = _preamble(jobs, glob, _groupids(jobs, glob), fio_version)
    for e in entries:
        lines += _entry_text(e, stamp)
    for gid in sorted({e.groupid for e in entries}):
        lines += _group_lines(gid, [e for e in entries if e.groupid == gid])
    return "\n".join(lines) + "\n"
