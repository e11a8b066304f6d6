"""`ssdlab trace info|profile|convert|generate`: trace files."""

from __future__ import annotations

import json
import time
from pathlib import Path

from .. import describe, traces
from .common import (
    _add_config_args,
    _add_trace_args,
    _config_from_args,
    _fmt,
    check_output_file,
    fmt_us,
    print_table,
    write_json,
)


def _trace_kwargs(args) -> dict:
    generic = json.loads(Path(args.generic).read_text()) if getattr(args, "generic", None) else None
    return dict(
        format=args.format,
        device=args.device,
        skip_invalid=args.skip_invalid,
        blkparse_action=args.blkparse_action,
        generic=generic,
    )


def cmd_trace_info(args) -> int:
    info = traces.trace_info(args.file, page_bytes=args.page_bytes, timestamp=args.timestamp, **_trace_kwargs(args))
    if args.json:
        write_json("-", info)  # valid JSON: null for NaN
        return 0
    measured = info.get("measured_latency")
    fields = [k for k in info if k not in ("measured_latency", "volumes")]
    print_table([[k, trace_info_text(k, info, args.page_bytes)] for k in fields], ["field", "value"], left=2)
    _print_volumes(info.get("volumes") or [], info.get("requests") or 0, args.page_bytes)
    if measured:
        print("\nmeasured latency (µs, nearest-rank percentiles)")
        keys = ["mean_us"] + [k for k, _ in traces.LATENCY_PERCENTILES]
        rows = [[op, _fmt(s["count"])] + [fmt_us(s[k]) for k in keys] for op, s in measured.items()]
        print_table(rows, ["op", "count", "mean", "p50", "p90", "p99", "p99.9"])
    return 0


def _print_volumes(volumes: list, requests: int, page_bytes: int, shown: int = 20) -> None:
    """A trace's volumes (devs) with their requests and footprints, the largest first; one volume
    says nothing the table above does not."""
    if len(volumes) < 2:
        return
    order = sorted(volumes, key=lambda v: (-v["requests"], v["dev"]))
    print(
        f"\n{len(volumes)} volumes (replayed merged, their addresses aliasing, unless "
        'workload.volumes = "separate" or workload.device picks one)'
    )
    rows = [
        [
            str(v["dev"]),
            _fmt(v["requests"]),
            f"{100 * v['requests'] / max(requests, 1):.1f}%",
            describe.size(v["footprint_pages"] * page_bytes),
            describe.size(v["max_end_bytes"]),
        ]
        for v in order[:shown]
    ]
    print_table(rows, ["volume", "requests", "share", "written footprint", "max(offset+size)"])
    if len(order) > shown:
        print(f"  … and {len(order) - shown} more (--json lists every one)")


def trace_info_text(key: str, info: dict, page_bytes: int) -> str:
    """One field of `trace info` in the unit a reader expects (`--json` keeps bytes and µs)."""
    v = info[key]
    if v is None:
        return "-"
    if key == "footprint_pages":
        return f"{_fmt(v)} pages of {describe.size(page_bytes)} ({describe.size(v * page_bytes)})"
    if key == "seq_write_fraction":
        return f"{100 * v:.3g}%"
    if key == "measured_max_outstanding":
        return f"{_fmt(v)} requests at once (time to time + measured latency: run.max_inflight of a replay)"
    if key.endswith("_time_us"):
        if not info.get("requests"):
            return "- (no requests)"
        first, when = info.get("first_time_us"), describe.timestamp(v)
        if key == "last_time_us" and isinstance(first, (int, float)) and isinstance(v, (int, float)):
            when += f" ({describe.duration(v - first)} after the first)"
        return when
    if key.endswith("_us"):
        return describe.duration(v)
    if describe.is_bytes_key(key):
        return describe.size(v)
    return v if isinstance(v, str) else _fmt(v)


