"""Majority agreement of prompt variants (Kamal et al., eq. 1), flip rates, type x category table.

For a model and an item, the *prompt set* of a category c is the item's valid
variants in that category.  With n_i(y) the number of them answering y and
N_i = sum_y n_i(y), the agreement of the set is

    C_i = max_y n_i(y) / N_i                                    (Kamal et al., eq. 1)

Invalid rows (``valid == False``) are not variants of the set: they count
neither in n_i(y) nor in N_i, and are reported as ``n_invalid``.

A set with fewer than two valid answers has no agreement: with N_i = 1, C_i = 1
by construction whatever the model does (an ordinal scale's only option-order
variant, its reversal, or an item with one lexical substitution), so ``c_i`` is
NaN there and its row gets no ``agree`` flag (the GEE leaves it out and says
so).  Such sets are still measured by the flip rate against the original prompt.

Tie rule
--------
When several answers share the largest count the *majority* is

1. the original prompt's answer for the same (model, item), if it is one of the
   tied answers, otherwise
2. the smallest canonical option index among the tied answers.

The original prompt's answer is the majority of the item's ``original``
variants (normally exactly one; if several tie, the smallest index).  C_i does
not depend on the rule; the per-row ``agree`` flag and the majority do, and the
``tie`` column says where the rule was used.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analyses.prompt_sets import MIN_SET, PromptSets, prompt_sets
from analyses.table_input import REFERENCE, load, nullable_int
from robustness.core.errors import AnalysisError


def items_frame(ps: PromptSets) -> pd.DataFrame:
    """:func:`item_agreement` on prompt sets already built (used by the pipeline)."""
    n = ps.maj.n
    with np.errstate(invalid="ignore", divide="ignore"):
        c_i = np.where(n >= MIN_SET, ps.maj.top / np.maximum(n, 1), np.nan)
    keys = ps.keys
    return pd.DataFrame(
        {
            "model": keys["model"].to_numpy(),
            "dataset": keys["dataset"].to_numpy(),
            "dataset_type": keys["dataset_type"].to_numpy(),
            "item_id": keys["item_id"].to_numpy(),
            "category": keys["category"].to_numpy(),
            "n_valid": n,
            "c_i": c_i,
            "majority": nullable_int(ps.maj.majority, n > 0),
            "tie": ps.maj.n_modes > 1,
            "n_modes": ps.maj.n_modes,
            "n_invalid": ps.n_invalid,
            "original_answer": nullable_int(ps.original, ps.original >= 0),
        }
    )


def item_agreement(df: pd.DataFrame) -> pd.DataFrame:
    """Agreement C_i of every prompt set (Kamal et al., eq. 1).

    Parameters
    ----------
    df
        Long table with at least ``model, dataset, dataset_type, item_id,
        category, variant_id, answer, valid``.

    Returns
    -------
    pandas.DataFrame
        One row per prompt set (model, dataset, item, category), ``original`` included:
        ``model, dataset, dataset_type, item_id, category``; ``n_valid`` (N_i, the valid
        variants); ``c_i`` (the agreement, NaN when N_i < 2); ``majority`` (the modal
        answer under the module's tie rule, missing when N_i = 0); ``tie`` (True when
        more than one answer is modal); ``n_modes`` (how many are); ``n_invalid`` (rows
        left out as invalid); ``original_answer`` (the answer under the original
        prompt, missing when it is invalid).

    Notes
    -----
    With n_i(y) the number of valid variants of set i answering y and N_i = sum_y n_i(y),

        C_i = max_y n_i(y) / N_i                           (Kamal et al. 2026, eq. 1)

    Invalid rows count in neither n_i(y) nor N_i.  C_i is reported only for N_i >= 2
    (with one answer it is 1 whatever the model does); C_i does not depend on the tie
    rule, ``majority`` does.

    References
    ----------
    Kamal et al. (2026), eq. 1.

    Examples
    --------
    >>> import pandas as pd
    >>> from analyses import item_agreement
    >>> t = pd.DataFrame({"model": "m", "dataset": "d", "dataset_type": "objective",
    ...     "item_id": "q1", "category": ["original"] + ["paraphrase"] * 4,
    ...     "variant_id": ["original/0", "p/0", "p/1", "p/2", "p/3"],
    ...     "answer": [2, 1, 2, 1, 2], "valid": True})
    >>> r = item_agreement(t).set_index("category").loc["paraphrase"]
    >>> float(r["c_i"]), int(r["majority"]), bool(r["tie"])
    (0.5, 2, True)

    By hand: the largest answer count over the number of valid variants.

    >>> p = t[t["category"] == "paraphrase"]["answer"]
    >>> float(p.value_counts().max() / len(p))
    0.5
    """
    return items_frame(prompt_sets(load(df)))


def agreement_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The table's rows with their set's ``majority`` and the per-row ``agree`` flag.

    Parameters
    ----------
    df
        Long table with at least ``model, dataset, dataset_type, item_id,
        category, variant_id, answer, valid``.

    Returns
    -------
    pandas.DataFrame
        ``df``'s rows in order (index reset), every column kept, plus ``majority`` (the
        modal answer of the row's prompt set under the module's tie rule; missing when
        the set has no valid answer) and ``agree`` (nullable boolean: True when the
        row's answer equals ``majority``, False otherwise, missing for invalid rows and
        for the only valid row of a set).

    Notes
    -----
    For row j of prompt set i (same model, dataset, item and category) with valid
    answer y_j and majority m_i = argmax_y n_i(y) (ties: the original prompt's answer,
    else the smallest index), agree_j = 1[y_j = m_i].  The mean of agree_j over the
    valid rows of a set is C_i (Kamal et al. 2026, eq. 1); the flag is the response of
    the paper's GEE (Table 3).

    References
    ----------
    Kamal et al. (2026), eq. 1 and Table 3.

    Examples
    --------
    >>> import pandas as pd
    >>> from analyses import agreement_rows
    >>> t = pd.DataFrame({"model": "m", "dataset": "d", "dataset_type": "subjective",
    ...     "item_id": "s1", "category": "framing", "variant_id": ["f/0", "f/1", "f/2"],
    ...     "answer": [3, 3, None], "valid": [True, True, False]})
    >>> agreement_rows(t)["agree"].tolist()
    [True, True, <NA>]

    The mean flag of a set is its C_i (here a 2 : 1 split, C_i = 2/3, by hand):

    >>> t2 = t.assign(answer=[3, 1, 3], valid=True)
    >>> rows = agreement_rows(t2)
    >>> round(float(rows["agree"].astype(float).mean()), 4), round(2 / 3, 4)
    (0.6667, 0.6667)
    """
    t = load(df)
    ps = prompt_sets(t)
    out = df.reset_index(drop=True).copy()
    maj = ps.maj.majority[ps.group]
    out["majority"] = nullable_int(maj, maj >= 0)
    flags = ps.agree
    agree = pd.array(flags == 1.0, dtype="boolean")
    agree[np.isnan(flags)] = pd.NA
    out["agree"] = agree
    return out


