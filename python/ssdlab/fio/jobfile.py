"""fio job files (fio's INI format) read into the jobs they define, and written back.

A job file is what a user hands fio; reading it lets ssdlab simulate the same jobs. The rules are
fio's: a line whose first non-blank character is `;` or `#` is a comment (one after a value is
part of the value), `[name]` opens a job section, `key=value` or a bare `key` (a flag, read as
"1") sets an option of the section above it, `include FILE` pulls a file's options into the
section it stands in, `${VAR}` in a value is the environment variable VAR. A section whose name
begins with `global` (fio compares the first six letters) sets defaults for the job sections
after it; several add up, each job seeing the ones above it.

Two departures, both to fail loudly where fio would run something else than meant: an unset
`${VAR}` is an error (fio substitutes the empty string), and an include cycle is an error.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .output import FioError

_VAR = re.compile(r"\$\{([^}]+)\}")
_INCLUDE = re.compile(r"^include\s+(.+)$")
_MAX_INCLUDE_DEPTH = 32


@dataclass(frozen=True)
class JobSpec:
    """One job section: its name, its options (the `[global]` ones above it, then its own on
    top; keys lower-cased, values as written) and the line of its `[name]` header."""

    name: str
    options: dict[str, str]
    line: int


@dataclass
class _Section:
    name: str
    line: int
    is_global: bool
    options: dict[str, str]


def read_jobfile(path: str | Path) -> list[JobSpec]:
    """The jobs a fio job file defines, in file order. Raises FioError naming file:line."""
    p = Path(path)
    return _jobs(_sections(_read(p, None), p), p)


def parse_jobfile_text(text: str, path: str | Path = "<string>") -> list[JobSpec]:
    """The jobs of job file text; `path` names it in errors and anchors relative includes."""
    p = Path(path)
    return _jobs(_sections(text, p), p)


def _read(p: Path, where: str | None) -> str:
    """A file's text; `where` ("file:line") is the include that asked for it."""
    prefix = f"{where}: include {p}" if where else str(p)
    try:
        return p.read_text(errors="replace")
    except FileNotFoundError:
        raise FioError(f"{prefix}: no such file") from None
    except OSError as e:
        raise FioError(f"{prefix}: {e.strerror or e}") from None


def _is_global(name: str) -> bool:
    return name[:6].lower() == "global"


def _sections(text: str, p: Path) -> list[_Section]:
    """The sections of a job file in order, each with its own options (no stacking yet)."""
    sections: list[_Section] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        if line.startswith("["):
            sections.append(_header(line, p, n))
        elif not sections:
            raise FioError(f"{p}:{n}: `{line}` is outside any [job] section (a job file starts with [name])")
        else:
            _option_line(line, p, n, sections[-1].options, (p.resolve(),))
    return sections


def _header(line: str, p: Path, n: int) -> _Section:
    if not line.endswith("]"):
        raise FioError(f"{p}:{n}: section header `{line}` has no closing `]`")
    name = line[1:-1].strip()
    if not name:
        raise FioError(f"{p}:{n}: empty section name `[]`")
    return _Section(name, n, _is_global(name), {})


def _option_line(line: str, p: Path, n: int, into: dict[str, str], chain: tuple[Path, ...]) -> None:
    """One non-comment line inside a section: an include or an option, set into `into`."""
    m = _INCLUDE.match(line)
    if m:
        _include(m.group(1).strip(), p, n, into, chain)
        return
    key, sep, value = line.partition("=")
    key = key.strip().lower()
    if not key:
        raise FioError(f"{p}:{n}: `{line}` has no option name before `=`")
    into[key] = _substitute(value.strip(), p, n, key) if sep else "1"


def _substitute(value: str, p: Path, n: int, key: str) -> str:
    """`${VAR}` replaced by the environment variable VAR, which must be set."""

    def env(m: re.Match) -> str:
        var = m.group(1)
        if var not in os.environ:
            raise FioError(f"{p}:{n}: option `{key}`: environment variable `{var}` (in `${{{var}}}`) is not set")
        return os.environ[var]

    return _VAR.sub(env, value)


def _include(name: str, p: Path, n: int, into: dict[str, str], chain: tuple[Path, ...]) -> None:
    """The options of an included file, into the current section (an included file may not
    open sections). A relative name is relative to the including file's folder."""
    target = Path(os.path.expanduser(name))
    if not target.is_absolute():
        target = p.parent / target
    if target.resolve() in chain or len(chain) > _MAX_INCLUDE_DEPTH:
        raise FioError(f"{p}:{n}: include {name}: the file includes itself (through {len(chain)} files)")
    text = _read(target, f"{p}:{n}")
    for m, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        if line.startswith("["):
            raise FioError(f"{target}:{m}: `{line}`: an included file may not open sections (included from {p}:{n})")
        _option_line(line, target, m, into, (*chain, target.resolve()))


def _jobs(sections: list[_Section], p: Path) -> list[JobSpec]:
    """Job sections with the `[global]` options above each stacked under its own."""
    glob: dict[str, str] = {}
    jobs: list[JobSpec] = []
    for s in sections:
        if s.is_global:
            glob.update(s.options)
        else:
            jobs.append(JobSpec(s.name, {**glob, **s.options}, s.line))
    if not jobs:
        what = "only [global] sections" if sections else "no section"
        raise FioError(f"{p}: the job file defines no job ({what}; a job is a [name] section)")
    return jobs


def write_jobfile(
    path: str | Path,
    jobs: Iterable[JobSpec] | Iterable[tuple[str, Mapping[str, str]]],
    global_options: Mapping[str, object] | None = None,
    *,
    comment: str | None = None,
) -> Path:
    """Write a job file fio can run: a `[global]` section with `global_options` (if any), then
    one section per job. A job's options equal to the global ones are left out (they stack back
    on reading); a global option a job lacks is inherited on reading, as fio would. `comment`
    lines go at the top as `;` comments. Returns the path."""
    glob = {str(k).lower(): _value(v) for k, v in (global_options or {}).items()}
    parts = [f"; {c}".rstrip() for c in (comment.splitlines() if comment else [])]
    if glob:
        parts += [*_section_text("global", glob), ""]
    named = [(j.name, j.options) if isinstance(j, JobSpec) else (j[0], j[1]) for j in jobs]
    if not named:
        raise FioError(f"{path}: no job to write (a job file needs at least one [name] section)")
    for name, options in named:
        own = {str(k).lower(): _value(v) for k, v in options.items()}
        own = {k: v for k, v in own.items() if glob.get(k) != v}
        parts += [*_section_text(_job_name(name, path), own), ""]
    p = Path(path)
    p.write_text("\n".join(parts))
    return p


def _value(v: object) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    s = str(v).strip()
    if "\n" in s or "\r" in s:
        raise FioError(f"a fio option value cannot span lines: {s!r}")
    return s


def _job_name(name: str, path: str | Path) -> str:
    name = str(name).strip()
    if not name or any(c in name for c in "[]\n\r"):
        raise FioError(f"{path}: `{name}` cannot be a job name (empty, or with [, ] or a line break)")
    if _is_global(name):
        raise FioError(f"{path}: job name `{name}` begins with `global`, which fio reads as a [global] section")
    return name


def _section_text(name: str, options: Mapping[str, str]) -> list[str]:
    lines = [f"[{name}]"]
    for k, v in options.items():
        if not k or any(c in k for c in "=[;# \t\n") or k == "include":
            raise FioError(f"[{name}]: `{k}` cannot be a fio option name")
        lines.append(f"{k}={v}")
    return lines
