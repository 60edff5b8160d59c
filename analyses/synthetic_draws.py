"""The random draws behind :func:`analyses.synthetic.synthetic_table`.

Each function draws one layer of the generative model of the synthetic table (items,
original answers, category answers, drift, option probabilities) from the caller's
generator; the order of the calls fixes the stream, so the same seed gives the same table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import expit, logit

from robustness.core.errors import AnalysisError

if TYPE_CHECKING:
    from analyses.synthetic import SyntheticDataset

__all__ = [
    "Items",
    "Rows",
    "category_answers",
    "draw_items",
    "drift",
    "original_answers",
    "other_option",
    "probabilities",
]


def other_option(rng: np.random.Generator, current: np.ndarray, k: np.ndarray) -> np.ndarray:
    """A uniformly chosen option different from ``current``.

    Parameters
    ----------
    rng
        The generator of the whole table.
    current
        Option index per entry.
    k
        Number of options per entry.

    Returns
    -------
    numpy.ndarray
        (current + step) mod k with step uniform on 1 .. k - 1, per entry.
    """
    step = 1 + np.floor(rng.random(current.size) * (k - 1)).astype(np.int64)
    return (current + step) % k


def drift(
    rng: np.random.Generator, current: np.ndarray, k: np.ndarray, ordinal: np.ndarray
) -> np.ndarray:
    """A different answer: a neighbouring point on ordinal scales (80 %), else any other.

    Parameters
    ----------
    rng
        The generator of the whole table.
    current
        Answer index per entry.
    k
        Number of options per entry.
    ordinal
        Whether each entry's scale is ordinal.

    Returns
    -------
    numpy.ndarray
        A new answer per entry: on an ordinal scale, with probability 0.8, the point one
        step up or down (reflected at the ends); otherwise :func:`other_option`.
    """
    out = other_option(rng, current, k)
    near = ordinal & (rng.random(current.size) < 0.8)
    direction = np.where(rng.random(current.size) < 0.5, -1, 1)
    step = current + direction
    step = np.where((step < 0) | (step >= k), current - direction, step)
    out[near] = step[near]
    return out


@dataclass(frozen=True)
class Items:
    """One entry per (dataset, item): names, type, scale, gold, consensus point, effect u_i."""

    dataset: np.ndarray
    item_id: np.ndarray
    dataset_type: np.ndarray
    n_options: np.ndarray
    scale: np.ndarray
    objective: np.ndarray
    ordinal: np.ndarray
    gold: np.ndarray
    consensus: np.ndarray
    effect: np.ndarray


def draw_items(
    datasets: Sequence[SyntheticDataset],
    n_items: int | Mapping[str, int],
    item_sd: float,
    rng: np.random.Generator,
) -> Items:
    """Name the items and draw their gold option, consensus point and item effect.

    Parameters
    ----------
    datasets
        The synthetic datasets.
    n_items
        Items per dataset, or a mapping dataset name -> items (0 when not listed).
    item_sd
        Standard deviation of the item effect u_i.
    rng
        The generator of the whole table.

    Returns
    -------
    Items
        One entry per item; ``gold`` is -1 for subjective items.
    """
    names: list[tuple[str, str, str, int, str]] = []
    for ds in datasets:
        if ds.dataset_type not in ("objective", "subjective"):
            raise AnalysisError(
                f"dataset {ds.name!r}: dataset_type {ds.dataset_type!r} is not "
                "'objective' or 'subjective'."
            )
        n = n_items.get(ds.name, 0) if isinstance(n_items, Mapping) else int(n_items)
        width = len(str(max(n - 1, 0)))
        for j in range(n):
            names.append(
                (ds.name, f"{ds.name}-{j:0{width}d}", ds.dataset_type, ds.n_options, ds.scale)
            )
    if not names:
        raise AnalysisError("the synthetic study has no items (n_items is 0 everywhere).")
    ds_name, item_id, ds_type, n_opt, scale = (
        np.array(col, dtype=object) for col in zip(*names, strict=True)
    )
    k = n_opt.astype(np.int64)
    objective = ds_type == "objective"
    gold = np.where(objective, np.floor(rng.random(k.size) * k).astype(np.int64), -1)
    consensus = np.floor(rng.random(k.size) * k).astype(np.int64)
    effect = rng.normal(0.0, item_sd, k.size)
    return Items(
        ds_name, item_id, ds_type, k, scale, objective, scale == "ordinal", gold, consensus, effect
    )


def original_answers(
    items: Items, n_models: int, accuracy: float, m_eff: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Model index, item index and original answer a0 of every (model, item).

    Parameters
    ----------
    items
        The items (:func:`draw_items`).
    n_models
        Number of models.
    accuracy
        Probability that an objective original answer is gold (before the model effect).
    m_eff
        Logit shift per model.
    rng
        The generator of the whole table.

    Returns
    -------
    tuple of numpy.ndarray
        Model index, item index and a0 per (model, item), models outermost. a0 is gold with
        probability expit(logit(accuracy) + m_eff[m]) on objective items, else another
        option; on subjective items the consensus point moved by round(N(0, 0.6)), clipped.
    """
    n_it = items.item_id.size
    mi_m = np.repeat(np.arange(n_models), n_it)
    mi_i = np.tile(np.arange(n_it), n_models)
    k = items.n_options[mi_i]
    p_gold = expit(logit(np.clip(accuracy, 1e-6, 1 - 1e-6)) + m_eff[mi_m])
    right = rng.random(mi_m.size) < p_gold
    gold = items.gold[mi_i]
    a0_obj = np.where(right, gold, other_option(rng, np.maximum(gold, 0), k))
    step = np.rint(rng.normal(0.0, 0.6, mi_m.size)).astype(np.int64)
    a0_subj = np.clip(items.consensus[mi_i] + step, 0, k - 1)
    return mi_m, mi_i, np.where(items.objective[mi_i], a0_obj, a0_subj)


