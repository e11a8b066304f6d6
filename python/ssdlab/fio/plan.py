"""A designed fio sweep, as job files a user runs on their own device before calibrating ssdlab
on the outputs.

The sweep crosses access patterns, block sizes and queue depths, each point one job file and one
measured run. Several submitting threads (`numjobs` > 1) are swept only where a single thread is
likely to be the limit rather than the device: small random I/O, by default 4 KiB random reads and
writes (`jobs_patterns`); elsewhere one thread. With the defaults that is 4 x 4 x 9 points with one
thread and 2 x 9 x 3 with more: 198 points, about 3.9 hours at 60 + 10 s each.

Before the sweep the device is preconditioned as a careful campaign does, so that it is measured
in its steady state rather than fresh: the whole device written sequentially, then 4 KiB random
writes over all of it twice.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from pathlib import Path

from .jobfile import write_jobfile
from .output import FioError, parse_size

PRECONDITION = "00-precondition.fio"
DEFAULT_JOBS_PATTERNS = ("randread_4k", "randwrite_4k")
PERCENTILES = "1:5:10:25:50:75:90:95:99:99.9:99.99"
_RW = ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw", "trim", "randtrim", "trimwrite")


def write_plan(
    dir: str | Path,
    *,
    device: str,
    patterns: Iterable[str] = ("randread", "randwrite", "read", "write"),
    sizes: Iterable[str] = ("4k", "16k", "64k", "128k"),
    depths: Iterable[int] = (1, 2, 4, 8, 16, 32, 64, 128, 256),
    jobs: Iterable[int] = (1, 2, 4, 8),
    jobs_patterns: Iterable[str] | None = None,
    ioengine: str = "io_uring",
    runtime_s: int = 60,
    ramp_s: int = 10,
    precondition: bool = True,
    size: str = "100%",
    overwrite: bool = False,
) -> list[Path]:
    """Write the sweep's job files (the precondition first) and README.txt into `dir`; returns
    the job files in the order to run them. Each point is `PATTERN_SIZE_qdDEPTH_jobsN.fio`; a
    count of jobs above 1 is used only for the `PATTERN_SIZE` pairs in `jobs_patterns` (by
    default those of `randread_4k` and `randwrite_4k` that the plan has).

    Refuses a non-empty `dir` unless `overwrite`; then the `.fio` files it holds are removed
    first, since README's loop would run every one of them against the device."""
    device = _device(device)
    patterns, sizes = _names(patterns, _RW, "pattern"), _sizes(sizes)
    depths, jobs = _counts(depths, "depth"), _counts(jobs, "jobs")
    multi = None if jobs_patterns is None else _names(jobs_patterns, None, "jobs_patterns entry")
    points = _points(patterns, sizes, depths, jobs, multi)
    if runtime_s <= 0 or ramp_s < 0:
        raise FioError(f"plan: runtime ({runtime_s} s) must be positive and ramp ({ramp_s} s) not negative")
    out = _prepare(Path(dir), overwrite)
    glob = _global(device, ioengine, runtime_s, ramp_s, size)
    files = [_precondition(out, device, ioengine, size)] if precondition else []
    for rw, bs, depth, n in points:
        name = f"{rw}_{bs}_qd{depth}_jobs{n}"
        job = {"rw": rw, "bs": bs, "iodepth": str(depth), "numjobs": str(n)}
        note = f"ssdlab plan point: {rw}, bs {bs}, queue depth {depth}, {n} job(s) on {device}"
        files.append(write_jobfile(out / f"{name}.fio", [(name, job)], glob, comment=note))
    (out / "README.txt").write_text(_readme(out, device, len(points), runtime_s + ramp_s, precondition))
    return files


def _device(device: str) -> str:
    device = str(device or "").strip()
    if not device:
        raise FioError("plan: option `device` is required (the block device or file fio will overwrite)")
    if any(c in device for c in "\n\r"):
        raise FioError(f"plan: option `device`: {device!r} has a line break")
    return device.replace(":", "\\:")  # fio reads `:` as a list of files


def _names(values: Iterable[str], allowed: tuple[str, ...] | None, what: str) -> list[str]:
    out = [str(v).strip() for v in values]
    for v in out:
        if not v:
            raise FioError(f"plan: an empty {what}")
        if allowed is not None and v not in allowed:
            raise FioError(f"plan: {what} `{v}` is not one of fio's: {', '.join(allowed)}")
    return list(dict.fromkeys(out))


def _sizes(values: Iterable[str]) -> list[str]:
    out = [str(v).strip().lower() for v in values]
    for v in out:
        if parse_size(v, "bs") <= 0:
            raise FioError(f"plan: block size `{v}` must be positive")
    return list(dict.fromkeys(out))


