"""Executors: running tasks (ssdlab.sweep.task) in parallel and handing back each record as it
arrives, on threads of this process (`run_local`) or a Dask cluster (`run_dask`).

Both record a task that raised as failed and go on with the others; neither stores anything (the
caller's `on_record` does).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable

from .._core import SsdlabError
from .study import StudyError
from .task import failed_record, run_cell

EXECUTORS = ("local", "dask")


class SweepError(SsdlabError):
    """A sweep that cannot run at all (as opposed to a cell that fails)."""

    kind = "invalid"


class _Cancelled(BaseException):
    """Raised by the progress callback of a run in flight when the sweep stops (Ctrl-C, an
    error storing a record); not an Exception, so that run_cell does not record it."""


def run_local(
    tasks: list[dict],
    workers: int,
    on_record: Callable[[dict], None],
    fn: Callable[..., dict] = run_cell,
) -> None:
    """Run `fn(task, progress=...)` for every task on `workers` threads of this process, passing
    each record to `on_record` (in the calling thread) as it arrives.

    The simulations release the GIL, so the threads run them in parallel; threads, unlike worker
    processes, need nothing of the calling script (no `if __name__ == "__main__":` guard, no
    importable main module). When the caller stops (Ctrl-C, or `on_record` raises), the runs in
    flight are cancelled through their progress callback within about 100 ms."""
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    stop = threading.Event()

    def progress(done: int, total: int) -> None:
        if stop.is_set():
            raise _Cancelled

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ssdlab-cell")
    try:
        inflight = {pool.submit(fn, t, progress=progress): t for t in tasks}
        while inflight:
            done, _ = wait(inflight, return_when=FIRST_COMPLETED)
            for f in done:
                t = inflight.pop(f)
                try:
                    rec = f.result()
                except KeyboardInterrupt:
                    raise
                except BaseException as e:  # e.g. a panic in the engine: record, go on
                    rec = failed_record(t, f"{type(e).__name__}: {e}")
                on_record(rec)
    finally:
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)


def local_cluster(workers: int):
    """A Dask LocalCluster bound to 127.0.0.1 (nothing listens on another interface): `workers`
    single-threaded worker processes, no dashboard."""
    import logging

    import distributed

    return distributed.LocalCluster(
        host="127.0.0.1",
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )


def run_dask(
    tasks: list[dict],
    address: str | None,
    workers: int | None,
    on_record: Callable[[dict], None],
    fn: Callable[[dict], dict] = run_cell,
) -> int:
    """Run `fn(task)` for every task on a Dask cluster, passing each record to `on_record` as it
    arrives; returns the number of worker threads used.

    The cluster is `distributed.Client(address)`, or without an address a LocalCluster bound to
    127.0.0.1 (nothing listens on another interface) with `workers` single-threaded worker
    processes and no dashboard, closed afterwards."""
    try:
        import distributed
    except ImportError:
        raise StudyError("the dask executor needs the `distributed` package: pip install 'dask[distributed]'") from None
    cluster = None
    if address:
        client = distributed.Client(address)
    else:
        cluster = local_cluster(workers or os.cpu_count() or 1)
        client = distributed.Client(cluster)
    futures = []
    try:
        nthreads = sum(client.nthreads().values())
        if not nthreads:
            print(f"ssdlab: no Dask workers are connected to {address} yet; waiting for them", file=sys.stderr)
        futures = client.map(fn, tasks, pure=False)
        owner = {f.key: t for f, t in zip(futures, tasks, strict=True)}
        ac = distributed.as_completed(futures)
        futures = []  # as_completed holds them until they are yielded; release each after use
        for f in ac:
            t = owner.pop(f.key)
            try:
                rec = f.result()
            except KeyboardInterrupt:
                raise
            except Exception as e:  # a worker died repeatedly on this cell (KilledWorker), ...
                rec = failed_record(t, f"{type(e).__name__}: {e}")
            on_record(rec)
            f.release()
        return nthreads
    finally:
        if futures:
            client.cancel(futures)
        client.close()
        if cluster is not None:
            cluster.close()
