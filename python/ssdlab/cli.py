"""The `ssdlab` command line: run, compare, config show, trace info|profile|convert|generate, policies, sweep,
results, plot, report, reproduce, claims, calibrate, validate.

User errors (bad configuration, bad trace, capacity) print one line without a traceback and exit
with status 2; Ctrl-C exits with status 130.
"""

from __future__ import annotations

import argparse
import json
import math
import numbers
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from . import api, claims, describe, traces
from ._core import SsdlabError

# Metrics shown in tables (all metrics go to the JSON files).
KEY_METRICS = [
    "host.write_pages",
    "buffer.page_hit_ratio",
    "buffer.flushes",
    "nand.programs.total",
    "nand.erases",
    "waf",
    "gc.moved_pages",
    "time.nand_serial_us",
    "throughput.nand_serial_write_mib_s",
]

# What `ssdlab run` adds for a timed run (`run.mode = "timed"`).
TIMED_METRICS = [
    "throughput.iops",
    "throughput.mib_s",
    "latency.read.mean_us",
    "latency.read.p99_us",
    "latency.read.p9999_us",
    "latency.write.mean_us",
    "latency.write.p99_us",
    "latency.write.p9999_us",
    "util.die.mean",
    "util.controller.mean",
    "util.link",
    "buffer.drained_pages",
    "time.simulated_us",
]

# What `ssdlab run` adds per flow of a run of several (`[[flows]]`), then the fairness.
FLOW_METRICS = [
    "throughput.iops",
    "latency.read.mean_us",
    "latency.read.p99_us",
    "latency.write.mean_us",
    "latency.write.p99_us",
    "waf_share",
    "slowdown",
]

# The two times side by side read as a contradiction without a word on each (`ssdlab run`).
TIME_NOTES = {
    "time.nand_serial_us": "serial: every NAND operation's time, one after another",
    "time.simulated_us": "timed clock: first issue to last completion, dies in parallel",
}


class ProgressBar:
    """A one-line progress bar on stderr, shown only on a terminal and only for runs > 1 s."""

    def __init__(self, enabled: bool):
        self.enabled = enabled and sys.stderr.isatty()
        self.quiet = not enabled
        self.start = time.monotonic()
        self.shown = False
        self.noted: list[str] = []

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or time.monotonic() - self.start < 1.0:
            return
        self.shown = True
        elapsed = time.monotonic() - self.start
        rate = done / elapsed if elapsed > 0 else 0.0
        if total:
            frac = min(done / total, 1.0)
            bar = "#" * int(frac * 30)
            left = (total - done) / rate if rate > 0 else 0.0
            line = f"\r[{bar:<30}] {frac:6.1%} {done:,}/{total:,} requests, {rate:,.0f}/s, {left:,.0f} s left"
        else:
            line = f"\r{done:,} requests, {rate:,.0f}/s"
        sys.stderr.write(line)
        sys.stderr.flush()

    def note(self, message: str) -> None:
        """A warning the engine gives before the run ends (a request that will take minutes)."""
        self.noted.append(message)
        if self.quiet:
            return
        if self.shown:
            sys.stderr.write("\n")
        print(f"warning: {message}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")


def _config_from_args(args) -> api.Config:
    cfg = api.Config.from_toml(args.config) if args.config else api.Config()
    for item in args.set or []:
        if "=" not in item:
            raise SsdlabError(f"--set {item!r}: expected section.key=value")
        key, value = item.split("=", 1)
        cfg = cfg.set(key.strip(), api.parse_value(value.strip()))
    return cfg


def _fmt(v) -> str:
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    if isinstance(v, float):
        if v != v:
            return "nan"
        if v == int(v) and abs(v) < 1e15:
            return f"{int(v):,}"
        return f"{v:,.4f}"
    return str(v)


def _json_safe(v):
    """NaN and infinities as null: JSON has no NaN, and `json.dumps` would write it anyway."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _json_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_safe(x) for x in v]
    return v


def write_json(dest: str, doc) -> None:
    """Write `doc` as JSON to the file `dest`, or to standard output when `dest` is `-`."""
    text = json.dumps(_json_safe(doc), indent=2, allow_nan=False) + "\n"
    if dest == "-":
        sys.stdout.write(text)
        return
    Path(dest).parent.mkdir(parents=True, exist_ok=True)
    Path(dest).write_text(text)


def check_output_file(option: str, path: str | os.PathLike) -> None:
    """Check, before anything runs, that the file `path` (given as `option`) can be written: not a
    folder, an existing file writable, or else a folder to create it in. An error names the option
    and the path in ssdlab's words. `-` (standard output) passes."""
    if str(path) == "-":
        return
    p = Path(path)
    if p.is_dir():
        raise SsdlabError(f"{option} {path}: is a folder; expected a file")
    if p.exists():
        if not p.is_file():
            return  # a device or a pipe (`/dev/stdout`): opened when written, not before
        try:
            os.close(os.open(p, os.O_WRONLY))  # opened, not truncated: the file stays as it is
        except OSError as e:
            raise SsdlabError(f"{option} {path}: exists and cannot be written ({api.os_error_words(e)})") from None
        return
    _check_folder(option, path, p.parent)


