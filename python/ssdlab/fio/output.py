"""fio's JSON output (`fio --output-format=json`, fio 3.x) read as a measurement.

A file holds one run: the options it ran with (`global options`, then each job's `job options` on
top, as fio's job file sections stack) and, per job entry, what the device did for each direction
(IOPS, bandwidth, completion latency `clat_ns` with whatever percentiles fio recorded) and the
job's CPU use. With `group_reporting` one entry stands for all `numjobs` threads of a job;
without it each thread has an entry of its own. fio may print text before the JSON (warnings,
`--output-format=normal,json`) and after it; both are skipped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .._core import SsdlabError

OPS = ("read", "write", "trim")

# fio's size suffixes under its default kb_base=1024 (k, kb, ki, kib all mean 1024; case ignored).
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?)(b?)\s*$", re.IGNORECASE)
_SCALE = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}
# fio's time suffixes; a bare number is seconds for runtime and ramp_time.
_TIME = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(us|usec|ms|msec|s|sec|m|min|h|d)?\s*$", re.IGNORECASE)
_SECONDS = {"us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "s": 1, "sec": 1}
_SECONDS |= {"m": 60, "min": 60, "h": 3600, "d": 86400}


class FioError(SsdlabError):
    """A fio output or option that ssdlab cannot read; the message names the file or option."""

    kind = "config"


def parse_size(value: str, option: str) -> int:
    """A fio size option (`bs=4k`, `size=107373134336`, `4KiB`) in bytes; fio's default kb_base
    is 1024, so every unit is binary."""
    m = _SIZE.match(str(value))
    if not m:
        raise FioError(f"fio option `{option}`: `{value}` is not a size (a number with k, m, g, t or p)")
    number, unit = float(m.group(1)), m.group(2).lower()
    return int(number * _SCALE[unit])


def parse_time(value: str, option: str) -> float:
    """A fio time option (`runtime=120s`, `ramp_time=30`, `2m`, `500ms`) in seconds."""
    m = _TIME.match(str(value))
    if not m:
        raise FioError(f"fio option `{option}`: `{value}` is not a time (a number with us, ms, s, m, h or d)")
    return float(m.group(1)) * _SECONDS[(m.group(2) or "s").lower()]


def option_int(options, key: str, default: int) -> int:
    """A whole-number fio option of at least 1 (`iodepth`, `numjobs`), or `default` if absent."""
    v = options.get(key)
    if v is None:
        return default
    try:
        n = int(str(v).strip())
    except ValueError:
        raise FioError(f"fio option `{key}`: `{v}` is not a whole number") from None
    if n < 1:
        raise FioError(f"fio option `{key}`: {n} must be >= 1")
    return n


def option_flag(options, key: str, default: bool = False) -> bool:
    """A boolean fio option (`direct=1`, a bare `time_based`); `default` if absent."""
    v = options.get(key)
    return default if v is None else str(v).strip().lower() not in ("0", "false", "no", "off", "")


@dataclass(frozen=True)
class OpStats:
    """What one direction of a job entry measured."""

    ios: int
    io_bytes: int
    iops: float
    bw_bytes_s: float
    # Completion latency (fio's clat: submission excluded), ns; percentiles as fio recorded them.
    clat_mean_ns: float
    clat_percentiles_ns: dict[float, float] = field(default_factory=dict)
    # Total latency (submission + completion), ns.
    lat_mean_ns: float = float("nan")
    # Submission latency (fio's slat), ns.
    slat_mean_ns: float = float("nan")

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["clat_percentiles_ns"] = {_pct_key(p): v for p, v in self.clat_percentiles_ns.items()}
        return d


@dataclass(frozen=True)
class Job:
    """One job entry of the output: its options (global, then its own) and its statistics."""

    name: str
    options: dict[str, str]
    ops: dict[str, OpStats]
    runtime_ms: int
    usr_cpu_pct: float
    sys_cpu_pct: float
    error: int

    def option(self, key: str, default: str | None = None) -> str | None:
        return self.options.get(key, default)

    @property
    def numjobs(self) -> int:
        return int(self.option("numjobs", "1"))

    @property
    def group_reporting(self) -> bool:
        return self.option("group_reporting", "0") not in ("0", "false")

    @property
    def threads(self) -> int:
        """The submitting threads this entry stands for (all of the job's with group_reporting)."""
        return self.numjobs if self.group_reporting else 1

    @property
    def measured_s(self) -> float:
        """Seconds measured per thread (fio sums `job_runtime` over a group's threads)."""
        return self.runtime_ms / 1e3 / self.threads

    @property
    def iodepth(self) -> int:
        return int(self.option("iodepth", "1"))

    def block_bytes(self, op: str) -> int:
        """fio's `bs` for direction `op`: `bs=4k` for all, or `bs=4k,16k` read then write (then
        trim), an absent one taking the one before."""
        parts = [p for p in str(self.option("bs", "4k")).split(",") if p.strip()] or ["4k"]
        i = min(OPS.index(op), len(parts) - 1)
        return parse_size(parts[i], "bs")

    def seconds(self, key: str) -> float:
        """A time option (`runtime`, `ramp_time`) in seconds; 0 when absent."""
        v = self.option(key)
        return 0.0 if v is None else parse_time(v, key)

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "options": self.options,
            "threads": self.threads,
            "ops": {op: s.as_dict() for op, s in self.ops.items()},
            "runtime_ms": self.runtime_ms,
            "usr_cpu_pct": self.usr_cpu_pct,
            "sys_cpu_pct": self.sys_cpu_pct,
            "error": self.error,
        }


