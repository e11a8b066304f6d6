"""Registered studies: one folder each, holding `study.toml` (the full grid), `quick.toml` (a
reduced grid that runs in minutes), `figures.py` (optional `figures(df)` returning
[(caption, Figure)] and `sections(df)` returning [(title, html)] for the report; a study that is
not a grid, such as a calibration, defines `run(spec, out_dir, **options)` there, which fills the
results folder and returns a SweepSummary, and its study files no grid) and, for a seed's
study, `claims.toml` (the seed's claims as data) and `judges.py` (the functions that judge them,
one per claims.toml `judge`; a study without judges.py keeps them in figures.py; see
`ssdlab.claims`).

Adding a study = adding a folder here. String values in a study file may use `{traces}` for the
real-trace directory (`--traces DIR` / `traces=`, else SSDLAB_TRACES, else ../shared/traces beside
the source checkout or the current directory) and `{devices}` for the fio measurements of real
devices beside it (`devices/`). `reproduce` checks that every `{traces}` file exists before
running anything.
"""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from .._core import SsdlabError
from ..claims import CLAIMS_FILE, Claim, Declared, claims_html, judge_one, read_declared, robustness, robustness_html
from ..sweep.study import strings, substitute
from ..traces import trace_dir_candidates, traces_dir

HERE = Path(__file__).resolve().parent


@dataclass
class Study:
    name: str
    description: str
    folder: Path
    #: One line for `ssdlab reproduce --list` (`[study] summary`; default: the description's first sentence).
    summary: str = ""

    def raw_spec(self, quick: bool = False) -> dict:
        """The study file as written (`{traces}` not yet substituted)."""
        path = self.folder / ("quick.toml" if quick else "study.toml")
        with open(path, "rb") as f:
            return tomllib.load(f)

    def spec(self, quick: bool = False, traces: str | Path | None = None) -> dict:
        """The study file with `{traces}` (the trace directory) and `{devices}` (the fio
        measurements of real devices: `devices/` beside the trace directory) substituted."""
        t = traces_dir(traces)
        return substitute(self.raw_spec(quick), {"traces": str(t), "devices": str(t.parent / "devices")})

    def trace_files(self, quick: bool = False) -> list[str]:
        """The file names under the trace directory that the study references (`{traces}/...`),
        relative to it, in file order; empty for a study that needs no real traces."""
        out: list[str] = []
        for s in strings(self.raw_spec(quick)):
            if "{traces}" in s:
                rel = s.split("{traces}", 1)[1].lstrip("/")
                if rel not in out:
                    out.append(rel)
        return out

    def check_traces(self, quick: bool = False, traces: str | Path | None = None) -> Path | None:
        """Raise SsdlabError (one line: where it looked, how to point elsewhere) unless the trace
        directory and every trace file the study references exist. Returns the directory, or
        None for a study that needs no real traces."""
        files = self.trace_files(quick)
        if not files:
            return None
        looked = trace_dir_candidates(traces)
        found = traces_dir(traces)
        remedy = "point to them with --traces DIR or SSDLAB_TRACES=DIR"
        if not found.is_dir():
            where = " and ".join(f"{p} ({how})" for p, how in looked)
            raise SsdlabError(f"study {self.name} needs real traces: looked in {where}, not found; {remedy}")
        missing = [f for f in files if not (found / f).exists()]
        if missing:
            more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
            raise SsdlabError(f"study {self.name} needs real traces: {missing[0]} not found in {found}{more}; {remedy}")
        return found

    def cells(self, quick: bool = False) -> int | None:
        """The number of cells of the full (or quick) grid; None when the study file does not load."""
        from ..sweep.study import load_study

        try:
            spec = self.raw_spec(quick)
            if "calibrate" in spec:  # a calibration: one cell per trial
                return int(spec["calibrate"]["trials"])
            return load_study(spec, base_dir=self.folder).size
        except (OSError, ValueError, KeyError, SsdlabError):  # missing, not TOML, not a study
            return None

    def _load(self, stem: str, shared: bool = False) -> ModuleType | None:
        """The study's STEM.py, named inside the study's folder (so that figures.py can import from
        .judges); `shared`: the module that import made, if it is this file's (one module, so one
        cache of hwb's trace profiles), else loaded and made the one."""
        path = self.folder / f"{stem}.py"
        if not path.exists():
            return None
        name = f"ssdlab.studies.{self.folder.name}.{stem}"
        known = sys.modules.get(name)
        if shared and known is not None and getattr(known, "__file__", None) == str(path):
            return known
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        if shared:
            sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod

    def module(self) -> ModuleType | None:
        """The study's figures.py (figures, report sections, or `run` for a study that is not a grid)."""
        return self._load("figures")

    def judges(self) -> ModuleType | None:
        """The module of the judges claims.toml names: judges.py beside it, else figures.py."""
        return self._load("judges", shared=True) or self.module()

    def report_hooks(self) -> tuple[Callable | None, Callable]:
        """`figures(df)` of the study's figures.py (None: the default figures) and its report
        sections: the claims table (claims.toml, judged) first, then figures.py's `sections(df)`."""
        mod = self.module()
        extra = getattr(mod, "sections", None)

        def sections(df):
            return report_section(self, df) + (list(extra(df)) if extra else [])

        return getattr(mod, "figures", None), sections