def flip_rate(df: pd.DataFrame) -> pd.DataFrame:
    """Share of a category's valid variants whose answer differs from the original prompt's.

    Parameters
    ----------
    df
        Long table with at least ``model, dataset, dataset_type, item_id,
        category, variant_id, answer, valid``; the ``original`` rows are the reference.

    Returns
    -------
    pandas.DataFrame
        One row per (model, dataset, item, perturbation category), ``original`` left
        out: ``model, dataset, dataset_type, item_id, category``; ``n_valid`` (valid
        variants); ``n_flipped`` (valid variants answering other than the original
        prompt); ``flip_rate`` (n_flipped / n_valid; NaN when the original answer is
        invalid or the set has no valid variant); ``original_answer``.

    Notes
    -----
    flip rate of set i = (1 / N_i) sum_j 1[y_j != y_orig], over its N_i valid variants,
    with y_orig the answer under the unperturbed prompt.  Unlike C_i (Kamal et al. 2026,
    eq. 1) it is defined for a set of one variant.

    References
    ----------
    Kamal et al. (2026), eq. 1 (the agreement it complements; the original prompt as the
    reference is this toolkit's choice).

    Examples
    --------
    >>> import pandas as pd
    >>> from analyses import flip_rate
    >>> t = pd.DataFrame({"model": "m", "dataset": "d", "dataset_type": "objective",
    ...     "item_id": "q1", "category": ["original"] + ["formatting"] * 4,
    ...     "variant_id": ["o/0", "f/0", "f/1", "f/2", "f/3"],
    ...     "answer": [0, 0, 1, 1, 0], "valid": True})
    >>> float(flip_rate(t)["flip_rate"].iloc[0])
    0.5

    By hand: two of the four formatting answers differ from the original answer 0.

    >>> float((t["answer"].iloc[1:] != t["answer"].iloc[0]).mean())
    0.5
    """
    return flips(prompt_sets(load(df)))


