"""fio jobs as ssdlab runs: the equivalent configuration of a job's options on a profile's device.

Each thread of a job (`numjobs`) is a flow with its own closed loop of `iodepth` requests (one
for a synchronous engine), all flows on one namespace (fio's jobs share the device), each thread
on a host core of its own unless `cpus_allowed` puts several on one CPU; the host's per-I/O costs
come from the profile's host and the job's `ioengine`. Sizes and offsets are fractions of the
real device (`size=100%`, or bytes of the profile's `capacity_bytes`), applied to the profile's
scaled-down device. Every option is either honoured, known to change nothing the simulation
models (`NO_EFFECT`), or refused with an error naming it.

A point is simulated until its statistics settle (`settle`), not for fio's whole runtime:
`max(20,000, 100 × outstanding)` measured requests after `max(2,000, 10 × outstanding)` warm-up
requests, outstanding = threads × queue depth; a job that writes also measures at least five
times the write cache's pages after a warm-up of twice them (the cache full, writes bound by its
drain). `ssdlab fio --full-runtime` runs `time_based`
jobs for their `runtime` of simulated time after `ramp_time` instead.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from .. import api
from .output import FioError, option_flag, option_int, parse_size, parse_time
from .profile import ENGINES, Profile

READ_WRITE = {"read", "write", "randread", "randwrite", "rw", "readwrite", "randrw"}
MIXED = {"rw", "readwrite", "randrw"}
READS = {"read", "randread"} | MIXED
WRITES = {"write", "randwrite"} | MIXED

# Options read below.
HONOURED = {
    "rw", "readwrite", "bs", "blocksize", "iodepth", "numjobs", "size", "offset", "norandommap",
    "random_distribution", "ioengine", "cpus_allowed", "cpus_allowed_policy", "numa_cpu_nodes",
    "rwmixread", "rwmixwrite", "bssplit", "blockalign", "ba", "io_size", "loops", "number_ios",
    "time_based", "runtime", "ramp_time", "direct", "fdp", "fdp_pli", "plid_select",
}  # fmt: skip
# Options that change nothing ssdlab models: naming, reporting and logging, the device's path
# (the profile is the device), fio's own bookkeeping and random-number generator, and io_uring
# set-up that the host's fitted per-I/O cost already includes.
NO_EFFECT = {
    "name", "description", "filename", "group_reporting", "percentile_list", "clat_percentiles",
    "lat_percentiles", "slat_percentiles", "significant_figures", "allow_file_create",
    "allow_mounted_write", "thread", "stonewall", "wait_for_previous", "new_group", "exitall",
    "invalidate", "ioscheduler", "registerfiles", "fixedbufs", "randrepeat", "randseed",
    "random_generator", "kb_base", "unit_base", "output", "output-format", "write_lat_log",
    "write_bw_log", "write_iops_log", "log_avg_msec", "per_job_logs", "disable_slat", "gtod_reduce",
}  # fmt: skip


def settle(outstanding: int, cache_pages: int = 0) -> tuple[int, int]:
    """(measured, warm-up) requests that settle a point's statistics (module docstring): enough
    rounds of the outstanding requests, and for a write cache of `cache_pages`, a warm-up that
    fills it twice over and a window of five times it (writes reach the drain-bound state)."""
    return max(20_000, 100 * outstanding, 5 * cache_pages), max(2_000, 10 * outstanding, 2 * cache_pages)


def _cache_pages(cfg: Mapping) -> int:
    """The pages of the profile's write buffer (0: none)."""
    buf = cfg.get("buffer") or {}
    if buf.get("kind", "none") == "none" or "bytes" not in buf:
        return 0
    page = parse_size(str((cfg.get("device") or {}).get("page_bytes", 4096)), "device.page_bytes")
    return parse_size(str(buf["bytes"]), "buffer.bytes") // page


def _placement(options: Mapping[str, str], profile: Profile) -> dict:
    """fio's FDP options as a job's placement identifiers: with `fdp=1`, its writes carry the
    identifiers `fdp_pli` lists (indices into the device's, here the identifiers themselves;
    default every identifier the device has, at most fio's 16), chosen by `plid_select`
    (roundrobin, fio's default, or random). Without `fdp=1` fio ignores the other two."""
    if not option_flag(options, "fdp"):
        return {}
    fdp = profile.config.get("fdp") or {}
    if not fdp.get("enabled"):
        raise FioError(
            f"fio option `fdp`: the device of profile {profile.name} has no FDP ([fdp] enabled = false); "
            "enable it, e.g. ssdlab fio run --set fdp.enabled=true"
        )
    ids = int(fdp.get("handles", 8)) * int(fdp.get("reclaim_groups", 1))
    if "fdp_pli" in options:
        pli = _int_list(options["fdp_pli"], "fdp_pli", "a list of indices", steps=False)
        if not pli or len(pli) > 16:
            raise FioError(f"fio option `fdp_pli`: `{options['fdp_pli']}` names {len(pli)} indices; fio takes 1 to 16")
    else:
        pli = list(range(min(ids, 16)))
    bad = [i for i in pli if i >= ids]
    if bad:
        raise FioError(f"fio option `fdp_pli`: index {bad[0]} is beyond the device's {ids} placement identifiers")
    select = options.get("plid_select", "roundrobin")
    if select not in ("roundrobin", "random"):
        raise FioError(f"fio option `plid_select`: `{select}` is not modelled (roundrobin, random)")
    return {"fdp_pli": pli, "plid_select": select}