def check_output_dir(option: str, path: str | os.PathLike, files: tuple[str, ...] = ()) -> None:
    """Check, before anything runs, that the folder `path` (given as `option`) can hold output:
    an existing folder to write in (and the `files` to be written there not folders), or a place
    to create it."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise SsdlabError(f"{option} {path}: exists and is a file; expected a folder")
    if not p.is_dir():
        _check_folder(option, path, p.parent)
        return
    _check_folder(option, path, p)
    for name in files:
        check_output_file(option, p / name)


def _check_folder(option: str, path, folder: Path) -> None:
    """`folder`, or the nearest of its parents that exists (the rest are created), is a folder
    this process can create files in (tried: permissions alone miss read-only file systems)."""
    at = folder
    while not at.exists() and at != at.parent:
        at = at.parent
    if not at.is_dir():
        raise SsdlabError(f"{option} {path}: `{at}` is a file, not a folder")
    try:
        with tempfile.NamedTemporaryFile(dir=at, prefix=".ssdlab-check-"):
            pass
    except OSError as e:
        raise SsdlabError(f"{option} {path}: cannot write in the folder `{at}` ({api.os_error_words(e)})") from None


def table_lines(rows: list[list[str]], header: list[str], left: int = 1) -> list[str]:
    """A text table's lines (header, rule, rows): the first `left` columns aligned left, the others right."""
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]

    def fmt(r):
        cells = (
            str(c).ljust(w) if i < left else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=False))
        )
        return "  ".join(cells).rstrip()

    line = fmt(header)
    return [line, "-" * (sum(widths) + 2 * (len(widths) - 1))] + [fmt(r) for r in rows]


def print_table(rows: list[list[str]], header: list[str], file=None, left: int = 1) -> None:
    """A text table: the first `left` columns aligned left, the others right."""
    for line in table_lines(rows, header, left):
        print(line, file=file)


def _simulate(cfg: api.Config, quiet: bool) -> api.Result:
    """Run with a progress bar; the result's warnings leave out those already shown as notes."""
    bar = ProgressBar(not quiet)
    try:
        res = api.simulate(cfg, progress=bar)
    finally:
        bar.close()
    if bar.noted and not quiet:
        res.warnings = [w for w in res.warnings if w not in bar.noted]
    return res


def cmd_run(args) -> int:
    cfg = _config_from_args(args)
    for option, path in (("--json", args.json), ("--plot-cdf", args.plot_cdf)):
        if path:
            check_output_file(option, path)
    if args.plot_cdf:  # checked before a long run
        from .report import figures as F

        try:
            F.figure_path(args.plot_cdf)
        except ValueError as e:
            raise SsdlabError(f"--plot-cdf {e}") from None
        if cfg.resolved()["run"]["mode"] != "timed":
            raise SsdlabError('--plot-cdf: only a timed run (run.mode = "timed") records latencies')
    res = _simulate(cfg, args.quiet)
    for w in res.warnings:
        print(f"warning: {w}", file=sys.stderr)
    wrote = ""
    if args.plot_cdf:
        from .report import figures as F

        wrote = f"wrote {F.save_as(res.plot_cdf(), args.plot_cdf)}"
        if args.json == "-":  # standard output holds the JSON alone
            print(wrote, file=sys.stderr)
    if args.json:
        out = {"config": res.config, "metrics": res.metrics}
        if res.series_columns:  # run.sample_every: the time series as columns
            out["series"] = res.series_columns
        write_json(args.json, out)
        if args.json == "-":  # standard output holds the JSON alone
            return 0
    print(describe.run_summary(res.config))
    names = list(res.metrics) if args.all else _run_metrics(res.metrics)
    lines = table_lines([[m, describe.format_metric(m, res.metrics[m])] for m in names], ["metric", "value"])
    for line, m in zip(lines, [None, None, *names], strict=True):
        print(f"{line}  ({TIME_NOTES[m]})" if m in TIME_NOTES else line)
    if wrote:
        print(wrote)
    return 0


def _run_metrics(metrics: dict) -> list[str]:
    """The key metrics of a run, a timed run's clock right after the serial NAND time."""
    names = [m for m in KEY_METRICS + TIMED_METRICS if m in metrics]
    if "time.simulated_us" in names:
        names.remove("time.simulated_us")
        names.insert(names.index("time.nand_serial_us") + 1, "time.simulated_us")
    flows = sorted({int(k.split(".")[1]) for k in metrics if k.startswith("flow.") and k.endswith(".requests")})
    names += [f"flow.{i}.{m}" for i in flows for m in FLOW_METRICS if f"flow.{i}.{m}" in metrics]
    return names + [m for m in ("fairness",) if m in metrics]


def cmd_config_show(args) -> int:
    # Resolved: every default filled in, so the text shows exactly what a run would use.
    sys.stdout.write(_config_from_args(args).to_toml(resolved=True))
    return 0


def _parse_vary(items: list[str]) -> list[tuple[str, list]]:
    out = []
    for item in items:
        if "=" not in item:
            raise SsdlabError(f"--vary {item!r}: expected section.key=v1,v2,...")
        key, values = item.split("=", 1)
        out.append((key.strip(), [api.parse_value(v.strip()) for v in values.split(",") if v.strip()]))
    return out


# Where `compare` writes by default: a folder of its own, so that it never overwrites a study's or
# `make run`'s files in results/.
COMPARE_OUT = "results/compare"


