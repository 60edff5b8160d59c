"""The report's figures, drawn with matplotlib's object API (no pyplot, no global state).

Each function takes plain DataFrames and returns a :class:`matplotlib.figure.Figure`;
:func:`save` writes it as PNG.  Text from tables (model, dataset and category
names) goes through :func:`robustness.core.text_safety.for_figure`, so matplotlib draws it as
written, never as mathtext.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from robustness.core.names import FAMILY_ORDER
from robustness.core.text_safety import for_figure

TYPE_COLORS = {"objective": "#1f77b4", "subjective": "#d62728"}


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
        range(table.shape[1]), [for_figure(c) for c in table.columns], rotation=35, ha="right"
    )
    ax.set_yticks(range(table.shape[0]), [for_figure(m) for m in table.index])
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
    fig.colorbar(im, ax=ax, label="mean C_i", shrink=0.9, pad=0.02)
    ax.set_title("Agreement by model and perturbation category")
    return fig


def type_by_category(cells: pd.DataFrame) -> Figure:
    """Objective vs subjective mean C_i by category with 95% intervals, one panel per model.

    ``cells`` is the per-model Table 2 (``analyses.type_comparison.type_table``): ``model,
    category, objective, objective_ci_low, objective_ci_high, subjective, ...``; the
    ``all`` row (shared families) is drawn last, apart.
    """
    models = list(dict.fromkeys(cells["model"]))
    cats = category_order([c for c in cells["category"] if c != "all"])
    if (cells["category"] == "all").any():
        cats.append("all")
    fig = Figure(figsize=(max(6.5, 0.8 * len(cats) + 2.5), 3.3 * len(models)), layout="constrained")
    axes = fig.subplots(len(models), 1, squeeze=False)[:, 0]
    for ax, model in zip(axes, models, strict=True):
        sub = cells[cells["model"] == model].set_index("category").reindex(cats)
        for j, (dtype, color) in enumerate(TYPE_COLORS.items()):
            est = sub[dtype].to_numpy(float)
            if np.isfinite(est).sum() == 0:
                continue
            xs = np.arange(len(cats)) + (j - 0.5) * 0.22
            err = np.vstack(
                [
                    est - sub[f"{dtype}_ci_low"].to_numpy(float),
                    sub[f"{dtype}_ci_high"].to_numpy(float) - est,
                ]
            )
            ax.errorbar(
                xs, est, yerr=np.nan_to_num(err), fmt="o", color=color, capsize=3, label=dtype
            )
        labels = [for_figure(c if c != "all" else "all (shared)") for c in cats]
        ax.set_xticks(range(len(cats)), labels, rotation=30, ha="right")
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("mean C_i (95% CI)")
        ax.set_title(for_figure(model))
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig


def dataset_by_category(means: pd.DataFrame) -> Figure:
    """Mean agreement by dataset and category, one panel per model (Kamal et al., Figure 1).

    ``means`` is ``analyses.dataset_agreement.dataset_means`` output: ``model, dataset,
    dataset_type, category, c_i, n_items``. Objective datasets are drawn in blues,
    subjective ones in reds.
    """
    models = list(dict.fromkeys(means["model"]))
    cats = category_order(list(means["category"].unique()))
    order = means.drop_duplicates("dataset").sort_values(["dataset_type", "dataset"])
    datasets = order["dataset"].tolist()
    kinds = dict(zip(order["dataset"], order["dataset_type"], strict=True))
    blues = ["#08519c", "#3182bd", "#6baed6", "#9ecae1"]
    reds = ["#a50f15", "#de2d26", "#fb6a4a", "#fcae91"]
    colors, nb, nr = {}, 0, 0
    for d in datasets:
        if kinds[d] == "objective":
            colors[d], nb = blues[nb % len(blues)], nb + 1
        else:
            colors[d], nr = reds[nr % len(reds)], nr + 1
    width = 0.8 / max(1, len(datasets))
    fig = Figure(figsize=(max(7.0, 0.9 * len(cats) + 3.0), 3.4 * len(models)), layout="constrained")
    axes = fig.subplots(len(models), 1, squeeze=False)[:, 0]
    for ax, model in zip(axes, models, strict=True):
        sub = means[means["model"] == model]
        for j, d in enumerate(datasets):
            vals = sub[sub["dataset"] == d].set_index("category").reindex(cats)["c_i"]
            xs = np.arange(len(cats)) - 0.4 + width * (j + 0.5)
            ax.bar(
                xs,
                vals.to_numpy(float),
                width=width,
                color=colors[d],
                label=f"{for_figure(d)} ({kinds[d][:3]}.)",
            )
        ax.set_xticks(range(len(cats)), [for_figure(c) for c in cats], rotation=30, ha="right")
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("mean C_i")
        ax.set_title(for_figure(model))
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig


def wilson(mean: np.ndarray, n: np.ndarray, z: float = 1.96) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval of a mean of values in [0, 1] over n items (inside [0, 1]).

    (p + z^2/2n -+ z sqrt(p(1 - p)/n + z^2/4n^2)) / (1 + z^2/n), Wilson (1927).
    """
    p, n = np.asarray(mean, float), np.asarray(n, float).clip(min=1)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(np.clip(p * (1 - p), 0, None) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)


