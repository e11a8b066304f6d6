"""The results store of a sweep: a directory holding `study.toml` and a `cells/` Parquet dataset.

Layout of `OUT/`:

    study.toml        the study as given (copied verbatim from the file, or written from the dict)
    cells/            one small Parquet file per finished cell (`part-*.parquet`), or a few larger
                      ones after `ssdlab results OUT --compact` (`compact-*.parquet`)

Every file appears atomically: it is written to a hidden temporary name (`.tmp-*`) in `cells/`,
flushed to disk and renamed with `os.replace`, so a kill at any moment leaves only complete files
(and at most a hidden temporary one, removed by the next sweep or compaction).

On disk every record has `key`, `cell`, `status`, `error`, `warnings` (JSON list of the run's
warnings, null when none), `axes` (JSON object of the cell's axis values), one column per
configuration key (JSON-encoded strings, so that values of mixed types round-trip), one float64
column per metric, and the `prov.*` provenance columns. The Parquet
schema metadata (`ssdlab.store`) lists which columns are configuration keys and which are
metrics. `load_results` decodes all of this into a pandas DataFrame.
"""

from __future__ import annotations

import json
import math
import os
import re
import socket
import time
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ._core import SsdlabError
from .api import config_columns, series_frame

FORMAT = 1
META_KEY = b"ssdlab.store"
CELLS = "cells"
STUDY_FILE = "study.toml"
TMP_PREFIX = ".tmp-"
# Temporary files older than this are left-overs of a killed writer (a live one renames within ms).
STALE_TMP_S = 3600.0

# Columns every record has, in this order, besides configuration keys and metrics.
HEAD_COLUMNS = ["key", "cell", "status", "error", "warnings", "axes", "histograms", "series"]
PROV_COLUMNS = [
    "prov.ssdlab_version",
    "prov.git_revision",
    "prov.trace_digest",
    "prov.wall_s",
    "prov.host",
    "prov.finished_at",
]


class StoreError(SsdlabError):
    """A results directory that cannot be read (missing, or holding a file that is not ours)."""

    kind = "io"


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _json(v: Any) -> str:
    return json.dumps(v, sort_keys=True, ensure_ascii=False)


def record_table(record: Mapping[str, Any]):
    """One record (as produced by `ssdlab.sweep.run_cell`) as a one-row Arrow table."""
    import pyarrow as pa

    metrics = {str(k): float(v) if v is not None else math.nan for k, v in (record.get("metrics") or {}).items()}
    axes = record.get("axes") or {}
    config = config_columns(record.get("config") or {}, axes)
    # The two namespaces do not overlap today; if they ever do, the configuration key gets a prefix.
    config = {(f"config.{k}" if k in metrics else k): v for k, v in config.items()}
    prov = record.get("prov") or {}

    cols: dict[str, Any] = {}
    types: dict[str, Any] = {}

    def put(name, value, typ):
        cols[name] = value
        types[name] = typ

    put("key", record["key"], pa.string())
    put("cell", record.get("cell"), pa.int64())
    put("status", record["status"], pa.string())
    put("error", record.get("error"), pa.string())
    # The run's warnings (Result.warnings) as a JSON list; none when it had none.
    warnings = record.get("warnings")
    put("warnings", json.dumps(warnings, ensure_ascii=False) if warnings else None, pa.string())
    put("axes", json.dumps(axes, ensure_ascii=False), pa.string())  # in study order
    # Distributions (Result.histograms) as JSON: {name: [[value, count], ...]}.
    hist = record.get("histograms")
    put("histograms", None if hist is None else json.dumps(hist), pa.string())
    # The time series (Result.series) as JSON columns {name: [value, ...]}, NaN as null; none when
    # the run did not sample.
    series = record.get("series")
    put("series", encode_series(series) if series else None, pa.string())
    for k, v in config.items():
        put(k, _json(v), pa.string())
    for k, v in metrics.items():
        put(k, v, pa.float64())
    for k in PROV_COLUMNS:
        v = prov.get(k.removeprefix("prov."))
        if k == "prov.wall_s":
            put(k, None if v is None else float(v), pa.float64())
        else:
            put(k, None if v is None else str(v), pa.string())
    # One struct array for the whole row: much cheaper than an array per column.
    row = pa.array([cols], type=pa.struct([pa.field(n, t) for n, t in types.items()]))
    table = pa.Table.from_batches([pa.RecordBatch.from_struct_array(row)])
    meta = {META_KEY: json.dumps({"format": FORMAT, "config": list(config), "metrics": list(metrics)})}
    return table.replace_schema_metadata(meta)


