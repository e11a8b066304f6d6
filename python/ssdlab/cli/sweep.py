"""`ssdlab sweep` and `results`: a grid of runs into a results store, and its table."""

from __future__ import annotations

import json
import numbers
from pathlib import Path

from .. import api, describe
from .._core import SsdlabError
from .common import (
    _add_grid_args,
    _executor_options,
    _failures,
    _fmt,
    check_output_dir,
    check_output_file,
    print_table,
)

RESULTS_METRICS = ["waf", "nand.erases", "buffer.page_hit_ratio"]


def cmd_sweep(args) -> int:
    from ..sweep import run_sweep

    check_output_dir("--out", args.out)
    s = run_sweep(args.study, args.out, traces=args.traces, **_executor_options(args))
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
    from ..store import ResultStore

    parts = len(ResultStore(s.out_dir).files())
    if parts > 500:
        print(f"\n{parts:,} result files: `ssdlab results {s.out_dir} --compact` makes reading them faster")
    return _failures(s, args.allow_failures)


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
        from ..store import encode_series

        return encode_series(v.to_dict("list"))
    return json.dumps(v) if isinstance(v, (list, dict)) else v


def cmd_results(args) -> int:
    from ..store import ResultStore, _suggest, load_results

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
    _add_grid_args(
        p,
        executor="local threads (default) or a Dask cluster",
        address="Dask scheduler (default: a local 127.0.0.1 cluster)",
        workers="runs at a time (default: all cores)",
        traces="what `{traces}` in the study stands for (default as reproduce)",
    )
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("results", help="show (or export) the results of a sweep")
    p.add_argument("dir", metavar="DIR", help="results directory written by `ssdlab sweep`")
    p.add_argument("--filter", action="append", metavar="KEY=VALUE", help="keep cells where KEY == VALUE (repeatable)")
    p.add_argument("--columns", metavar="A,B,C", help="columns to show (default: the axes, status and key metrics)")
    p.add_argument("--csv", metavar="PATH", help="also write the cells as CSV (all columns unless --columns)")
    p.add_argument("--status", choices=["ok", "failed"], help="only cells with this status")
    p.add_argument("--compact", action="store_true", help="first combine the per-cell files into one")
    p.set_defaults(func=cmd_results)
