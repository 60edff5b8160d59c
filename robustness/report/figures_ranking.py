"""Figures of planning and model comparison: the power curve and the bump chart of rankings.

Both take plain DataFrames and return a :class:`matplotlib.figure.Figure` (object API, no
pyplot); :func:`robustness.report.figures.save` writes them.  Names from tables are passed
as data and never read as mathtext.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from robustness.core.text_safety import for_figure
from robustness.report.figures import category_order

__all__ = ["bump_chart", "power_curve"]


def power_curve(table: pd.DataFrame, alpha: float | None = None, target: float = 0.8) -> Figure:
    """Estimated power against items per dataset, one line per test, +-2 Monte Carlo SE.

    ``table`` is :func:`analyses.power.power`'s output (``term, items_per_dataset, power,
    mc_se``).  The Wald terms are drawn solid, the per-category contrasts thin and dashed;
    ``alpha`` and ``target`` are drawn as horizontal guides.
    """
    fig = Figure(figsize=(7.5, 4.6), layout="constrained")
    ax = fig.add_subplot()
    for term in dict.fromkeys(table["term"]):
        g = table[table["term"] == term].sort_values("items_per_dataset")
        x = g["items_per_dataset"].to_numpy(float)
        y = g["power"].to_numpy(float)
        se = g["mc_se"].to_numpy(float)
        contrast = str(term).startswith("contrast:")
        (line,) = ax.plot(
            x,
            y,
            marker="o",
            lw=1.0 if contrast else 2.2,
            ls="--" if contrast else "-",
            ms=3 if contrast else 5,
            label=for_figure(term),
        )
        ax.fill_between(x, y - 2 * se, y + 2 * se, color=line.get_color(), alpha=0.12, lw=0)
    if alpha is not None:
        ax.axhline(alpha, color="grey", lw=0.8, ls=":")
    ax.axhline(target, color="black", lw=0.8, ls=":")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("items per dataset")
    ax.set_ylabel("power (share of simulations rejecting)")
    ax.set_title("Power of the study's tests (band: +-2 Monte Carlo SE)")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    return fig


def bump_chart(ranks: pd.DataFrame) -> Figure:
    """Model ranks across prompt variants, one panel per dataset type (a bump chart).

    ``ranks`` is :func:`analyses.ranking.model_ranks`'s output (``dataset_type, category,
    variant_id, model, score, rank``; rank 1 is the best).  The x axis lists the original
    prompt and then every variant, grouped by category in the toolkit's order.
    """
    types = [t for t in ("objective", "subjective") if (ranks["dataset_type"] == t).any()]
    fig = Figure(figsize=(11, 3.4 * max(1, len(types))), layout="constrained")
    axes = fig.subplots(max(1, len(types)), 1, squeeze=False)[:, 0]
    models = sorted(ranks["model"].astype(str).unique())
    colors = {m: f"C{k % 10}" for k, m in enumerate(models)}
    for ax, dtype in zip(axes, types, strict=False):
        sub = ranks[ranks["dataset_type"] == dtype]
        cats = category_order([c for c in sub["category"].unique() if c != "original"])
        order = [
            ("original", v)
            for v in sorted(sub.loc[sub.category == "original", "variant_id"].unique())
        ]
        for c in cats:
            order += [(c, v) for v in sorted(sub.loc[sub.category == c, "variant_id"].unique())]
        pos = {key: k for k, key in enumerate(order)}
        for m in models:
            g = sub[sub["model"].astype(str) == m]
            xy = sorted((pos[(r.category, r.variant_id)], r.rank) for r in g.itertuples())
            if xy:
                x, y = np.array(xy, dtype=float).T
                ax.plot(x, y, marker="o", color=colors[m], label=for_figure(m), lw=1.6)
        ax.set_xticks(range(len(order)), [for_figure(v) for _, v in order], rotation=60, ha="right")
        ax.tick_params(axis="x", labelsize=7)
        n = len(models)
        ax.set_yticks(range(1, n + 1))
        ax.set_ylim(n + 0.5, 0.5)
        ax.set_ylabel("rank (1 = best)")
        metric = "accuracy" if dtype == "objective" else "agreement with the original answer"
        ax.set_title(f"{dtype} items: model rank by {metric}")
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    return fig