def pss_distribution(items: pd.DataFrame, score: str = "answer") -> Figure:
    """Mean S_i (ProSA eq. 1) by category and dataset type with Wilson's 95% interval.

    With two variants per prompt set S_i is 0 or 1, so a box plot says nothing; the mean
    (the PSS, eq. 2) with its interval is what a reader can use. The interval is Wilson's
    score interval over the items (:func:`wilson`), which stays inside [0, 1] where a normal
    interval around a PSS near 0 or 1 would not.
    """
    x = items[
        (items["score"] == score)
        & items["s_i"].notna()
        & ~items["category"].isin(["original", "all"])
    ]
    cats = category_order(list(x["category"].unique()))
    fig = Figure(figsize=(max(6.5, 0.8 * len(cats) + 2.5), 3.8), layout="constrained")
    ax = fig.add_subplot()
    for j, (dtype, color) in enumerate(TYPE_COLORS.items()):
        d = x[x["dataset_type"] == dtype].groupby("category")["s_i"].agg(["mean", "std", "count"])
        d = d.reindex(cats)
        if d["mean"].notna().sum() == 0:
            continue
        lo, hi = wilson(d["mean"].to_numpy(float), d["count"].to_numpy(float))
        mean = d["mean"].to_numpy(float)
        xs = np.arange(len(cats)) + (j - 0.5) * 0.22
        yerr = np.vstack([np.clip(mean - lo, 0, None), np.clip(hi - mean, 0, None)])
        ax.errorbar(xs, mean, yerr=yerr, fmt="o", color=color, capsize=3, label=dtype)
    ax.set_xticks(range(len(cats)), [for_figure(c) for c in cats], rotation=30, ha="right")
    ax.set_ylim(-0.06, 1.06)  # a marker at 0 or 1 is drawn whole
    ax.set_ylabel(f"PSS: mean S_i ({score})")
    ax.set_title("Prompt sensitivity (0 = every variant gives the same answer)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def format_accuracy_plot(acc: pd.DataFrame) -> Figure:
    """Accuracy of objective items per prompt format, sorted, one line per model."""
    fig = Figure(figsize=(7.0, 3.6), layout="constrained")
    ax = fig.add_subplot()
    for model, g in acc.groupby("model", sort=True):
        a = np.sort(g["accuracy"].to_numpy(float))
        ax.plot(np.arange(1, a.size + 1), a, marker="o", label=for_figure(model))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
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


def confidence_vs_pss(points: pd.DataFrame, tests: pd.DataFrame | None = None) -> Figure:
    """Mean decoding confidence of an item's prompts against its S_i, one panel per model.

    ``tests`` (``analyses.confidence.confidence_sensitivity``) puts n, r and p in each
    panel's title; r is not shown where it was not computed (too few items).
    """
    models = list(dict.fromkeys(points["model"]))
    fig = Figure(figsize=(5.5 * len(models), 4.0), layout="constrained")
    axes = fig.subplots(1, len(models), squeeze=False)[0]
    info = tests.set_index("model") if tests is not None and len(tests) else None
    for ax, model in zip(axes, models, strict=True):
        sub = points[points["model"] == model]
        for dtype, color in TYPE_COLORS.items():
            d = sub[sub["dataset_type"] == dtype]
            if len(d):
                ax.scatter(d["confidence"], d["s_i"], s=14, alpha=0.7, color=color, label=dtype)
        title = f"{for_figure(model)} (n = {len(sub)})"
        if info is not None and model in info.index and np.isfinite(info.at[model, "r"]):
            p = info.at[model, "p_value"]
            ptxt = "p < 0.001" if p < 0.001 else f"p = {p:.3f}"
            title = f"{for_figure(model)}: r = {info.at[model, 'r']:.2f}, {ptxt}, n = {len(sub)}"
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("mean top next-token probability")
        ax.set_ylabel("S_i (answer, all variants)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return fig


def clipped_text(fig: Figure) -> list[str]:
    """What of ``fig`` reaches outside the figure once drawn (empty when nothing is clipped).

    Compares the tight bounding box of every drawn artist (titles, labels, tick labels,
    legends, colour bars) with the figure's own box, both in inches.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    tight = fig.get_tightbbox(canvas.get_renderer())
    width, height = fig.get_size_inches()
    out = []
    tol = 0.01
    if tight.x0 < -tol:
        out.append(f"left by {-tight.x0:.2f} in")
    if tight.y0 < -tol:
        out.append(f"bottom by {-tight.y0:.2f} in")
    if tight.x1 > width + tol:
        out.append(f"right by {tight.x1 - width:.2f} in")
    if tight.y1 > height + tol:
        out.append(f"top by {tight.y1 - height:.2f} in")
    return out


def save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path
