"""`ssdlab calibrate` and `validate`: fit a configuration to a measured trace, or a device profile to
fio's JSON outputs, and check it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .._core import SsdlabError
from .common import _executor_options, _json_safe, check_output_file, print_table


def is_fio_output(path: str) -> bool:
    """A folder of *.json, or a .json file that fio wrote (its `fio version` near the top)."""
    p = Path(path)
    if p.is_dir():
        return any(p.glob("*.json"))
    if p.suffix != ".json" or not p.is_file():
        return False
    with p.open(errors="replace") as f:
        return '"fio version"' in f.read(1 << 16)


def _fio_inputs(paths: list[str]) -> bool:
    """Whether the inputs are fio outputs (all of them) or traces (none); a mix is an error."""
    fio = [is_fio_output(p) for p in paths]
    if any(fio) and not all(fio):
        mixed = paths[fio.index(False)]
        raise SsdlabError(f"{mixed}: not fio JSON output, but the other inputs are: calibrate one kind at a time")
    return all(fio)


def cmd_calibrate(args) -> int:
    from .. import calibrate as C

    check_output_file("--out", args.out)
    if _fio_inputs(args.trace):
        return _calibrate_fio(args)
    for opt in ("base", "host", "capacity", "name", "polish"):
        if getattr(args, opt) is not None:
            raise SsdlabError(f"--{opt} is for fio outputs; the inputs are traces")
    cal = C.calibrate(
        args.trace,
        format=args.format,
        config=args.config,
        space=args.space,
        trials=CALIBRATE_TRIALS if args.trials is None else args.trials,
        seed=args.seed,
        **_executor_options(args),
    )
    path = cal.write(args.out)
    best = cal.best
    print(f"error {best['objective']:.2%} (mean |relative error| of {', '.join(cal.space.targets)})")
    print_table([[k, str(v)] for k, v in best["values"].items()], ["fitted", "value"])
    print(f"wrote {path}")
    return 0


def _calibrate_fio(args) -> int:
    from ..fio import fit

    for opt in ("config", "format", "executor", "address"):
        if getattr(args, opt) is not None:
            hint = " (start from a profile with --base)" if opt == "config" else ""
            raise SsdlabError(f"--{opt} is for traces, not fio outputs{hint}")
    trials = fit.DEFAULT_TRIALS if args.trials is None else args.trials
    polish = fit.DEFAULT_POLISH if args.polish is None else args.polish
    cal = fit.calibrate(args.trace, base=args.base, space=args.space, trials=trials, workers=args.workers,
                        seed=args.seed, host=args.host, capacity_bytes=args.capacity,
                        progress=not args.quiet, polish=polish)  # fmt: skip
    path = cal.write(args.out, name=args.name or Path(args.out).stem)
    best = cal.best
    stats = ", ".join(fit.STATS)
    print(f"error {best['objective']:.2%} (mean |relative error| of {stats} over {len(cal.points)} points)")
    print_table([[k, f"{v:g}"] for k, v in best["values"].items()], ["fitted", "value"])
    print(f"{len(cal.trials)} trials ({cal.polish} of them polishing) in {cal.wall_s:.0f} s; wrote {path}")
    return 0


def _validate_fio(args) -> int:
    from ..fio import fit

    v = fit.validate(args.trace, args.profile, host=args.host)
    if args.plot:
        v.save_plot(args.plot)
    if args.json:
        print(json.dumps(_json_safe(v.to_dict()), indent=2))
    else:
        print(v.table())
    if args.plot:
        print(f"wrote {args.plot}", file=sys.stderr if args.json else sys.stdout)
    return 0


def cmd_validate(args) -> int:
    from .. import calibrate as C

    if args.plot:
        check_output_file("--plot", args.plot)
    if _fio_inputs(args.trace):
        if args.config is not None:
            raise SsdlabError("--config is for traces; fio outputs are validated against --profile NAME")
        if args.profile is None:
            raise SsdlabError("fio outputs are validated against a profile: --profile NAME (ssdlab profiles)")
        return _validate_fio(args)
    if (args.config is None) == (args.profile is None):
        raise SsdlabError("a trace is validated against a configuration (--config PROFILE.toml) or a device "
                          "profile (--profile NAME): one of them")  # fmt: skip
    if len(args.trace) > 1 or args.host is not None:
        raise SsdlabError("one trace at a time (--host is for fio outputs)")
    args.trace = args.trace[0]
    config = args.config
    if args.profile is not None:
        from ..fio.profile import load_profile

        config = load_profile(args.profile).run_config()
        args.config = f"profile {args.profile}"
    v = C.validate(args.trace, config, format=args.format)
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
FIO_TRIALS = 160  # ssdlab.fio.fit.DEFAULT_TRIALS
FIO_POLISH = 48  # ssdlab.fio.fit.DEFAULT_POLISH


def _add_calibrate_parsers(sub) -> None:
    p = sub.add_parser(
        "calibrate", help="fit timing parameters to a trace's measured latencies, or a device profile to fio outputs"
    )
    p.add_argument(
        "trace",
        nargs="+",
        metavar="TRACE|FIO.json",
        help="a trace with measured latencies (several: windows of one device, fitted together), or fio JSON "
        "outputs (files or folders of them: one device's points, fitted jointly)",
    )
    p.add_argument("--format", "-f", help="trace format, of every trace (default: detect each)")
    p.add_argument("--config", "-c", metavar="BASE.toml", help="starting configuration (default: the package's)")
    p.add_argument("--space", metavar="SPACE.toml", help="parameters, ranges and targets (default: the package's)")
    p.add_argument(
        "--trials",
        type=int,
        metavar="N",
        help=f"trials to run (default {CALIBRATE_TRIALS} for traces, {FIO_TRIALS} for fio outputs)",
    )
    p.add_argument("--polish", type=int, metavar="N", help=f"fio: trials of a coordinate search from the best "
                   f"after --trials (default {FIO_POLISH}; 0: none)")  # fmt: skip
    p.add_argument("--base", metavar="PROFILE", help="fio: the profile to start from (default: the package's base)")
    p.add_argument("--host", help="fio: one host name for every point (default: each file's folder name)")
    p.add_argument("--capacity", type=int, metavar="BYTES", help="fio: the device's capacity (what size=100%% means)")
    p.add_argument("--name", help="fio: the profile's name (default: --out's file name)")
    p.add_argument("--workers", type=int, metavar="N", help="trials run at once (default: all cores)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="the optimiser's seed (default 0)")
    p.add_argument("--executor", choices=["local", "dask"], help="local threads (default) or dask")
    p.add_argument("--address", metavar="tcp://HOST:PORT", help="an existing Dask scheduler")
    p.add_argument("--out", "-o", required=True, metavar="PROFILE.toml", help="the fitted configuration")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("validate", help="a profile's predictions against a trace's or fio outputs' measurements")
    p.add_argument("trace", nargs="+", metavar="TRACE|FIO.json", help="a trace with measured latencies, or fio outputs")
    p.add_argument("--config", "-c", metavar="PROFILE.toml", help="trace: the configuration to check")
    p.add_argument("--profile", "-p", metavar="NAME", help="fio: the device profile to check (name or file)")
    p.add_argument("--host", help="fio: the profile's host to predict with (default: each file's folder's, if "
                   "the profile has it, else its default)")  # fmt: skip
    p.add_argument("--format", "-f", help="trace format (default: detect)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("--plot", metavar="FILE", help="write measured and simulated CDFs to FILE (.png, .svg or .pdf)")
    p.set_defaults(func=cmd_validate)
