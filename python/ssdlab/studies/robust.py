"""Robustness: a study's grid re-run across the values its seed leaves open.

A study's claims.toml declares, beside its claims, the values the seed does not give or that
ssdlab reconstructs (`[[open]]`: one configuration key, its plausible range, its source, the cells
it applies to) and the combinations that matter (`[[corner]]`). `ssdlab reproduce NAME --robust`
runs one setting at a time (each open value alone, then each corner) into RESULTS/robust/SETTING/,
re-running only the cells of the headline grids (claims.toml `headline_grids`; default every
grid) that the setting changes; the ledger then judges every claim in every
setting on the study's results with those cells replaced, and says whether its verdict holds in
every setting, in none, or depends (and on which).
"""

from __future__ import annotations

import copy
import json
import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import api
from .._core import SsdlabError
from ..claims import Declared, Outcome, outcome
from ..store import parse_size
from ..sweep.study import StudyError, deep_set

ROBUST_DIR = "robust"
SETTING_FILE = "setting.json"


@dataclass
class Setting:
    """One setting of a study's open values: `values` maps open id -> value."""

    id: str
    values: dict
    why: str = ""
    #: (open, value) pairs, in declaration order.
    pairs: list = field(default_factory=list)

    @property
    def folder(self) -> str:
        return re.sub(r"[^A-Za-z0-9._=+-]", "_", self.id)


