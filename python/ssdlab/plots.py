"""Figures (matplotlib, headless)."""

from __future__ import annotations

import math
from pathlib import Path


def compare_chart(results: list[tuple[str, dict]], metrics: list[str], path: Path) -> Path:
    """One bar panel per metric, one bar per run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [label or "run" for label, _ in results]
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.6 * len(metrics), 3.4), squeeze=False)
    for ax, m in zip(axes[0], metrics, strict=False):
        vals = [r.get(m, math.nan) for _, r in results]
        ax.bar(range(len(vals)), [0 if v != v else v for v in vals], color="#4c72b0")
        ax.set_title(m, fontsize=10)
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
