"""Executors: running tasks (ssdlab.sweep.task) in parallel and handing back each record as it
arrives, on a local process pool (`run_local`) or a Dask cluster (`run_dask`).

Both record a task whose worker died as failed and go on with the others; neither stores
anything (the caller's `on_record` does).
"""

from __future__ import annotations

import os
import sys
from collections import deque
from collections.abc import Callable

from .._core import SsdlabError
from .study import StudyError
from .task import failed_record, run_cell

EXECUTORS = ("local", "dask")
DIED = "the worker process died while running this cell (killed, e.g. out of memory?)"


class SweepError(SsdlabError):
    """A sweep that cannot run at all (as opposed to a cell that fails)."""

    kind = "invalid"


def mp_context():
    """The start method of the local pool's workers: forkserver where the platform has it, else spawn."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def run_local(
    tasks: list[dict],
    workers: int,
    on_record: Callable[[dict], None],
    fn: Callable[[dict], dict] = run_cell,
    context=None,
) -> None:
    """Run `fn(task)` for every task on a process pool of `workers` processes started with
    `context` (default `mp_context()`), passing each record to `on_record` as it arrives.

    If a worker process dies (e.g. killed by the OS for memory), the tasks that were in flight
    are re-run one at a time, so that only the task that kills its worker again is recorded as
    failed; the others proceed."""
    pending = deque(tasks)
    suspects: deque = deque()
    ctx = context if context is not None else mp_context()
    while pending or suspects:
        if suspects:
            lost = _drain(suspects, fn, 1, 1, ctx, on_record)
            if lost and not _pool_works(ctx):
                raise SweepError(
                    "the local worker processes die before running anything; they must be able to import the "
                    "main module (a script read from stdin cannot be: save it to a file, or use `ssdlab sweep`)"
                )
            for t in lost:
                on_record(
                    failed_record(t, "the worker process died while running this cell (killed, e.g. out of memory?)")
                )
        else:
            suspects.extend(_drain(pending, fn, workers, 2 * workers, ctx, on_record))


def _probe() -> int:
    return os.getpid()


def _pool_works(ctx) -> bool:
    """Whether a fresh one-process pool can run a no-op (tells a cell that kills its worker from
    worker processes that cannot start at all)."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
        try:
            pool.submit(_probe).result(timeout=120)
        except (BrokenProcessPool, TimeoutError):
            return False
    return True


def _drain(queue: deque, fn, workers: int, window: int, ctx, on_record) -> list[dict]:
    """Run the queue's tasks on a fresh pool, at most `window` in flight. Returns the tasks that
    were in flight when the pool broke (empty when the queue was drained)."""
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx)
    inflight: dict = {}
    lost: list[dict] = []
    interrupted = False
    try:
        while queue or inflight:
            while queue and len(inflight) < window and not lost:
                t = queue.popleft()
                try:
                    inflight[pool.submit(fn, t)] = t
                except BrokenProcessPool:
                    queue.appendleft(t)
                    lost.extend(inflight.values())
                    inflight.clear()
            if not inflight:
                break
            done, _ = wait(inflight, return_when=FIRST_COMPLETED)
            for f in done:
                t = inflight.pop(f)
                try:
                    rec = f.result()
                except BrokenProcessPool:
                    lost.append(t)
                    continue
                except KeyboardInterrupt:
                    raise
                except BaseException as e:  # e.g. a result that cannot be pickled: record, go on
                    rec = failed_record(t, f"{type(e).__name__}: {e}")
                on_record(rec)
            if lost:
                lost.extend(inflight.values())
                inflight.clear()
                break
    except BaseException:
        interrupted = True
        raise
    finally:
        pool.shutdown(wait=not interrupted, cancel_futures=True)
    return lost


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
    import logging

    try:
        import distributed
    except ImportError:
        raise StudyError("the dask executor needs the `distributed` package: pip install 'dask[distributed]'") from None
    cluster = None
    if address:
        client = distributed.Client(address)
    else:
        n = workers or os.cpu_count() or 1
        cluster = distributed.LocalCluster(
            host="127.0.0.1",
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        )
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
