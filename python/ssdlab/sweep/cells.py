"""Grid expansion: the cells of a study (Cell, expand_study), each validated and keyed.

A cell's key (`cell_key`) is what resuming a sweep goes by: the sha256 of its resolved
configuration, the digest of its trace file's bytes (`trace_digest`) and the ssdlab version.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .. import api
from .._core import SsdlabError, __version__
from .study import Study, StudyError, deep_set, load_study


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


def describe(values: Mapping) -> str:
    """A cell's values in one line: `buffer.kind="lru", device.op=0.1`."""
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in values.items()) or "the base configuration"


def trace_digest(path: str | Path, chunk: int = 1 << 20) -> str:
    """sha256 of a file's bytes, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def _traces_digest(resolved: Mapping, digests: dict[str, str | None]) -> str | None:
    """The digest of the trace a cell replays (`workload.path`); with `[[flows]]` replaying
    traces, one digest of every flow's trace digest in flow order, so that editing any of them
    runs the cell again. `digests` caches each file's."""

    def of(workload: Mapping) -> str | None:
        path = workload.get("path")
        if workload.get("kind") != "trace" or not isinstance(path, str):
            return None
        if path not in digests:
            digests[path] = trace_digest(path) if os.path.isfile(path) else None
        return digests[path]

    found = [of(w) for w in api.workload_tables(resolved)]
    if len(found) == 1:
        return found[0]
    return hashlib.sha256(json.dumps(found).encode()).hexdigest() if any(found) else None


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
            deep_set(cfg, k, copy.deepcopy(v), f"{where}: cell {index} ({describe(values)})")
        try:
            resolved = api.Config(cfg).resolved()
        except SsdlabError as e:
            raise StudyError(f"{where}: cell {index} ({describe(values)}): {e}") from None
        digest = _traces_digest(resolved, digests)
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