def _int_list(text: str, option: str, what: str, steps: bool = True) -> list[int]:
    """fio's list of numbers and ranges (`2`, `0-3,8`; with `steps`, also `0-7:2`), as fio's
    `cpus_allowed` and `fdp_pli` take it; an error names `option` otherwise."""
    out: list[int] = []
    for part in text.split(","):
        rng, _, step = part.strip().partition(":") if steps else (part.strip(), "", "")
        lo, _, hi = rng.partition("-")
        try:
            out.extend(range(int(lo), int(hi or lo) + 1, int(step or 1)))
        except ValueError:
            raise FioError(f"fio option `{option}`: `{text}` is not {what}") from None
    return out


def check_options(options: Mapping[str, str]) -> None:
    """Refuse what cannot be honoured, naming the option."""
    unknown = sorted(k for k in options if k not in HONOURED | NO_EFFECT)
    if unknown:
        raise FioError(
            f"fio option `{unknown[0]}` is not modelled by ssdlab"
            + (f" (nor {', '.join(f'`{k}`' for k in unknown[1:])})" if len(unknown) > 1 else "")
            + "; remove it to simulate the job without it"
        )
    rw = options.get("rw", options.get("readwrite", "read"))
    if rw not in READ_WRITE:
        raise FioError(f"fio option `rw`: `{rw}` is not modelled (known: {', '.join(sorted(READ_WRITE))})")
    if not option_flag(options, "direct"):
        raise FioError(
            "fio option `direct`: buffered I/O (direct=0, fio's default) goes through the host's page "
            "cache, which ssdlab does not model; set direct=1"
        )
    engine = options.get("ioengine", "psync")
    if engine not in ENGINES:
        raise FioError(f"fio option `ioengine`: `{engine}` is not modelled (known: {', '.join(ENGINES)})")
    dist = options.get("random_distribution", "random")
    if dist != "random" and not dist.startswith(("zipf:", "zoned:")):
        raise FioError(
            f"fio option `random_distribution`: `{dist}` is not modelled (random, zipf:THETA, zoned:ACCESS/SIZE:…)"
        )
    policy = options.get("cpus_allowed_policy", "shared")
    if policy not in ("shared", "split"):
        raise FioError(f"fio option `cpus_allowed_policy`: `{policy}` is not one of shared, split")
    if "cpumask" in options:
        raise FioError("fio option `cpumask`: give the CPUs as cpus_allowed (a list) instead")


def _block_bytes(options: Mapping[str, str], rw: str) -> int:
    parts = [p for p in str(options.get("bs", options.get("blocksize", "4k"))).split(",") if p.strip()]
    sizes = {parse_size(p, "bs") for p in parts[:2]} or {4096}
    reads, writes = rw in READS, rw in WRITES
    if len(sizes) > 1 and reads and writes:
        raise FioError(f"fio option `bs`: `{options['bs']}` gives reads and writes different sizes, not modelled")
    return parse_size(parts[1] if writes and not reads and len(parts) > 1 else (parts or ["4k"])[0], "bs")


def _region(options: Mapping[str, str], key: str, capacity: int, default: float) -> float:
    """An offset or size as a fraction of the real device."""
    v = options.get(key)
    if v is None:
        return default
    v = str(v).strip()
    if v.endswith("%"):
        try:
            return float(v[:-1]) / 100.0
        except ValueError:
            raise FioError(f"fio option `{key}`: `{v}` is not a percentage") from None
    return parse_size(v, key) / capacity


def threads_of(options: Mapping[str, str]) -> tuple[int, int]:
    """(threads, each one's queue depth): numjobs, and iodepth (1 for a synchronous engine)."""
    engine = ENGINES.get(options.get("ioengine", "psync"))
    depth = 1 if engine is not None and engine.sync else option_int(options, "iodepth", 1)
    return option_int(options, "numjobs", 1), depth


