"""One cell as a task: what a worker runs (`run_cell`) and the record it returns.

A task is a plain dict (index, key, values, config, resolved, trace_digest, git_revision) so that
it pickles cheaply to a worker process or a Dask worker. A record is what the results store
(ssdlab.store) keeps of a cell: status, error, axis values, the configuration as run, metrics,
histograms, time series, the run's warnings and provenance.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from .. import api
from .._core import SsdlabError, __version__
from ..store import utc_now


def run_cell(task: Mapping) -> dict:
    """Run one cell and return its record. Never raises for a failing simulation: any exception
    becomes a record with status "failed". (The same function runs in local and Dask workers.)"""
    t0 = time.perf_counter()
    try:
        res = api.simulate(task["config"])
    except Exception as e:
        msg = str(e) if isinstance(e, SsdlabError) else f"{type(e).__name__}: {e}"
        return make_record(task, "failed", msg, task["resolved"], {}, time.perf_counter() - t0)
    rec = make_record(task, "ok", None, res.config, res.metrics, time.perf_counter() - t0)
    rec["histograms"] = res.histograms
    rec["warnings"] = res.warnings
    rec["series"] = res.series_columns
    return rec


def make_record(task: Mapping, status: str, error: str | None, config: dict, metrics: dict, wall: float | None) -> dict:
    return {
        "key": task["key"],
        "cell": task["index"],
        "status": status,
        "error": error,
        "axes": task["values"],
        "config": config,
        "metrics": metrics,
        "prov": {
            "ssdlab_version": __version__,
            "git_revision": task.get("git_revision"),
            "trace_digest": task.get("trace_digest"),
            "wall_s": wall,
            "host": socket.gethostname(),
            "finished_at": utc_now(),
        },
    }


@cache
def git_revision() -> str | None:
    """`git rev-parse HEAD` of the ssdlab source checkout, if ssdlab runs from one."""
    pkg = Path(__file__).resolve().parents[1]  # the ssdlab package
    try:
        tracked = subprocess.run(
            ["git", "-C", str(pkg), "ls-files", "--error-unmatch", "__init__.py"],
            capture_output=True,
            timeout=10,
        )
        if tracked.returncode != 0:
            return None
        head = subprocess.run(["git", "-C", str(pkg), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    rev = head.stdout.strip()
    return rev if head.returncode == 0 and rev else None


def failed_record(task: Mapping, message: str) -> dict:
    """The record of a cell that did not run to the end (its worker died, its result was lost)."""
    return make_record(task, "failed", message, task["resolved"], {}, None)