@dataclass(frozen=True)
class Measurement:
    """One fio run's output file."""

    path: str
    fio_version: str
    jobs: list[Job]

    def as_dict(self) -> dict:
        return {"path": self.path, "fio_version": self.fio_version, "jobs": [j.as_dict() for j in self.jobs]}


def read_output(path: str | Path) -> Measurement:
    """Read a fio JSON output file. Raises FioError naming the file (and the line of a JSON
    error) for anything that is not fio 3.x's JSON output."""
    p = Path(path)
    try:
        text = p.read_text(errors="replace")
    except FileNotFoundError:
        raise FioError(f"{p}: no such file") from None
    except OSError as e:
        raise FioError(f"{p}: {e.strerror or e}") from None
    doc = _json_document(text, p)
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
        raise FioError(f"{p}: not fio's JSON output (it has no `jobs` list)")
    glob = _options(doc.get("global options", {}), p, "global options")
    jobs = [_job(j, glob, p, i) for i, j in enumerate(doc["jobs"])]
    if not jobs:
        raise FioError(f"{p}: fio's output lists no job")
    return Measurement(str(p), str(doc.get("fio version", "")), jobs)


def _json_document(text: str, p: Path):
    """The JSON object in `text`: from the first line that opens one, to its matching end."""
    m = re.search(r"^\{", text, re.MULTILINE)
    if not m:
        raise FioError(f"{p}: no JSON in the file (fio writes it with --output-format=json)")
    try:
        doc, _ = json.JSONDecoder().raw_decode(text, m.start())
    except json.JSONDecodeError as e:
        raise FioError(f"{p}:{e.lineno}: {e.msg} (column {e.colno})") from None
    return doc


def _options(raw, p: Path, where: str) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise FioError(f"{p}: `{where}` is not an object")
    return {str(k): str(v) for k, v in raw.items()}


def _job(raw, glob: dict[str, str], p: Path, i: int) -> Job:
    if not isinstance(raw, dict):
        raise FioError(f"{p}: jobs[{i}] is not an object")
    options = {**glob, **_options(raw.get("job options", {}), p, f"jobs[{i}].job options")}
    ops = {}
    for op in OPS:
        stats = raw.get(op)
        if isinstance(stats, dict) and (stats.get("total_ios") or stats.get("io_bytes")):
            ops[op] = _op_stats(stats, p, f"jobs[{i}].{op}")
    try:
        return Job(
            name=str(raw.get("jobname", options.get("name", ""))),
            options=options,
            ops=ops,
            runtime_ms=int(raw.get("job_runtime", 0)),
            usr_cpu_pct=float(raw.get("usr_cpu", float("nan"))),
            sys_cpu_pct=float(raw.get("sys_cpu", float("nan"))),
            error=int(raw.get("error", 0)),
        )
    except (TypeError, ValueError) as e:
        raise FioError(f"{p}: jobs[{i}]: {e}") from None


def _op_stats(s: dict, p: Path, where: str) -> OpStats:
    """One direction's statistics; fio 2.x's `clat` (µs) is read as fio 3.x's `clat_ns`."""
    clat, scale = s.get("clat_ns"), 1.0
    if clat is None and isinstance(s.get("clat"), dict):
        clat, scale = s["clat"], 1000.0
    if not isinstance(clat, dict):
        raise FioError(f"{p}: {where} has no completion latency (clat_ns)")
    pct = clat.get("percentile") or {}
    lat = s.get("lat_ns") if scale == 1.0 else s.get("lat")
    lat = lat if isinstance(lat, dict) else {}
    slat = s.get("slat_ns") if scale == 1.0 else s.get("slat")
    slat = slat if isinstance(slat, dict) else {}
    try:
        return OpStats(
            ios=int(s.get("total_ios", 0)),
            io_bytes=int(s.get("io_bytes", 0)),
            iops=float(s["iops"]),
            bw_bytes_s=float(s.get("bw_bytes", s.get("bw", 0) * 1024)),
            clat_mean_ns=float(clat["mean"]) * scale,
            clat_percentiles_ns={float(k): float(v) * scale for k, v in pct.items()},
            lat_mean_ns=float(lat.get("mean", float("nan"))) * scale,
            slat_mean_ns=float(slat.get("mean", float("nan"))) * scale,
        )
    except (KeyError, TypeError, ValueError) as e:
        raise FioError(f"{p}: {where}: missing or not a number: {e}") from None


def _pct_key(p: float) -> str:
    """A percentile as a statistic's name: 50 → "p50", 99.9 → "p99.9"."""
    return f"p{p:g}"
