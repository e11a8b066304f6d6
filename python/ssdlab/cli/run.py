"""`ssdlab run`, `compare`, `config show` and `policies`: one simulation, a comparison, the
resolved configuration, the registry's components."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from .. import api, describe, traces
from .._core import SsdlabError
from .common import (
    ProgressBar,
    _add_config_args,
    _config_from_args,
    check_output_dir,
    check_output_file,
    print_table,
    table_lines,
    write_json,
)

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
        from ..report import figures as F

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
        from ..report import figures as F

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
        from ..plots import compare_chart

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


def components_markdown() -> str:
    """The component reference (docs/components.md), generated from the registry."""
    from .. import _core

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


def _add_run_parsers(sub) -> None:
    """`run`, `compare`, `config show`, `policies`."""
    p = sub.add_parser("run", help="run one simulation")
    _add_config_args(p)
    p.add_argument(
        "--profile",
        "-p",
        metavar="NAME",
        help="a device profile (ssdlab profiles) under the configuration: its device, timed mode, its "
        "preconditioning; --config and --set keys win",
    )
    p.add_argument("--host", help="with --profile and [[flows]]: the profile's host whose per-I/O costs apply")
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

    c = sub.add_parser("config", help="configurations").add_subparsers(dest="config_command", required=True)
    p = c.add_parser("show", help="print the resolved configuration (defaults filled in) as TOML")
    _add_config_args(p)
    p.set_defaults(func=cmd_config_show)

    p = sub.add_parser("policies", help="list every registered component with its parameters")
    p.add_argument("--json", action="store_true")
    p.add_argument("--markdown", action="store_true", help="print the docs/components.md reference")
    p.set_defaults(func=cmd_policies)