def cmd_trace_profile(args) -> int:
    prof = traces.trace_profile(
        args.file,
        page_bytes=args.page_bytes,
        seq_window=args.seq_window,
        frequent_writes=args.frequent_writes,
        short_distance_pages=args.short_distance_pages,
        window_requests=args.window_requests,
        **_trace_kwargs(args),
    )
    if args.json:
        write_json("-", prof)
        return 0
    w = max(prof["write_requests"], 1)
    rows = [
        ["format", prof["format"]],
        ["requests", _fmt(prof["requests"])],
        ["write requests", _fmt(prof["write_requests"])],
        [f"sequential writes (±{args.seq_window} rule)", f"{100 * prof['seq_write_fraction']:.1f}%"],
        ["first writes", f"{100 * prof['first_write_fraction']:.1f}%"],
        ["  sequential first writes", _fmt(prof["seq_first_writes"])],
        ["  random first writes", _fmt(prof["random_first_writes"])],
        ["  sequential updates", _fmt(prof["seq_updates"])],
        ["  random updates", _fmt(prof["random_updates"])],
        ["mean sequential write", f"{prof['seq_write_mean_bytes'] / 1024:.1f} KiB"],
        ["mean random write", f"{prof['random_write_mean_bytes'] / 1024:.1f} KiB"],
        ["page writes per write request", f"{prof['page_writes'] / w:.2f}"],
        ["written pages", _fmt(prof["written_pages"])],
    ]
    rows += [[f"sectors written {k} times", _fmt(v)] for k, v in prof["sector_write_counts"].items()]
    pc = prof["page_classes"]
    for c in ("fs", "fl", "is", "il"):
        rows.append(
            [f"class {c.upper()} pages", f"{100 * pc[c]['share']:.1f}% ({pc[c]['writes_mean']:.1f} writes each)"]
        )
    print_table(rows, ["field", "value"])
    print(
        f"(F = at least {pc['frequent_writes']} writes; S = mean re-use distance below "
        f"{pc['short_distance_pages']} pages; --json for the distributions)"
    )
    return 0


def cmd_trace_convert(args) -> int:
    check_output_file("output", args.out)
    t0 = time.monotonic()
    n = traces.trace_convert(args.file, args.out, **_trace_kwargs(args))
    print(f"wrote {n:,} requests to {args.out} in {time.monotonic() - t0:.1f} s")
    return 0


def cmd_trace_generate(args) -> int:
    t0 = time.monotonic()
    cfg = _config_from_args(args)
    check_output_file("output", args.out)
    n = traces.trace_generate(cfg, args.out, format=args.format)
    print(
        f"wrote {n:,} requests of workload {cfg.resolved()['workload']['kind']} to {args.out} "
        f"in {time.monotonic() - t0:.1f} s"
    )
    return 0


def _add_trace_parsers(sub) -> None:
    """`trace info|profile|convert|generate`."""
    t = sub.add_parser("trace", help="trace files").add_subparsers(dest="trace_command", required=True)
    p = t.add_parser("info", help="statistics of a trace file (and its measured latencies)")
    _add_trace_args(p)
    p.add_argument("--timestamp", choices=["submit", "record"], help="flashnet: time stamp to use (default submit)")
    p.add_argument("--page-bytes", type=int, default=4096, help="page size for the footprint (default 4096)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_trace_info)
    p = t.add_parser("profile", help="the statistics seeds 000 and 003 reason with (Table 4, page classes)")
    _add_trace_args(p)
    p.add_argument("--page-bytes", type=int, default=4096, help="page size (default 4096)")
    p.add_argument("--seq-window", type=int, default=10, help="writes before/after for the sequential rule (10)")
    p.add_argument("--frequent-writes", type=int, help="writes that make a page frequent (default: above the mean)")
    p.add_argument("--short-distance-pages", type=int, default=8192, help="short re-use distance bound (8192)")
    p.add_argument("--window-requests", type=int, default=0, help="writes per working-set window (0: 100 windows)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_trace_profile)
    p = t.add_parser("convert", help="write the compact binary cache of a trace")
    _add_trace_args(p)
    p.add_argument("out", help="output file (conventionally .ssdt)")
    p.set_defaults(func=cmd_trace_convert)
    p = t.add_parser("generate", help="write a synthetic workload as a trace (MSR CSV, or .ssdt binary)")
    _add_config_args(p)
    p.add_argument("--format", choices=["msr", "binary"], help="output format (default: binary for .ssdt, else msr)")
    p.add_argument("out", help="output file")
    p.set_defaults(func=cmd_trace_generate)
