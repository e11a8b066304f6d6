"""The Python API: `simulate(config) -> Result`."""

from __future__ import annotations

import copy
import errno
import functools
import json
import math
import os
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from . import _core
from ._core import SsdlabError
from .frames import flatten as flatten  # re-exported: ssdlab.api.flatten
from .frames import series_frame

ConfigLike = Union[str, Path, Mapping[str, Any], "Config"]


def parse_value(text: str) -> Any:
    """A `--set` value: TOML scalar syntax (42, 0.5, true, "x", [1, 2]); otherwise a bare string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


# What a failed file operation means, in ssdlab's words rather than the system's errno text.
_OS_ERRORS = {
    errno.ENOENT: "no such file or folder",
    errno.EACCES: "no permission",
    errno.EPERM: "no permission",
    errno.EISDIR: "is a folder; expected a file",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EEXIST: "already exists",
    errno.EROFS: "the file system is read-only",
    errno.ENOSPC: "no space left on the disk",
    errno.EDQUOT: "over the disk quota",
    errno.ENAMETOOLONG: "the name is too long",
    errno.ELOOP: "too many symbolic links",
    errno.EMFILE: "too many open files",
}


def os_error_words(e: OSError) -> str:
    """Why a file operation failed, in ssdlab's words (the system's text for a rare errno)."""
    return _OS_ERRORS.get(e.errno, (e.strerror or str(e)).lower())


def os_error_message(e: OSError) -> str:
    """`path: why` for a failed file operation (both paths of a rename)."""
    where = " -> ".join(str(f) for f in (e.filename, e.filename2) if f is not None)
    return f"{where}: {os_error_words(e)}" if where else os_error_words(e)


def read_toml(path: Path, error: type[SsdlabError] = SsdlabError) -> tuple[str, dict]:
    """A TOML file's text and contents; an unreadable or malformed file raises `error` naming it."""
    try:
        text = path.read_text()
    except OSError as e:
        raise error(f"{path}: {os_error_words(e)}") from None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise error(f"{path}: {e}") from None


def is_trace_path_key(key: str) -> bool:
    """Whether a dotted key names a trace file: `workload.path` or a flow's `flows.i.workload.path`."""
    parts = key.split(".")
    return parts[-2:] == ["workload", "path"] and (len(parts) == 2 or (len(parts) == 4 and parts[0] == "flows"))


def trace_path(value: Any, root: str | Path) -> Any:
    """A trace path as written in a file in `root`: `~` expanded, a relative one taken relative to
    `root` (not to where ssdlab runs). Anything but a non-empty string is returned as it is."""
    if not isinstance(value, str) or not value:
        return value
    p = os.path.expanduser(value)
    return p if os.path.isabs(p) else os.path.normpath(os.path.join(root, p))


def workload_tables(data: Mapping) -> list[dict]:
    """A configuration's workload tables: `[workload]`, then each flow's, those given."""
    tables = [data.get("workload")]
    flows = data.get("flows")
    if isinstance(flows, list):
        tables += [f.get("workload") for f in flows if isinstance(f, dict)]
    return [t for t in tables if isinstance(t, dict)]


def resolve_trace_paths(data: dict, root: str | Path) -> None:
    """Every trace path of a configuration (`workload.path`, each flow's) relative to `root`, in place."""
    for t in workload_tables(data):
        if "path" in t:
            t["path"] = trace_path(t["path"], root)


def set_key(data: dict, key: str, value: Any, merge: bool = False) -> None:
    """Set the dotted configuration key `key` in the configuration dict `data`, in place.

    The one addressing of keys shared by `Config.set`, `--set`, `compare --vary` and a study's
    [base], [axes] and [[zip]]: `section.key` (`buffer.kind`), deeper tables
    (`buffer.hitstat.hit_log`; created when absent) and, in the array of tables `[[flows]]`,
    flow i by its index (`flows.0.priority`, `flows.1.workload.path`, `flows.1` for the whole
    table). An index must name a flow that is given: arrays are not extended. `merge=True`: a
    table value merges into a table already there (a study's TOML tables) instead of replacing
    it. Raises SsdlabError naming the key."""
    parts = key.split(".")
    if not all(parts):
        raise SsdlabError(f"config field `{key}`: expected dotted names, e.g. section.key")
    node: Any = data
    for i, p in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, list):
            slot: Any = _table_index(key, parts, i, len(node))
        elif isinstance(node, dict):
            slot = p
            if not last and node.get(p) is None:
                if i == 0 and p == "flows":
                    raise SsdlabError(f"config field `{key}`: the configuration has no flows ([[flows]] tables)")
                node[p] = {}
        else:
            where = ".".join(parts[:i])
            raise SsdlabError(f"config field `{key}`: `{where}` is {json.dumps(node)}, not a table")
        if last:
            if (
                merge
                and isinstance(value, Mapping)
                and isinstance(node[slot] if isinstance(node, list) else node.get(slot), dict)
            ):
                for k, v in value.items():
                    set_key(node[slot], k, v, merge=True)
            else:
                node[slot] = value
            return
        node = node[slot]


