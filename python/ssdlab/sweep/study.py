"""Study files: parsing and checking a study (a TOML file or a dict of the same shape) into a
Study, the base configuration and the dimensions of its grid(s).

A study file (full reference in docs/studies.md):

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
    "ftl.page.gc_free_blocks" = [4, 8]

Several [[grid]] tables (each with its own base, axes and zip) make one study of several grids.
`{traces}` in any string is the real-trace directory. Expanding a study into cells is
ssdlab.sweep.cells; `dump_toml` writes a study dict back as a file.
"""

from __future__ import annotations

import copy
import json
import math
import os
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import api, tomlwrite
from .._core import SsdlabError
from ..store import parse_size
from ..traces import traces_dir

TOP_TABLES = ("study", "base", "axes", "zip", "grid")
GRID_TABLES = ("name", "base", "axes", "zip")
STUDY_KEYS = ("name", "summary", "description", "grid")
#: `[study] grid`: which of a registered study's grids the file is (the ledger marks quick verdicts).
GRID_KINDS = ("full", "quick")
RANGE_KEYS = {"start", "stop", "step", "num", "values", "geom", "factor"}
MAX_VALUES = 1_000_000


class StudyError(SsdlabError):
    """A study file (or dict) that cannot be expanded: the message names the table, key or cell."""

    kind = "config"


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
    `ssdlab.traces.traces_dir` finds it); another `{name}` is an error. Relative `workload.path`
    values resolve against the study file's directory (for a dict: `base_dir`, default the
    current directory)."""
    if isinstance(study, Study):
        return study
    text, source = None, None
    if isinstance(study, (str, Path)):
        source = Path(study)
        text, raw = api.read_toml(source, StudyError)
        base_dir = source.parent
        where = str(source)
    elif isinstance(study, Mapping):
        raw = copy.deepcopy(dict(study))
        where = "study"
    else:
        raise TypeError(f"study must be a TOML path or a dict, not {type(study).__name__}")
    root = Path(os.path.abspath(base_dir if base_dir is not None else os.getcwd()))
    try:
        raw = substitute(raw, {"traces": str(traces_dir(traces))})
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
            raise StudyError(f"{where}: [study] has unknown key `{k}` (expected name, summary, description, grid)")
        if not isinstance(v, str):
            raise StudyError(f"{where}: [study] {k} must be a string")
    if meta.get("grid", "full") not in GRID_KINDS:
        raise StudyError(f"{where}: [study] grid must be one of {', '.join(GRID_KINDS)}, not `{meta['grid']}`")

    base_raw = raw.get("base", {})
    if not isinstance(base_raw, Mapping):
        raise StudyError(f"{where}: [base] must be a table holding a configuration")
    base: dict = {}
    for k, v in base_raw.items():
        deep_set(base, k, copy.deepcopy(v), f"{where}: [base]")
    api.resolve_trace_paths(base, root)

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
                deep_set(gbase, k, copy.deepcopy(v), f"{gwhere}: base")
            api.resolve_trace_paths(gbase, root)
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


def deep_set(cfg: dict, dotted: str, value: Any, where: str) -> None:
    """Set a dotted key as `Config.set` does (`api.set_key`: `flows.1.queue_depth` included); a
    table value merges into an existing table (deep merge). Errors are StudyErrors after `where`."""
    try:
        api.set_key(cfg, dotted, value, merge=True)
    except SsdlabError as e:
        raise StudyError(f"{where}: {e}") from None


def _resolve_path_value(key: str, value: Any, root: Path) -> Any:
    return api.trace_path(value, root) if api.is_trace_path_key(key) else value


# -- placeholders ------------------------------------------------------------------------------


def strings(value):
    """Every string inside a parsed study file."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def substitute(value, names: dict):
    """`{name}` placeholders in every string of a study file; an unknown one is an error (left
    as written it would end up in a file name and fail far from here)."""
    if isinstance(value, str) and "{" in value:
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(value) if f is not None]
        except ValueError as e:
            raise SsdlabError(f"{value!r}: {e}") from None
        for f in fields:
            if f not in names:
                known = ", ".join(f"{{{n}}}" for n in names)
                raise SsdlabError(f"unknown placeholder `{{{f}}}` in {value!r} (known: {known})")
        return value.format(**names)
    if isinstance(value, dict):
        return {k: substitute(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, names) for v in value]
    return value


# -- writing a study dict as TOML --------------------------------------------------------------


def _range_table(path: tuple[str, ...], table: Mapping) -> bool:
    """Whether the table at `path` is a range specification of an axis or zip key ({geom = ...}):
    written inline, where it is, so that the axes keep their order (the grid's)."""
    return bool(set(table) & RANGE_KEYS) and any(p in ("axes", "zip") for p in path[:-1])


def dump_toml(doc: Mapping) -> str:
    """A study dict as TOML text (tables become [headers], lists of tables [[headers]], range
    tables stay inline; None values inside tables are left out). Raises StudyError for a value
    TOML cannot hold."""
    try:
        return tomlwrite.dumps(doc, inline=_range_table)
    except tomlwrite.TomlError as e:
        raise StudyError(f"a study cannot be written as TOML: {e}") from None
