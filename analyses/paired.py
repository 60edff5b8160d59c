"""Paired tests of binary outcomes: McNemar between models, plain and clustered by item.

Both tests come in two versions, computed here with numpy: the textbook one,
which treats every subject (Cochran) or every pair of prompts (McNemar) as
independent, and a cluster-robust one across items, because the variants of
one item are not independent (they share the item's difficulty), so the
textbook p-values are too small when an item contributes several pairs.

The cluster-robust versions are score tests with the variance estimated
under the null from cluster totals (a generalised score test, Boos 1992): for
McNemar the statistic of Durkalski et al. (2003),

    X^2_c = (sum_k (b_k - c_k))^2 / sum_k (b_k - c_k)^2      ~ chi-square(1),

with b_k (c_k) the pairs of item k where only model A (only model B) succeeds.
It is chosen over Obuchowski's (1998) because it needs no estimate of the
difference under the alternative and equals McNemar's uncorrected statistic
(b - c)^2 / (b + c) exactly when every item holds one pair.  Cochran's Q gets
the same construction for k categories (:func:`analyses.cochran.cochran_q`), which is
Durkalski's statistic for k = 2.

Calibration under the null with item-level effects shared by an item's
prompts (``bench/paired_calibration.py``, 1,000 replicates, 5 % level):
McNemar on 30 (100) items x 8 prompts rejected 10.8 % (12.7 %) of the time,
the clustered version 5.8 % (5.4 %); Cochran's Q pooled over 3 models of 30
(100) items, 4 categories, rejected 12.2 % (14.2 %), the clustered version
4.6 % (5.7 %); with one subject per item and no item effect both hold 4-5 %.

A test on fewer than ``min_items`` items (default 10) is not computed: its
statistics are NaN and ``note`` says why, with the count.  Library warnings
are caught and become the ``note``, never a line on stderr.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from analyses.accuracy import check_invalid, correct_outcome
from analyses.prompt_sets import MIN_SET, PromptSets, prompt_sets
from analyses.table_input import codes, load
from robustness.core.errors import StudyError, TableError

__all__ = ["MIN_ITEMS", "mcnemar", "thin_note"]

#: Fewest items (clusters) a test needs before it is computed.
MIN_ITEMS = 10

MCNEMAR_COLUMNS = [
    "model_a",
    "model_b",
    "outcome",
    "n_pairs",
    "n_items",
    "both",
    "only_a",
    "only_b",
    "neither",
    "difference",
    "chi2",
    "dof",
    "p_value",
    "p_exact",
    "chi2_clustered",
    "p_value_clustered",
    "note",
]


def thin_note(n_items: int, min_items: int) -> str:
    """The note of a test not computed for want of items (plumbing; no statistic).

    Parameters
    ----------
    n_items, min_items
        The items the test has, and the fewest it needs.

    Returns
    -------
    str
        The sentence written in the ``note`` column.
    """
    return f"not computed: {n_items} item(s), fewer than min_items = {min_items}"


def mcnemar(
    df: pd.DataFrame,
    model_a: str | None = None,
    model_b: str | None = None,
    outcome: str = "correct",
    by: Sequence[str] = (),
    invalid: str = "wrong",
    min_items: int = MIN_ITEMS,
) -> pd.DataFrame:
    """McNemar's test between models on the same prompts, and its clustered version.

    Parameters
    ----------
    df
        Long table.
    model_a, model_b
        The two models; when both are None, every pair of models in the table.
    outcome
        ``'correct'`` (answer equals gold) or ``'agree'`` (answer equals its
        prompt set's majority).
    by
        Grouping columns (``category``, ``dataset``, ``dataset_type``, ...).
    invalid
        ``'wrong'`` (default): an invalid answer scores 0, as in :func:`analyses.accuracy`;
        ``'drop'``: a prompt is paired only when both answers are valid.
    min_items
        Fewest items with a pair for the test to be computed.

    Returns
    -------
    pandas.DataFrame
        ``by`` columns, ``model_a``, ``model_b``, ``outcome``, ``n_pairs``
        (prompts scored for both), ``n_items`` (items they come from), ``both``,
        ``only_a``, ``only_b``, ``neither``, ``difference`` ((only_a - only_b) /
        n_pairs, the difference in success rates), ``chi2`` (continuity-corrected),
        ``dof``, ``p_value``, ``p_exact`` (binomial), ``chi2_clustered`` and
        ``p_value_clustered`` (Durkalski et al. 2003, clusters = items), ``note``.

    Notes
    -----
    Prompts are matched on (dataset, item_id, category, variant_id).  With b
    (c) the prompts where only A (only B) succeeds,

        chi2 = (|b - c| - 1)^2 / (b + c)  ~  chi-square(1)          (McNemar 1947)
        p_exact = min(1, 2 P(Binomial(b + c, 1/2) <= min(b, c)))
        chi2_clustered = (sum_k (b_k - c_k))^2 / sum_k (b_k - c_k)^2 (Durkalski 2003)

    over items k.  With no discordant pair chi2 = 0 and p = 1.  All pairs of
    models are computed together with matrix operations: 150 models (11,175
    pairs, 75,000 rows) took 1.2 s here, against about 500 s one pair at a time
    (``bench/paired_scale.py``).

    References
    ----------
    McNemar, Q. (1947). Note on the sampling error of the difference between
    correlated proportions or percentages. Psychometrika 12, 153-157.
    Durkalski, V. L., Palesch, Y. Y., Lipsitz, S. R., Rust, P. F. (2003). Analysis of
    clustered matched-pair data. Statistics in Medicine 22, 2417-2428.

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
    >>> from analyses import mcnemar
    >>> from analyses.synthetic import synthetic_table
    >>> t = synthetic_table(models=2, n_items=20, seed=8)
    >>> r = mcnemar(t, "model_1", "model_2").iloc[0]
    >>> tab = [[r["both"], r["only_a"]], [r["only_b"], r["neither"]]]
    >>> ref = sm_mcnemar(tab, exact=False, correction=True)
    >>> bool(np.isclose(r["chi2"], ref.statistic) and np.isclose(r["p_value"], ref.pvalue))
    True
    >>> bool(np.isclose(r["p_exact"], sm_mcnemar(tab, exact=True).pvalue))
    True
    """
    optional = ("gold", "correct", *[c for c in by if c in df.columns])
    t = load(df, optional=optional)
    return _mcnemar(prompt_sets(t), model_a, model_b, outcome, by, invalid, min_items)


def _outcome(ps: PromptSets, outcome: str, invalid: str) -> np.ndarray:
    check_invalid(invalid)
    if outcome == "correct":
        return correct_outcome(ps.table, invalid)[0]
    if outcome == "agree":
        y = ps.agree
        if invalid == "wrong":
            y[~ps.valid & (ps.maj.n[ps.group] >= MIN_SET)] = 0.0
        return y
    raise StudyError(f"outcome must be 'correct' or 'agree', not {outcome!r}.")


def _mcnemar(
    ps: PromptSets,
    model_a: str | None = None,
    model_b: str | None = None,
    outcome: str = "correct",
    by: Sequence[str] = (),
    invalid: str = "wrong",
    min_items: int = MIN_ITEMS,
) -> pd.DataFrame:
    """:func:`mcnemar` on prompt sets already built; every pair of models when none is named."""
    t = ps.table
    for c in by:
        if c not in t.columns:
            raise TableError(f"mcnemar: the table has no column {c!r}.")
    y = _outcome(ps, outcome, invalid)
    models = sorted(pd.unique(t["model"]), key=str)
    if (model_a is None) != (model_b is None):
        raise StudyError("mcnemar: name both models, or neither for every pair.")
    if model_a is None:
        pairs = [(i, j) for i in range(len(models)) for j in range(i + 1, len(models))]
    else:
        if model_a == model_b:
            raise StudyError(f"mcnemar: model_a and model_b are both {model_a!r}; name two models.")
        for m in (model_a, model_b):
            if m not in models:
                raise StudyError(f"mcnemar: model {m!r} is not in the table (models: {models!r}).")
        models, pairs = [model_a, model_b], [(0, 1)]
    keys = ["dataset", "item_id", "category", "variant_id", *[c for c in by if c not in GROUP4]]
    keep = ~np.isnan(y) & t["model"].isin(models).to_numpy()
    frame = t.loc[keep, keys].astype(object)
    m_code = pd.Categorical(t.loc[keep, "model"], categories=models).codes
    # prompts sorted by (group, item, prompt): rows of one group and item are contiguous
    p_cols = list(dict.fromkeys([*by, *GROUP4]))
    p_code, p_keys = codes(frame, p_cols)
    n_p, n_m = len(p_keys), len(models)
    Y = np.full((n_p, n_m), np.nan)
    Y[p_code, m_code] = y[keep]
    g_code, g_keys = codes(p_keys, list(by)) if by else (np.zeros(n_p, np.int64), None)
    gi_code, _ = codes(p_keys, list(dict.fromkeys([*by, "dataset", "item_id"])))
    gi_start = np.flatnonzero(np.r_[True, np.diff(gi_code) != 0]) if n_p else np.zeros(0, int)
    g_of_gi = g_code[gi_start]
    g_start = np.flatnonzero(np.r_[True, np.diff(g_of_gi) != 0]) if n_p else np.zeros(0, int)
    n_groups = len(g_start)
    res = {
        name: np.zeros((n_groups, len(pairs)))
        for name in ("both", "only_a", "only_b", "neither", "items", "sum_d", "sum_d2")
    }
    step = max(1, 2_000_000 // max(n_p, 1))
    for lo in range(0, len(pairs), step):
        ia = np.array([p[0] for p in pairs[lo : lo + step]])
        ib = np.array([p[1] for p in pairs[lo : lo + step]])
        A, B = Y[:, ia], Y[:, ib]
        ok = ~np.isnan(A) & ~np.isnan(B)
        a1, b1 = ok & (A == 1), ok & (B == 1)
        cells = {
            "both": a1 & b1,
            "only_a": a1 & ~b1,
            "only_b": ~a1 & b1,
            "neither": ok & ~a1 & ~b1,
        }
        if n_p == 0:
            continue
        per_item = {k: np.add.reduceat(v.astype(float), gi_start, axis=0) for k, v in cells.items()}
        d = per_item["only_a"] - per_item["only_b"]
        item_has = (np.sum(list(per_item.values()), axis=0) > 0).astype(float)
        sl = slice(lo, lo + len(ia))
        for k, v in per_item.items():
            res[k][:, sl] = np.add.reduceat(v, g_start, axis=0)
        res["items"][:, sl] = np.add.reduceat(item_has, g_start, axis=0)
        res["sum_d"][:, sl] = np.add.reduceat(d, g_start, axis=0)
        res["sum_d2"][:, sl] = np.add.reduceat(d * d, g_start, axis=0)
    out = _mcnemar_frame(res, pairs, models, outcome, min_items)
    group_cols = (
        {c: np.repeat(g_keys[c].to_numpy(dtype=object), len(pairs)) for c in by}
        if by and g_keys is not None
        else {}
    )
    return pd.DataFrame({**group_cols, **out}, columns=[*by, *MCNEMAR_COLUMNS])


GROUP4 = ("dataset", "item_id", "category", "variant_id")


def _mcnemar_frame(
    res: dict[str, np.ndarray],
    pairs: list[tuple[int, int]],
    models: list,
    outcome: str,
    min_items: int,
) -> dict[str, np.ndarray]:
    """The statistics of every (group, pair) cell from the counts, flattened group-major."""
    flat = {k: v.ravel() for k, v in res.items()}
    b, c = flat["only_a"], flat["only_b"]
    n = flat["both"] + b + c + flat["neither"]
    disc = b + c
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        chi2 = np.where(disc > 0, (np.abs(b - c) - 1) ** 2 / disc, 0.0)
        p = np.where(disc > 0, stats.chi2.sf(chi2, 1), 1.0)
        exact = np.where(
            disc > 0, np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(b, c), disc, 0.5)), 1.0
        )
        chi2c = np.where(flat["sum_d2"] > 0, flat["sum_d"] ** 2 / flat["sum_d2"], 0.0)
        pc = np.where(flat["sum_d2"] > 0, stats.chi2.sf(chi2c, 1), 1.0)
        diff = np.where(n > 0, (b - c) / n, np.nan)
    items = flat["items"].astype(np.int64)
    thin = items < min_items
    note = np.where(disc == 0, "no discordant pair: chi2 = 0, p = 1", "").astype(object)
    if w:  # a library warning becomes a note, never a line on stderr
        extra = "; ".join(dict.fromkeys(str(x.message) for x in w))
        note = np.array([f"{x}; {extra}" if x else extra for x in note], dtype=object)
    note[thin] = [thin_note(int(k), min_items) for k in items[thin]]
    for arr in (chi2, p, exact, chi2c, pc):
        arr[thin] = np.nan
    n_groups = res["both"].shape[0]
    return {
        "model_a": np.tile(np.array([models[i] for i, _ in pairs], dtype=object), n_groups),
        "model_b": np.tile(np.array([models[j] for _, j in pairs], dtype=object), n_groups),
        "outcome": outcome,
        "n_pairs": n.astype(np.int64),
        "n_items": items,
        "both": flat["both"].astype(np.int64),
        "only_a": b.astype(np.int64),
        "only_b": c.astype(np.int64),
        "neither": flat["neither"].astype(np.int64),
        "difference": diff,
        "chi2": chi2,
        "dof": 1,
        "p_value": p,
        "p_exact": exact,
        "chi2_clustered": chi2c,
        "p_value_clustered": pc,
        "note": note,
    }
