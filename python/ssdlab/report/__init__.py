"""Figures and the self-contained HTML report of a study's results.

from ssdlab.report import figures as F, write_report
fig = F.line(df, x="buffer.bytes", y="nand.erases", by="buffer.kind", logx=True)
F.save(fig, "out/erases")                    # out/erases.png (200 dpi) + out/erases.svg
write_report("results/my-study")             # results/my-study/report.html
"""

from . import figures
from .html import default_figures, write_report

__all__ = ["default_figures", "figures", "write_report"]
