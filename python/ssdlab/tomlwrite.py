"""Writing TOML: a dict (a configuration, a study) as TOML text, through tomli-w.

TOML has no null: keys whose value is None are left out, which for a configuration means "use
the default". Reading the text back (tomllib) gives the same dict otherwise.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any

import tomli_w

from ._core import SsdlabError

#: inline(path, table) -> whether to write the table at `path` (its keys from the top) inline.
InlinePredicate = Callable[[tuple[str, ...], Mapping], bool]


class TomlError(SsdlabError):
    """A value that TOML cannot hold (None inside a list, an object of another type)."""

    kind = "config"


def dumps(doc: Mapping, inline: InlinePredicate | None = None) -> str:
    """`doc` as TOML text: tables become [headers], lists of tables [[headers]].

    tomli-w writes a table that is a value of another table as a [section] after the other
    keys. Where that order matters (a study's [axes], whose order is the grid's), `inline(path,
    table)` picks the tables to write as `key = { ... }` in place instead."""
    marks: dict[str, str] = {}
    tag = uuid.uuid4().hex

    def prepare(value: Any, path: tuple[str, ...]) -> Any:
        if isinstance(value, Mapping):
            table = {str(k): prepare(v, (*path, str(k))) for k, v in value.items() if v is not None}
            if path and inline is not None and inline(path, value):
                text = _inline_table(table)
                if text is not None:
                    mark = f"ssdlab-inline-{tag}-{len(marks)}"
                    marks[f'"{mark}"'] = text
                    return mark
            return table
        if isinstance(value, (list, tuple)):
            if any(x is None for x in value):
                raise TomlError(
                    f"`{'.'.join(path)}`: TOML has no null, so a list cannot hold None "
                    "(leave a key out to use its default)"
                )
            return [prepare(x, path) for x in value]
        return value

    try:
        text = tomli_w.dumps(prepare(doc, ()))
    except TypeError as e:
        raise TomlError(str(e)) from None
    for mark, table in reversed(marks.items()):  # an inline table may hold another's mark
        text = text.replace(mark, table, 1)
    return text


def _inline_table(table: Mapping) -> str | None:
    """`{ key = value, ... }`, each pair written by tomli-w; None when a value is itself a table
    or a list of tables that tomli-w writes as a section (such a table stays a section)."""
    pairs = []
    for k, v in table.items():
        pair = tomli_w.dumps({k: v}).rstrip("\n")
        if pair.startswith("["):
            return None
        pairs.append(pair)
    return "{ " + ", ".join(pairs) + " }" if pairs else "{}"
