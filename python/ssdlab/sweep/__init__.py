"""Parameter sweeps: run every cell of a study in parallel into a results store, resumably.

    cells = ssdlab.expand_study("study.toml")
    summary = ssdlab.run_sweep("study.toml", "out/")        # all cores; resumable
    df = ssdlab.load_results("out/")

The parts, each a module of this package:

    study       study files: Study, load_study, StudyError, `{traces}` placeholders, dump_toml
    cells       grid expansion: Cell, expand_study, cell keys (cell_key) and trace digests
    task        one cell as a task: run_cell (what a worker runs) and the record it returns
    executors   a local process pool (run_local) and a Dask cluster (run_dask), SweepError
    progress    the progress display (tqdm)

and the results store is ssdlab.store. This module runs a sweep (`run_sweep`): expand the study,
skip the cells already stored, run the others on an executor and store each record as it arrives.
A study file's syntax is in ssdlab.sweep.study and docs/studies.md.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..store import ResultStore
from .cells import Cell, cell_key, describe, expand_study, trace_digest
from .executors import EXECUTORS, SweepError, run_dask, run_local
from .executors import mp_context as _mp_context
from .progress import Progress
from .study import MAX_VALUES, RANGE_KEYS, Study, StudyError, dump_toml, load_study
from .task import failed_record, git_revision, make_record, run_cell

# The names of the single-module sweep, for scripts that call them.
_failed = failed_record
_record = make_record

__all__ = [
    "EXECUTORS",
    "MAX_VALUES",
    "RANGE_KEYS",
    "Cell",
    "Progress",
    "Study",
    "StudyError",
    "SweepError",
    "SweepSummary",
    "cell_key",
    "dump_toml",
    "expand_study",
    "git_revision",
    "load_study",
    "run_cell",
    "run_sweep",
    "trace_digest",
]


@dataclass
class SweepSummary:
    """What `run_sweep` did."""

    study: str
    out_dir: str
    executor: str
    workers: int | None
    total: int  # cells in the study
    skipped: int  # already stored with status ok
    duplicates: int  # cells whose resolved configuration equals an earlier cell's (run once)
    ran: int
    ok: int
    failed: int
    wall_s: float
    errors: list = field(default_factory=list)  # [(cell index, values, error)] of the first failures
    duplicate_of: dict = field(default_factory=dict)  # {cell index: the earlier cell it duplicates}
    warned: int = 0  # cells that ran with warnings (Result.warnings; stored in their `warnings` column)
    warnings: list = field(default_factory=list)  # [(cell index, values, first warning)] of the first ones

    def duplicates_line(self) -> str | None:
        """What deduplication did, e.g. "2 cells share an earlier cell's configuration and were
        run once: cell 3 = cell 1, cell 5 = cell 4"; None when no cell did."""
        if not self.duplicate_of:
            return None
        n = len(self.duplicate_of)
        pairs = ", ".join(f"cell {i} = cell {j}" for i, j in list(self.duplicate_of.items())[:5])
        more = ", …" if n > 5 else ""
        return (
            f"{n} cell{'s' if n != 1 else ''} share{'' if n != 1 else 's'} an earlier cell's configuration "
            f"and {'were' if n != 1 else 'was'} run once: {pairs}{more}"
        )

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    def failure_line(self) -> str | None:
        """One line for a sweep with failed cells (how many, the first error, how to list them);
        None when every cell that ran succeeded."""
        if not self.failed:
            return None
        first = ""
        if self.errors:
            index, values, error = min(self.errors, key=lambda e: e[0])
            error = " ".join(str(error).split())
            error = error if len(error) <= 200 else error[:199] + "…"
            first = f"; first: cell {index} ({describe(values)}): {error}"
        return (
            f"{self.failed} of {self.total} cell{'s' if self.total != 1 else ''} failed{first}; "
            f"list them with `ssdlab results {shlex.quote(str(self.out_dir))} --status failed`"
        )

    def warnings_line(self) -> str | None:
        """One line for a sweep whose runs gave warnings (how many cells, the first warning, where
        the others are); None when none did."""
        if not self.warned:
            return None
        index, values, warning = min(self.warnings, key=lambda w: w[0])
        return (
            f"{self.warned} of {self.ran} cell{'s' if self.ran != 1 else ''} run gave warnings; first: "
            f"cell {index} ({describe(values)}): {warning}; all of them are in the `warnings` column of "
            f"`ssdlab.load_results({str(self.out_dir)!r})`"
        )


