"""Plain data shapes shared by the API, the results store and the figures (which the API draws
with, so this module imports none of them): dotted configuration keys and time series as frames."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def flatten(d: Mapping[str, Any], prefix: str = "") -> dict:
    """{"a": {"b": 1}} -> {"a.b": 1}"""
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flatten(v, key + "."))
        else:
            out[key] = v
    return out


def series_frame(columns: Mapping[str, Any] | None):
    """A time series given as columns {name: [values]} (None = NaN) as a float DataFrame, with
    `requests` and `measured` first."""
    import pandas as pd

    columns = columns or {}
    first = [c for c in ("requests", "measured") if c in columns]
    order = first + sorted(c for c in columns if c not in first)
    data = {c: [math.nan if v is None else float(v) for v in columns[c]] for c in order}
    return pd.DataFrame(data, columns=order, dtype="float64")
