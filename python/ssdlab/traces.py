"""Trace files: format detection, statistics and conversion to the binary cache; where the real
traces are (`traces_dir`, the `{traces}` of study files)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from . import _core

PathLike = str | Path


def _options(
    fmt: str | None,
    device: int | None,
    skip_invalid: bool,
    blkparse_action: str | None,
    generic: dict | None,
    timestamp: str | None = None,
) -> str:
    opts: dict = {"skip_invalid": bool(skip_invalid)}
    if timestamp:
        opts["timestamp"] = timestamp
    if fmt:
        opts["format"] = fmt
    if device is not None:
        opts["device"] = int(device)
    if blkparse_action:
        opts["blkparse_action"] = blkparse_action
    if generic:
        opts["generic"] = generic
    return json.dumps(opts)


def trace_info(
    path: PathLike,
    format: str | None = None,
    device: int | None = None,
    skip_invalid: bool = False,
    blkparse_action: str | None = None,
    generic: dict | None = None,
    page_bytes: int = 4096,
    timestamp: str | None = None,
) -> dict:
    """Statistics of a trace: format, requests, reads, writes, read_bytes, write_bytes,
    footprint_pages, max_end_bytes, seq_write_fraction (and trims, devices, skipped), and, when
    the trace measured latencies, `measured_latency`: per operation ("read", "write", "trim")
    `count`, `mean_us`, `p50_us`, `p90_us`, `p99_us`, `p99.9_us` (as `latency_summary`), and
    `measured_max_outstanding`: the most requests outstanding at once, each from its time to its
    time + its measured latency (the concurrency it was measured at: a replayer's threads).
    `timestamp` picks the time stamp of a trace with two (flashnet: "submit", the default, or
    "record")."""
    opts = _options(format, device, skip_invalid, blkparse_action, generic, timestamp)
    return json.loads(_core.trace_info(str(path), opts, page_bytes))


def trace_profile(
    path: PathLike,
    format: str | None = None,
    device: int | None = None,
    skip_invalid: bool = False,
    blkparse_action: str | None = None,
    generic: dict | None = None,
    page_bytes: int = 4096,
    seq_window: int = 10,
    frequent_writes: int | None = None,
    short_distance_pages: int = 8192,
    window_requests: int = 0,
    timestamp: str | None = None,
) -> dict:
    """The statistics seeds 000 and 003 reason with, in one pass over the trace.

    Seed 000 Table 4: write requests sequential or random by the ±`seq_window` rule (contiguous
    with any of the `seq_window` writes before or after), first writes or updates (the start
    sector written before), their counts and bytes (`seq_write_fraction`, `first_write_fraction`,
    `seq_write_mean_bytes`, `random_write_mean_bytes`, `seq_first_writes`, …), and
    `sector_write_counts`: 512-byte sectors up to the largest offset by write count ("0",
    "1-100", "101-1000", "1001-10000", "10001-30000", ">30000"). Seed 003 Fig 1: `page_classes`
    `fs`, `fl`, `is`, `il` (written pages frequently / infrequently updated, by
    `frequent_writes` writes or more — default: more than the mean — × short / long mean re-use
    distance, below `short_distance_pages` or not), each with `pages`, `share`, `writes_mean`.
    `reuse_distance`: `[upper, count]` of re-write distances (distinct pages written between),
    below powers of two. `working_set`: distinct pages written per `window_requests` writes
    (default: 100 windows)."""
    opts = _options(format, device, skip_invalid, blkparse_action, generic, timestamp)
    prof = {
        "page_bytes": page_bytes,
        "seq_window": seq_window,
        "frequent_writes": frequent_writes,
        "short_distance_pages": short_distance_pages,
        "window_requests": window_requests,
    }
    return json.loads(_core.trace_profile(str(path), opts, json.dumps(prof)))


def trace_convert(
    path: PathLike,
    out: PathLike,
    format: str | None = None,
    device: int | None = None,
    skip_invalid: bool = False,
    blkparse_action: str | None = None,
    generic: dict | None = None,
    timestamp: str | None = None,
) -> int:
    """Write the compact binary cache of a trace (read much faster later); returns records written.
    The cache keeps no measured latencies: read those from the original (`measured_latencies`)."""
    opts = _options(format, device, skip_invalid, blkparse_action, generic, timestamp)
    return _core.trace_convert(str(path), str(out), opts)


def measured_latencies(
    path: PathLike,
    format: str | None = None,
    device: int | None = None,
    skip_invalid: bool = False,
    blkparse_action: str | None = None,
    generic: dict | None = None,
) -> dict:
    """The latencies a trace measured on its device, in µs: {"format": name, "read": array,
    "write": array, "missing": n}. "read" and "write" are float64 numpy arrays in replay order
    (file order, but time order for blkparse and flashnet submit times); "missing" counts the
    requests without a measured latency (trims, or every request of a format that records none:
    both arrays are then empty). Formats with latencies: flashnet (latency_us), msr (ResponseTime),
    systor (Response), blkparse (C − D while D is replayed). Summarise with `latency_summary`."""
    import numpy as np

    opts = _options(format, device, skip_invalid, blkparse_action, generic)
    fmt, reads, writes, missing = _core.trace_measured(str(path), opts)
    return {
        "format": fmt,
        "read": np.frombuffer(reads, dtype="<f4").astype(np.float64),
        "write": np.frombuffer(writes, dtype="<f4").astype(np.float64),
        "missing": int(missing),
    }


LATENCY_PERCENTILES = (("p50_us", 50.0), ("p90_us", 90.0), ("p99_us", 99.0), ("p99.9_us", 99.9))


def latency_summary(values) -> dict | None:
    """{count, mean_us, p50_us, p90_us, p99_us, p99.9_us} of latencies in µs, as `trace info`
    reports them: nearest-rank percentiles (the smallest value with at least ⌈p/100 · n⌉ values
    at or below it, always one of the values). None when there are no values."""
    import numpy as np

    v = np.sort(np.asarray(values, dtype=np.float64))
    n = len(v)
    if n == 0:
        return None
    out = {"count": n, "mean_us": float(v.mean())}
    for key, p in LATENCY_PERCENTILES:
        out[key] = float(v[max(int(np.ceil(p / 100.0 * n)), 1) - 1])
    return out


def trace_generate(config, out: PathLike, format: str | None = None) -> int:
    """Write the synthetic workload of `config` (a TOML path, dict or Config) as a trace file,
    seeded as a simulation would be: `format` "msr" (MSR Cambridge CSV, ResponseTime left empty:
    a generated request has no measured latency) or "binary" (the .ssdt cache); by default binary
    when `out` ends in .ssdt, else msr. Returns requests written."""
    from .api import Config  # api imports this module

    cfg = Config.load(config if config is not None else {})
    if format is None:
        format = "binary" if str(out).endswith(".ssdt") else "msr"
    return _core.trace_generate(json.dumps(cfg.to_dict()), str(out), format)


def trace_detect(path: PathLike) -> str:
    """The detected format name of a trace file."""
    return _core.trace_detect(str(path))


def trace_formats() -> list:
    """[(name, layout)] of every supported trace format."""
    return [tuple(x) for x in json.loads(_core.trace_formats())]


def trace_dir_candidates(traces: str | Path | None = None) -> list[tuple[Path, str]]:
    """The places searched for the real-trace directory, each with how it was chosen. An explicit
    directory (argument, then SSDLAB_TRACES) is the only candidate: never silently another one."""
    if traces is not None:
        return [(Path(traces).expanduser().resolve(), "--traces")]
    env = os.environ.get("SSDLAB_TRACES")
    if env:
        return [(Path(env).expanduser().resolve(), "SSDLAB_TRACES")]
    found: list[tuple[Path, str]] = []
    for base, how in (
        (Path(__file__).resolve().parents[3], "beside the source checkout"),
        (Path.cwd().parent, "beside the current directory"),
    ):
        p = (base / "shared" / "traces").resolve()
        if p not in [q for q, _ in found]:
            found.append((p, how))
    return found


def traces_dir(traces: str | Path | None = None) -> Path:
    """Where the real traces are: `traces`, else $SSDLAB_TRACES, else ../shared/traces beside the
    checkout or the current directory (the last candidate when none exists)."""
    candidates = trace_dir_candidates(traces)
    for path, _ in candidates:
        if path.is_dir():
            return path
    return candidates[-1][0]