def _counts(values: Iterable[int], what: str) -> list[int]:
    out = list(dict.fromkeys(int(v) for v in values))
    if not out or min(out) < 1:
        raise FioError(f"plan: the {what} list must be non-empty, each at least 1 (got {out})")
    return out


def _points(patterns, sizes, depths, jobs, jobs_patterns) -> list[tuple[str, str, int, int]]:
    """The sweep: every pattern x size x depth with one job, and more jobs for `jobs_patterns`."""
    pairs = {f"{rw}_{bs}" for rw, bs in itertools.product(patterns, sizes)}
    if jobs_patterns is None:
        jobs_patterns = [p for p in DEFAULT_JOBS_PATTERNS if p in pairs]
    unknown = [p for p in jobs_patterns if p not in pairs]
    if unknown:
        raise FioError(f"plan: jobs_patterns {unknown} name no PATTERN_SIZE of the plan ({', '.join(sorted(pairs))})")
    points = []
    for rw, bs, depth in itertools.product(patterns, sizes, depths):
        counts = jobs if f"{rw}_{bs}" in jobs_patterns else [1]
        points += [(rw, bs, depth, n) for n in counts]
    return points


def _prepare(out: Path, overwrite: bool) -> Path:
    if out.exists() and not out.is_dir():
        raise FioError(f"{out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        if not overwrite:
            raise FioError(f"{out}: the folder is not empty (pass overwrite=True to replace its job files)")
        for old in out.glob("*.fio"):
            old.unlink()
    out.mkdir(parents=True, exist_ok=True)
    return out


def _global(device: str, ioengine: str, runtime_s: int, ramp_s: int, size: str) -> dict[str, str]:
    """The options every point shares. `allow_file_create=0` makes a mistyped device an error
    instead of a new file; tausworthe64 covers devices of more than 2^32 blocks."""
    return {
        "ioengine": ioengine,
        "direct": "1",
        "time_based": "1",
        "runtime": str(runtime_s),
        "ramp_time": str(ramp_s),
        "filename": device,
        "allow_file_create": "0",
        "norandommap": "1",
        "random_generator": "tausworthe64",
        "group_reporting": "1",
        "size": size,
        "percentile_list": PERCENTILES,
    }


def _precondition(out: Path, device: str, ioengine: str, size: str) -> Path:
    """The whole device written sequentially (128 KiB, QD 32), then, after a stonewall, 4 KiB
    random writes over all of it twice (`loops=2`): the steady state a campaign measures."""
    glob = {
        "ioengine": ioengine,
        "direct": "1",
        "filename": device,
        "allow_file_create": "0",
        "size": size,
        "group_reporting": "1",
    }
    fill = {"rw": "write", "bs": "128k", "iodepth": "32"}
    scramble = {
        "stonewall": "1",
        "rw": "randwrite",
        "bs": "4k",
        "iodepth": "32",
        "norandommap": "1",
        "random_generator": "tausworthe64",
        "loops": "2",
    }
    note = f"ssdlab plan: precondition {device} (OVERWRITES THE WHOLE DEVICE): fill, then random writes x2"
    jobs = [("sequential-fill", fill), ("random-overwrite-2x", scramble)]
    return write_jobfile(out / PRECONDITION, jobs, glob, comment=note)


def _readme(out: Path, device: str, n: int, seconds_each: int, precondition: bool) -> str:
    hours = n * seconds_each / 3600
    pre = (
        f"{PRECONDITION} runs first (the loop takes the files in name order): it writes the whole\n"
        "device sequentially, then 4 KiB random writes over all of it twice, so that the points\n"
        "measure the device in its steady state. It takes a long time (three device capacities\n"
        "written). Re-run it before a repeat campaign.\n\n"
        if precondition
        else "No preconditioning job: precondition the device yourself before the points.\n\n"
    )
    return (
        "ssdlab measurement plan\n"
        "=======================\n\n"
        f"WARNING: these jobs WRITE TO {device} AND DESTROY EVERYTHING ON IT.\n"
        "Check the device name (`filename=` in every .fio file) before running; fio needs the\n"
        "rights to open it (usually root).\n\n"
        f"{n} measured points, about {hours:.1f} hours ({seconds_each} s each with the ramp).\n\n"
        f"Run them, in this folder ({out}):\n\n"
        "    for f in *.fio; do fio --output-format=json --output=${f%.fio}.json $f; done\n\n"
        + pre
        + "Then calibrate ssdlab on the points' outputs (not the precondition's):\n\n"
        f"    ssdlab calibrate {out}/*_qd*_jobs*.json\n"
    )