def _label(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def settings(declared: Declared) -> list[Setting]:
    """Each open value alone (every value of its range), then each corner."""
    opens = {o.id: o for o in declared.opens}
    out = [Setting(f"{o.id}={_label(v)}", {o.id: v}, pairs=[(o, v)]) for o in declared.opens for v in o.values]
    out += [Setting(c.id, dict(c.set), c.why, [(opens[k], v) for k, v in c.set.items()]) for c in declared.corners]
    return out


def _get(cfg: Any, dotted: str) -> Any:
    """The value at a dotted key (`workload.fio.jobs.0.bs` indexes an array); None when absent."""
    for part in dotted.split("."):
        if isinstance(cfg, list) and part.isdigit() and int(part) < len(cfg):
            cfg = cfg[int(part)]
        elif isinstance(cfg, Mapping) and part in cfg:
            cfg = cfg[part]
        else:
            return None
    return cfg


def _bytes(v: Any) -> int | None:
    return parse_size(v) if isinstance(v, str) else v if isinstance(v, int) and not isinstance(v, bool) else None


def _same(a: Any, b: Any) -> bool:
    """Equal values; "1MiB" and 1048576 are one size."""
    return a == b or (isinstance(a, str) != isinstance(b, str) and _bytes(a) is not None and _bytes(a) == _bytes(b))


def applies(where: Mapping, resolved: Mapping) -> bool:
    """Whether a cell's resolved configuration has every `where` key at (one of) its values."""
    for key, want in where.items():
        accepted = want if isinstance(want, list) else [want]
        if not any(_same(_get(resolved, key), w) for w in accepted):
            return False
    return True


def patched(setting: Setting, cell) -> dict | None:
    """The cell's configuration under `setting`, or None when the setting does not change it."""
    cfg = copy.deepcopy(cell.config)
    touched = False
    for o, v in setting.pairs:
        if not applies(o.where, cell.resolved):
            continue
        if o.key in cell.values:
            raise StudyError(f"open `{o.id}`: {o.key} is an axis of cell {cell.index}; exclude such cells with `where`")
        deep_set(cfg, o.key, copy.deepcopy(v), f"open `{o.id}`")
        touched = True
    if not touched:
        return None
    try:
        resolved = api.Config(cfg).resolved()
    except SsdlabError as e:  # an invalid setting names the open value and the cell
        raise StudyError(f"setting {setting.id}: cell {cell.index}: {e}") from None
    return cfg if resolved != cell.resolved else None


def headline_cells(spec: Mapping, declared: Declared) -> list:
    """The cells of the study's headline grids (`headline_grids`; all its cells without it)."""
    from ..sweep.cells import expand_study
    from ..sweep.study import load_study

    cells = expand_study(spec)
    if not declared.headline_grids:
        return cells
    names = [g.get("name", "") for g in spec.get("grid") or []]
    unknown = [g for g in declared.headline_grids if g not in names]
    if unknown:
        raise StudyError(f"{declared.path}: headline grid `{unknown[0]}` is no [[grid]] name of the study")
    sizes = [math.prod(len(d) for d in dims) for _, dims in load_study(spec).parts]
    owner = [name for name, n in zip(names, sizes, strict=True) for _ in range(n)]
    return [c for c in cells if owner[c.index] in declared.headline_grids]


def plan(spec: Mapping, declared: Declared) -> list[tuple[Setting, list]]:
    """Every setting with the cells of the headline grids it changes:
    [(setting, [(base cell, patched config)])]."""
    cells = headline_cells(spec, declared)
    out = []
    for s in settings(declared):
        changed = [(c, cfg) for c in cells if (cfg := patched(s, c)) is not None]
        out.append((s, changed))
    return out


def variant_spec(spec: Mapping, setting: Setting, changed: list) -> dict:
    """A study of the changed cells alone, one [[grid]] per cell (its axis values kept as axes, so
    that its records read like the base cell's)."""
    meta = dict(spec.get("study") or {})
    label = setting.id.replace("{", "(").replace("}", ")")  # a study's strings substitute {names}
    meta["description"] = f"{meta.get('name', 'study')} with {label}: the cells it changes"
    grids = [
        {"name": f"cell {c.index}", "base": cfg, "axes": {k: [v] for k, v in c.values.items()}} for c, cfg in changed
    ]
    return {"study": meta, "grid": grids}


def run(spec: Mapping, declared: Declared, out_dir: str | Path, progress: bool = True, **options) -> list:
    """Run every setting's changed cells into OUT/robust/SETTING/ (resumable: stored cells are
    kept). Returns the sweeps' summaries."""
    from ..sweep import run_sweep

    base = Path(out_dir) / ROBUST_DIR
    summaries = []
    for s, changed in plan(spec, declared):
        folder = base / s.folder
        folder.mkdir(parents=True, exist_ok=True)
        doc = {"id": s.id, "values": s.values, "why": s.why, "replaces": sorted({c.key for c, _ in changed})}
        (folder / SETTING_FILE).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        if progress:
            print(f"robust: {s.id}: {len(changed)} cells changed", file=sys.stderr, flush=True)
        if changed:
            summaries.append(run_sweep(variant_spec(spec, s, changed), folder, progress=progress, **options))
    return summaries


def setting_frames(declared: Declared, results_dir: str | Path, df) -> list[tuple[Setting, Any]]:
    """The results frame of every setting that ran: the study's results with the changed cells
    replaced by the setting's. A setting that changes no cell, did not run, or ran on other base
    results (its cells are not in `df`) is left out."""
    import pandas as pd

    from ..report.html import load_results

    out = []
    for s in settings(declared):
        folder = Path(results_dir) / ROBUST_DIR / s.folder
        try:
            doc = json.loads((folder / SETTING_FILE).read_text())
        except (OSError, ValueError):
            continue
        replaces = set(doc.get("replaces") or [])
        if not replaces or doc.get("values") != s.values or not replaces <= set(df["key"]):
            continue
        try:
            variant = load_results(folder)
        except (OSError, ValueError, SsdlabError):
            continue
        frame = pd.concat([df[~df["key"].isin(replaces)], variant], ignore_index=True).copy()  # defragmented
        frame.attrs = dict(df.attrs)
        out.append((s, frame))
    return out


def outcomes(module, study: str, declared: Declared, results_dir, df) -> dict[str, list[tuple[str, Outcome]]]:
    """Every claim's outcome in every setting that ran: claim id -> [(setting id, Outcome)]."""
    frames = setting_frames(declared, results_dir, df)
    return {c["id"]: [(s.id, outcome(module, study, c, frame)) for s, frame in frames] for c in declared.claims}