def encode_series(columns: Mapping[str, Iterable[float]]) -> str:
    """A time series' columns as JSON (NaN as null, so that the text is standard JSON)."""
    return json.dumps({k: [None if v is None or v != v else float(v) for v in vals] for k, vals in columns.items()})


def decode_series(text: str | None):
    """The stored JSON of a time series as a DataFrame (None when the cell has none)."""
    if text is None:
        return None
    return series_frame(json.loads(text))


def _write_atomic(directory: Path, name: str, write) -> Path:
    """Write a file through `write(fileobj)` under a hidden temporary name in `directory`, flush it
    to disk and rename it to `name`: readers see the whole file or nothing."""
    tmp = directory / f"{TMP_PREFIX}{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}-{name}.part"
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        final = directory / name
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return final


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")


def _visible(p: Path) -> bool:
    return not p.name.startswith((".", "_"))


class ResultStore:
    """A results directory (see the module docstring)."""

    def __init__(self, root: str | Path, create: bool = False):
        self.root = Path(root)
        self.cells = self.root / CELLS
        if create:
            self.cells.mkdir(parents=True, exist_ok=True)
        elif not self.cells.is_dir():
            raise StoreError(f"{self.root}: not a results directory (no {CELLS}/ inside; run `ssdlab sweep` first)")

    # -- writing -------------------------------------------------------------------------------

    def write_study(self, text: str) -> Path:
        return _write_atomic(self.root, STUDY_FILE, lambda f: f.write(text.encode()))

    def append(self, record: Mapping[str, Any]) -> Path:
        """Store one finished cell as its own Parquet file (atomically)."""
        import pyarrow.parquet as pq

        table = record_table(record)
        name = f"part-{_stamp()}-{record['key'][:16]}-{uuid.uuid4().hex[:6]}.parquet"
        # One row: dictionaries, statistics and compression only cost time here.
        return _write_atomic(
            self.cells,
            name,
            lambda f: pq.write_table(table, f, use_dictionary=False, write_statistics=False, compression="NONE"),
        )

    def clean_temps(self) -> int:
        """Remove temporary files left by killed writers: this host's whose process is gone, and
        anyone's older than an hour. Returns how many were removed."""
        host = socket.gethostname()
        removed = 0
        for d in (self.root, self.cells):
            for p in d.glob(f"{TMP_PREFIX}*"):
                m = re.match(rf"{re.escape(TMP_PREFIX)}(.*)-(\d+)-[0-9a-f]{{8}}-", p.name)
                try:
                    stale = time.time() - p.stat().st_mtime > STALE_TMP_S
                    if not stale and m and m.group(1) == host:
                        stale = not _pid_alive(int(m.group(2)))
                    if stale:
                        p.unlink()
                        removed += 1
                except FileNotFoundError:
                    pass
        return removed

    # -- reading -------------------------------------------------------------------------------

    def files(self) -> list[Path]:
        """The visible files of `cells/` (hidden temporary files excluded), sorted by name."""
        return sorted(p for p in self.cells.iterdir() if _visible(p))

    def _read(self, path: Path, columns: list[str] | None = None):
        import pyarrow.parquet as pq

        if not path.exists():
            raise FileNotFoundError(path)
        if not path.is_file():
            raise StoreError(
                f"{path}: not a results file (only Parquet files written by ssdlab belong in {self.cells})"
            )
        try:
            pf = pq.ParquetFile(path)
            meta = pf.schema_arrow.metadata or {}
            names = set(pf.schema_arrow.names)
            if META_KEY not in meta or not {"key", "status"} <= names:
                raise StoreError(f"{path}: a Parquet file, but not one written by ssdlab (no ssdlab.store metadata)")
            info = json.loads(meta[META_KEY])
            table = pf.read(
                columns=[c for c in columns if c in names] if columns is not None else None, use_threads=False
            )
        except StoreError:
            raise
        except FileNotFoundError:
            raise
        except Exception as e:
            if not path.exists():
                raise FileNotFoundError(path) from None
            raise StoreError(
                f"{path}: unreadable results file ({e}); only Parquet files written by ssdlab belong in {self.cells}"
            ) from None
        return table, info

    def ok_keys(self) -> set[str]:
        """Keys of the cells stored with status ok."""
        for _attempt in range(20):
            try:
                return self._ok_keys()
            except FileNotFoundError:  # compacted meanwhile: list again
                continue
        return self._ok_keys()

    def _ok_keys(self) -> set[str]:
        keys: set[str] = set()
        for p in self.files():
            t, _ = self._read(p, ["key", "status"])
            for k, s in zip(t.column("key").to_pylist(), t.column("status").to_pylist(), strict=True):
                if s == "ok":
                    keys.add(k)
        return keys

    def read_all(self):
        """All stored records as one Arrow table (files in name order), plus the union of the
        configuration and metric column names, and the files read.

        A file that disappears while being read (a concurrent compaction, which writes the
        combined file first) makes the whole listing start again, so no record is missed."""
        for _attempt in range(20):
            try:
                return self._read_all()
            except FileNotFoundError:
                continue
        return self._read_all()

    def _read_all(self):
        import pyarrow as pa

        files = self.files()
        tables, config_cols, metric_cols = [], {}, {}
        schema, seen = None, set()
        for p in files:
            t, info = self._read(p)
            config_cols.update(dict.fromkeys(info.get("config", [])))
            metric_cols.update(dict.fromkeys(info.get("metrics", [])))
            t = t.replace_schema_metadata(None)
            shape = tuple((f.name, str(f.type)) for f in t.schema)
            if shape not in seen:
                seen.add(shape)
                try:
                    schema = t.schema if schema is None else pa.unify_schemas([schema, t.schema])
                except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
                    raise StoreError(f"{p}: its columns conflict with the other results files ({e})") from None
            tables.append(t)
        if not tables:
            table = pa.table({c: pa.array([], pa.string()) for c in HEAD_COLUMNS})
        else:
            table = pa.concat_tables(tables, promote_options="default")
        return table, list(config_cols), list(metric_cols), files

    def compact(self) -> tuple[int, int, Path | None]:
        """Combine every part file into one Parquet file. Crash-safe: the combined file is written
        (atomically) before the parts it contains are removed; a crash in between leaves duplicate
        records, which `load_results` and the next compaction drop. Returns (files combined,
        records written, new file)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.clean_temps()
        table, config_cols, metric_cols, files = self.read_all()
        if len(files) < 2:
            return len(files), table.num_rows, None
        # Drop exact repeats of one record (left by an interrupted earlier compaction).
        seen, keep = set(), []
        names = table.column_names
        finished = table.column("prov.finished_at").to_pylist() if "prov.finished_at" in names else [None] * len(table)
        ids = zip(table.column("key").to_pylist(), table.column("status").to_pylist(), finished, strict=True)
        for i, ident in enumerate(ids):
            if ident not in seen:
                seen.add(ident)
                keep.append(i)
        table = table.take(pa.array(keep, pa.int64()))
        meta = {META_KEY: json.dumps({"format": FORMAT, "config": config_cols, "metrics": metric_cols})}
        table = table.replace_schema_metadata(meta)
        out = _write_atomic(self.cells, f"compact-{_stamp()}.parquet", lambda f: pq.write_table(table, f))
        for p in files:
            if p != out:
                p.unlink(missing_ok=True)
        return len(files), table.num_rows, out


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# -- load_results ------------------------------------------------------------------------------


def _column(values: list):
    """A pandas Series for decoded configuration values, with the narrowest sensible dtype."""
    import pandas as pd

    present = [v for v in values if v is not None]
    missing = len(present) < len(values)
    if not present:
        return pd.Series(values, dtype=object)
    if all(isinstance(v, bool) for v in present):
        return pd.Series(values, dtype="boolean" if missing else bool)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pd.Series(values, dtype="Int64" if missing else "int64")
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pd.Series([math.nan if v is None else float(v) for v in values], dtype="float64")
    if all(isinstance(v, str) for v in present):
        return pd.Series(values, dtype=object)
    return pd.Series(values, dtype=object)


_SIZE = re.compile(r"^\s*([0-9][0-9_]*(?:\.[0-9_]*)?)\s*([A-Za-z]*)\s*$")
_UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kib": 1 << 10,
    "m": 1 << 20,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gib": 1 << 30,
    "t": 1 << 40,
    "tib": 1 << 40,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
}


def parse_size(text: str) -> int | None:
    """Bytes of a size string such as "16MiB" (the engine's units), or None if it is not one."""
    m = _SIZE.match(text)
    if not m or m.group(2).lower() not in _UNITS:
        return None
    value = float(m.group(1).replace("_", "")) * _UNITS[m.group(2).lower()]
    return int(value) if value == int(value) else None


def _matches(series, wanted: Any):
    """Boolean mask: series == wanted (numbers compared with a relative tolerance; a size string
    such as "8MiB" matches its number of bytes)."""
    import numpy as np
    import pandas as pd

    if isinstance(wanted, str) and pd.api.types.is_numeric_dtype(series.dtype):
        size = parse_size(wanted)
        if size is None:
            return pd.Series(False, index=series.index)
        wanted = size
    if (
        isinstance(wanted, (int, float))
        and not isinstance(wanted, bool)
        and pd.api.types.is_numeric_dtype(series.dtype)
        and not pd.api.types.is_bool_dtype(series.dtype)
    ):
        vals = series.astype("float64").to_numpy(na_value=np.nan)
        return pd.Series(np.isclose(vals, float(wanted), rtol=1e-9, atol=0.0), index=series.index)
    return series.map(lambda v: _equal(v, wanted)).astype(bool)


def _equal(v: Any, wanted: Any) -> bool:
    if isinstance(v, (int, float)) and isinstance(wanted, str) and not isinstance(v, bool):
        size = parse_size(wanted)
        return size is not None and math.isclose(float(v), size, rel_tol=1e-9)
    try:
        return bool(v == wanted)
    except (TypeError, ValueError):
        return False


def load_results(
    out_dir: str | Path, status: str | None = None, filters: Mapping[str, Any] | None = None
):  # -> pandas.DataFrame
    """The results of a sweep directory as a pandas DataFrame, one row per cell.

    Columns: `key`, `cell`, `status` ("ok" | "failed"), `error`, `warnings` (the list of the run's
    warnings, `Result.warnings`; empty when it had none), `axes` (JSON object of the cell's
    axis values as written in the study), one column per configuration key (`buffer.bytes`,
    `workload.path`, ... decoded from JSON; the fully resolved configuration of the run), one
    float64 column per metric (`waf`, `nand.erases`, ...; NaN for failed cells), and the provenance
    columns `prov.ssdlab_version`, `prov.git_revision`, `prov.trace_digest`, `prov.wall_s`,
    `prov.host`, `prov.finished_at`. `histograms` is the JSON of the cell's distributions; `series`
    is the cell's time series as a DataFrame (`Result.series`), None when it did not sample (and
    the column is absent in stores written before time series existed).

    A cell stored more than once (e.g. failed, then ok on a re-run) appears once: its latest ok
    record, else its latest record. `status` keeps only "ok" or "failed" cells; `filters` maps a
    column to a value (or a list of accepted values); numbers compare with a relative tolerance of
    1e-9 and a size string such as "8MiB" matches its number of bytes.

    `df.attrs` holds "axes" (the axis keys, in study order), "config_columns", "metric_columns"
    and "results_dir" (`out_dir`, for hooks that read files beside the results).
    """
    import pandas as pd

    if status not in (None, "ok", "failed"):
        raise ValueError(f"status must be None, 'ok' or 'failed', not {status!r}")
    store = ResultStore(out_dir)
    table, config_cols, metric_cols, _files = store.read_all()
    df = table.to_pandas()
    for c in df.columns:  # missing strings as None (not NaN), like the configuration columns
        if c not in metric_cols and (pd.api.types.is_string_dtype(df[c].dtype) or df[c].dtype == object):
            df[c] = pd.Series([None if v is None or v is pd.NA or v != v else v for v in df[c].tolist()], dtype=object)
    config_cols = [c for c in config_cols if c in df.columns]
    metric_cols = [c for c in metric_cols if c in df.columns]
    if "time.elapsed_us" in metric_cols:
        # Cells written before the serial NAND time had its name (the same value).
        if "time.nand_serial_us" not in metric_cols:
            df["time.nand_serial_us"] = math.nan
            metric_cols.insert(metric_cols.index("time.elapsed_us"), "time.nand_serial_us")
        df["time.nand_serial_us"] = df["time.nand_serial_us"].fillna(df["time.elapsed_us"])
    for c in config_cols:
        df[c] = _column([None if v is None else json.loads(v) for v in df[c].tolist()])
    if "series" in df.columns:
        df["series"] = pd.Series([decode_series(v) for v in df["series"].tolist()], dtype=object)
    # Stores written before warnings were kept have no column: their cells show none.
    stored = df["warnings"].tolist() if "warnings" in df.columns else [None] * len(df)
    df["warnings"] = pd.Series([json.loads(v) if v else [] for v in stored], dtype=object, index=df.index)
    df = df.copy()  # the columns replaced above, one block each: consolidated again before more

    if len(df):
        finished = df["prov.finished_at"].fillna("") if "prov.finished_at" in df else ""
        # one assign, not three inserts into a frame of hundreds of columns (pandas warns then)
        df = df.assign(_ok=df["status"] == "ok", _order=range(len(df)), _finished=finished)
        df = df.sort_values(["key", "_ok", "_finished", "_order"]).drop_duplicates("key", keep="last")
        df = df.drop(columns=["_ok", "_order", "_finished"])
        df = df.sort_values(["cell", "prov.finished_at"], na_position="last", kind="stable")
    df = df.reset_index(drop=True)

    axes: dict[str, None] = {}
    for a in df["axes"].dropna().unique() if "axes" in df else []:
        axes.update(dict.fromkeys(json.loads(a)))

    if status is not None:
        df = df[df["status"] == status]
    for col, wanted in (filters or {}).items():
        if col not in df.columns:
            raise StoreError(f"filter on `{col}`: no such column{_suggest(col, df.columns)}")
        options = wanted if isinstance(wanted, (list, tuple, set)) else [wanted]
        mask = pd.Series(False, index=df.index)
        for w in options:
            mask |= _matches(df[col], w)
        df = df[mask]
    df = df.reset_index(drop=True)
    order = [c for c in HEAD_COLUMNS if c in df.columns]
    order += config_cols + metric_cols
    order += [c for c in PROV_COLUMNS if c in df.columns]
    order += [c for c in df.columns if c not in order]
    df = df[order]
    df.attrs["axes"] = list(axes)
    df.attrs["results_dir"] = str(out_dir)
    df.attrs["config_columns"] = config_cols
    df.attrs["metric_columns"] = metric_cols
    return df


def _suggest(name: str, columns: Iterable[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(columns), n=3)
    return f" (did you mean {', '.join(f'`{c}`' for c in close)}?)" if close else ""
