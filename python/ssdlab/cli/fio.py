"""`ssdlab fio`: run a fio job file on a profile's simulated device (fio's output formats),
`ssdlab fio --plan DIR` (a designed sweep to measure a device with), `ssdlab fio info` (fio's
JSON output read as a measurement), and `ssdlab profiles`."""

from __future__ import annotations

from pathlib import Path

from .. import api, describe
from ..fio import Job, Measurement, OpStats, read_output
from .common import _fmt, apply_sets, fmt_us, print_table, write_json

# The percentiles a summary shows when fio recorded them (fio's default list has all four).
SHOWN_PERCENTILES = (50.0, 95.0, 99.0, 99.9)


def cmd_fio_info(args) -> int:
    measurements = [read_output(f) for f in args.files]
    if args.json:
        write_json("-", [m.as_dict() for m in measurements])
        return 0
    if len(measurements) == 1:
        _print_one(measurements[0])
    else:
        _print_rows(measurements)
    return 0


def _print_one(m: Measurement) -> None:
    """One file: what ran, then what each job entry measured."""
    for job in m.jobs:
        print_table(_job_rows(m, job), ["field", "value"], left=2)
        print()
        _print_ops(job)


def _job_rows(m: Measurement, job: Job) -> list[list[str]]:
    o = job.option
    threads = f"{job.numjobs}" + (" (group_reporting: one entry for all)" if job.group_reporting else "")
    runtime, ramp = (describe.duration(job.seconds(k) * 1e6) for k in ("runtime", "ramp_time"))
    timing = f"{runtime} after a {ramp} ramp"
    if o("time_based", "0") not in ("0", "false"):
        timing += " (time_based)"
    rows = [
        ["file", m.path],
        ["fio", m.fio_version or "-"],
        ["job", job.name],
        ["target", o("filename", "-")],
        ["ioengine", o("ioengine", "psync (fio's default)")],
        ["rw", o("rw", "read (fio's default)")],
        ["bs", describe.size(job.block_bytes("read"))],
        ["iodepth", str(job.iodepth)],
        ["numjobs", threads],
        ["size", o("size", "-")],
        ["runtime", timing],
        ["cpus_allowed", o("cpus_allowed", "-")],
        ["cpu (usr + sys)", f"{job.usr_cpu_pct:.1f}% + {job.sys_cpu_pct:.1f}%"],
        ["measured for", describe.duration(job.measured_s * 1e6) + (" per thread" if job.threads > 1 else "")],
    ]
    if job.error:
        rows.append(["error", f"fio reported error {job.error} for this job"])
    return rows


def _print_ops(job: Job) -> None:
    shown = _percentiles(job.ops.values())
    header = ["op", "ios", "IOPS", "MB/s", "clat mean µs"] + [f"p{p:g} µs" for p in shown]
    rows = [[op, *_op_cells(s, shown)] for op, s in job.ops.items()]
    print_table(rows, header)


def _print_rows(measurements: list[Measurement]) -> None:
    """Several files (a sweep): one row per file, job entry and direction."""
    shown = _percentiles(s for m in measurements for j in m.jobs for s in j.ops.values())
    header = ["file", "rw", "bs", "qd", "jobs", "op", "ios", "IOPS", "MB/s", "clat mean µs"]
    header += [f"p{p:g} µs" for p in shown]
    rows = []
    for m in measurements:
        for j in m.jobs:
            head = [Path(m.path).name, j.option("rw", "read"), describe.size(j.block_bytes("read")), str(j.iodepth)]
            for op, s in j.ops.items():
                rows.append([*head, str(j.numjobs), op, *_op_cells(s, shown)])
    print_table(rows, header, left=2)


def _percentiles(stats) -> list[float]:
    have = {p for s in stats for p in s.clat_percentiles_ns}
    return [p for p in SHOWN_PERCENTILES if p in have]


def _op_cells(s: OpStats, shown: list[float]) -> list[str]:
    pct = [_us(s.clat_percentiles_ns.get(p)) for p in shown]
    return [_fmt(s.ios), f"{s.iops:,.0f}", f"{s.bw_bytes_s / 1e6:,.1f}", _us(s.clat_mean_ns), *pct]


def _us(ns: float | None) -> str:
    return "-" if ns is None else fmt_us(ns / 1e3)


def cmd_fio_run(args) -> int:
    from ..fio.run import report, simulate_jobfile

    profile = args.profile
    if args.set:
        import dataclasses

        from ..fio.profile import load_profile

        prof = load_profile(args.profile)
        profile = dataclasses.replace(prof, config=apply_sets(api.Config(prof.config), args.set).to_dict())
    jobs = simulate_jobfile(args.jobfile, profile, args.host, seed=args.seed, full_runtime=args.full_runtime)
    out = report(jobs, args.output_format)
    if args.output_format == "json":
        write_json("-", out)
    else:
        print(out, end="" if out.endswith("\n") else "\n")
    return 0