def cmd_compare(args) -> int:
    base = _config_from_args(args)
    vary = _parse_vary(args.vary or ["buffer.kind=none,lru,block-lru"])
    cells: list[tuple[dict, api.Config]] = [({}, base)]
    for key, values in vary:
        cells = [({**vals, key: v}, c.set(key, v)) for vals, c in cells for v in values]
    # Every combination is checked before any runs, so a bad value does not end a long comparison.
    for vals, cfg in cells:
        try:
            cfg.resolved()
        except SsdlabError as e:
            label = " ".join(f"{k}={v}" for k, v in vals.items())
            raise SsdlabError(f"{label}: {e}") from None
    # Where the results go is checked before the first run, too.
    if args.json:
        check_output_file("--json", args.json)
    if args.out or args.json != "-":
        check_output_dir("--out", args.out or COMPARE_OUT, ("compare.json", "compare.png"))
    metrics = args.metrics.split(",") if args.metrics else KEY_METRICS
    # With `--json -` standard output holds the JSON alone; everything else goes to stderr.
    text_out = sys.stderr if args.json == "-" else sys.stdout
    results = []
    for vals, cfg in cells:
        label = " ".join(f"{k}={v}" for k, v in vals.items())
        if not args.quiet:
            print(f"running {label} ...", file=sys.stderr)
        res = _simulate(cfg, args.quiet)
        for w in res.warnings:
            print(f"warning: {label}: {w}", file=sys.stderr)
        if not results:
            print(describe.run_summary(res.config), file=text_out)
        results.append((label, vals, res))
    rows = [
        [label] + [describe.format_metric(m, r.metrics.get(m, math.nan)) for m in metrics] for label, _v, r in results
    ]
    print_table(rows, ["run"] + metrics, file=text_out)
    doc = [{"label": label, "config": r.config, "metrics": r.metrics} for label, _v, r in results]
    wrote = []
    if args.json:
        write_json(args.json, doc)
        if args.json != "-":
            wrote.append(args.json)
    # `--json -` alone writes no files: its user asked for standard output.
    if args.out or args.json != "-":
        out = Path(args.out or COMPARE_OUT)
        out.mkdir(parents=True, exist_ok=True)
        write_json(str(out / "compare.json"), doc)
        from .plots import compare_chart

        chart = compare_chart(
            [(vals, r.metrics) for _label, vals, r in results],
            [k for k, _values in vary],
            args.chart_metrics.split(","),
            out / "compare.png",
            config=results[0][2].config,
        )
        wrote += [str(out / "compare.json"), str(chart)]
    if wrote:
        print(f"\nwrote {', '.join(wrote)}", file=text_out)
    return 0


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
        rows = [[op, _fmt(s["count"])] + [_us(s[k]) for k in keys] for op, s in measured.items()]
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


def _us(v: float) -> str:
    """A latency in µs: whole µs from 100 µs up, else 3 significant digits."""
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


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


def components_markdown() -> str:
    """The component reference (docs/components.md), generated from the registry."""
    from . import _core

    return _core.components_markdown()


def cmd_policies(args) -> int:
    comps = api.components()
    defaults = api.flatten(api.defaults())
    if args.markdown:
        sys.stdout.write(components_markdown())
        return 0
    if args.json:
        for c in comps:
            c["defaults"] = {p["key"]: p["default"] for p in c["params"]}
            c["defaults"].update({k: defaults.get(k) for k in c["reads"]})
        print(json.dumps(comps, indent=2))
        return 0
    category = None
    for c in comps:
        if c["category"] != category:
            category = c["category"]
            print(f"\n[{category}]")
        print(f"  {c['name']:<14} {c['summary']}")
        for p in c["params"]:
            print(f"  {'':<14}   {p['key']} = {json.dumps(p['default'])}  # {p['doc']}")
        for k in c["reads"]:
            d = defaults.get(k)
            print(f"  {'':<14}   {k} = {json.dumps(d) if d is not None else '(unset)'}  (shared)")
    print("\n[trace formats]")
    for name, layout in traces.trace_formats():
        print(f"  {name:<14} {layout}")
    return 0


# -- sweep and results ---------------------------------------------------------------------------

RESULTS_METRICS = ["waf", "nand.erases", "buffer.page_hit_ratio"]


def cmd_sweep(args) -> int:
    from .sweep import run_sweep

    executor = args.executor or ("dask" if args.address else "local")
    check_output_dir("--out", args.out)
    s = run_sweep(
        args.study,
        args.out,
        executor=executor,
        address=args.address,
        workers=args.workers,
        progress=not args.quiet,
        traces=args.traces,
    )
    where = f"{s.executor}, {s.workers} worker{'s' if s.workers != 1 else ''}" if s.workers else s.executor
    rows = [
        ["cells", f"{s.total:,}"],
        ["skipped", f"{s.skipped:,} (already stored)"],
        ["ran", f"{s.ran:,} ({where})"],
        ["failed", f"{s.failed:,}"],
        ["wall", f"{s.wall_s:,.1f} s"],
    ]
    if s.duplicates:
        rows.insert(2, ["duplicates", f"{s.duplicates:,} (same configuration as an earlier cell, run once)"])
    print(f"study {s.study} -> {s.out_dir}")
    for name, value in rows:
        print(f"  {name:<10} {value}")
    if s.duplicates:
        print(f"\n{s.duplicates_line()}")
    if s.warned:
        print(f"\n{s.warnings_line()}")
    if s.errors:
        print(f"\nfailed cells (first {min(len(s.errors), 5)} of {s.failed}):")
        for index, values, error in sorted(s.errors, key=lambda e: e[0])[:5]:
            label = ", ".join(f"{k}={json.dumps(v)}" for k, v in values.items()) or "base"
            print(f"  cell {index} ({label}): {error}")
    from .store import ResultStore

    parts = len(ResultStore(s.out_dir).files())
    if parts > 500:
        print(f"\n{parts:,} result files: `ssdlab results {s.out_dir} --compact` makes reading them faster")
    return _failures(s, args.allow_failures)