def registry() -> dict[str, Study]:
    """Every study folder, by its `[study] name`."""
    out = {}
    for folder in sorted(p for p in HERE.iterdir() if (p / "study.toml").exists()):
        with open(folder / "study.toml", "rb") as f:
            meta = tomllib.load(f).get("study", {})
        name = meta.get("name", folder.name)
        description = " ".join(meta.get("description", "").split())
        summary = meta.get("summary") or description.split(". ")[0].rstrip(".")
        out[name] = Study(name=name, description=description, folder=folder, summary=summary)
    return out


def get(name: str) -> Study:
    studies = registry()
    if name not in studies:
        raise SsdlabError(f"unknown study `{name}`; registered: {', '.join(studies) or 'none'}")
    return studies[name]


def hooks(study_dir: str | Path) -> tuple[Callable | None, Callable | None]:
    """`figures(df)` and `sections(df)` of the registered study named in DIR/study.toml, if any
    (for `write_report`)."""
    from ..report.html import read_study

    spec, _ = read_study(study_dir)
    name = (spec.get("study") or {}).get("name")
    study = registry().get(name) if name else None
    if study is None:
        return None, None
    return study.report_hooks()


# -- claims ------------------------------------------------------------------------------------


def _declared(study) -> Declared | None:
    path = study.folder / CLAIMS_FILE
    return read_declared(path) if path.exists() else None


def _judge(study, declared: Declared, df, module) -> list[Claim]:
    """Every claim judged on `df`; with its robustness when the results folder (`df.attrs`) holds
    `--robust` settings."""
    from . import robust

    module = module if module is not None else study.judges()
    folder = getattr(df, "attrs", {}).get("results_dir")
    grid = _grid(folder)
    out = [judge_one(module, study.name, declared.seed, c, df, grid) for c in declared.claims]
    if folder and declared.opens:
        settings = robust.outcomes(module, study.name, declared, folder, df)
        for c in out:
            if settings.get(c.id):
                c.robustness = robustness(c.verdict, settings[c.id])
    return out


def _grid(folder) -> str:
    """Which grid a results folder holds: its study.toml's `[study] grid` ("full" by default)."""
    if not folder:
        return "full"
    from ..report.html import read_study

    try:
        spec, _ = read_study(folder)
    except ValueError:
        return "full"
    return (spec.get("study") or {}).get("grid", "full")


def judge_study(study, df, module=None) -> list[Claim]:
    """Judge every claim of a registered study (`ssdlab.studies.Study`) on its results frame; []
    when the study declares none. `module`: its judges (`Study.judges()`), if already loaded."""
    declared = _declared(study)
    return _judge(study, declared, df, module) if declared else []


def report_section(study, df, module=None) -> list[tuple[str, str]]:
    """The report sections of a study's claims ([(title, html)]; [] without claims): the claims
    table, then the robustness table when the study declares open values."""
    declared = _declared(study)
    if declared is None:
        return []
    claims = _judge(study, declared, df, module)
    out = [(f"Seed {declared.seed} claims against ssdlab", claims_html(claims, declared.intro))]
    if declared.opens:
        out.append(("Robustness: the values the seed leaves open", robustness_html(declared, claims)))
    return out


