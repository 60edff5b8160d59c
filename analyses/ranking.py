"""Does the model ranking survive the prompt?  Swaps, Kendall's W, and spread as error bar.

Multi-prompt evaluation (Mizrahi et al. 2024) shows that a ranking of models under one
prompt often changes under another.  With two or more models in a table:

scores (:func:`model_ranks`)
    Per dataset type, category and variant (a ``variant_id`` such as ``option_order/3``,
    the same prompt change across items) each model's score: on objective items its
    *accuracy* (an invalid answer counts as wrong), on subjective items its *agreement
    with its own original answer* (the share of items whose answer under the variant equals
    the model's answer under the original prompt; an invalid variant answer counts as
    disagreeing, an item whose original answer is invalid is left out).  Models are ranked
    by score, 1 the best, ties sharing the average rank.
swaps (:func:`ranking_swaps`)
    For every variant and every pair of models, the sign of their score difference is
    compared with the sign under the reference: the original prompt for objective items.
    On subjective items every model agrees with its own original answer under the original
    prompt, so the original ranks nothing; the reference there is the pair's order by the
    score averaged over the category's variants (a deviation from "the original prompt's
    order", which does not exist for this score).  ``swap_rate`` is the share of
    (variant, pair) comparisons whose order is reversed; ``change_rate`` also counts a tie
    against a strict order (either way) as a change.
concordance (:func:`kendall_w`, :func:`ranking_concordance`, in :mod:`analyses.concordance`)
    Kendall's coefficient of concordance W of the rankings the category's variants give the
    models (variants are the judges, models the objects), corrected for ties, with a
    permutation p-value (each variant's ranks shuffled independently).
spread as the error bar (:func:`spread_resolution`)
    FormatSpread (Sclar et al. 2024): the accuracy spread over plausible formats (the
    original prompt and the formatting family's variants) is the resolution limit of any
    comparison made with a single prompt.  Per model: accuracy under the original prompt
    and the spread; per pair of models: ``unresolved`` when the difference of their original
    accuracies is smaller than the larger of their two spreads (smaller than either one's).

References
----------
Mizrahi, M., Kaplan, G., Malkin, D., Dror, R., Shahaf, D. & Stanovsky, G. (2024). State of
What Art? A call for multi-prompt LLM evaluation. TACL 12, 933-949.
Kendall, M. G. & Babington Smith, B. (1939). The problem of m rankings. Annals of
Mathematical Statistics 10(3), 275-287.
Sclar, M., Choi, Y., Tsvetkov, Y. & Suhr, A. (2024). Quantifying language models'
sensitivity to spurious features in prompt design. ICLR 2024.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from analyses.accuracy import correct_outcome
from analyses.concordance import kendall_w, ranking_concordance
from analyses.table_input import REFERENCE, load
from robustness.core.table.checked import mark

__all__ = [
    "kendall_w",
    "model_ranks",
    "ranking_concordance",
    "ranking_swaps",
    "ranking_tables",
    "spread_resolution",
]

RANK_COLUMNS = ["dataset_type", "category", "variant_id", "model", "score", "n_items", "rank"]
SWAP_COLUMNS = [
    "dataset_type",
    "category",
    "reference",
    "n_models",
    "n_variants",
    "n_comparisons",
    "n_swapped",
    "n_changed",
    "swap_rate",
    "change_rate",
]
RESOLUTION_COLUMNS = ["model", "accuracy_original", "n_formats", "acc_min", "acc_max", "spread"]
PAIR_COLUMNS = [
    "model_a",
    "model_b",
    "accuracy_a",
    "accuracy_b",
    "difference",
    "spread_a",
    "spread_b",
    "unresolved",
]
_EPS = 1e-12


def _scores(t: pd.DataFrame) -> pd.DataFrame:
    """One score per row (accuracy or agreement with the original answer), NaN if unscored."""
    obj = (t["dataset_type"] == "objective").to_numpy()
    score = np.full(len(t), np.nan)
    if obj.any() and ({"gold", "correct"} & set(t.columns)):
        y, _ = correct_outcome(t, "wrong")
        score[obj] = y[obj]
    sub = ~obj
    if sub.any():
        valid = t["valid"].to_numpy(dtype=bool, na_value=False)
        ans = t["answer"].to_numpy(dtype=float, na_value=np.nan)
        ref = t["category"].to_numpy() == REFERENCE
        keys = ["model", "dataset", "item_id"]
        orig = (
            t.loc[ref & valid, keys]
            .assign(_orig=ans[ref & valid])
            .drop_duplicates(keys)  # one original prompt per item
        )
        o = t[keys].merge(orig, on=keys, how="left")["_orig"].to_numpy(float)
        same = np.where(valid, (ans == o).astype(float), 0.0)
        same[np.isnan(o)] = np.nan
        score[sub] = same[sub]
    return t[["model", "dataset_type", "category", "variant_id", "dataset", "item_id"]].assign(
        _score=score
    )


def model_ranks(df: pd.DataFrame) -> pd.DataFrame:
    """Each model's score and rank per dataset type, category and variant.

    Parameters
    ----------
    df
        Long table (objective rows need ``gold`` or ``correct``).

    Returns
    -------
    pandas.DataFrame
        One row per dataset type, category, variant and model: ``dataset_type, category,
        variant_id, model``; ``score`` (accuracy on objective items, agreement with the
        model's own original answer on subjective items; module docstring); ``n_items``
        (items scored); ``rank`` (1 the highest score among the models of that variant,
        ties share the average rank).

    Notes
    -----
    objective: score_mv = (1 / n) sum_i 1[y_imv = gold_i] (an invalid answer is wrong);
    subjective: score_mv = (1 / n) sum_i 1[y_imv = y_im,orig] over the items whose original
    answer is valid (an invalid variant answer disagrees).  rank_mv = average rank of
    -score_mv among the models (Mizrahi et al. 2024 compare such per-prompt rankings).

    References
    ----------
    Mizrahi et al. (2024): see the module.

    Examples
    --------
    >>> import pandas as pd
    >>> from analyses import model_ranks
    >>> t = pd.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "dataset": "d",
    ...     "dataset_type": "objective", "item_id": ["q1", "q2", "q1", "q2"] * 2,
    ...     "category": ["original"] * 2 + ["formatting"] * 2 + ["original"] * 2
    ...                 + ["formatting"] * 2,
    ...     "variant_id": ["o/0", "o/0", "f/0", "f/0"] * 2,
    ...     "answer": [1, 2, 1, 0, 1, 0, 1, 2], "gold": [1, 2, 1, 2, 1, 2, 1, 2],
    ...     "valid": True})
    >>> r = model_ranks(t).query("category == 'formatting'")
    >>> r[["model", "score", "rank"]].values.tolist()   # a: 1 of 2 right, b: 2 of 2
    [['a', 0.5, 2.0], ['b', 1.0, 1.0]]
    """
    t = load(df, optional=("gold", "correct"))
    s = _scores(t)
    s = s[s["_score"].notna()]
    g = s.groupby(["dataset_type", "category", "variant_id", "model"], sort=True)
    out = g.agg(score=("_score", "mean"), n_items=("_score", "size")).reset_index()
    out["rank"] = out.groupby(["dataset_type", "category", "variant_id"])["score"].rank(
        ascending=False, method="average"
    )
    return out[RANK_COLUMNS]


def _sign(x: np.ndarray) -> np.ndarray:
    return np.where(np.abs(x) <= _EPS, 0, np.sign(x)).astype(int)


def ranking_swaps(ranks: pd.DataFrame) -> pd.DataFrame:
    """Share of (variant, model pair) comparisons whose order differs from the reference.

    Parameters
    ----------
    ranks
        :func:`model_ranks` output.

    Returns
    -------
    pandas.DataFrame
        ``dataset_type, category, reference, n_models, n_variants, n_comparisons,
        n_swapped, n_changed, swap_rate, change_rate``; one row per dataset type and
        category, and an ``all`` row per type pooling its categories' comparisons.

    Notes
    -----
    For models a, b and variant v: s_v = sign(score_a,v - score_b,v), s_ref the same under
    the reference.  swapped: s_v s_ref < 0; changed: s_v != s_ref.  swap_rate =
    n_swapped / n_comparisons over the variants and pairs with both scores defined.

    References
    ----------
    Mizrahi et al. (2024): see the module.

    Examples
    --------
    Under the original prompt a beats b; one of two formatting variants reverses them:

    >>> import pandas as pd
    >>> from analyses.ranking import ranking_swaps
    >>> ranks = pd.DataFrame({"dataset_type": "objective",
    ...     "category": ["original"] * 2 + ["formatting"] * 4,
    ...     "variant_id": ["o/0", "o/0", "f/0", "f/0", "f/1", "f/1"],
    ...     "model": ["a", "b"] * 3, "score": [0.9, 0.5, 0.8, 0.6, 0.4, 0.7]})
    >>> r = ranking_swaps(ranks).set_index("category").loc["formatting"]
    >>> int(r["n_comparisons"]), int(r["n_swapped"]), float(r["swap_rate"])
    (2, 1, 0.5)
    """
    rows = []
    for dtype, sub in ranks.groupby("dataset_type", sort=True):
        wide = sub.pivot_table(
            index=["category", "variant_id"], columns="model", values="score", aggfunc="first"
        )
        models = list(wide.columns)
        total = dict(n_comparisons=0, n_swapped=0, n_changed=0)
        objective = dtype == "objective"
        if objective:
            if REFERENCE not in wide.index.get_level_values(0):
                continue
            ref_all = wide.loc[REFERENCE].mean(axis=0)
        for cat in [c for c in dict.fromkeys(wide.index.get_level_values(0)) if c != REFERENCE]:
            block = wide.loc[cat]
            ref = ref_all if objective else block.mean(axis=0)
            n_cmp = n_swap = n_change = 0
            for a, b in combinations(models, 2):
                d_ref = ref[a] - ref[b]
                d = (block[a] - block[b]).to_numpy(float)
                ok = ~np.isnan(d) & np.isfinite(d_ref)
                if not ok.any():
                    continue
                sv, sr = _sign(d[ok]), int(_sign(np.array([d_ref]))[0])
                n_cmp += int(ok.sum())
                n_swap += int((sv * sr < 0).sum())
                n_change += int((sv != sr).sum())
            rows.append(
                {
                    "dataset_type": dtype,
                    "category": cat,
                    "reference": "original" if objective else "mean over variants",
                    "n_models": len(models),
                    "n_variants": len(block),
                    "n_comparisons": n_cmp,
                    "n_swapped": n_swap,
                    "n_changed": n_change,
                }
            )
            for k, v in (("n_comparisons", n_cmp), ("n_swapped", n_swap), ("n_changed", n_change)):
                total[k] += v
        n_var = int(sum(1 for c, _ in wide.index if c != REFERENCE))
        rows.append(
            {
                "dataset_type": dtype,
                "category": "all",
                "reference": "original" if objective else "mean over variants",
                "n_models": len(models),
                "n_variants": n_var,
                **total,
            }
        )
    out = pd.DataFrame(rows, columns=SWAP_COLUMNS)
    n = out["n_comparisons"].where(out["n_comparisons"] > 0)
    out["swap_rate"] = out["n_swapped"] / n
    out["change_rate"] = out["n_changed"] / n
    return out


def spread_resolution(
    df: pd.DataFrame, format_table: pd.DataFrame | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Accuracy spread over formats as the error bar of single-prompt model comparisons.

    Parameters
    ----------
    df
        Long table; its objective rows of the ``original`` and ``formatting`` categories
        are used (an invalid answer counts as wrong).
    format_table
        :func:`analyses.format_accuracy` of those rows by model and ``variant_id``, when
        the caller has it already (``analyze`` does); computed here when None.

    Returns
    -------
    (per_model, pairs)
        ``model, accuracy_original, n_formats, acc_min, acc_max, spread`` and
        ``model_a, model_b, accuracy_a, accuracy_b, difference, spread_a, spread_b,
        unresolved``.  Empty without objective items with a gold answer.

    Notes
    -----
    spread = max_f acc(f) - min_f acc(f) over the formats f (the original prompt and each
    formatting variant; Sclar et al. 2024, section 3); difference = acc_a - acc_b under the
    original prompt; unresolved = |difference| < max(spread_a, spread_b).  A model with one
    format has no spread (NaN) and its pairs are not flagged.

    References
    ----------
    Sclar et al. (2024): see the module.

    Examples
    --------
    Two items, the original prompt and two formats; by hand model a's accuracies are
    1, 1/2, 0 (spread 1) and b's 1/2, 1/2, 1/2 (spread 0):

    >>> import pandas as pd
    >>> from analyses import spread_resolution
    >>> t = pd.DataFrame({"model": ["a"] * 6 + ["b"] * 6, "dataset": "d",
    ...     "dataset_type": "objective", "item_id": ["q1", "q2"] * 6,
    ...     "category": (["original"] * 2 + ["formatting"] * 4) * 2,
    ...     "variant_id": ["o/0", "o/0", "f/0", "f/0", "f/1", "f/1"] * 2,
    ...     "answer": [1, 2, 1, 0, 0, 0, 1, 0, 0, 2, 1, 0], "gold": [1, 2] * 6, "valid": True})
    >>> per, pairs = spread_resolution(t)
    >>> per[["model", "accuracy_original", "spread"]].values.tolist()
    [['a', 1.0, 1.0], ['b', 0.5, 0.0]]
    >>> pairs[["difference", "unresolved"]].values.tolist()     # |0.5| < max(1.0, 0.0)
    [[0.5, True]]
    """
    from analyses.spread import format_accuracy

    t = load(df, optional=("gold", "correct"))
    keep = (t["dataset_type"] == "objective") & t["category"].isin([REFERENCE, "formatting"])
    obj = mark(t[keep].reset_index(drop=True))  # rows of a checked table: not checked again
    empty = pd.DataFrame(columns=RESOLUTION_COLUMNS), pd.DataFrame(columns=PAIR_COLUMNS)
    if obj.empty or not ({"gold", "correct"} & set(obj.columns)):
        return empty
    acc = (
        format_accuracy(obj, by=("model",), format_col="variant_id")
        if format_table is None
        else format_table
    )
    orig_ids = set(obj.loc[obj["category"] == REFERENCE, "variant_id"])
    rows = []
    for model, g in acc.groupby("model", sort=True):
        o = g[g["format"].isin(orig_ids)]
        a = g["accuracy"].to_numpy(float)
        rows.append(
            {
                "model": model,
                "accuracy_original": float(np.average(o["accuracy"], weights=o["n"]))
                if len(o)
                else np.nan,
                "n_formats": len(g),
                "acc_min": a.min(),
                "acc_max": a.max(),
                "spread": a.max() - a.min() if len(g) > 1 else np.nan,
            }
        )
    per = pd.DataFrame(rows, columns=RESOLUTION_COLUMNS)
    pairs = []
    for x, y in combinations(per.itertuples(index=False), 2):
        diff = x.accuracy_original - y.accuracy_original
        limit = np.nanmax([x.spread, y.spread]) if np.isfinite([x.spread, y.spread]).any() else None
        pairs.append(
            {
                "model_a": x.model,
                "model_b": y.model,
                "accuracy_a": x.accuracy_original,
                "accuracy_b": y.accuracy_original,
                "difference": diff,
                "spread_a": x.spread,
                "spread_b": y.spread,
                "unresolved": bool(limit is not None and abs(diff) < limit),
            }
        )
    return per, pd.DataFrame(pairs, columns=PAIR_COLUMNS)


