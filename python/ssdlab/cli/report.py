"""`ssdlab plot` and `report`: figures and the HTML report of a results store."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from .._core import SsdlabError
from .common import _check_folder, check_output_dir, check_output_file


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
    from ..report import figures as F
    from ..report.html import load_results

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
    from ..report.html import load_results, write_report
    from ..studies import hooks

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
