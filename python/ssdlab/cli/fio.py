"""`ssdlab fio info`: fio's JSON output read as a measurement."""

from __future__ import annotations

from pathlib import Path

from .. import describe
from ..fio import Job, Measurement, OpStats, read_output
from .common import _fmt, fmt_us, print_table, write_json

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


def _add_fio_parsers(sub) -> None:
    """`fio info`."""
    f = sub.add_parser("fio", help="fio: its JSON output as a measurement").add_subparsers(
        dest="fio_command", required=True
    )
    p = f.add_parser("info", help="what a fio run did and measured (fio --output-format=json files)")
    p.add_argument("files", nargs="+", help="fio JSON output files (text before the JSON is skipped)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_fio_info)