def ranking_tables(
    df: pd.DataFrame,
    n_perm: int = 2000,
    seed: int = 0,
    format_table: pd.DataFrame | None = None,
) -> dict[str, pd.DataFrame]:
    """Every table of model-ranking stability, by file stem (for :func:`analyses.analyze`).

    Parameters
    ----------
    df
        Long table with two or more models (objective rows need ``gold`` or ``correct``).
    n_perm, seed
        Permutations of Kendall's W p-value and their seed (:func:`ranking_concordance`).
    format_table
        Passed to :func:`spread_resolution`.

    Returns
    -------
    dict
        ``ranking_ranks`` (:func:`model_ranks`), ``ranking_swaps`` (:func:`ranking_swaps`),
        ``ranking_concordance`` (:func:`ranking_concordance`), ``spread_resolution`` and
        ``spread_pairs`` (:func:`spread_resolution`); each DataFrame's columns are listed
        in its function.

    Notes
    -----
    Scores and ranks per variant (module docstring); swap_rate = n_swapped /
    n_comparisons of signed score differences against the reference; Kendall's W =
    12 S / (m^2 (n^3 - n) - m sum T_j); spread = max_f acc(f) - min_f acc(f).

    References
    ----------
    Mizrahi et al. (2024); Kendall & Babington Smith (1939); Sclar et al. (2024): see the
    module.

    Examples
    --------
    >>> from analyses import model_ranks, ranking_tables
    >>> from analyses.synthetic import synthetic_table
    >>> t = synthetic_table(models=2, n_items=4, n_variants=3, seed=1)
    >>> tables = ranking_tables(t, n_perm=50)
    >>> sorted(tables)
    ['ranking_concordance', 'ranking_ranks', 'ranking_swaps', 'spread_pairs', 'spread_resolution']
    >>> tables["ranking_ranks"].equals(model_ranks(t))
    True
    """
    from analyses.budgeted import withheld_reason

    ranks = model_ranks(df)
    per, pairs = spread_resolution(df, format_table)
    concordance = ranking_concordance(ranks, n_perm=n_perm, seed=seed)
    sparse = withheld_reason(df)  # Kendall's W across variants needs the full grid
    if sparse is not None:
        concordance = concordance.assign(
            w=np.nan, friedman_chi2=np.nan, p_perm=np.nan, reason=f"withheld: {sparse}"
        )
    return {
        "ranking_ranks": ranks,
        "ranking_swaps": ranking_swaps(ranks),
        "ranking_concordance": concordance,
        "spread_resolution": per,
        "spread_pairs": pairs,
    }
