"""Run the README's first Python example as a reader would, in the current folder.

The files that the README's tour writes with `cat > FILE <<'END' ... END` (such as my.toml) are
written first, since the example reads them. The example is taken from README.md itself, so this
check follows the README. Tracebacks name README.md's own line numbers.

    python readme_example.py README.md
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HEREDOC = re.compile(r"^cat > (\S+) <<'(\w+)'\n(.*?\n)\2$", re.M | re.S)
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.M | re.S)


def tour_files(text: str) -> dict[str, str]:
    """The files the README's shell blocks write with a quoted here-document, by name."""
    return {m[1]: m[3] for m in HEREDOC.finditer(text)}


def first_python_block(text: str) -> tuple[int, str]:
    """The first ```python block: the line number of its first line, and its text."""
    m = PYTHON_BLOCK.search(text)
    if m is None:
        raise SystemExit("README has no ```python block")
    return text.count("\n", 0, m.start(1)) + 1, m[1]


def main(readme: str) -> None:
    text = Path(readme).read_text(encoding="utf-8")
    for name, body in tour_files(text).items():
        Path(name).write_text(body, encoding="utf-8")
    line, code = first_python_block(text)
    # Padding with blank lines keeps the README's line numbers in tracebacks.
    exec(compile("\n" * (line - 1) + code, readme, "exec"), {"__name__": "__main__"})


if __name__ == "__main__":
    main(sys.argv[1])
