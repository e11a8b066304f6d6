"""The bar chart of `ssdlab compare` (matplotlib, headless)."""

from __future__ import annotations

from pathlib import Path


def compare_chart(
    results: list[tuple[dict, dict]], keys: list[str], metrics: list[str], path: Path, config: dict | None = None
) -> Path:
    """One panel per metric: grouped bars, a group per value of the first varied key and a bar
    (coloured, in the legend) per value of the others. `results` holds ({key: value}, metrics) per
    run; `config` (a resolved configuration) names the workload and device in the title."""
    import pandas as pd

    from .report import figures as F

    rows = [{**vals, **{m: met.get(m, float("nan")) for m in metrics}} for vals, met in results]
    df = pd.DataFrame(rows)
    x, by = keys[0], None
    if len(keys) == 2:
        by = keys[1]
    elif len(keys) > 2:
        # Several other keys: one bar per combination, labelled "k=v, k=v".
        by = ", ".join(keys[1:])
        others = df[keys[1:]].itertuples(index=False, name=None)
        df[by] = [", ".join(f"{k}={F.format_value(k, v)}" for k, v in zip(keys[1:], r, strict=True)) for r in others]
    with F.style():
        n_bars = len(df) if by else 1
        fig = F._new_figure(max(F.PANEL[0], 1.2 + 0.3 * n_bars) * len(metrics) + (1.5 if by else 0), F.PANEL[1] + 0.3)
        axs = fig.subplots(1, len(metrics), squeeze=False)[0]
        for i, (ax, m) in enumerate(zip(axs, metrics, strict=True)):
            F.bars(df, x, m, by=by, agg=None, ax=ax, legend=i == len(metrics) - 1)
        if config:
            fig.suptitle(F.subtitle_of(config), fontsize=7, color="#555555")
    stem = Path(path).with_suffix("")
    return F.save(fig, stem, formats=["png"], close=True)[0]
