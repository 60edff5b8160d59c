"""The report's figures, drawn with matplotlib's object API (no pyplot, no global state).

Each function takes plain DataFrames and returns a :class:`matplotlib.figure.Figure`;
:func:`save` writes it as PNG.  Text from tables (model, dataset and category
names) is passed to matplotlib as data and never interpreted as mathtext.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from perturbations.base import FAMILY_ORDER

TYPE_COLORS = {"objective": "#1f77b4", "subjective": "#d62728"}


def _plain(text: object) -> str:
    """Escape matplotlib's mathtext marker so names print as written."""
    return str(text).replace("$", r"\$")


def category_order(categories: Sequence[str]) -> list[str]:
    """Families in the toolkit's order, unknown categories after them, alphabetically."""
    present = set(categories)
    known = [c for c in FAMILY_ORDER if c in present]
    return known + sorted(present - set(known))


def agreement_heatmap(items: pd.DataFrame) -> Figure:
    """Mean C_i by model (rows) x perturbation category (columns)."""
    x = items[(items["category"] != "original") & items["c_i"].notna()]
    table = x.pivot_table(index="model", columns="category", values="c_i", aggfunc="mean")
    table = table[category_order(list(table.columns))]
    fig = Figure(
        figsize=(1.1 * table.shape[1] + 2.5, 0.55 * table.shape[0] + 1.8), layout="constrained"
    )
    ax = fig.add_subplot()
    im = ax.imshow(table.to_numpy(float), vmin=0.0, vmax=1.0, cmap="viridis", aspect="auto")
    ax.set_xticks(
        range(table.shape[1]), [_plain(c) for c in table.columns], rotation=35, ha="right"
    )
    ax.set_yticks(range(table.shape[0]), [_plain(m) for m in table.index])
    for (r, c), v in np.ndenumerate(table.to_numpy(float)):
        if np.isfinite(v):
            ax.text(
                c,
                r,
                f"{v:.2f}",
                ha="center",
                va="center",
                color="white" if v < 0.6 else "black",
                fontsize=8,
            )
    fig.colorbar(im, ax=ax, label="mean agreement C_i")
    ax.set_title("Agreement by model and perturbation category")
    return fig


def type_by_category(cells: pd.DataFrame) -> Figure:
    """Objective vs subjective mean C_i by category with 95% intervals, one panel per model.

    ``cells`` has ``model, dataset_type, category, estimate, ci_low, ci_high``.
    """
    models = list(dict.fromkeys(cells["model"]))
    cats = category_order(list(cells.loc[cells["category"] != "original", "category"]))
    fig = Figure(
        figsize=(max(6.0, 0.75 * len(cats) + 2.0), 3.2 * len(models)), layout="constrained"
    )
    axes = fig.subplots(len(models), 1, squeeze=False)[:, 0]
    for ax, model in zip(axes, models, strict=True):
        sub = cells[cells["model"] == model]
        for j, (dtype, color) in enumerate(TYPE_COLORS.items()):
            d = sub[sub["dataset_type"] == dtype].set_index("category").reindex(cats)
            if d["estimate"].notna().sum() == 0:
                continue
            xs = np.arange(len(cats)) + (j - 0.5) * 0.22
            err = np.vstack([d["estimate"] - d["ci_low"], d["ci_high"] - d["estimate"]])
            ax.errorbar(
                xs,
                d["estimate"],
                yerr=np.nan_to_num(err),
                fmt="o",
                color=color,
                capsize=3,
                label=dtype,
            )
        ax.set_xticks(range(len(cats)), [_plain(c) for c in cats], rotation=30, ha="right")
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("mean C_i (95% CI)")
        ax.set_title(_plain(model))
        ax.grid(axis="y", alpha=0.3)
        ax.legend(loc="lower left", fontsize=8)
    return fig


def pss_distribution(items: pd.DataFrame, score: str = "answer") -> Figure:
    """Distribution of S_i (ProSA eq. 1) by perturbation category, as box plots."""
    x = items[
        (items["score"] == score)
        & items["s_i"].notna()
        & ~items["category"].isin(["original", "all"])
    ]
    cats = category_order(list(x["category"].unique()))
    fig = Figure(figsize=(max(6.0, 0.8 * len(cats) + 2.0), 3.6), layout="constrained")
    ax = fig.add_subplot()
    data = [x.loc[x["category"] == c, "s_i"].to_numpy(float) for c in cats]
    if data:
        ax.boxplot(data, tick_labels=[_plain(c) for c in cats], showmeans=True)
    ax.tick_params(axis="x", rotation=30)
    ax.set_ylabel(f"S_i ({score})")
    ax.set_title("Prompt sensitivity per item (0 = every variant gives the same answer)")
    ax.grid(axis="y", alpha=0.3)
    return fig


def format_accuracy_plot(acc: pd.DataFrame) -> Figure:
    """Accuracy of objective items per prompt format, sorted, one line per model."""
    fig = Figure(figsize=(7.0, 3.6), layout="constrained")
    ax = fig.add_subplot()
    for model, g in acc.groupby("model", sort=True):
        a = np.sort(g["accuracy"].to_numpy(float))
        ax.plot(np.arange(1, a.size + 1), a, marker="o", label=_plain(model))
        ax.annotate(
            f"spread {a.max() - a.min():.2f}",
            (a.size, a[-1]),
            fontsize=8,
            textcoords="offset points",
            xytext=(4, 0),
        )
    ax.set_xlabel("prompt format (sorted by accuracy)")
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, 1.05)
    ax.set_title("Accuracy by format on objective items (FormatSpread)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def confidence_vs_pss(points: pd.DataFrame) -> Figure:
    """Mean decoding confidence of an item's prompts against its S_i (ProSA's link)."""
    fig = Figure(figsize=(6.0, 4.0), layout="constrained")
    ax = fig.add_subplot()
    for dtype, color in TYPE_COLORS.items():
        d = points[points["dataset_type"] == dtype]
        if len(d):
            ax.scatter(d["confidence"], d["s_i"], s=14, alpha=0.7, color=color, label=dtype)
    if len(points) > 2 and points["confidence"].std() > 0:
        r = np.corrcoef(points["confidence"], points["s_i"])[0, 1]
        ax.set_title(f"Confidence vs sensitivity (Pearson r = {r:.2f})")
    else:
        ax.set_title("Confidence vs sensitivity")
    ax.set_xlabel("mean top next-token probability")
    ax.set_ylabel("S_i (answer)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path