def _failures(summary, allow: bool) -> int:
    """The exit status of a sweep: 1 when cells failed (after one summary line on stderr), unless
    --allow-failures."""
    if not summary.failed:
        return 0
    print(f"ssdlab: {summary.failure_line()}", file=sys.stderr)
    return 0 if allow else 1


def _cell_text(v, key: str = "") -> str:
    """A cell of `ssdlab results`: sizes in KiB/MiB/GiB (byte keys), counts with separators."""
    if v is None or (isinstance(v, float) and v != v):
        return "-"
    if describe.is_bytes_key(key) and isinstance(v, numbers.Real) and not isinstance(v, bool):
        return describe.size(float(v))
    if isinstance(v, (list, dict)):
        return json.dumps(v)
    if hasattr(v, "to_dict"):  # a time series (DataFrame)
        return f"<{len(v)} samples>"
    try:
        import pandas as pd

        if v is pd.NA:
            return "-"
    except ImportError:
        pass
    return _fmt(v)


def _csv_value(v):
    """Lists, dicts and time series (DataFrames, written as their JSON columns) in a CSV cell."""
    if hasattr(v, "to_dict"):
        from .store import encode_series

        return encode_series(v.to_dict("list"))
    return json.dumps(v) if isinstance(v, (list, dict)) else v


def cmd_results(args) -> int:
    from .store import ResultStore, _suggest, load_results

    if args.csv:
        check_output_file("--csv", args.csv)
    if args.compact:
        n, rows, path = ResultStore(args.dir).compact()
        if path is None:
            print(f"nothing to compact ({n} file{'s' if n != 1 else ''})")
        else:
            print(f"compacted {n} files ({rows} records) into {path}")
    filters: dict[str, list] = {}
    for item in args.filter or []:
        if "=" not in item:
            raise SsdlabError(f"--filter {item!r}: expected KEY=VALUE")
        key, value = item.split("=", 1)
        filters.setdefault(key.strip(), []).append(api.parse_value(value.strip()))
    df = load_results(args.dir, status=args.status, filters=filters)
    if args.columns:
        columns = [c.strip() for c in args.columns.split(",") if c.strip()]
        for c in columns:
            if c not in df.columns:
                raise SsdlabError(f"--columns: no column `{c}`{_suggest(c, df.columns)}")
    else:
        columns = list(df.attrs.get("axes", [])) + ["status"] + [m for m in RESULTS_METRICS if m in df.columns]
        columns = [c for c in dict.fromkeys(columns) if c in df.columns]
        if (df["status"] != "ok").any():
            columns.append("error")
    if args.csv:
        out = df[columns] if args.columns else df
        out = out.map(_csv_value)
        Path(args.csv).parent.mkdir(parents=True, exist_ok=True)
        out.to_csv(args.csv, index=False)
    rows = [
        [_cell_text(v, k) for k, v in zip(columns, r, strict=True)]
        for r in df[columns].itertuples(index=False, name=None)
    ]
    if "error" in columns:
        i = columns.index("error")
        rows = [r[:i] + [r[i][:80]] + r[i + 1 :] for r in rows]
    if rows:
        print_table(rows, columns)
    print(f"{len(df)} cell{'s' if len(df) != 1 else ''}" + (f"; wrote {args.csv}" if args.csv else ""))
    return 0