def results_dirs(paths: Iterable[str | Path]) -> list[Path]:
    """The study results folders among `paths`: each path is one (it holds study.toml) or holds
    them as subfolders (as `ssdlab reproduce --all --out DIR` writes). Sorted, without repeats."""
    out: list[Path] = []
    for p in map(Path, paths):
        if (p / "study.toml").is_file():
            found = [p]
        elif p.is_dir():
            found = sorted(q for q in p.iterdir() if (q / "study.toml").is_file())
            if not found:
                raise SsdlabError(f"{p}: holds no study results (no study.toml in it or in its subfolders)")
        else:
            raise SsdlabError(f"{p}: no such results folder")
        out += [q for q in found if q not in out]
    return out


def ledger(paths: Iterable[str | Path]) -> list[Claim]:
    """Every claim of every registered study found in `paths` (results folders, or folders of them),
    judged on its results; folders of studies without claims.toml (or not registered) add nothing."""
    from ..report.html import load_results, read_study

    reg = registry()
    out: list[Claim] = []
    for d in results_dirs(paths):
        spec, _ = read_study(d)
        study = reg.get((spec.get("study") or {}).get("name", ""))
        declared = _declared(study) if study is not None else None
        if declared is None:
            continue
        for c in _judge(study, declared, load_results(d), None):
            c.results = str(d)
            out.append(c)
    return sorted(out, key=lambda c: (c.seed, c.study, c.results))


class CellsFailed(SsdlabError):
    """Some cells of a reproduced study failed. The report was written all the same (it shows
    the failed cells): `report` is its path, `summary` the sweep's SweepSummary."""

    def __init__(self, summary, report: Path):
        super().__init__(summary.failure_line())
        self.summary = summary
        self.report = report


def reproduce(
    name: str,
    quick: bool = False,
    out: str | Path | None = None,
    executor: str = "local",
    address: str | None = None,
    workers: int | None = None,
    progress: bool = True,
    traces: str | Path | None = None,
    allow_failures: bool = False,
    robust: bool = False,
) -> Path:
    """Run a registered study end to end (sweep, then report). Returns the report's path.
    `robust`: then run the grid across the open values its claims.toml declares
    (ssdlab.studies.robust), before the report, which shows each claim's robustness.

    The default output directory is results/NAME (results/NAME-quick for the quick grid, so the
    two grids never mix in one results store). `traces` is the real-trace directory (default
    SSDLAB_TRACES, else ../shared/traces); a study that needs traces checks them before running
    anything. When cells fail the report is still written, then CellsFailed is raised unless
    `allow_failures`."""
    from ..report import write_report
    from ..sweep import run_sweep

    study = get(name)
    study.check_traces(quick, traces)
    out_dir = Path(out) if out else Path("results") / (f"{name}-quick" if quick else name)
    options = {"executor": executor, "address": address, "workers": workers, "progress": progress}
    runner = getattr(study.module(), "run", None)  # a study that is not a grid runs itself
    spec = study.spec(quick, traces)
    summary = (runner or run_sweep)(spec, out_dir, **options)
    declared = _declared(study)
    failed = [summary] if summary.failed else []
    if robust and declared is not None and declared.opens and runner is None:
        from . import robust as robust_runs

        failed += [s for s in robust_runs.run(spec, declared, out_dir, **options) if s.failed]
    figures, sections = study.report_hooks()
    report = write_report(out_dir, figures=figures, sections=sections)
    if failed and not allow_failures:
        raise CellsFailed(failed[0], report)
    return report


def reproduce_all(quick: bool = False, out: str | Path | None = None, **kwargs) -> tuple[list[Path], list[str]]:
    """Run every registered study (as `reproduce`), each into its own folder under `out` (default
    results/): NAME, or NAME-quick for the quick grids. A study that fails does not stop the others.
    Returns the results folders written and one line per failed study."""
    base = Path(out) if out else Path("results")
    done: list[Path] = []
    failures: list[str] = []
    studies = registry()
    for name in studies:
        folder = base / (f"{name}-quick" if quick else name)
        try:
            reproduce(name, quick=quick, out=folder, **kwargs)
        except CellsFailed as e:
            failures.append(f"{name}: {e}")
        except SsdlabError as e:
            failures.append(f"{name}: {e}")
            continue
        done.append(folder)
    return done, failures
