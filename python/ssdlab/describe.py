"""Words for what was simulated and what was measured: metric labels with units, values in the unit
a reader expects, and one-line descriptions of a configuration's workload and device. Shared by
`ssdlab run`, the figures and the report."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

# Metric -> (label, unit, divisor): the value shown is value / divisor in `unit`. Times are stored
# in µs (exact integers) but read in seconds; metrics not listed fall back to `metric_label`'s rules.
METRICS: dict[str, tuple[str, str, float]] = {
    "waf": ("write amplification (WAF)", "", 1.0),
    "ftl.waf": ("FTL write amplification", "", 1.0),
    "nand.erases": ("block erases", "", 1.0),
    "nand.programs.total": ("page programs", "", 1.0),
    "nand.programs.host": ("host page programs", "", 1.0),
    "nand.programs.gc": ("GC page programs", "", 1.0),
    "nand.reads.total": ("page reads", "", 1.0),
    "gc.moved_pages": ("pages moved by GC", "", 1.0),
    "gc.invocations": ("GC invocations", "", 1.0),
    "host.write_pages": ("host page writes", "", 1.0),
    "host.write_requests": ("host write requests", "", 1.0),
    "host.write_bytes": ("host writes", "MiB", float(1 << 20)),
    "host.read_bytes": ("host reads", "MiB", float(1 << 20)),
    "buffer.page_hit_ratio": ("page write hit ratio", "", 1.0),
    "buffer.sector_hit_ratio": ("sector write hit ratio", "", 1.0),
    "buffer.read_hit_ratio": ("read hit ratio", "", 1.0),
    "buffer.clean_evictions": ("clean pages evicted", "", 1.0),
    "buffer.flushes": ("buffer flushes", "", 1.0),
    "buffer.flushed_groups": ("flushed groups", "", 1.0),
    "buffer.flushed_pages": ("flushed pages", "", 1.0),
    "buffer.padded_flushes": ("padded flushes", "", 1.0),
    "ftl.log.requested_clusters": ("requested clusters", "", 1.0),
    "ftl.log.hits": ("log-block hits", "", 1.0),
    "ftl.log.misses": ("log-block misses", "", 1.0),
    "ftl.log.hit_ratio": ("log-block reference rate", "", 1.0),
    "ftl.log.utilisation_at_merge.mean": ("log-block utilisation at merge", "", 1.0),
    "ftl.log.utilisation_at_merge_rereferenced.mean": ("re-referenced log-block utilisation at merge", "", 1.0),
    "time.nand_serial_us": ("serial NAND time", "s", 1e6),
    "time.elapsed_us": ("serial NAND time", "s", 1e6),  # the deprecated name of time.nand_serial_us
    "time.program_erase_us": ("program + erase time", "s", 1e6),
    "throughput.nand_serial_write_mib_s": ("write throughput over serial NAND time", "MiB/s", 1.0),
    # the deprecated name of throughput.nand_serial_write_mib_s
    "throughput.write_mib_s": ("write throughput over serial NAND time", "MiB/s", 1.0),
    "throughput.program_erase_write_mib_s": ("program/erase write throughput", "MiB/s", 1.0),
    "wear.erase_count.max": ("most erases of a block", "", 1.0),
    "wear.erase_count.mean": ("mean erases per block", "", 1.0),
    "throughput.iops": ("throughput", "IOPS", 1.0),
    "throughput.mib_s": ("throughput", "MiB/s", 1.0),
    "time.simulated_us": ("simulated time", "s", 1e6),
    "util.die.mean": ("mean die utilisation", "", 1.0),
    "util.channel.mean": ("mean channel utilisation", "", 1.0),
    "util.controller.mean": ("mean controller-core utilisation", "", 1.0),
    "util.link": ("host-link utilisation", "", 1.0),
    "buffer.drained_pages": ("pages drained in the background", "", 1.0),
    "queue.mean_outstanding": ("mean requests in the device", "", 1.0),
}

# Configuration keys shown as parameters on an axis.
PARAMS = {
    "buffer.bytes": "buffer size",
    "buffer.kind": "buffer",
    "device.op": "over-provisioning ρ",
    "device.logical_bytes": "logical capacity",
    "device.pages_per_block": "pages per block",
    "ftl.kind": "FTL",
    "ftl.gc": "GC victim policy",
    "ftl.log_blocks": "log blocks",
    "ftl.model_stats": "padding-model statistics",
    "ftl.log_utilisation": "log-block pages counted as used",
    "padding.fixed.threshold": "fixed padding threshold",
    "workload.footprint_bytes": "footprint",
    "workload.request_bytes": "request size",
    "workload.path": "trace",
    "workload.kind": "workload",
    "requests": "requests",
}

# Unit suffixes of metric names that are not in METRICS: (suffix, unit, divisor).
_SUFFIXES = [
    ("_mib_s", "MiB/s", 1.0),
    ("_us", "s", 1e6),
    ("_ms", "s", 1e3),
    ("_s", "s", 1.0),
    ("_bytes", "MiB", 1 << 20),
]


_PERCENTILES = {"p50": "median", "p90": "p90", "p99": "p99", "p999": "p99.9", "p9999": "p99.99"}


def metric_unit(name: str) -> tuple[str, str, float]:
    """(words, unit, divisor) for a metric: listed names from METRICS, timed mode's latencies in
    µs (`latency.read.p99_us` -> ("read latency p99", "µs", 1)), otherwise the name with the unit
    its suffix carries (`foo_us` -> ("foo", "s", 1e6))."""
    if name in METRICS:
        return METRICS[name]
    flow = re.fullmatch(r"flow\.(\d+)\.(.+)", name)
    if flow:
        # A flow's metric (`flow.1.latency.read.p99_us`): the run's metric of that name, its flow's.
        words, unit, div = metric_unit(flow.group(2))
        return f"flow {flow.group(1)} {words}", unit, div
    parts = name.split(".")
    if len(parts) == 3 and parts[0] in ("latency", "interval") and parts[2].endswith("_us"):
        stat = parts[2][:-3]
        op = "" if parts[1] in ("all", "latency") else parts[1] + " "
        return f"{op}latency {_PERCENTILES.get(stat, stat)}", "µs", 1.0
    for suffix, unit, div in _SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)], unit, float(div)
    return name, "", 1.0


def metric_label(name: str) -> str:
    """ "write throughput (MiB/s)", "serial NAND time (s)", "block erases"."""
    words, unit, _div = metric_unit(name)
    return f"{words} ({unit})" if unit else words


def format_metric(name: str, v: float) -> str:
    """A metric value for a table: in its reading unit ("0.937 s"), counts with thousands separators."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    _words, unit, div = metric_unit(name)
    x = float(v) / div
    if unit:
        return f"{x:,.4g} {unit}" if abs(x) < 1e4 else f"{x:,.0f} {unit}"
    if x == int(x) and abs(x) < 1e15:
        return f"{int(x):,}"
    return f"{x:,.4f}"