def _add_sweep_parsers(sub) -> None:
    p = sub.add_parser("sweep", help="run every cell of a study file (resumable) into a results directory")
    p.add_argument("study", metavar="STUDY.toml", help="study file (docs/studies.md)")
    p.add_argument("--out", "-o", required=True, metavar="DIR", help="results directory (re-runs skip stored cells)")
    p.add_argument("--executor", choices=["local", "dask"], help="local threads (default) or a Dask cluster")
    p.add_argument("--address", metavar="tcp://HOST:PORT", help="Dask scheduler (default: a local 127.0.0.1 cluster)")
    p.add_argument("--workers", type=int, metavar="N", help="runs at a time (default: all cores)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    p.add_argument("--traces", metavar="DIR", help="what `{traces}` in the study stands for (default as reproduce)")
    p.add_argument("--allow-failures", action="store_true", help="exit 0 even when cells failed")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("results", help="show (or export) the results of a sweep")
    p.add_argument("dir", metavar="DIR", help="results directory written by `ssdlab sweep`")
    p.add_argument("--filter", action="append", metavar="KEY=VALUE", help="keep cells where KEY == VALUE (repeatable)")
    p.add_argument("--columns", metavar="A,B,C", help="columns to show (default: the axes, status and key metrics)")
    p.add_argument("--csv", metavar="PATH", help="also write the cells as CSV (all columns unless --columns)")
    p.add_argument("--status", choices=["ok", "failed"], help="only cells with this status")
    p.add_argument("--compact", action="store_true", help="first combine the per-cell files into one")
    p.set_defaults(func=cmd_results)


# -- plot and report -----------------------------------------------------------------------------


def _user_errors(fn):
    """Report ValueErrors of the figure and report code as user errors (one line, exit 2)."""

    def wrapped(args) -> int:
        try:
            return fn(args)
        except SsdlabError:
            raise
        except ValueError as e:
            raise SsdlabError(str(e)) from None

    return wrapped


def _true_false(text: str) -> bool:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    raise argparse.ArgumentTypeError(f"expected true or false, not {text!r}")


def _results_dir(path: str) -> Path:
    d = Path(path)
    if not d.is_dir():
        raise SsdlabError(f"{d}: no such results directory")
    return d


def _plot_name(args) -> str:
    """The default file name: every option that changes the figure is in it, so two different
    figures of one results folder never overwrite each other."""
    parts = [args.kind, args.y]
    parts += [f"vs-{args.x}"] if args.x and args.kind != "cdf" else []
    parts += [f"by-{args.by}"] if args.by else []
    parts += [f"mean-over-{k}" for k in args.mean_over or []]
    parts += [f"{f.replace('=', '-')}" for f in args.filter or []]
    parts += ["tail"] if args.tail else []
    parts += [s for s, on in (("logx", args.logx), ("logy", args.logy), ("own-y", not args.sharey)) if on]
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", "-".join(parts))


@_user_errors
def cmd_plot(args) -> int:
    from .report import figures as F
    from .report.html import load_results

    d = _results_dir(args.dir)
    if args.kind == "series":
        args.x = args.x or "requests"
    if args.kind != "cdf" and not args.x:
        raise SsdlabError(f"--kind {args.kind} needs --x KEY")
    if args.kind in ("normalized", "heatmap") and not args.by:
        raise SsdlabError(f"--kind {args.kind} needs --by KEY")
    if args.kind == "normalized" and args.baseline is None:
        raise SsdlabError("--kind normalized needs --baseline VALUE (a value of --by)")
    if args.kind == "heatmap" and (args.logx or args.logy):
        raise SsdlabError("--kind heatmap: its axes are the values of --x and --by, not scales (no --logx, --logy)")
    if args.kind == "cdf" and args.logy:
        raise SsdlabError("--kind cdf: the y axis is a fraction, 0 to 1 (--tail: its upper tail on a logit axis)")
    stem = Path(args.out) if args.out else d / "figures" / _plot_name(args)
    _check_folder("--out" if args.out else "figures folder", stem, stem.parent)
    df = load_results(d)
    filters: dict[str, list] = {}
    for item in args.filter or []:
        if "=" not in item:
            raise SsdlabError(f"--filter {item!r}: expected KEY=VALUE")
        key, value = item.split("=", 1)
        filters.setdefault(key.strip(), []).append(value.strip())
    if filters:
        df = F.select(df, filters)
    mean_over = args.mean_over or []
    y_scale = {"logy": args.logy, "sharey": args.sharey}
    if args.kind == "line":
        fig = F.line(df, args.x, args.y, by=args.by, logx=args.logx, mean_over=mean_over, **y_scale)
    elif args.kind == "bars":
        fig = F.bars(df, args.x, args.y, by=args.by, mean_over=mean_over, **y_scale)
    elif args.kind == "normalized":
        fig = F.normalized_bars(df, args.x, args.y, by=args.by, baseline=args.baseline, mean_over=mean_over, **y_scale)
    elif args.kind == "heatmap":
        fig = F.heatmap(df, x=args.x, y=args.by, value=args.y, mean_over=mean_over, share_scale=args.sharey)
    elif args.kind == "series":
        fig = F.series(df, args.y, x=args.x, by=args.by, logx=args.logx, mean_over=mean_over, **y_scale)
    elif args.y not in df.columns and "histograms" in df.columns:
        # A stored distribution (timed mode's latency.read_ns …): a CDF per value of --by.
        fig = F.distribution_cdf(df, args.y, by=args.by, tail=args.tail, logx=args.logx, mean_over=mean_over)
    elif mean_over:
        raise SsdlabError(f"--mean-over: `{args.y}` is a metric, whose CDF is over the cells themselves")
    else:
        title = [F.subtitle(F.ok_rows(df)), F.selection_note(df)]
        fig = F.cdf(F.samples_by(df, args.y, args.by), xlabel=F.label(args.y), logx=args.logx, title=title)
    for path in F.save(fig, stem, formats=args.format.split(","), close=True):
        print(f"wrote {path}")
    return 0


@_user_errors
def cmd_report(args) -> int:
    from .report.html import load_results, write_report
    from .studies import hooks

    d = _results_dir(args.dir)
    if args.out:
        check_output_file("--out", args.out)
    else:
        check_output_dir("results folder", d)
    df = load_results(d)
    figures, sections = (None, None) if args.default_figures else hooks(d)
    path = write_report(d, out=args.out, figures=figures, sections=sections, results=df)
    print(f"wrote {path}")
    return 0


def _add_report_parsers(sub) -> None:
    p = sub.add_parser("plot", help="one figure (PNG + SVG/PDF) from the results of a sweep")
    p.add_argument("dir", metavar="DIR", help="results directory written by `ssdlab sweep`")
    p.add_argument("--kind", choices=["line", "bars", "normalized", "heatmap", "cdf", "series"], default="line")
    p.add_argument(
        "--x",
        metavar="KEY",
        help="parameter on the x axis (not used by cdf; series: a series column, default requests)",
    )
    p.add_argument(
        "--y",
        required=True,
        metavar="METRIC",
        help="metric to plot (heatmap: the cell value; series: a time-series column; cdf: a stored "
        "distribution such as latency.read_ns, or a metric whose values over the cells make the CDF)",
    )
    p.add_argument(
        "--by",
        metavar="KEY",
        help="one line/bar/CDF/series per value of KEY (heatmap: the rows; normalized: required); other keys "
        "that vary make panels",
    )
    p.add_argument("--baseline", metavar="VALUE", help="normalized: the value of --by to divide by")
    p.add_argument("--filter", action="append", metavar="KEY=VALUE", help="keep cells where KEY == VALUE (repeatable)")
    p.add_argument(
        "--mean-over",
        action="append",
        metavar="KEY",
        help="average over KEY (repeatable); otherwise each other varying key makes panels, or is an error",
    )
    p.add_argument("--logx", action="store_true", help="logarithmic x axis")
    p.add_argument("--logy", action="store_true", help="logarithmic y axis (line, bars, normalized, series)")
    p.add_argument(
        "--sharey",
        type=_true_false,
        default=True,
        metavar="true|false",
        help="false: each panel its own y scale (heatmap: its own colour scale); default true, one for all",
    )
    p.add_argument(
        "--tail",
        action="store_true",
        help="cdf of a distribution (--y latency.read_ns): the upper tail, 0.9 to 0.9999, on a logit axis",
    )
    p.add_argument(
        "--out",
        metavar="STEM",
        help="output path without extension (default: DIR/figures/KIND-Y-vs-X[-by-B][-FILTERS], named by every option)",
    )
    p.add_argument("--format", default="png,svg", help="comma-separated: png, svg, pdf (default png,svg)")
    p.set_defaults(func=cmd_plot)

    p = sub.add_parser("report", help="write the self-contained HTML report of a sweep")
    p.add_argument("dir", metavar="DIR", help="results directory written by `ssdlab sweep`")
    p.add_argument("--out", metavar="FILE", help="output file (default: DIR/report.html)")
    p.add_argument("--default-figures", action="store_true", help="ignore the registered study's figures and sections")
    p.set_defaults(func=cmd_report)


# -- reproduce -----------------------------------------------------------------------------------


def cmd_reproduce(args) -> int:
    from . import studies

    if args.all:
        return _reproduce_all(args)
    if args.list or not args.name:
        reg = studies.registry()
        if not args.list:
            raise SsdlabError(f"reproduce needs a study name (registered: {', '.join(reg)}) or --list")
        rows = [
            [name, f"{_count(st.cells(True))} quick,", f"{_count(st.cells(False))} full cells", st.summary]
            for name, st in reg.items()
        ]
        widths = [max(len(r[i]) for r in rows) for i in range(3)] if rows else []
        for r in rows:  # one line per study: name, cells of the quick and the full grid, summary
            print(f"{r[0]:<{widths[0]}}  {r[1]:>{widths[1]}} {r[2]:>{widths[2]}}  {r[3]}")
        return 0
    folder = args.out or Path("results") / (f"{args.name}-quick" if args.quick else args.name)
    check_output_dir("--out" if args.out else "results folder", folder)
    try:
        report = studies.reproduce(args.name, quick=args.quick, out=args.out, **_run_options(args))
    except studies.CellsFailed as e:
        # The report is written and shows the failed cells; the exit status says they failed.
        print(f"wrote {e.report}")
        return _failures(e.summary, args.allow_failures)
    print(f"wrote {report}")
    return 0


def _count(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


def _run_options(args) -> dict:
    """How `reproduce` runs its cells: executor, scheduler address, workers, progress, traces."""
    return {
        "executor": args.executor or ("dask" if args.address else "local"),
        "address": args.address,
        "workers": args.workers,
        "progress": not args.quiet,
        "traces": args.traces,
        "robust": args.robust,
    }


def _reproduce_all(args) -> int:
    """`reproduce --all`: every registered study into DIR/NAME (or DIR/NAME-quick), then the ledger."""
    from . import studies

    if args.name:
        raise SsdlabError(f"reproduce: give a study name or --all, not both (got `{args.name}` and --all)")
    check_output_dir("--out" if args.out else "results folder", args.out or "results")
    done, failures = studies.reproduce_all(quick=args.quick, out=args.out, **_run_options(args))
    for folder in done:
        print(f"wrote {folder / 'report.html'}")
    if done:
        print()
        print_ledger(studies.ledger(done))
    for line in failures:
        print(f"ssdlab: {line}", file=sys.stderr)
    return 1 if failures and not args.allow_failures else 0


def _add_reproduce_parser(sub) -> None:
    p = sub.add_parser("reproduce", help="run a registered study end to end (sweep, then report)")
    p.add_argument("name", nargs="?", metavar="NAME", help="study name (see --list)")
    p.add_argument("--list", action="store_true", help="list the registered studies")
    p.add_argument("--all", action="store_true", help="every registered study, one folder each under --out DIR")
    p.add_argument("--quick", action="store_true", help="the reduced grid (minutes); default is the full grid")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="output directory (default results/NAME, or results/NAME-quick; with --all the folder that holds them)",
    )
    p.add_argument("--executor", choices=["local", "dask"], help="local threads (default) or dask")
    p.add_argument("--address", metavar="tcp://HOST:PORT", help="an existing Dask scheduler")
    p.add_argument("--workers", type=int, metavar="N", help="local workers (default: all cores)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    p.add_argument(
        "--traces", metavar="DIR", help="real-trace directory (default $SSDLAB_TRACES, else ../shared/traces)"
    )
    p.add_argument("--allow-failures", action="store_true", help="exit 0 even when cells failed")
    p.add_argument(
        "--robust",
        action="store_true",
        help="then re-run the grid across the values the seed leaves open (claims.toml [[open]]), a setting at a time",
    )
    p.set_defaults(func=cmd_reproduce)


# -- claims --------------------------------------------------------------------------------------


def print_ledger(rows, file=None) -> None:
    """The ledger as text: one block per claim, then the per-study summary (the seed's claims by
    verdict and robustness, the extensions apart)."""
    out = file or sys.stdout
    for c in rows:
        print(f"[{c.seed}] {c.study} · {c.figure} · {c.kind} · {claims.verdict_text(c).upper()}", file=out)
        print(f"  claim:    {c.claim}", file=out)
        print(f"  seed:     {c.seed_value}", file=out)
        print(f"  reading:  {c.reading}", file=out)
        print(f"  measured: {c.measured}" + (f" ({len(c.cells)} cells)" if c.cells else ""), file=out)
        if c.why:
            print(f"  why:      {c.why}", file=out)
        if c.quick:
            print(f"  quick:    {c.quick}", file=out)
        if c.robustness:
            on = f" on {', '.join(c.robustness['flips'])}" if c.robustness["flips"] else ""
            print(f"  robust:   {c.robustness['verdict']}{on} ({len(c.robustness['settings'])} settings)", file=out)
    summary = claims.summary(rows)
    if not summary:
        print("no claims: none of these results belongs to a study that declares claims", file=out)
        return
    counts = list(claims.SUMMARY_COUNTS)
    body = [[r["seed"], r["study"], r["grid"], r["results"]] + [str(r[k]) for k in counts] for r in summary]
    totals = [str(sum(r[k] for r in summary)) for k in counts]
    print(file=out)
    print_table(body + [["", "all", "", ""] + totals], ["seed", "study", "grid", "results"] + counts, file=out, left=4)


def cmd_claims(args) -> int:
    from . import studies

    paths = args.results or ["results"]
    rows = studies.ledger(paths)
    if args.json:
        doc = {"claims": [r.to_dict() for r in rows], "summary": claims.summary(rows)}
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        print_ledger(rows)
    return 0


def _add_claims_parser(sub) -> None:
    p = sub.add_parser("claims", help="every seed's claims judged on study results (the claims ledger)")
    p.add_argument(
        "results",
        nargs="*",
        metavar="RESULTS_DIR",
        help="study results folders, or folders holding them (default: results)",
    )
    p.add_argument("--json", action="store_true", help="print the ledger as JSON")
    p.set_defaults(func=cmd_claims)


# -- calibrate and validate ------------------------------------------------------------------


def cmd_calibrate(args) -> int:
    from . import calibrate as C

    check_output_file("--out", args.out)
    cal = C.calibrate(
        args.trace,
        format=args.format,
        config=args.config,
        space=args.space,
        trials=args.trials,
        workers=args.workers,
        seed=args.seed,
        executor=args.executor or ("dask" if args.address else "local"),
        address=args.address,
        progress=not args.quiet,
    )
    path = cal.write(args.out)
    best = cal.best
    print(f"error {best['objective']:.2%} (mean |relative error| of {', '.join(cal.space.targets)})")
    print_table([[k, str(v)] for k, v in best["values"].items()], ["fitted", "value"])
    print(f"wrote {path}")
    return 0


def cmd_validate(args) -> int:
    from . import calibrate as C

    if args.plot:
        check_output_file("--plot", args.plot)
    v = C.validate(args.trace, args.config, format=args.format)
    if args.plot:
        path = v.save_plot(args.plot)
    if args.json:
        print(json.dumps(_json_safe(v.to_dict()), indent=2))
    else:
        print(f"{args.trace} (format {v.format}) with {args.config}")
        print_table(v.rows(), ["op", "statistic", "measured", "predicted", "error"], left=2)
        print()
        for line in v.summary():
            print(line)
    if args.plot:
        print(f"wrote {path}", file=sys.stderr if args.json else sys.stdout)
    return 0


CALIBRATE_TRIALS = 240  # ssdlab.calibrate.DEFAULT_TRIALS (not imported here: it needs numpy)


def _add_calibrate_parsers(sub) -> None:
    p = sub.add_parser("calibrate", help="fit timing parameters to a trace's measured latencies (a profile)")
    p.add_argument(
        "trace",
        nargs="+",
        metavar="TRACE",
        help="a trace with measured latencies; several (windows of one device) are fitted together",
    )
    p.add_argument("--format", "-f", help="trace format, of every trace (default: detect each)")
    p.add_argument("--config", "-c", metavar="BASE.toml", help="starting configuration (default: the package's)")
    p.add_argument("--space", metavar="SPACE.toml", help="parameters, ranges and targets (default: the package's)")
    p.add_argument(
        "--trials",
        type=int,
        default=CALIBRATE_TRIALS,
        metavar="N",
        help=f"simulations to run (default {CALIBRATE_TRIALS})",
    )
    p.add_argument("--workers", type=int, metavar="N", help="trials run at once (default: all cores)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="the optimiser's seed (default 0)")
    p.add_argument("--executor", choices=["local", "dask"], help="local threads (default) or dask")
    p.add_argument("--address", metavar="tcp://HOST:PORT", help="an existing Dask scheduler")
    p.add_argument("--out", "-o", required=True, metavar="PROFILE.toml", help="the fitted configuration")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("validate", help="a profile's predicted latencies against a trace's measured ones")
    p.add_argument("trace", metavar="TRACE", help="a trace with measured latencies")
    p.add_argument("--config", "-c", required=True, metavar="PROFILE.toml", help="the configuration to check")
    p.add_argument("--format", "-f", help="trace format (default: detect)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("--plot", metavar="FILE", help="write measured and simulated CDFs to FILE (.png, .svg or .pdf)")
    p.set_defaults(func=cmd_validate)


def _add_config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", "-c", help="TOML configuration file")
    p.add_argument(
        "--set",
        "-s",
        action="append",
        metavar="SECTION.KEY=VALUE",
        help="override one key (repeatable), e.g. --set buffer.bytes=8MiB",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress output")


def _add_trace_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("file")
    p.add_argument("--format", "-f", help="trace format (default: detect)")
    p.add_argument("--device", type=int, help="keep only this device / volume / LUN")
    p.add_argument("--skip-invalid", action="store_true", help="count and skip malformed records")
    p.add_argument("--blkparse-action", choices=["Q", "D", "C"], help="blkparse action to use")
    p.add_argument("--generic", metavar="SPEC.json", help="column spec for --format generic")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="ssdlab", description="Trace-driven SSD simulator.")
    ap.add_argument("--version", action="version", version=f"ssdlab {api._core.__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", help="run one simulation")
    _add_config_args(p)
    p.add_argument(
        "--json", metavar="PATH", help='write {"config": ..., "metrics": ...} to PATH (`-`: standard output, alone)'
    )
    p.add_argument("--all", action="store_true", help="print every metric")
    p.add_argument(
        "--plot-cdf",
        metavar="FILE",
        help="timed runs: write the read and write latency CDFs (whole and tail) to FILE (.png, .svg or .pdf)",
    )
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("compare", help="compare buffers / FTLs / settings on one workload")
    _add_config_args(p)
    p.add_argument(
        "--vary",
        action="append",
        metavar="SECTION.KEY=V1,V2",
        help="values to compare (repeatable: the grid is their product); default buffer.kind=none,lru,block-lru",
    )
    p.add_argument("--metrics", help="comma-separated metrics for the table")
    p.add_argument(
        "--json",
        metavar="PATH",
        help="also write the runs as JSON to PATH (`-`: standard output, alone, and no files unless --out)",
    )
    p.add_argument(
        "--chart-metrics",
        default="waf,nand.erases,buffer.page_hit_ratio",
        help="comma-separated metrics for the bar chart",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help=f"folder for compare.json and compare.png (default: {COMPARE_OUT}; with `--json -` none unless given)",
    )
    p.set_defaults(func=cmd_compare)

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

    c = sub.add_parser("config", help="configurations").add_subparsers(dest="config_command", required=True)
    p = c.add_parser("show", help="print the resolved configuration (defaults filled in) as TOML")
    _add_config_args(p)
    p.set_defaults(func=cmd_config_show)

    p = sub.add_parser("policies", help="list every registered component with its parameters")
    p.add_argument("--json", action="store_true")
    p.add_argument("--markdown", action="store_true", help="print the docs/components.md reference")
    p.set_defaults(func=cmd_policies)
    _add_sweep_parsers(sub)
    _add_report_parsers(sub)
    _add_reproduce_parser(sub)
    _add_claims_parser(sub)
    _add_calibrate_parsers(sub)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code = args.func(args)
        sys.stdout.flush()  # a closed pipe shows up here at the latest
        return code
    except BrokenPipeError:
        # The reader went away (`ssdlab run | head`): stop quietly, as `cat` would. Point stdout at
        # /dev/null so that the interpreter's final flush does not complain again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a process killed by a closed pipe
    except SsdlabError as e:
        print(f"ssdlab: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nssdlab: interrupted", file=sys.stderr)
        return 130
    except OSError as e:
        # What a check before the run could not foresee (a full disk): in ssdlab's words too.
        print(f"ssdlab: error: {api.os_error_message(e)}", file=sys.stderr)
        return 2
    except json.JSONDecodeError as e:
        print(f"ssdlab: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