def cmd_fio_plan(args) -> int:
    from ..fio.plan import write_plan

    files = write_plan(args.dir, device=args.device, ioengine=args.ioengine, runtime_s=args.runtime,
                       ramp_s=args.ramp, overwrite=args.overwrite)  # fmt: skip
    print(f"wrote {len(files)} fio job files and README.txt to {args.dir} (the first preconditions the device)")
    return 0


def cmd_profiles(args) -> int:
    from ..fio.profile import PROFILE_DIR, header, load_profile, profile_names

    rows = []
    for name in profile_names():
        p = load_profile(name)
        errs = [p.meta.get(k, {}).get("objective") for k in ("fit", "held_out")]
        errs = [f"{e:.1%}" if e is not None else "-" for e in errs]
        hosts = ", ".join(h + (" (default)" if h == p.meta.get("default_host") else "") for h in p.hosts)
        rows.append([name, str(p.meta.get("device", "")), hosts, *errs])
        if args.verbose:
            for line in header(PROFILE_DIR / f"{name}.toml"):
                rows.append(["", line, "", "", ""])
    print_table(rows, ["profile", "device", "hosts", "in-sample error", "held-out error"])
    return 0


# `ssdlab fio JOBFILE` and `ssdlab fio --plan DIR` are `fio run` and `fio plan` (cli.main
# rewrites them), so that `fio info` keeps its own arguments.
FIO_COMMANDS = ("info", "run", "plan")


def fio_argv(argv: list[str]) -> list[str]:
    """`fio JOBFILE …` → `fio run JOBFILE …`; `fio --plan DIR …` → `fio plan DIR …`."""
    if len(argv) < 2 or argv[0] != "fio" or argv[1] in (*FIO_COMMANDS, "-h", "--help"):
        return argv
    if argv[1] == "--plan":
        return ["fio", "plan", *argv[2:]]
    return ["fio", "run", *argv[1:]]


def _add_fio_parsers(sub) -> None:
    """`fio JOBFILE`, `fio --plan DIR`, `fio info`, `profiles`."""
    f = sub.add_parser(
        "fio",
        help="fio: run a job file on a simulated device; --plan a sweep; info on fio's JSON output",
        description="ssdlab fio JOBFILE [--profile NAME] [--host H] [--output-format normal|json] | "
        "ssdlab fio --plan DIR --device DEV | ssdlab fio info FILE...",
    ).add_subparsers(dest="fio_command", required=True)
    p = f.add_parser("info", help="what a fio run did and measured (fio --output-format=json files)")
    p.add_argument("files", nargs="+", help="fio JSON output files (text before the JSON is skipped)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_fio_info)

    p = f.add_parser("run", help="run a fio job file on a profile's simulated device (also: ssdlab fio JOBFILE)")
    p.add_argument("jobfile", help="a fio job file")
    p.add_argument("--profile", "-p", default="samsung-980pro-1tb", help="device profile (ssdlab profiles)")
    p.add_argument("--host", help="the profile's host set-up (default: the profile's)")
    p.add_argument("--output-format", choices=["normal", "json"], default="normal", help="fio's output format")
    p.add_argument("--seed", type=int, default=1, help="seed of the jobs' random offsets (default 1)")
    p.add_argument(
        "--set",
        action="append",
        metavar="SECTION.KEY=VALUE",
        help="change one key of the profile's device (repeatable), e.g. --set fdp.enabled=true",
    )
    p.add_argument(
        "--full-runtime",
        action="store_true",
        help="run time_based jobs for their runtime of simulated time after ramp_time "
        "(default: until the statistics settle, docs/calibrate.md)",
    )
    p.set_defaults(func=cmd_fio_run)

    p = f.add_parser("plan", help="write a designed sweep as fio job files (also: ssdlab fio --plan DIR)")
    p.add_argument("dir", help="folder to write the job files into")
    p.add_argument("--device", required=True, help="the device the job files will run on, e.g. /dev/nvme0n1")
    p.add_argument("--ioengine", default="io_uring", help="fio engine (default io_uring)")
    p.add_argument("--runtime", type=int, default=60, metavar="S", help="seconds measured per point (default 60)")
    p.add_argument("--ramp", type=int, default=10, metavar="S", help="seconds of ramp per point (default 10)")
    p.add_argument("--overwrite", action="store_true", help="replace job files already in DIR")
    p.set_defaults(func=cmd_fio_plan)

    p = sub.add_parser("profiles", help="the device profiles shipped with ssdlab (--profile NAME)")
    p.add_argument("--verbose", "-v", action="store_true", help="also each profile's header")
    p.set_defaults(func=cmd_profiles)