def _cores(options: Mapping[str, str], threads: int) -> list[int | None]:
    """Each thread's host core: with `cpus_allowed` (or a NUMA node) of fewer CPUs than
    threads, they share them round robin; otherwise a core each (None)."""
    allowed = options.get("cpus_allowed")
    if allowed is None:
        return [None] * threads
    cpus = _int_list(allowed, "cpus_allowed", "a CPU list")
    if len(cpus) >= threads:
        return [None] * threads
    return [cpus[k % len(cpus)] for k in range(threads)]


# The scaled-down device has at least this many blocks, so that the few the GC keeps in reserve
# are a small share of it (a device twice as large moves no prediction by 1%: at most 0.8%).
MIN_BLOCKS = 2048


# Rows of each die in a block: one per page type, so that the types come in their proportions.
BITS_PER_CELL = {"slc": 1, "mlc": 2, "tlc": 3}


def scaled_device(cfg: dict, simulated_bytes: int) -> int:
    """Make `cfg`'s blocks stripe over every die with every page type (a block's page offset
    decides its die and its row's type, so a block needs, per die, a NAND page row per bit of
    the cell: dies × units per NAND page × planes × bits per cell), and return the simulated
    device's bytes: the profile's, or MIN_BLOCKS blocks if that is more."""
    dev = cfg.setdefault("device", {})
    nand = cfg.get("nand") or {}
    dies = int(dev.get("channels", 1)) * int(dev.get("chips_per_channel", 1)) * int(dev.get("dies_per_chip", 1))
    page = parse_size(str(dev.get("page_bytes", 4096)), "device.page_bytes")
    nand_page = parse_size(str(nand.get("physical_page_bytes", page)), "nand.physical_page_bytes")
    bits = BITS_PER_CELL.get(str(nand.get("cell", "slc")), 1)
    row = dies * max(1, nand_page // page) * int(dev.get("planes_per_die", 1)) * bits
    ppb = int(dev.get("pages_per_block", 64))
    dev["pages_per_block"] = -(-ppb // row) * row
    block = dev["pages_per_block"] * page
    return max(simulated_bytes, MIN_BLOCKS * block) // block * block


def flows(
    options: Mapping[str, str],
    profile: Profile,
    seed: int,
    *,
    requests: int | None,
    first_flow: int = 0,
    simulated_bytes: int | None = None,
) -> list[dict]:
    """The `[[flows]]` of one fio job: one per thread (module docstring). `requests`: each
    flow's request count (None: from fio's size or io_size and loops); `simulated_bytes`: the
    simulated device (default the profile's)."""
    check_options(options)
    rw = options.get("rw", options.get("readwrite", "read"))
    bs = _block_bytes(options, rw)
    cap, sim = profile.capacity_bytes, simulated_bytes or profile.simulated_bytes
    offset = _region(options, "offset", cap, 0.0)
    size = _region(options, "size", cap, 1.0 - offset)
    if not (0.0 <= offset < 1.0) or size <= 0 or offset + size > 1.0 + 1e-9:
        raise FioError(
            f"fio options `offset`/`size`: {offset:.1%} + {size:.1%} of the {cap:,}-byte device does not fit in it"
        )
    start = int(offset * sim) // bs * bs
    length = max(bs, int(min(size, 1.0 - offset) * sim) // bs * bs)
    threads, depth = threads_of(options)
    if requests is None:
        io = parse_size(options["io_size"], "io_size") / cap * sim if "io_size" in options else length
        requests = max(1, int(io // bs) * option_int(options, "loops", 1))
        if "number_ios" in options:
            requests = min(requests, option_int(options, "number_ios", 1))
    job = {"rw": rw, "bs": bs, "offset": start, "size": length}
    fio = {"norandommap": option_flag(options, "norandommap"), "jobs": [job]}
    if "random_distribution" in options:
        fio["random_distribution"] = options["random_distribution"]
    for k in ("rwmixread", "rwmixwrite"):
        if k in options:
            fio[k] = option_int(options, k, 50)
    if "bssplit" in options:
        job["bssplit"] = options["bssplit"]
    if "blockalign" in options or "ba" in options:
        job["blockalign"] = parse_size(options.get("blockalign", options.get("ba")), "blockalign")
    job.update(_placement(options, profile))
    out = []
    for k, core in enumerate(_cores(options, threads)):
        wl = {"kind": "fio", "requests": requests, "footprint_bytes": sim, "request_bytes": bs, "fio": fio}
        wl["seed"] = seed + first_flow + k
        f = {"namespace": 0, "queue_depth": depth, "workload": wl}
        if core is not None:
            f["cpu"] = core
        out.append(f)
    return out


def job_config(
    jobs: Sequence[Mapping[str, str]],
    profile: Profile,
    host: str | None = None,
    *,
    seed: int = 1,
    full_runtime: bool = False,
) -> dict:
    """The ssdlab configuration of fio jobs that run together (one reporting group) on the
    profile's device: the profile's configuration, timed mode, its precondition, the host's
    costs for the jobs' engine, and a flow per thread of each job."""
    if not jobs:
        raise FioError("no fio job to run")
    engines = {j.get("ioengine", "psync") for j in jobs}
    if len(engines) > 1:
        raise FioError(f"fio option `ioengine`: jobs that run together use {', '.join(sorted(engines))}; one at a time")
    for j in jobs:
        check_options(j)
    costs = profile.host(host).costs(engines.pop())
    outstanding = sum(math.prod(threads_of(j)) for j in jobs)
    writes = any(j.get("rw", j.get("readwrite", "read")) in WRITES for j in jobs)
    measured, warmup = settle(outstanding, _cache_pages(profile.config) if writes else 0)
    threads = sum(threads_of(j)[0] for j in jobs)
    timed = full_runtime and all(option_flag(j, "time_based") and "runtime" in j for j in jobs)
    per_flow = None if full_runtime else -(-(measured + warmup) // threads)
    cfg = profile.base_config()
    run = cfg.setdefault("run", {})
    run.update(mode="timed", precondition=profile.precondition, seed=seed)
    if timed:
        run["warmup_us"] = max(parse_time(j.get("ramp_time", "0"), "ramp_time") for j in jobs) * 1e6
        run["runtime_us"] = max(parse_time(j["runtime"], "runtime") for j in jobs) * 1e6
        per_flow = 2**62  # the simulated runtime bounds it
    elif not full_runtime:
        run["warmup_requests"] = warmup
    sim = scaled_device(cfg, profile.simulated_bytes)
    cfg["device"]["logical_bytes"] = sim
    h = cfg.setdefault("host", {})
    h.update(cpu_us=round(costs["cpu_us"], 6), wake_us=round(costs["wake_us"], 6))
    if costs["submit_us"] > 0:
        h["submit_us"] = round(costs["submit_us"], 6)
    cfg["flows"] = []
    for j in jobs:
        cfg["flows"] += flows(j, profile, seed, requests=per_flow, first_flow=len(cfg["flows"]), simulated_bytes=sim)
    return cfg


def simulate_group(
    jobs: Sequence[Mapping[str, str]],
    profile: Profile,
    host: str | None = None,
    *,
    seed: int = 1,
    full_runtime: bool = False,
    progress=None,
):
    """Simulate fio jobs that run together: (their configuration, the result). With the
    profile's `fast_forward`, a group that writes runs twice: the first run's rates set each
    writing thread's fast-forward (`fast_forwarded`), the second is the prediction."""
    cfg = job_config(jobs, profile, host, seed=seed, full_runtime=full_runtime)
    res = api.simulate(cfg, progress)
    if profile.fast_forward and not full_runtime and fast_forwarded(cfg, jobs, profile, res.metrics):
        res = api.simulate(cfg, progress)
    return cfg, res


def fast_forwarded(cfg: dict, jobs: Sequence[Mapping[str, str]], profile: Profile, metrics: Mapping) -> bool:
    """Set each writing thread's `fast_forward_requests` in `cfg` (a `job_config` of `jobs`
    whose first run gave `metrics`): the requests fio's `ramp_time` and the first half of its
    `runtime` would have issued at the thread's simulated rate, scaled to the simulated device,
    so that the measured window starts from the state the real run's middle is in (a sequential
    overwrite of a small namespace has emptied GC's victims by then; a point of 22,000 requests
    never leaves the preconditioning's state). Jobs that write and have a `runtime` (time-based,
    or with a ramp: fio then runs the whole runtime whatever `size` says, as the ZNS files in
    ../shared/devices show, 6.5 GiB written of a 4 GiB size); False when no thread is
    fast-forwarded."""
    scale = parse_size(str(cfg["device"]["logical_bytes"]), "device.logical_bytes") / profile.capacity_bytes
    first, any_set = 0, False
    for j in jobs:
        n = threads_of(j)[0]
        rw = j.get("rw", j.get("readwrite", "read"))
        if rw in WRITES and "runtime" in j:
            t_s = parse_time(j.get("ramp_time", "0"), "ramp_time") + parse_time(j["runtime"], "runtime") / 2
            for i in range(first, first + n):
                k = round(metrics.get(f"flow.{i}.throughput.iops", 0.0) * t_s * scale)
                if k > 0:
                    f = cfg["flows"][i]
                    f["fast_forward_requests"] = k
                    f["workload"]["requests"] += k  # the measured requests follow them
                    any_set = True
        first += n
    return any_set


def groups(jobs: Sequence) -> list[list]:
    """Job sections in the groups fio runs one after the other: a job with `stonewall` (or
    `wait_for_previous`) starts a new group; the jobs of a group run together."""
    out: list[list] = []
    for j in jobs:
        if not out or option_flag(j.options, "stonewall") or option_flag(j.options, "wait_for_previous"):
            out.append([])
        out[-1].append(j)
    return out