def flips(ps: PromptSets) -> pd.DataFrame:
    """:func:`flip_rate` on prompt sets already built (used by the pipeline)."""
    G = len(ps.keys)
    orig_row = ps.original[ps.group]
    flipped = ps.valid & (orig_row >= 0) & (ps.answer != orig_row)
    n_flip = np.bincount(ps.group[flipped], minlength=G)
    n = ps.maj.n
    known = (ps.original >= 0) & (n > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(known, n_flip / np.maximum(n, 1), np.nan)
    keys = ps.keys
    out = pd.DataFrame(
        {
            "model": keys["model"].to_numpy(),
            "dataset": keys["dataset"].to_numpy(),
            "dataset_type": keys["dataset_type"].to_numpy(),
            "item_id": keys["item_id"].to_numpy(),
            "category": keys["category"].to_numpy(),
            "n_valid": n,
            "n_flipped": n_flip.astype(np.int64),
            "flip_rate": rate,
            "original_answer": nullable_int(ps.original, ps.original >= 0),
        }
    )
    return out[out["category"] != REFERENCE].reset_index(drop=True)


def summarize_agreement(items: pd.DataFrame, by_model: bool = False) -> pd.DataFrame:
    """Mean C_i by dataset type x category from :func:`item_agreement` output (Table 2).

    See :func:`agreement_table`, which takes the long table itself.

    Parameters
    ----------
    items
        One row per prompt set: ``dataset_type, category, c_i`` (and ``model`` when
        ``by_model``), as :func:`item_agreement` returns it.
    by_model
        One block of rows per model instead of pooling the models.

    Returns
    -------
    pandas.DataFrame
        ``[model,] category, objective, subjective, gap, n_objective, n_subjective,
        sd_objective, sd_subjective``: per perturbation category (``original`` left out;
        a last row ``all`` pools the categories) the mean C_i of objective and of
        subjective prompt sets, ``gap`` = objective - subjective, the numbers of prompt
        sets with a defined C_i, and the standard deviations (ddof 1).  A type without
        sets gives NaN means and count 0.

    Notes
    -----
    mean C_i of cell (type, c) = (1 / |S|) sum_{i in S} C_i over the set S of prompt
    sets of that type and category with a defined C_i (Kamal et al. 2026, eq. 1,
    averaged as in their Table 2); every model's set of an item counts once.

    References
    ----------
    Kamal et al. (2026), eq. 1 and Table 2.

    Examples
    --------
    >>> import pandas as pd
    >>> from analyses import summarize_agreement
    >>> items = pd.DataFrame({"dataset_type": ["objective", "objective", "subjective"],
    ...     "category": "paraphrase", "c_i": [1.0, 0.5, 0.6]})
    >>> r = summarize_agreement(items).set_index("category").loc["paraphrase"]
    >>> float(r["objective"]), float(r["subjective"]), round(float(r["gap"]), 4)
    (0.75, 0.6, 0.15)
    >>> (1.0 + 0.5) / 2, round((1.0 + 0.5) / 2 - 0.6, 4)        # by hand
    (0.75, 0.15)
    """
    need = {"dataset_type", "category", "c_i"} | ({"model"} if by_model else set())
    miss = sorted(need - set(items.columns))
    if miss:
        raise AnalysisError(f"agreement items lack column(s) {', '.join(map(repr, miss))}.")
    x = items[(items["category"] != REFERENCE) & items["c_i"].notna()]
    lead = ["model"] if by_model else []
    frames = [x, x.assign(category="all")]
    pooled = pd.concat(frames, ignore_index=True)
    stats = (
        pooled.groupby([*lead, "category", "dataset_type"], sort=True)["c_i"]
        .agg(["mean", "std", "count"])
        .unstack("dataset_type")
    )
    out = pd.DataFrame(index=stats.index)
    for dtype in ("objective", "subjective"):
        for stat, name in (("mean", ""), ("std", "sd_"), ("count", "n_")):
            col = (stat, dtype)
            out[f"{name}{dtype}"] = stats[col] if col in stats.columns else np.nan
    out["gap"] = out["objective"] - out["subjective"]
    out = out.reset_index()
    for c in ("n_objective", "n_subjective"):
        out[c] = out[c].fillna(0).astype(np.int64)
    # 'all' last within each model.
    out["_last"] = out["category"] == "all"
    out = out.sort_values([*lead, "_last", "category"]).drop(columns="_last")
    cols = [
        *lead,
        "category",
        "objective",
        "subjective",
        "gap",
        "n_objective",
        "n_subjective",
        "sd_objective",
        "sd_subjective",
    ]
    return out[cols].reset_index(drop=True)


def agreement_table(df: pd.DataFrame, by_model: bool = False) -> pd.DataFrame:
    """Mean agreement by dataset type x category with the objective - subjective gap.

    The paper's Table 2 (Kamal et al.): for each perturbation category (the
    reference ``original`` is left out) the mean of C_i (eq. 1) over the
    (model, item) prompt sets of objective and of subjective items, their
    difference ``gap`` = objective - subjective, the numbers of sets and the
    standard deviations; a last row ``all`` pools every perturbation category.
    Prompt sets with no valid variant are left out.

    Parameters
    ----------
    df
        Long table with at least ``model, dataset, dataset_type, item_id,
        category, variant_id, answer, valid``.
    by_model
        One block of rows per model instead of pooling the models.

    Returns
    -------
    pandas.DataFrame
        As :func:`summarize_agreement`: ``[model,] category, objective, subjective,
        gap, n_objective, n_subjective, sd_objective, sd_subjective``.

    Notes
    -----
    C_i = max_y n_i(y) / N_i per prompt set (Kamal et al. 2026, eq. 1); a cell's value
    is the mean of C_i over its prompt sets, gap = mean_objective - mean_subjective.

    References
    ----------
    Kamal et al. (2026), eq. 1 and Table 2.

    Examples
    --------
    >>> from analyses import agreement_table
    >>> from analyses.synthetic import synthetic_table
    >>> tab = agreement_table(synthetic_table(models=2, n_items=10, seed=3))
    >>> list(tab.columns[:4])
    ['category', 'objective', 'subjective', 'gap']
    >>> bool((tab["gap"] > 0).all())   # the default synthetic study is less stable on opinions
    True

    The same numbers by hand from the prompt sets:

    >>> from analyses import item_agreement
    >>> t = synthetic_table(models=2, n_items=10, seed=3)
    >>> sets = item_agreement(t).query("category == 'paraphrase' and c_i.notna()")
    >>> hand = sets.groupby("dataset_type")["c_i"].mean()
    >>> row = tab.set_index("category").loc["paraphrase"]
    >>> bool(abs(row["objective"] - hand["objective"]) < 1e-12
    ...      and abs(row["subjective"] - hand["subjective"]) < 1e-12)
    True
    """
    return summarize_agreement(item_agreement(df), by_model=by_model)