@dataclass(frozen=True)
class Rows:
    """The table's rows: each (model, item) times the layout original + categories x variants."""

    mi: np.ndarray  # row -> (model, item) index
    lay: np.ndarray  # row -> position in the layout
    m: np.ndarray
    i: np.ndarray
    ci: np.ndarray  # category index, -1 for the original
    category: np.ndarray
    variant_id: np.ndarray
    params: np.ndarray

    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.mi.size)

    @classmethod
    def lay_out(cls, mi_m: np.ndarray, mi_i: np.ndarray, cats: list[str], n_variants: int) -> Rows:
        """Repeat the layout of one (model, item) for every (model, item)."""
        cat = np.array(["original"] + [c for c in cats for _ in range(n_variants)], dtype=object)
        ci = np.array([-1] + [k for k in range(len(cats)) for _ in range(n_variants)])
        vid = np.array(
            ["original/0"] + [f"{c}/{v}" for c in cats for v in range(n_variants)], dtype=object
        )
        params = np.array(
            ['{"family": "original"}']
            + [json.dumps({"family": c, "index": v}) for c in cats for v in range(n_variants)],
            dtype=object,
        )
        per = cat.size
        r_mi = np.repeat(np.arange(mi_m.size), per)
        r_lay = np.tile(np.arange(per), mi_m.size)
        return cls(
            r_mi, r_lay, mi_m[r_mi], mi_i[r_mi], ci[r_lay], cat[r_lay], vid[r_lay], params[r_lay]
        )


def category_answers(
    items: Items,
    mi_i: np.ndarray,
    a0: np.ndarray,
    n_cats: int,
    category_shift: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """Per (model, item) x category: a0, or with ``category_shift`` a shifted category answer.

    Parameters
    ----------
    items
        The items.
    mi_i
        Item index per (model, item).
    a0
        Original answer per (model, item).
    n_cats
        Number of perturbation categories.
    category_shift
        Probability that a whole category's answer moves away from a0 (by :func:`drift`).
    rng
        The generator of the whole table.

    Returns
    -------
    numpy.ndarray
        Shape (model-item pairs, max(n_cats, 1)): the category answer of each.
    """
    n_cat = max(n_cats, 1)
    shift = rng.random((mi_i.size, n_cat)) < category_shift
    cat_answer = np.repeat(a0[:, None], n_cat, axis=1)
    cat_answer[shift] = drift(
        rng,
        cat_answer[shift],
        items.n_options[mi_i][:, None].repeat(n_cat, 1)[shift],
        items.ordinal[mi_i][:, None].repeat(n_cat, 1)[shift],
    )
    return cat_answer


def probabilities(
    k: np.ndarray, answer: np.ndarray, s: np.ndarray, with_probs: bool, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Option probabilities peaked on the answer (more so when s is high), and confidence.

    Parameters
    ----------
    k
        Number of options per row.
    answer
        Answer index per row.
    s
        The row's probability of repeating its category answer.
    with_probs
        Whether to draw them at all (without, every row gets None and NaN).
    rng
        The generator of the whole table.

    Returns
    -------
    tuple of numpy.ndarray
        ``option_probs`` (a list per row: softmax of N(0, 1) logits with 2 + 2 s added to the
        answer's) and ``confidence`` (the largest probability times U(0.7, 1)).
    """
    probs = np.full(k.size, None, dtype=object)
    conf = np.full(k.size, np.nan)
    if not with_probs:
        return probs, conf
    for n_opt in np.unique(k):
        rows = np.flatnonzero(k == n_opt)
        logits = rng.normal(0.0, 1.0, (rows.size, n_opt))
        logits[np.arange(rows.size), answer[rows]] += 2.0 + 2.0 * s[rows]
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        probs[rows] = p.tolist()
        conf[rows] = p.max(axis=1) * rng.uniform(0.7, 1.0, rows.size)
    return probs, conf