def size(v: Any) -> str:
    """Bytes as "64 MiB", "4 KiB"; non-numbers as they are."""
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return str(v)
    for unit, mult in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(v) >= mult:
            return f"{v / mult:.4g} {unit}"
    return f"{v:.4g} B"


def is_bytes_key(key: str) -> bool:
    """Keys holding a size in bytes: `buffer.bytes`, `workload.footprint_bytes`, `host.write_bytes`."""
    return key.endswith("_bytes") or key.endswith(".bytes")


def duration(us: Any) -> str:
    """A time in µs in the largest unit that keeps it above 1: "850 µs", "1.5 ms", "2.12 min", "1,565 h"."""
    if not _number(us):
        return "-"
    s = float(us) / 1e6
    for unit, secs in (("h", 3600.0), ("min", 60.0), ("s", 1.0), ("ms", 1e-3)):
        if abs(s) >= secs:
            x = s / secs
            return f"{x:,.4g} {unit}" if abs(x) < 1e4 else f"{x:,.0f} {unit}"
    return f"{float(us):.4g} µs"


# Trace times from this many µs on (2001-09-09) are wall-clock stamps (µs since the Unix epoch, as
# MSR and SYSTOR traces record them), not times since the trace began.
UNIX_STAMP_US = 1e15


def timestamp(us: Any) -> str:
    """A trace time: a UTC date for a Unix stamp ("2007-02-22 17:22:09.551466 UTC"), else a duration."""
    if _number(us) and float(us) >= UNIX_STAMP_US:
        from datetime import UTC, datetime

        try:
            return datetime.fromtimestamp(float(us) / 1e6, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
        except (OverflowError, OSError, ValueError):  # past the year 9999: no date, a duration
            pass
    return duration(us)


def workload_parts(cfg: dict) -> list[str]:
    """["zipf", "64 MiB footprint", "2,000 requests"] or ["trace hm_0.csv"]; several flows:
    ["2 flows: uniform; trace hm_0.csv"]."""
    flows = cfg.get("flows") or []
    if flows:
        return [f"{len(flows)} flows: " + "; ".join(" ".join(workload_parts(f)[:1]) for f in flows)]
    w = cfg.get("workload") or {}
    kind = w.get("kind")
    if kind is None:
        return []
    if kind == "trace":
        return [f"trace {Path(str(w.get('path'))).name}"]
    parts = [str(kind)]
    if _number(w.get("footprint_bytes")):
        parts.append(f"{size(w['footprint_bytes'])} footprint")
    if _number(w.get("requests")):
        parts.append(f"{int(w['requests']):,} requests")
    return parts


def device_parts(cfg: dict) -> list[str]:
    """["64 MiB logical", "4 KiB pages", "128 pages/block", "OP 0.07"]."""
    d = cfg.get("device") or {}
    parts = []
    if _number(d.get("logical_bytes")):
        parts.append(f"{size(d['logical_bytes'])} logical")
    if _number(d.get("page_bytes")):
        parts.append(f"{size(d['page_bytes'])} pages")
    if _number(d.get("pages_per_block")):
        parts.append(f"{int(d['pages_per_block'])} pages/block")
    if _number(d.get("op")):
        parts.append(f"OP {float(d['op']):g}")
    dies = [d.get(k) for k in ("channels", "chips_per_channel", "dies_per_chip")]
    if all(_number(x) for x in dies) and dies[1] * dies[2] * dies[0] > 1:
        parts.append(f"{int(dies[0])} channels × {int(dies[1] * dies[2])} dies")
    return parts


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and not (isinstance(v, float) and math.isnan(v))


def dies(cfg: dict) -> str:
    """The dies of a timed device: "1 die", "32 dies (8 channels × 4)"."""
    d = cfg.get("device") or {}
    ch, chips, per_chip = (int(d.get(k) or 1) for k in ("channels", "chips_per_channel", "dies_per_chip"))
    n = ch * chips * per_chip
    if n == 1:
        return "1 die"
    return f"{n:,} dies ({ch} channel{'s' if ch != 1 else ''} × {chips * per_chip})"


def run_summary(cfg: dict) -> str:
    """One line naming what a resolved configuration simulates: workload, device (its dies in
    timed mode; whether it was preconditioned), FTL, buffer."""
    f = cfg.get("ftl") or {}
    b = cfg.get("buffer") or {}
    r = cfg.get("run") or {}
    ftl = f"{f.get('kind')} ({f.get('gc')} GC)" if f.get("kind") == "page" else str(f.get("kind"))
    buf = "none" if b.get("kind") == "none" else f"{b.get('kind')} {size(b.get('bytes'))}"
    # Counts mode has no dies (its NAND time is serial); timed mode's dies are its parallelism.
    device = [p for p in device_parts(cfg) if "channel" not in p]
    if r.get("mode") == "timed":
        device.append(dies(cfg))
    device.append("preconditioned (filled)" if r.get("precondition") == "fill" else "not preconditioned (empty)")
    flows = cfg.get("flows") or []
    if flows:
        each = [
            f"{i}: "
            + ", ".join([*workload_parts(f), f"QD {f.get('queue_depth')}" if f.get("queue_depth") else "open loop"])
            for i, f in enumerate(flows)
        ]
        workload = f"{len(flows)} flows ({'; '.join(each)})"
    else:
        workload = "workload " + ", ".join([*workload_parts(cfg), *loop_parts(cfg)])
    return f"{workload}; device {', '.join(device)}; FTL {ftl}; buffer {buf}"


def loop_parts(cfg: dict) -> list[str]:
    """Timed mode's host loop for one workload: ["closed loop at QD 32 (...)"] or ["open loop at
    the trace's times"]; a closed loop over a trace says that the trace's times go unused."""
    r = cfg.get("run") or {}
    if r.get("mode") != "timed":
        return []
    trace = (cfg.get("workload") or {}).get("kind") == "trace"
    qd = r.get("queue_depth")
    if qd:
        note = " (the trace's arrival times are not used; run.queue_depth = 0 replays at them)" if trace else ""
        return [f"closed loop at QD {qd}{note}"]
    return ["open loop at the trace's times" if trace else "open loop at its arrival times"]