MAX_ERRORS = 20


def run_sweep(
    study: str | Path | Mapping | Study,
    out_dir: str | Path,
    executor: str = "local",
    address: str | None = None,
    workers: int | None = None,
    progress: bool = True,
    base_dir: str | Path | None = None,
    traces: str | Path | None = None,
) -> SweepSummary:
    """Run every cell of a study not already stored (status ok) in `out_dir`, storing each record
    as soon as it finishes (see ssdlab.store). Failed cells are stored as failed and re-run next time.

    executor: "local" (a process pool, `workers` processes, default os.cpu_count()) or "dask"
    (`distributed.Client(address)`, or without an address a LocalCluster on 127.0.0.1 with
    `workers` single-threaded worker processes, closed afterwards).
    """
    if executor not in EXECUTORS:
        raise StudyError(f"executor must be one of {', '.join(EXECUTORS)}, not `{executor}`")
    if workers is not None and workers < 1:
        raise StudyError(f"workers must be >= 1, not {workers}")
    if address and executor != "dask":
        raise StudyError("an address is only used with the dask executor")
    t0 = time.monotonic()
    st = load_study(study, base_dir, traces)
    cells = expand_study(st)
    store = ResultStore(out_dir, create=True)
    store.clean_temps()
    store.write_study(st.text if st.text is not None else dump_toml(st.raw))
    stored = store.ok_keys()

    todo: list[Cell] = []
    seen: dict[str, int] = {}  # key -> the first cell with it
    duplicate_of: dict[int, int] = {}
    skipped = 0
    for c in cells:
        if c.key in seen:
            duplicate_of[c.index] = seen[c.key]
        elif c.key in stored:
            seen[c.key] = c.index
            skipped += 1
        else:
            seen[c.key] = c.index
            todo.append(c)
    duplicates = len(duplicate_of)
    rev = git_revision()
    tasks = [
        {
            "index": c.index,
            "key": c.key,
            "values": c.values,
            "config": c.config,
            "resolved": c.resolved,
            "trace_digest": c.trace_digest,
            "git_revision": rev,
        }
        for c in todo
    ]
    summary = SweepSummary(
        study=st.name,
        out_dir=str(out_dir),
        executor=executor,
        workers=workers,
        total=len(cells),
        skipped=skipped,
        duplicates=duplicates,
        duplicate_of=duplicate_of,
        ran=0,
        ok=0,
        failed=0,
        wall_s=0.0,
    )
    if progress and tasks:
        where = f"{executor} executor" + (f" at {address}" if address else "")
        print(
            f"{st.name}: {len(cells)} cells, {skipped} already stored, running {len(tasks)} on the {where}",
            file=sys.stderr,
            flush=True,
        )
    if progress and duplicate_of:
        print(f"{st.name}: {summary.duplicates_line()}", file=sys.stderr, flush=True)
    bar = Progress(len(tasks), enabled=progress)

    def on_record(rec: dict) -> None:
        store.append(rec)
        summary.ran += 1
        if rec["status"] == "ok":
            summary.ok += 1
            if rec.get("warnings"):
                summary.warned += 1
                if len(summary.warnings) < MAX_ERRORS:
                    summary.warnings.append((rec["cell"], rec["axes"], rec["warnings"][0]))
        else:
            summary.failed += 1
            if len(summary.errors) < MAX_ERRORS:
                summary.errors.append((rec["cell"], rec["axes"], rec["error"]))
        bar.update(rec["status"] != "ok")

    try:
        # run_cell and _mp_context are looked up here, in this package, when the sweep runs: a
        # test (or a script) may replace ssdlab.sweep.run_cell or ssdlab.sweep._mp_context.
        if tasks:
            if executor == "local":
                summary.workers = max(1, min(workers or os.cpu_count() or 1, len(tasks)))
                run_local(tasks, summary.workers, on_record, fn=run_cell, context=_mp_context())
            else:
                summary.workers = run_dask(tasks, address, workers, on_record, fn=run_cell)
    finally:
        bar.close()
        summary.wall_s = time.monotonic() - t0
    if progress and summary.warned:
        print(f"{st.name}: {summary.warnings_line()}", file=sys.stderr, flush=True)
    return summary
