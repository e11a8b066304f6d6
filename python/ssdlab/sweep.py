"""Parameter sweeps: study files, their expansion into cells, and running the cells in parallel.

A study file (TOML; full reference in docs/studies.md):

    [study]
    name = "buffers"
    description = "Write buffers under a Zipf workload"

    [base]                                   # any configuration, as for `ssdlab run`
    workload.kind = "zipf"
    run.precondition = "fill"

    [axes]                                   # each key is one dimension of the grid
    "buffer.kind" = ["none", "lru", "block-lru"]
    "buffer.bytes" = {geom = ["1MiB", "64MiB"], factor = 4}
    "device.op" = {start = 0.1, stop = 0.3, step = 0.1}

    [[zip]]                                  # keys that move together: one dimension
    "ftl.gc" = ["greedy", "fifo"]
    "ftl.gc_free_blocks" = [4, 8]

The cells are the cartesian product of the axes and zip groups (in file order, the last one
varying fastest); each is the base configuration deep-merged with its values.

    cells = ssdlab.expand_study("study.toml")
    summary = ssdlab.run_sweep("study.toml", "out/")        # all cores; resumable
    df = ssdlab.load_results("out/")
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import os
import shlex
import socket
import subprocess
import sys
import time
import tomllib
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from . import api
from ._core import SsdlabError, __version__
from .store import ResultStore, parse_size, utc_now

TOP_TABLES = ("study", "base", "axes", "zip", "grid")
GRID_TABLES = ("name", "base", "axes", "zip")
STUDY_KEYS = ("name", "description")
RANGE_KEYS = {"start", "stop", "step", "num", "values", "geom", "factor"}
MAX_VALUES = 1_000_000
PATH_KEYS = ("workload.path",)
EXECUTORS = ("local", "dask")


class StudyError(SsdlabError):
    """A study file (or dict) that cannot be expanded: the message names the table, key or cell."""

    kind = "config"


class SweepError(SsdlabError):
    """A sweep that cannot run at all (as opposed to a cell that fails)."""

    kind = "invalid"


@dataclass
class Cell:
    """One point of a study.

    values: the cell's axis values, dotted key -> value (as written in the study).
    config: the full configuration to run (the base deep-merged with `values`).
    key: the resume key: sha256 of the resolved configuration, the trace digest and the ssdlab version.
    """

    index: int
    values: dict
    config: dict
    key: str
    resolved: dict = field(repr=False)
    trace_digest: str | None = None


@dataclass
class Study:
    """A parsed study: base configuration and dimensions (each a list of {dotted key: value})."""

    name: str
    description: str
    base: dict
    dims: list
    axis_keys: list
    raw: dict
    text: str | None = None
    source: Path | None = None
    #: (base, dims) of every grid: one for a plain study, one per [[grid]] table otherwise.
    parts: list = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(math.prod(len(d) for d in dims) for _, dims in self.parts)


# -- loading and checking a study ---------------------------------------------------------------


def load_study(
    study: str | Path | Mapping | Study, base_dir: str | Path | None = None, traces: str | Path | None = None
) -> Study:
    """Parse and check a study: a TOML path, a dict of the same shape, or a Study.

    `{traces}` in any string becomes the real-trace directory (`traces`, else as
    `ssdlab.studies.traces_dir` finds it); another `{name}` is an error. Relative `workload.path`
    values resolve against the study file's directory (for a dict: `base_dir`, default the
    current directory)."""
    if isinstance(study, Study):
        return study
    from .studies import _substitute, traces_dir

    text, source = None, None
    if isinstance(study, (str, Path)):
        source = Path(study)
        try:
            text = source.read_text()
        except OSError as e:
            raise StudyError(f"{source}: {e.strerror or e}") from None
        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise StudyError(f"{source}: {e}") from None
        base_dir = source.parent
        where = str(source)
    elif isinstance(study, Mapping):
        raw = copy.deepcopy(dict(study))
        where = "study"
    else:
        raise TypeError(f"study must be a TOML path or a dict, not {type(study).__name__}")
    root = Path(os.path.abspath(base_dir if base_dir is not None else os.getcwd()))
    try:
        raw = _substitute(raw, {"traces": str(traces_dir(traces))})
    except SsdlabError as e:
        raise StudyError(f"{where}: {e}") from None

    unknown = [k for k in raw if k not in TOP_TABLES]
    if unknown:
        raise StudyError(f"{where}: unknown table `{unknown[0]}` (a study has [study], [base], [axes] and [[zip]])")
    meta = raw.get("study", {})
    if not isinstance(meta, Mapping):
        raise StudyError(f"{where}: [study] must be a table")
    for k, v in meta.items():
        if k not in STUDY_KEYS:
            raise StudyError(f"{where}: [study] has unknown key `{k}` (expected name, description)")
        if not isinstance(v, str):
            raise StudyError(f"{where}: [study] {k} must be a string")

    base_raw = raw.get("base", {})
    if not isinstance(base_raw, Mapping):
        raise StudyError(f"{where}: [base] must be a table holding a configuration")
    base: dict = {}
    for k, v in base_raw.items():
        _deep_set(base, k, copy.deepcopy(v), f"{where}: [base]")
    _resolve_paths_in_config(base, root)

    grids = raw.get("grid")
    if grids is None:
        dims, axis_keys = _dimensions(raw.get("axes", {}), raw.get("zip", []), where, root)
        parts = [(base, dims)]
    else:
        # Several grids in one study: each [[grid]] may override the base and has its own axes.
        if "axes" in raw or "zip" in raw:
            raise StudyError(f"{where}: a study with [[grid]] tables puts its [axes] and [[zip]] inside them")
        if not isinstance(grids, list) or not grids or not all(isinstance(g, Mapping) for g in grids):
            raise StudyError(f"{where}: grid must be a non-empty array of tables ([[grid]])")
        parts, axis_keys = [], []
        for gi, g in enumerate(grids, 1):
            gwhere = f"{where}: [[grid]] {gi}" + (f" ({g['name']})" if "name" in g else "")
            unknown = [k for k in g if k not in GRID_TABLES]
            if unknown:
                raise StudyError(f"{gwhere}: unknown key `{unknown[0]}` (a grid has name, base, axes and zip)")
            gbase = copy.deepcopy(base)
            gbase_raw = g.get("base", {})
            if not isinstance(gbase_raw, Mapping):
                raise StudyError(f"{gwhere}: base must be a table")
            for k, v in _flat_items(gbase_raw):
                _deep_set(gbase, k, copy.deepcopy(v), f"{gwhere}: base")
            _resolve_paths_in_config(gbase, root)
            dims, keys = _dimensions(g.get("axes", {}), g.get("zip", []), gwhere, root)
            parts.append((gbase, dims))
            axis_keys += [k for k in keys if k not in axis_keys]

    study_obj = Study(
        name=meta.get("name") or (source.stem if source else "study"),
        description=meta.get("description", ""),
        base=parts[0][0],
        dims=parts[0][1],
        axis_keys=axis_keys,
        raw=raw,
        text=text,
        source=source,
        parts=parts,
    )
    if study_obj.size > MAX_VALUES:
        raise StudyError(f"{where}: {study_obj.size:,} cells is more than the limit of {MAX_VALUES:,}")
    return study_obj


def _dimensions(axes, groups, where: str, root: Path) -> tuple[list, list]:
    """The dimensions of one grid: one per axis and one per [[zip]] group (a list of {key: value})."""
    dims: list[list[dict]] = []
    axis_keys: list[str] = []
    owner: dict[str, str] = {}

    def claim(key: str, label: str) -> None:
        parts = key.split(".")
        if len(parts) < 2 or not all(parts):
            raise StudyError(f"{where}: {label}: key `{key}` is not a dotted configuration key (section.key)")
        if key in owner:
            raise StudyError(f"{where}: `{key}` appears in both {owner[key]} and {label}")
        owner[key] = label
        axis_keys.append(key)

    if not isinstance(axes, Mapping):
        raise StudyError(f"{where}: [axes] must be a table mapping dotted keys to lists of values")
    for key, spec in _flat_items(axes):
        claim(key, "[axes]")
        values = _values(spec, f"{where}: [axes] `{key}`")
        dims.append([{key: _resolve_path_value(key, v, root)} for v in values])

    if isinstance(groups, Mapping):
        groups = [groups]
    if not isinstance(groups, list) or not all(isinstance(g, Mapping) for g in groups):
        raise StudyError(f"{where}: zip must be an array of tables ([[zip]])")
    for gi, group in enumerate(groups, 1):
        label = f"[[zip]] group {gi}"
        cols: dict[str, list] = {}
        for key, spec in _flat_items(group):
            claim(key, label)
            cols[key] = [_resolve_path_value(key, v, root) for v in _values(spec, f"{where}: {label} `{key}`")]
        if not cols:
            raise StudyError(f"{where}: {label} is empty")
        lengths = {len(v) for v in cols.values()}
        if len(lengths) > 1:
            detail = ", ".join(f"`{k}` has {len(v)}" for k, v in cols.items())
            raise StudyError(f"{where}: {label}: lists must have equal lengths to move together, but {detail}")
        n = lengths.pop()
        dims.append([{k: v[i] for k, v in cols.items()} for i in range(n)])
    return dims, axis_keys


def _flat_items(table: Mapping, prefix: str = ""):
    """(dotted key, spec) pairs of an [axes] or [[zip]] table. Quoted dotted keys ("buffer.bytes")
    and TOML's own dotted keys (buffer.bytes, which nest) both work; a table holding range keys
    (start, values, geom, ...) is a range specification, any other table nests further."""
    for k, v in table.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping) and not (set(v) & RANGE_KEYS):
            yield from _flat_items(v, key + ".")
        else:
            yield key, v


def _values(spec: Any, where: str) -> list:
    """The list of values of one axis: a list, or a range table."""
    if isinstance(spec, list):
        values = spec
    elif isinstance(spec, Mapping):
        values = _range(spec, where)
    else:
        raise StudyError(
            f"{where}: expected a list of values or a range table "
            f"({{start, stop, step}}, {{start, stop, num}}, {{geom = [a, b], factor}} or {{values = [...]}}), "
            f"got {json.dumps(spec)}"
        )
    if not values:
        raise StudyError(f"{where}: no values")
    if len(values) > MAX_VALUES:
        raise StudyError(f"{where}: {len(values):,} values is more than the limit of {MAX_VALUES:,}")
    return list(values)


def _number(v: Any, where: str, name: str) -> int | float:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise StudyError(f'{where}: `{name}` must be a number or a size such as "4MiB", got {json.dumps(v)}')
    if isinstance(v, str):
        size = parse_size(v)
        if size is None:
            raise StudyError(f'{where}: `{name}` = {json.dumps(v)} is not a number or a size such as "4MiB"')
        return size
    if isinstance(v, float) and not math.isfinite(v):
        raise StudyError(f"{where}: `{name}` must be finite")
    return v


def _clean(x: float) -> float:
    """Drop floating-point noise from a computed range value (0.30000000000000004 -> 0.3)."""
    return float(f"{x:.12g}")


def _range(spec: Mapping, where: str) -> list:
    keys = set(spec)
    unknown = keys - RANGE_KEYS
    if unknown:
        raise StudyError(
            f"{where}: unknown range key `{sorted(unknown)[0]}` (expected {', '.join(sorted(RANGE_KEYS))})"
        )
    if "values" in keys:
        if keys != {"values"}:
            raise StudyError(f"{where}: `values` cannot be combined with {', '.join(sorted(keys - {'values'}))}")
        if not isinstance(spec["values"], list):
            raise StudyError(f"{where}: `values` must be a list")
        return list(spec["values"])
    if "geom" in keys:
        if keys - {"geom", "factor"}:
            raise StudyError(f"{where}: a geometric range has only `geom = [first, last]` and `factor`")
        g = spec["geom"]
        if not isinstance(g, list) or len(g) != 2:
            raise StudyError(f"{where}: `geom` must be [first, last]")
        a, b = _number(g[0], where, "geom"), _number(g[1], where, "geom")
        f = _number(spec.get("factor", 2), where, "factor")
        if a <= 0 or b < a:
            raise StudyError(f"{where}: `geom` needs 0 < first <= last, got [{a}, {b}]")
        if f <= 1:
            raise StudyError(f"{where}: `factor` must be > 1, got {f}")
        integral = all(isinstance(x, int) for x in (a, f))
        out, v = [], a
        while v <= b * (1 + 1e-9) and len(out) <= MAX_VALUES:
            out.append(v if integral else _clean(v))
            v = v * f
        return out
    if "start" in keys:
        if "stop" not in keys or len(keys & {"step", "num"}) != 1 or keys - {"start", "stop", "step", "num"}:
            raise StudyError(f"{where}: a linear range is {{start, stop, step}} or {{start, stop, num}}")
        a, b = _number(spec["start"], where, "start"), _number(spec["stop"], where, "stop")
        if "num" in keys:
            n = spec["num"]
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise StudyError(f"{where}: `num` must be an integer >= 1")
            if n == 1:
                return [a]
            out = [_clean(a + i * (b - a) / (n - 1)) for i in range(n)]
            if all(isinstance(x, int) for x in (a, b)) and all(x == int(x) for x in out):
                out = [int(x) for x in out]
            return out
        s = _number(spec["step"], where, "step")
        if s == 0:
            raise StudyError(f"{where}: `step` must not be 0")
        span = (b - a) / s
        if span < -1e-9:
            raise StudyError(f"{where}: `step` = {s} never reaches `stop` = {b} from `start` = {a}")
        n = int(math.floor(span + 1e-9)) + 1
        if n > MAX_VALUES:
            raise StudyError(f"{where}: {n:,} values is more than the limit of {MAX_VALUES:,}")
        if all(isinstance(x, int) for x in (a, b, s)):
            return [a + i * s for i in range(n)]
        return [_clean(a + i * s) for i in range(n)]
    raise StudyError(f"{where}: a range table needs `values`, `geom` or `start`")


def _deep_set(cfg: dict, dotted: str, value: Any, where: str) -> None:
    """Set a dotted key; a table value merges into an existing table (deep merge)."""
    parts = dotted.split(".")
    if not all(parts):
        raise StudyError(f"{where}: bad key `{dotted}`")
    node = cfg
    for p in parts[:-1]:
        nxt = node.setdefault(p, {})
        if not isinstance(nxt, dict):
            raise StudyError(f"{where}: `{dotted}`: `{p}` is not a table")
        node = nxt
    leaf = parts[-1]
    if isinstance(value, Mapping) and isinstance(node.get(leaf), dict):
        for k, v in value.items():
            _deep_set(node[leaf], k, v, where)
    else:
        node[leaf] = value


def _resolve_path_value(key: str, value: Any, root: Path) -> Any:
    if key in PATH_KEYS and isinstance(value, str) and value:
        p = os.path.expanduser(value)
        return p if os.path.isabs(p) else os.path.normpath(os.path.join(root, p))
    return value


def _resolve_paths_in_config(cfg: dict, root: Path) -> None:
    for key in PATH_KEYS:
        section, name = key.split(".")
        table = cfg.get(section)
        if isinstance(table, dict) and name in table:
            table[name] = _resolve_path_value(key, table[name], root)


# -- expansion ---------------------------------------------------------------------------------


def _describe(values: Mapping) -> str:
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in values.items()) or "the base configuration"


def trace_digest(path: str | Path, chunk: int = 1 << 20) -> str:
    """sha256 of a file's bytes, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def cell_key(resolved: Mapping, digest: str | None, version: str = __version__) -> str:
    """The resume key of a cell: sha256 of its resolved configuration (canonical JSON), the trace
    digest and the ssdlab version."""
    doc = json.dumps(
        {"config": resolved, "trace_digest": digest, "ssdlab_version": version},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(doc.encode()).hexdigest()


def expand_study(study: str | Path | Mapping | Study, base_dir: str | Path | None = None) -> list[Cell]:
    """The cells of a study, in a deterministic order (the cartesian product of the axes and zip
    groups in file order, the last dimension varying fastest).

    Every cell is validated (`Config(cell).resolved()`) before anything runs: an invalid one raises
    StudyError naming the cell's values and the configuration error."""
    st = load_study(study, base_dir)
    where = str(st.source) if st.source else "study"
    digests: dict[str, str | None] = {}
    cells = []
    combos = ((base, combo) for base, dims in st.parts for combo in itertools.product(*dims))
    for index, (base, combo) in enumerate(combos):
        values: dict = {}
        for part in combo:
            values.update(part)
        cfg = copy.deepcopy(base)
        for k, v in values.items():
            _deep_set(cfg, k, copy.deepcopy(v), f"{where}: cell {index} ({_describe(values)})")
        try:
            resolved = api.Config(cfg).resolved()
        except SsdlabError as e:
            raise StudyError(f"{where}: cell {index} ({_describe(values)}): {e}") from None
        digest = None
        wl = resolved.get("workload", {})
        path = wl.get("path")
        if wl.get("kind") == "trace" and isinstance(path, str):
            if path not in digests:
                digests[path] = trace_digest(path) if os.path.isfile(path) else None
            digest = digests[path]
        cells.append(
            Cell(
                index=index,
                values=values,
                config=cfg,
                key=cell_key(resolved, digest),
                resolved=resolved,
                trace_digest=digest,
            )
        )
    return cells


# -- running one cell --------------------------------------------------------------------------


def run_cell(task: Mapping) -> dict:
    """Run one cell and return its record. Never raises for a failing simulation: any exception
    becomes a record with status "failed". (The same function runs in local and Dask workers.)"""
    t0 = time.perf_counter()
    try:
        res = api.simulate(task["config"])
    except Exception as e:
        msg = str(e) if isinstance(e, SsdlabError) else f"{type(e).__name__}: {e}"
        return _record(task, "failed", msg, task["resolved"], {}, time.perf_counter() - t0)
    rec = _record(task, "ok", None, res.config, res.metrics, time.perf_counter() - t0)
    rec["histograms"] = res.histograms
    rec["series"] = res.series_columns
    return rec


def _record(task: Mapping, status: str, error: str | None, config: dict, metrics: dict, wall: float | None) -> dict:
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
    pkg = Path(__file__).resolve().parent
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


# -- progress ----------------------------------------------------------------------------------


def _hms(s: float) -> str:
    s = int(round(s))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class Progress:
    """Cells done / total on stderr: a redrawn bar on a terminal, else a line every ~10 %."""

    def __init__(self, total: int, enabled: bool = True, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.tty = self.stream.isatty()
        self.total = total
        self.done = self.failed = 0
        self.start = time.monotonic()
        self.last_draw = 0.0
        self.next_frac = 0.1

    def line(self) -> str:
        now = time.monotonic()
        elapsed = now - self.start
        frac = self.done / self.total if self.total else 1.0
        # Cells finish in parallel bursts, so the rate since the first one finished overestimates
        # the speed early on; the mean time per cell since the start is steadier.
        left = elapsed / self.done * (self.total - self.done) if self.done >= 2 else 0.0
        eta = _hms(left) if self.done >= 2 or self.done == self.total else "?"
        return f"{self.done}/{self.total} cells, {self.failed} failed, {_hms(elapsed)} elapsed, ~{eta} left" + (
            f" [{'#' * int(frac * 24):<24}]" if self.tty else ""
        )

    def update(self, failed: bool) -> None:
        self.done += 1
        self.failed += bool(failed)
        if not self.enabled:
            return
        now = time.monotonic()
        if self.tty:
            if now - self.last_draw >= 0.1 or self.done == self.total:
                self.last_draw = now
                self.stream.write("\r" + self.line() + "\x1b[K")
                self.stream.flush()
        elif self.done / self.total >= self.next_frac - 1e-9 or self.done == self.total:
            self.next_frac = math.floor(self.done / self.total * 10 + 1e-9) / 10 + 0.1
            self.stream.write(self.line() + "\n")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty and self.done:
            self.stream.write("\n")
            self.stream.flush()


# -- executors ---------------------------------------------------------------------------------


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
            first = f"; first: cell {index} ({_describe(values)}): {error}"
        return (
            f"{self.failed} of {self.total} cell{'s' if self.total != 1 else ''} failed{first}; "
            f"list them with `ssdlab results {shlex.quote(str(self.out_dir))} --status failed`"
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
    bar = Progress(len(tasks), enabled=progress)
    if progress and tasks:
        where = f"{executor} executor" + (f" at {address}" if address else "")
        print(
            f"{st.name}: {len(cells)} cells, {skipped} already stored, running {len(tasks)} on the {where}",
            file=bar.stream,
            flush=True,
        )
    if progress and duplicate_of:
        print(f"{st.name}: {summary.duplicates_line()}", file=bar.stream, flush=True)

    def on_record(rec: dict) -> None:
        store.append(rec)
        summary.ran += 1
        if rec["status"] == "ok":
            summary.ok += 1
        else:
            summary.failed += 1
            if len(summary.errors) < MAX_ERRORS:
                summary.errors.append((rec["cell"], rec["axes"], rec["error"]))
        bar.update(rec["status"] != "ok")

    try:
        if tasks:
            if executor == "local":
                summary.workers = max(1, min(workers or os.cpu_count() or 1, len(tasks)))
                _run_local(tasks, summary.workers, on_record)
            else:
                summary.workers = _run_dask(tasks, address, workers, on_record)
    finally:
        bar.close()
        summary.wall_s = time.monotonic() - t0
    return summary


def _failed(task: Mapping, message: str) -> dict:
    return _record(task, "failed", message, task["resolved"], {}, None)


def _mp_context():
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _run_local(tasks: list[dict], workers: int, on_record: Callable[[dict], None]) -> None:
    """A process pool (forkserver or spawn). If a worker process dies (e.g. killed by the OS for
    memory), the cells that were in flight are re-run one at a time, so that only the cell that
    kills its worker again is recorded as failed; the others proceed."""
    pending = deque(tasks)
    suspects: deque = deque()
    ctx = _mp_context()
    while pending or suspects:
        if suspects:
            lost = _drain(suspects, 1, 1, ctx, on_record)
            if lost and not _pool_works(ctx):
                raise SweepError(
                    "the local worker processes die before running anything; they must be able to import the "
                    "main module (a script read from stdin cannot be: save it to a file, or use `ssdlab sweep`)"
                )
            for t in lost:
                on_record(_failed(t, "the worker process died while running this cell (killed, e.g. out of memory?)"))
        else:
            suspects.extend(_drain(pending, workers, 2 * workers, ctx, on_record))


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


def _drain(queue: deque, workers: int, window: int, ctx, on_record) -> list[dict]:
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
                    inflight[pool.submit(run_cell, t)] = t
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
                    rec = _failed(t, f"{type(e).__name__}: {e}")
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


def _run_dask(tasks: list[dict], address: str | None, workers: int | None, on_record) -> int:
    """Run the tasks on a Dask cluster; returns the number of worker threads used."""
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
        futures = client.map(run_cell, tasks, pure=False)
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
                rec = _failed(t, f"{type(e).__name__}: {e}")
            on_record(rec)
            f.release()
        return nthreads
    finally:
        if futures:
            client.cancel(futures)
        client.close()
        if cluster is not None:
            cluster.close()


# -- writing a study dict as TOML --------------------------------------------------------------


def _toml_key(k: str) -> str:
    return k if k and all(c.isalnum() or c in "_-" for c in k) and k.isascii() else json.dumps(k, ensure_ascii=False)


def _toml_value(v: Any) -> str:
    if v is None:
        raise StudyError("a study cannot hold None (TOML has no null): leave the key out to use its default")
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{_toml_key(str(k))} = {_toml_value(x)}" for k, x in v.items()) + "}"
    raise StudyError(f"a study cannot hold a {type(v).__name__} ({v!r})")


def dump_toml(doc: Mapping) -> str:
    """A study dict as TOML text (tables become [headers], lists of tables [[headers]]; None
    values inside tables are left out)."""
    lines: list[str] = []

    def table(d: Mapping, path: list[str]) -> None:
        subs, arrays = [], []
        for k, v in d.items():
            if isinstance(v, Mapping) and not (set(v) & RANGE_KEYS and path and path[0] == "axes"):
                subs.append((k, v))
            elif isinstance(v, list) and v and all(isinstance(x, Mapping) for x in v) and not path:
                arrays.append((k, v))
            elif v is not None:
                lines.append(f"{_toml_key(str(k))} = {_toml_value(v)}")
        for k, v in subs:
            header = ".".join(_toml_key(str(p)) for p in [*path, k])
            lines.extend(["", f"[{header}]"])
            table(v, [*path, k])
        for k, items in arrays:
            for item in items:
                lines.extend(["", f"[[{_toml_key(str(k))}]]"])
                for ik, iv in item.items():
                    if iv is not None:
                        lines.append(f"{_toml_key(str(ik))} = {_toml_value(iv)}")

    table(doc, [])
    return "\n".join(lines).lstrip("\n") + "\n"
