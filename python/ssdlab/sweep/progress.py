"""Progress of a sweep on stderr, drawn by tqdm: cells done / total, failed, elapsed, time left.

On a terminal, one bar redrawn in place; elsewhere (a log file, a pipe) no bar and no redrawing,
but one plain line every ~10 % of the cells and at the end.
"""

from __future__ import annotations

import math
import os
import sys
import time

#: The text of the bar and of the plain lines (tqdm's format; {postfix} is ", N failed").
LINE = "{n}/{total} cells{postfix}, {elapsed} elapsed, ~{remaining} left"


class Progress:
    """Cells done / total on `stream` (default stderr): a redrawn bar on a terminal, else a line
    every ~10 %. Nothing when not `enabled` or when there is nothing to run."""

    def __init__(self, total: int, enabled: bool = True, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.tty = self.stream.isatty()
        self.total = total
        self.done = self.failed = 0
        self.start = time.monotonic()
        self.next_frac = 0.1
        self.bar = None
        if self.enabled and self.tty:
            from tqdm import tqdm  # here, not at the top: `import ssdlab` need not pay for it

            # smoothing=0: the mean time per cell since the start. Cells finish in parallel bursts,
            # so a recent rate overestimates the speed early on.
            self.bar = tqdm(
                total=total,
                file=self.stream,
                bar_format=LINE + " [{bar:24}]",
                ascii=" #",
                smoothing=0,
                mininterval=0.1,
                ncols=_columns(self.stream),
                nrows=24,  # one bar: only tqdm's guard against more bars than lines needs it
                postfix="0 failed",
            )

    def line(self) -> str:
        """The progress as one line of text, e.g. "3/10 cells, 1 failed, 00:04 elapsed, ~00:09 left"."""
        from tqdm import tqdm

        return tqdm.format_meter(
            self.done, self.total, time.monotonic() - self.start, bar_format=LINE, postfix=f"{self.failed} failed"
        )

    def update(self, failed: bool) -> None:
        """One more cell done (`failed`: it failed)."""
        self.done += 1
        self.failed += bool(failed)
        if not self.enabled:
            return
        if self.bar is not None:
            if failed:
                self.bar.set_postfix_str(f"{self.failed} failed", refresh=False)
            self.bar.update(1)
        elif self.done / self.total >= self.next_frac - 1e-9 or self.done == self.total:
            self.next_frac = math.floor(self.done / self.total * 10 + 1e-9) / 10 + 0.1
            self.stream.write(self.line() + "\n")
            self.stream.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _columns(stream) -> int:
    """The terminal's width; 100 when it says 0 (a pseudo-terminal without a size, on which
    tqdm's own measure would draw nothing)."""
    try:
        return os.get_terminal_size(stream.fileno()).columns or 100
    except (AttributeError, OSError, ValueError):
        return 100
