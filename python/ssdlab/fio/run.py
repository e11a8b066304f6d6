"""Run a fio job file on a profile's simulated device (`ssdlab fio JOBFILE`), reported in fio's
own formats (`report.fio_json`, `report.fio_normal`).

Each group of jobs (a `stonewall` starts the next) is one simulation from the profile's
preconditioned state, its jobs' threads as flows (`workload.job_config`). A thread's statistics
are its flow's: its latency histograms (`flow.<i>.latency.{read,write}_ns`) and its window
(`flow.<i>.requests` / `flow.<i>.throughput.iops`). The host model's costs (`host.submit_us`,
`host.cpu_us`) give each I/O's submission latency (fio's slat) and the thread's CPU time: each
of its I/Os costs its core `cpu_us`, at most the whole window; its context switches (fio's ctx)
are the completions it slept before and woke for (`flow.<i>.host.wakes`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .. import api
from .jobfile import JobSpec, read_jobfile
from .profile import Profile, load_profile
from .report import SimJob, SimOp, SimThread, fio_json, fio_normal
from .workload import groups, simulate_group, threads_of

OPS = {"read": "read_ns", "write": "write_ns"}


def _thread(res: api.Result, i: int, host: dict) -> SimThread:
    m = res.metrics
    n, iops = m.get(f"flow.{i}.requests", 0.0), m.get(f"flow.{i}.throughput.iops", 0.0)
    runtime_s = n / iops if iops else 0.0
    total_bytes = m.get(f"flow.{i}.throughput.mib_s", 0.0) * (1 << 20) * runtime_s
    ops = {}
    for op, h in OPS.items():
        hist = [(float(v), int(c)) for v, c in res.histograms.get(f"flow.{i}.latency.{h}") or []]
        ios = sum(c for _, c in hist)
        if ios:
            ops[op] = SimOp(ios, round(total_bytes * ios / n), runtime_s, hist, host.get("submit_us", 0.0) * 1e3)
    ctx = int(m.get(f"flow.{i}.host.wakes", 0))
    return SimThread(ops, min(n * host.get("cpu_us", 0.0) * 1e-6, runtime_s), ctx)


def simulate_jobfile(
    path: str | Path,
    profile: str | Path | Profile,
    host: str | None = None,
    *,
    seed: int = 1,
    full_runtime: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> list[SimJob]:
    """Every job of the file as simulated, in file order."""
    prof = profile if isinstance(profile, Profile) else load_profile(profile)
    out: list[SimJob] = []
    for group in groups(read_jobfile(path)):
        cfg, res = simulate_group([j.options for j in group], prof, host, seed=seed, full_runtime=full_runtime,
                                  progress=progress)  # fmt: skip
        first = 0
        for j in group:
            n = threads_of(j.options)[0]
            threads = [_thread(res, first + k, cfg.get("host", {})) for k in range(n)]
            out.append(SimJob(j.name, dict(j.options), threads))
            first += n
    return out


def report(jobs: list[SimJob], output_format: str = "normal") -> str | dict:
    """fio's output of the simulated jobs: `json` (a dict in fio's schema) or `normal` (text)."""
    if output_format == "json":
        return fio_json(jobs, {})
    return fio_normal(jobs, {})


__all__ = ["JobSpec", "report", "simulate_jobfile"]
