"""`make bench`: sweep executors.

1. Local executor speed-up (threads): a study of 16 cells of about 1 s each (uniform random writes),
   run with workers=1 and workers=2; the ratio of the two wall times.
2. Dask overhead per cell: a study of 40 tiny cells (about 10 ms each) on the local executor and on a
   2-worker Dask LocalCluster bound to 127.0.0.1, both (a) with the cluster started by the sweep
   (start-up included, as `ssdlab sweep --executor dask` does) and (b) on an already running
   cluster (`--address`). Overhead per cell = (dask wall - local wall) / cells. Also the mean
   per-cell simulation wall time the results store records (`prov.wall_s`).

Wall times are of `ssdlab.run_sweep` into a fresh directory (expansion, validation, pool or
cluster start-up, the runs, one Parquet file per cell). Results are printed and written to
results/bench_sweep.json. Nothing is asserted.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from pathlib import Path

import ssdlab

ROOT = Path(__file__).resolve().parent.parent
SLOW_REQUESTS = int(os.environ.get("SSDLAB_BENCH_SWEEP_REQUESTS", 3_600_000))  # ~1 s per cell
TINY_REQUESTS = 80_000  # ~10 ms per cell


def study(requests: int, cells: int) -> dict:
    return {
        "study": {"name": f"bench-{cells}x{requests}"},
        "base": {"workload": {"kind": "uniform", "requests": requests, "footprint_bytes": "64MiB"}},
        "axes": {"workload.seed": list(range(1, cells + 1))},
    }


def timed_sweep(spec: dict, **kw) -> tuple[float, float]:
    """(wall seconds of run_sweep, mean prov.wall_s) into a fresh directory."""
    with tempfile.TemporaryDirectory(prefix="ssdlab-bench-sweep-") as d:
        t0 = time.perf_counter()
        s = ssdlab.run_sweep(spec, d, progress=False, **kw)
        wall = time.perf_counter() - t0
        assert s.failed == 0 and s.ran == s.total, s
        cell_wall = float(ssdlab.load_results(d)["prov.wall_s"].mean())
    return wall, cell_wall


def best(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return min(runs)


def main() -> None:
    cores = os.cpu_count()
    out: dict = {"cores": cores, "ssdlab_version": ssdlab.__version__}

    # 1. speed-up of the local executor
    slow = study(SLOW_REQUESTS, 16)
    w1, c1 = timed_sweep(slow, workers=1)
    w2, c2 = timed_sweep(slow, workers=2)
    out["speedup"] = {
        "cells": 16,
        "requests_per_cell": SLOW_REQUESTS,
        "workers1_wall_s": w1,
        "workers2_wall_s": w2,
        "speedup": w1 / w2,
        "cell_wall_s_workers1": c1,
        "cell_wall_s_workers2": c2,
    }

    # 2. Dask overhead per cell
    from distributed import LocalCluster

    n = 40
    tiny = study(TINY_REQUESTS, n)
    timed_sweep(tiny, workers=2)  # warm-up (imports, page cache)
    local = best([timed_sweep(tiny, workers=2) for _ in range(3)])
    dask_own = best([timed_sweep(tiny, executor="dask", workers=2) for _ in range(2)])
    with LocalCluster(
        host="127.0.0.1",
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    ) as cluster:
        timed_sweep(tiny, executor="dask", address=cluster.scheduler_address)  # warm-up
        dask_running = best([timed_sweep(tiny, executor="dask", address=cluster.scheduler_address) for _ in range(3)])
    out["dask_overhead"] = {
        "cells": n,
        "requests_per_cell": TINY_REQUESTS,
        "local_wall_s": local[0],
        "dask_wall_s_with_startup": dask_own[0],
        "dask_wall_s_running_cluster": dask_running[0],
        "overhead_per_cell_s_with_startup": (dask_own[0] - local[0]) / n,
        "overhead_per_cell_s_running_cluster": (dask_running[0] - local[0]) / n,
        "cell_wall_s_local": local[1],
        "cell_wall_s_dask": dask_running[1],
    }

    s, d = out["speedup"], out["dask_overhead"]
    rows = [
        (
            "pool, 16 x ~1 s cells, workers=1",
            f"{s['workers1_wall_s']:.2f} s",
            f"cell {s['cell_wall_s_workers1']:.3f} s",
        ),
        (
            "pool, 16 x ~1 s cells, workers=2",
            f"{s['workers2_wall_s']:.2f} s",
            f"cell {s['cell_wall_s_workers2']:.3f} s",
        ),
        ("speed-up (workers=1 / workers=2)", f"{s['speedup']:.2f} x", f"on {cores} cores"),
        (
            f"pool, {n} tiny cells, workers=2",
            f"{d['local_wall_s']:.2f} s",
            f"cell {d['cell_wall_s_local'] * 1e3:.1f} ms",
        ),
        (f"dask, {n} tiny cells, new cluster", f"{d['dask_wall_s_with_startup']:.2f} s", ""),
        (
            f"dask, {n} tiny cells, running cluster",
            f"{d['dask_wall_s_running_cluster']:.2f} s",
            f"cell {d['cell_wall_s_dask'] * 1e3:.1f} ms",
        ),
        ("dask overhead per cell, new cluster", f"{d['overhead_per_cell_s_with_startup'] * 1e3:+.1f} ms", ""),
        ("dask overhead per cell, running cluster", f"{d['overhead_per_cell_s_running_cluster'] * 1e3:+.1f} ms", ""),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'sweep benchmark':<{width}}  {'wall':>10}  note")
    print("-" * (width + 30))
    for name, value, note in rows:
        print(f"{name:<{width}}  {value:>10}  {note}")
    path = ROOT / "results" / "bench_sweep.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
