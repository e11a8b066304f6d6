"""Registered studies: one folder each, holding `study.toml` (the full grid), `quick.toml` (a
reduced grid that runs in minutes) and `figures.py` (optional `figures(df)` returning
[(caption, Figure)] and `sections(df)` returning [(title, html)] for the report).

Adding a study = adding a folder here. String values in a study file may use `{traces}` for the
real-trace directory (SSDLAB_TRACES, else ../shared/traces beside the source checkout or the
current directory).
"""

from __future__ import annotations

import importlib.util
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from .._core import SsdlabError

HERE = Path(__file__).resolve().parent


@dataclass
class Study:
    name: str
    description: str
    folder: Path

    def spec(self, quick: bool = False) -> dict:
        path = self.folder / ("quick.toml" if quick else "study.toml")
        with open(path, "rb") as f:
            spec = tomllib.load(f)
        return _substitute(spec, {"traces": str(traces_dir())})

    def module(self) -> ModuleType | None:
        path = self.folder / "figures.py"
        if not path.exists():
            return None
        name = f"ssdlab.studies.{self.folder.name}.figures"
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod


def registry() -> dict[str, Study]:
    """Every study folder, by its `[study] name`."""
    out = {}
    for folder in sorted(p for p in HERE.iterdir() if (p / "study.toml").exists()):
        with open(folder / "study.toml", "rb") as f:
            meta = tomllib.load(f).get("study", {})
        name = meta.get("name", folder.name)
        out[name] = Study(name=name, description=meta.get("description", ""), folder=folder)
    return out


def get(name: str) -> Study:
    studies = registry()
    if name not in studies:
        raise SsdlabError(f"unknown study `{name}`; registered: {', '.join(studies) or 'none'}")
    return studies[name]


def traces_dir() -> Path:
    """Where the real traces are: $SSDLAB_TRACES, else ../shared/traces beside the checkout or cwd."""
    env = os.environ.get("SSDLAB_TRACES")
    candidates = [Path(env)] if env else []
    candidates += [HERE.parents[3] / "shared" / "traces", Path.cwd().parent / "shared" / "traces"]
    for c in candidates:
        if c.is_dir():
            return c.resolve()
    return (candidates[0] if env else Path("../shared/traces")).resolve()


def _substitute(value, names: dict):
    if isinstance(value, str) and "{" in value:
        try:
            return value.format(**names)
        except (KeyError, IndexError, ValueError):
            return value
    if isinstance(value, dict):
        return {k: _substitute(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, names) for v in value]
    return value


def reproduce(
    name: str,
    quick: bool = False,
    out: str | Path | None = None,
    executor: str = "local",
    address: str | None = None,
    workers: int | None = None,
    progress: bool = True,
) -> Path:
    """Run a registered study end to end (sweep, then report). Returns the report's path.

    The default output directory is results/NAME (results/NAME-quick for the quick grid, so the
    two grids never mix in one results store)."""
    from ..report import write_report
    from ..sweep import run_sweep

    study = get(name)
    out_dir = Path(out) if out else Path("results") / (f"{name}-quick" if quick else name)
    run_sweep(study.spec(quick), out_dir, executor=executor, address=address, workers=workers, progress=progress)
    mod = study.module()
    return write_report(out_dir, figures=getattr(mod, "figures", None), sections=getattr(mod, "sections", None))