def _table_index(key: str, parts: list[str], i: int, count: int) -> int:
    """`parts[i]` as an index into the array of `count` tables `parts[:i]` (`flows`)."""
    array, p = ".".join(parts[:i]), parts[i]
    noun = "flow" if array == "flows" else "table"
    if not p.isdigit():
        raise SsdlabError(f"config field `{key}`: `{array}` is an array of tables; expected an index, not `{p}`")
    if int(p) >= count:
        given = f"{count} {noun}{'s' if count != 1 else ''}"
        indices = f" (`{array}.0` to `{array}.{count - 1}`)" if count > 1 else f" (`{array}.0`)" if count else ""
        raise SsdlabError(f"config field `{key}`: index {p} is past the {given} given{indices}")
    return int(p)


# The engine reads whole numbers as 64-bit integers; JSON would carry a larger one as a float.
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1


def config_json(data: Mapping[str, Any]) -> str:
    """A configuration as the JSON the engine reads; a whole number the engine cannot hold (past
    64 bits) is an SsdlabError naming its key, not a float the engine would misname."""

    def check(v: Any, path: str) -> None:
        if isinstance(v, int) and not isinstance(v, bool) and not _INT_MIN <= v <= _INT_MAX:
            bound = f"too large (at most {_INT_MAX})" if v > 0 else f"too small (at least {_INT_MIN})"
            raise SsdlabError(f"config field `{path}`: {v} is {bound}")
        if isinstance(v, Mapping):
            for k, x in v.items():
                check(x, f"{path}.{k}" if path else str(k))
        elif isinstance(v, (list, tuple)):
            for i, x in enumerate(v):
                check(x, f"{path}[{i}]")

    check(data, "")
    return json.dumps(data)


class Config:
    """A simulation configuration: sections `workload, device, nand, ftl, buffer, run`.

    Build one from a TOML file, a dict, or nothing (all defaults), then derive others with
    `set("buffer.bytes", "8MiB")`, which returns a new Config and leaves this one unchanged. Keys
    are checked when the configuration is validated or run.
    """

    def __init__(self, data: Mapping[str, Any] | None = None):
        self._data: dict = copy.deepcopy(dict(data or {}))

    @classmethod
    def from_toml(cls, path: str | Path) -> Config:
        """Read a TOML file. Unknown keys, wrong types and values wrong on their own are errors
        naming the file and line, all of them at once; a relative `workload.path` is taken
        relative to the file's folder."""
        p = Path(path)
        text, data = read_toml(p)
        # Checked here, where the text is at hand, so that errors can name the line.
        _core.check_config_file(text, str(p))
        resolve_trace_paths(data, p.parent)
        return cls(data)

    @classmethod
    def load(cls, config: ConfigLike) -> Config:
        if isinstance(config, Config):
            return cls(config._data)
        if isinstance(config, (str, Path)):
            return cls.from_toml(config)
        if isinstance(config, Mapping):
            return cls(config)
        raise TypeError(f"config must be a TOML path, a dict or a Config, not {type(config).__name__}")

    def set(self, key: str, value: Any) -> Config:
        """A copy of this configuration with a dotted key set, e.g. `set("buffer.kind", "lru")` or
        `set("flows.0.priority", "urgent")` (addressed as `set_key` describes); this one is left
        unchanged, so a loop over `base.set(...)` gives distinct configurations."""
        new = Config(self._data)
        set_key(new._data, key, copy.deepcopy(value))
        return new

    def to_dict(self) -> dict:
        return copy.deepcopy(self._data)

    def resolved(self) -> dict:
        """This configuration with every default filled in, after validation (no run)."""
        return json.loads(_core.validate_config(config_json(self._data)))

    def __repr__(self) -> str:
        return f"Config({self._data!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and self._data == other._data

    def to_toml(self, resolved: bool = False) -> str:
        """This configuration as TOML text (`resolved=True`: with every default filled in, as
        `ssdlab config show` prints it). TOML has no null: keys whose value is None are left out,
        and reading the text back gives the same configuration otherwise."""
        from .tomlwrite import dumps

        return dumps(self.resolved() if resolved else self._data)


def _metric(v: Any) -> float:
    return math.nan if v is None else float(v)


