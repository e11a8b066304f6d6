"""Calibration spaces: the configuration keys a calibration fits, their physical ranges, and the
latency statistics it fits them to (a TOML file; the default is space.toml beside this module).

    [objective]
    targets = ["read.p50", "read.p99", "write.p50"]

    [[param]]
    key = "nand.read_us"      # any configuration key (docs/config.md)
    low = 20.0
    high = 150.0
    log = true                # sample on a log scale (low > 0)
    integer = false           # whole numbers only (integer bounds)
    source = "datasheets ..." # where the range comes from

    [[param]]
    key = "nand.read_msb_us"
    relative_to = "nand.read_us"  # fitted as a multiple of a parameter listed before it:
    low = 1.0                     # read_msb_us = 1.0 … 2.0 × read_us in every trial
    high = 2.0
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .._core import SsdlabError
from ..api import read_toml

DEFAULT_SPACE = Path(__file__).resolve().parent / "space.toml"

OPS = ("read", "write")
STATS = ("mean", "p50", "p90", "p99", "p99.9")
DEFAULT_TARGETS = ("read.p50", "read.p90", "read.p99", "read.p99.9", "write.p50", "write.p90", "write.p99")
PARAM_FIELDS = {"key", "low", "high", "log", "integer", "source", "writes", "relative_to"}


class CalibrationError(SsdlabError):
    """Input that a calibration or a validation cannot use (a space file, a trace, a profile)."""

    kind = "config"


@dataclass(frozen=True)
class Param:
    key: str
    low: float
    high: float
    log: bool = False
    integer: bool = False
    source: str = ""
    # Only writes depend on it: a calibration whose points only read leaves it at its base value.
    writes: bool = False
    # Fitted as a multiple of this earlier parameter (low … high are the factor's bounds), so an
    # ordering physics gives (a TLC upper page reads no faster than its lower page) always holds.
    relative_to: str = ""

    def clip(self, v: float) -> float | int:
        """`v` inside the bounds (whole for an integer parameter)."""
        v = min(max(v, self.low), self.high)
        return int(round(v)) if self.integer else v

    def factor(self, values: Mapping) -> float:
        """The value in `values` on this parameter's own scale: itself, or for a relative one the
        factor over its reference (NaN where the reference is absent or 0)."""
        v = float(values[self.key])
        if not self.relative_to:
            return v
        ref = values.get(self.relative_to)
        return v / float(ref) if isinstance(ref, (int, float)) and ref else math.nan

    def bounds_text(self) -> str:
        """`[20 … 120]`, or `[1 … 2 × nand.read_us]` for a relative parameter."""
        rel = f" × {self.relative_to}" if self.relative_to else ""
        return f"[{self.low:g} … {self.high:g}{rel}]"


@dataclass(frozen=True)
class Space:
    params: tuple[Param, ...]
    targets: tuple[str, ...]
    path: str = ""

    @property
    def keys(self) -> list[str]:
        return [p.key for p in self.params]


def parse_target(t: str) -> tuple[str, str]:
    """ "read.p99.9" -> ("read", "p99.9"); a ValueError for any other form."""
    op, _, stat = str(t).partition(".")
    if op not in OPS or stat not in STATS:
        raise ValueError(
            f"target `{t}`: expected OP.STAT with OP one of {', '.join(OPS)} and STAT one of {', '.join(STATS)}"
        )
    return op, stat


def load_space(path: str | Path | None = None, known_keys: Mapping | None = None) -> Space:
    """Read a space file (default: the package's space.toml), checking every entry; `known_keys`
    (flat `section.key -> value`, e.g. of the base configuration) are the keys a parameter may
    name. Every error found is reported at once, each naming the file and the parameter."""
    p = Path(path) if path is not None else DEFAULT_SPACE
    _, doc = read_toml(p, CalibrationError)
    errors: list[str] = []
    unknown_tables = set(doc) - {"objective", "param"}
    if unknown_tables:
        errors.append(f"unknown table(s) {', '.join(sorted(unknown_tables))} (expected [objective] and [[param]])")
    targets = tuple((doc.get("objective") or {}).get("targets", DEFAULT_TARGETS))
    for t in targets:
        try:
            parse_target(t)
        except ValueError as e:
            errors.append(f"[objective] {e}")
    if not targets:
        errors.append("[objective] targets is empty")
    raw = doc.get("param", [])
    if not isinstance(raw, list) or not raw:
        errors.append("no [[param]] table: a space fits at least one configuration key")
        raw = []
    params = []
    seen: set[str] = set()
    for i, entry in enumerate(raw, 1):
        param, errs = _param(entry, i, known_keys)
        errors += errs
        if param is not None:
            if param.key in seen:
                errors.append(f"param {i} (`{param.key}`): the key is fitted twice")
            seen.add(param.key)
            params.append(param)
    errors += _relative_errors(params)
    if errors:
        raise CalibrationError("\n".join(f"{p}: {e}" for e in errors))
    return Space(params=tuple(params), targets=targets, path=str(p))


def _relative_errors(params: list[Param]) -> list[str]:
    """A relative parameter's reference: a parameter listed before it (sampled first), not itself
    relative, and left out (no point writes) only together with it."""
    errors = []
    before: dict[str, Param] = {}
    for p in params:
        if p.relative_to:
            ref, where = before.get(p.relative_to), f"param `{p.key}`: relative_to `{p.relative_to}`"
            if ref is None:
                errors.append(f"{where} is not a parameter listed before it")
            elif ref.relative_to:
                errors.append(f"{where} is itself relative; name a parameter with a range of its own")
            elif ref.writes and not p.writes:
                errors.append(f"{where} is only fitted where points write: mark this one writes = true too")
            elif p.integer or ref.integer:
                errors.append(f"{where}: a relative parameter and its reference must not be integers")
        before[p.key] = p
    return errors


def _param(entry, i: int, known_keys: Mapping | None) -> tuple[Param | None, list[str]]:
    if not isinstance(entry, Mapping):
        return None, [f"param {i}: expected a table"]
    key = entry.get("key")
    where = f"param {i} (`{key}`)" if key else f"param {i}"
    errors = [
        f"{where}: unknown field `{f}` (fields: {', '.join(sorted(PARAM_FIELDS))})" for f in entry.keys() - PARAM_FIELDS
    ]
    if not isinstance(key, str) or not key:
        return None, errors + [f"{where}: `key` (a configuration key such as nand.read_us) is missing"]
    if known_keys is not None and key not in known_keys:
        near = difflib.get_close_matches(key, list(known_keys), n=1)
        hint = f"; did you mean `{near[0]}`?" if near else " (docs/config.md lists the keys)"
        errors.append(f"{where}: unknown configuration key{hint}")
    elif known_keys is not None and isinstance(known_keys[key], (str, bool, Mapping)):
        errors.append(f"{where}: not a numeric key (it is {known_keys[key]!r})")
    low, high = entry.get("low"), entry.get("high")
    log, integer, writes = entry.get("log", False), entry.get("integer", False), entry.get("writes", False)
    for name, v in (("low", low), ("high", high)):
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            errors.append(f"{where}: `{name}` must be a finite number, not {v!r}")
    for name, v in (("log", log), ("integer", integer), ("writes", writes)):
        if not isinstance(v, bool):
            errors.append(f"{where}: `{name}` must be true or false, not {v!r}")
    for name in ("source", "relative_to"):
        if not isinstance(entry.get(name, ""), str):
            errors.append(f"{where}: `{name}` must be a string")
    if errors:
        return None, errors
    if low >= high:
        errors.append(f"{where}: bounds inverted or empty: low = {low} is not below high = {high}")
    if entry.get("relative_to") and low <= 0:
        errors.append(f"{where}: a factor's range needs low > 0, not {low}")
    if log and low <= 0:
        errors.append(f"{where}: a log-scale range needs low > 0, not {low}")
    if integer and (low != int(low) or high != int(high)):
        errors.append(f"{where}: an integer parameter needs whole bounds, not {low} and {high}")
    if errors:
        return None, errors
    source, rel = entry.get("source", ""), entry.get("relative_to", "")
    return Param(key, float(low), float(high), log, integer, source, writes, rel), []
