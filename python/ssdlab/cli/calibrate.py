"""`ssdlab calibrate` and `validate`: fit a configuration to a measured trace, and check it."""

from __future__ import annotations

import json
import sys

from .common import _executor_options, _json_safe, check_output_file, print_table


def cmd_calibrate(args) -> int:
    from .. import calibrate as C

    check_output_file("--out", args.out)
    cal = C.calibrate(
        args.trace,
        format=args.format,
        config=args.config,
        space=args.space,
        trials=args.trials,
        seed=args.seed,
        **_executor_options(args),
    )
    path = cal.write(args.out)
    best = cal.best
    print(f"error {best['objective']:.2%} (mean |relative error| of {', '.join(cal.space.targets)})")
    print_table([[k, str(v)] for k, v in best["values"].items()], ["fitted", "value"])
    print(f"wrote {path}")
    return 0


def cmd_validate(args) -> int:
    from .. import calibrate as C

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