@dataclass
class Result:
    """What one simulation produced.

    `metrics` is a flat dict of the public metric names (docs/metrics.md); `config` is the fully
    resolved configuration (defaults filled in, "auto" values replaced by what was used).
    """

    config: dict
    metrics: dict
    #: name -> [(value, count)] over the measured window: "buffer.flushed_group_pages" (exact
    #: group sizes) and "buffer.group_update_interval" (log2 buckets, value = lower bound).
    histograms: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    #: The time series (`run.sample_every`) as columns {name: [values]}; see `series`.
    series_columns: dict = field(default_factory=dict)

    @property
    def series(self):
        """The time series as a pandas DataFrame: one row per sample, columns `requests`,
        `measured`, then the sampled metrics (docs/metrics.md). Empty when sampling is off."""
        return series_frame(self.series_columns)

    def to_frame(self, histograms: bool = False, series: bool = False):
        """A one-row pandas DataFrame with the columns `load_results` gives a cell: one per
        configuration key (`buffer.kind`; tables such as `workload.generic` stay whole) and one
        per metric (`waf`). `histograms=True` adds the `histograms` column (the JSON of
        `histograms`, {name: [[value, count], ...]}, as `load_results` has it) and `series=True`
        the `series` column (the time series as a DataFrame), so that frames of several runs
        concatenated draw as a study's cells do (`ssdlab.report.figures.distribution_cdf`,
        `series`)."""
        import pandas as pd

        # As in the results store: a configuration key that is also a metric name gets a prefix.
        row = {(f"config.{k}" if k in self.metrics else k): v for k, v in config_columns(self.config).items()}
        row.update(self.metrics)
        if histograms:
            row["histograms"] = json.dumps({k: [list(p) for p in v] for k, v in self.histograms.items()})
        if series:
            row["series"] = self.series if self.series_columns else None
        return pd.DataFrame([row])

    def plot_cdf(self, path: str | Path | None = None, names=()):
        """The run's latency distributions (timed mode; default: reads and writes, those that
        happened) as CDFs: the whole distribution on a log axis beside its tail (0.9 to 0.9999).
        Returns the matplotlib Figure; with `path`, also writes it there (its extension, .png,
        .svg or .pdf, gives the format; none: PNG). A run without latencies is a ValueError."""
        from .report import figures as F

        fig = F.latency_cdf(self.histograms, config=self.config, names=names)
        if path is not None:
            F.save_as(fig, path)
        return fig

    def __getitem__(self, name: str) -> float:
        return self.metrics[name]


@functools.cache
def component_tables() -> frozenset[str]:
    """Dotted names of every component's parameter table (`buffer.hitstat`, `padding.fixed`)."""
    return frozenset(c["table"] for c in components())


def config_columns(config: Mapping[str, Any], extra_keys: Iterable[str] = ()) -> dict[str, Any]:
    """`section.key -> value` for a configuration, a component's parameters as
    `section.name.key` (`buffer.hitstat.hit_log`); other tables below the second level stay whole
    (e.g. `workload.generic`). Plus any deeper dotted keys in `extra_keys` (axis keys such as
    `workload.generic.delimiter`), looked up in the configuration."""
    out: dict[str, Any] = {}
    tables = component_tables()
    for section, table in config.items():
        if section == "flows" and isinstance(table, list):
            # `[[flows]]`: flow i's keys as `flows.i.key`, its workload's as `flows.i.workload.key`.
            for i, flow in enumerate(table):
                for k, v in flow.items():
                    if k == "workload" and isinstance(v, Mapping):
                        out.update({f"flows.{i}.workload.{w}": x for w, x in v.items()})
                    else:
                        out[f"flows.{i}.{k}"] = v
        elif isinstance(table, Mapping):
            for k, v in table.items():
                if f"{section}.{k}" in tables and isinstance(v, Mapping):
                    out.update({f"{section}.{k}.{p}": x for p, x in v.items()})
                else:
                    out[f"{section}.{k}"] = v
        else:
            out[section] = table
    for key in extra_keys:
        if key in out:
            continue
        node: Any = config
        for part in key.split("."):
            node = node.get(part) if isinstance(node, Mapping) else None
        out[key] = node
    return out


def simulate(config: ConfigLike = None, progress: Callable[[int, int], None] | None = None) -> Result:
    """Run one simulation.

    config: a TOML path, a dict, a Config, or None for the defaults.
    progress: optional callable(done_requests, total_requests); total is 0 when unknown.
    The run releases the GIL; Ctrl-C stops it with KeyboardInterrupt.
    """
    cfg = Config.load(config if config is not None else {})
    cfg_json, metrics_json, hist_json, series_json, warnings = _core.simulate(config_json(cfg._data), progress)
    metrics = {k: _metric(v) for k, v in json.loads(metrics_json).items()}
    histograms = {k: [tuple(p) for p in v] for k, v in json.loads(hist_json).items()}
    series = {k: [_metric(x) for x in v] for k, v in json.loads(series_json).items()}
    return Result(
        config=json.loads(cfg_json),
        metrics=metrics,
        histograms=histograms,
        warnings=list(warnings),
        series_columns=series,
    )


def components() -> list:
    """Every registered component: dicts with category, name, summary, table (`buffer.hitstat`),
    params (its own: dicts of key, default, doc) and reads (the shared section keys it uses)."""
    return json.loads(_core.components())


def defaults() -> dict:
    """The default configuration."""
    return json.loads(_core.default_config())
