"""Cochran's Q across perturbation categories, and its cluster-robust version.

Cochran (1950) tests whether k binary outcomes observed on the same subjects
share one rate.  Here subjects are items (or model x item when models are
pooled), conditions are perturbation categories, and the outcome is a property
of the item's prompt set in that category.  The cluster-robust version, for
subjects that share an item, is described in :mod:`analyses.paired` and
:func:`cochran_q`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from analyses.paired import MIN_ITEMS, thin_note
from analyses.prompt_sets import MIN_SET, PromptSets, prompt_sets
from analyses.table_input import REFERENCE, codes, load
from robustness.core.errors import StudyError, TableError

__all__ = ["COCHRAN_OUTCOMES", "cochran_q", "cochran_statistics"]

COCHRAN_OUTCOMES = ("consistent", "majority_is_original")
GROUPABLE = ("model", "dataset", "dataset_type", "category", "item_id")

COCHRAN_COLUMNS = [
    "n_items",
    "n_items_dropped",
    "n_subjects",
    "n_categories",
    "q",
    "dof",
    "p_value",
    "q_clustered",
    "dof_clustered",
    "p_value_clustered",
    "min_rate",
    "max_rate",
    "note",
]


def cochran_statistics(x: np.ndarray, cluster: np.ndarray) -> dict[str, float]:
    """Cochran's Q and its cluster-robust version on a subjects x k matrix of 0/1.

    Parameters
    ----------
    x
        Subjects x k conditions, 0/1, no missing value.
    cluster
        Each subject's cluster (any hashable codes).

    Returns
    -------
    dict
        ``q``, ``dof``, ``p_value`` (Cochran), ``q_clustered``, ``dof_clustered``,
        ``p_value_clustered`` (cluster-robust); NaN where a statistic is 0/0.

    Notes
    -----
    The formulas are in :func:`cochran_q`.

    References
    ----------
    Cochran, W. G. (1950). Biometrika 37, 256-266; Boos, D. D. (1992). The American
    Statistician 46, 327-333; Durkalski, V. L. et al. (2003). Statistics in Medicine 22,
    2417-2428.

    Examples
    --------
    >>> import numpy as np, pandas as pd, pingouin as pg
    >>> from statsmodels.stats.contingency_tables import cochrans_q
    >>> x = np.array([[1, 0, 0], [1, 1, 0], [1, 0, 1], [1, 1, 1], [0, 0, 0], [1, 0, 0]])
    >>> r = cochran_statistics(x, np.arange(6))
    >>> ref = cochrans_q(x)
    >>> bool(np.isclose(r["q"], ref.statistic) and np.isclose(r["p_value"], ref.pvalue))
    True
    >>> long = pd.DataFrame(x).reset_index().melt(id_vars="index")
    >>> pq = pg.cochran(long, dv="value", within="variable", subject="index")
    >>> bool(np.isclose(r["q"], pq["Q"].iloc[0]))
    True
    """
    k = x.shape[1]
    col, row, total = x.sum(0), x.sum(1), x.sum()
    out = {"q": np.nan, "dof": k - 1, "p_value": np.nan}
    den = k * total - (row**2).sum()
    if den > 0:
        q = (k - 1) * (k * (col**2).sum() - total**2) / den
        out.update(q=float(q), p_value=float(stats.chi2.sf(q, k - 1)))
    e = x - row[:, None] / k  # deviations from each subject's own mean: mean 0 under H0
    _, inv = np.unique(cluster, return_inverse=True)
    u = np.zeros((inv.max() + 1, k))
    np.add.at(u, inv, e)
    s = u.T @ u
    d = e.sum(0)  # = column totals - N / k
    rank = int(np.linalg.matrix_rank(s)) if np.abs(s).sum() > 0 else 0
    out.update(q_clustered=np.nan, dof_clustered=rank, p_value_clustered=np.nan)
    if rank:
        qc = float(d @ np.linalg.pinv(s) @ d)
        out.update(q_clustered=qc, p_value_clustered=float(stats.chi2.sf(qc, rank)))
    return out


def cochran_q(
    df: pd.DataFrame,
    by: Sequence[str] = ("model", "dataset_type"),
    outcome: str = "consistent",
    min_items: int = MIN_ITEMS,
) -> pd.DataFrame:
    """Cochran's Q test across perturbation categories, per ``by`` group, and clustered.

    Parameters
    ----------
    df
        Long table.
    by
        Grouping columns; without ``model``, each model x item is a subject and
        the subjects of one item form a cluster.
    outcome
        ``'consistent'``: all valid variants of the item's set in that category gave
        the same answer (C_i = 1; undefined for a set with fewer than two
        answers).  ``'majority_is_original'``: the set has a single mode and it
        equals the original prompt's answer (a tie between modes counts as not
        agreeing, whether or not the original is among them).
    min_items
        Fewest items (clusters) with a value in every category for the test to be computed.

    Returns
    -------
    pandas.DataFrame
        ``by`` columns, ``n_items`` (items complete in every category),
        ``n_items_dropped``, ``n_subjects``, ``n_categories``, ``q``, ``dof``,
        ``p_value`` (Cochran), ``q_clustered``, ``dof_clustered``,
        ``p_value_clustered`` (cluster-robust), ``min_rate`` and ``max_rate`` (the
        outcome's lowest and highest rate over categories, complete subjects),
        ``note`` (why a test is not computed, empty otherwise).

    Notes
    -----
    Cochran (1950): b subjects, k conditions, C_j the column totals, R_i the row
    totals, N the grand total,

        Q = (k - 1) [k sum_j C_j^2 - N^2] / [k N - sum_i R_i^2]  ~  chi-square(k - 1).

    Cluster-robust version (a generalised score test, Boos 1992): with
    e_i = x_i - (R_i / k) 1 the subject's deviations from its own mean (mean 0
    under the null of equal category rates), u_g = sum_{i in cluster g} e_i and
    d = sum_i e_i = C - (N / k) 1,

        Q_c = d' (sum_g u_g u_g')^+ d  ~  chi-square(r),   r = rank(sum_g u_g u_g').

    For k = 2 this is Durkalski et al.'s (2003) clustered McNemar statistic, and
    with one subject per cluster McNemar's (b - c)^2 / (b + c).  For k > 2 and one
    subject per cluster it is the empirical-covariance form of Q (the same
    statistic with the covariance estimated rather than assumed exchangeable),
    asymptotically equivalent to Q under the null.

    References
    ----------
    Cochran, W. G. (1950). The comparison of percentages in matched samples.
    Biometrika 37, 256-266.
    Boos, D. D. (1992). On generalized score tests. The American Statistician 46, 327-333.
    Durkalski, V. L., Palesch, Y. Y., Lipsitz, S. R., Rust, P. F. (2003). Analysis of
    clustered matched-pair data. Statistics in Medicine 22, 2417-2428.

    Examples
    --------
    >>> from analyses import cochran_q
    >>> from analyses.synthetic import synthetic_table
    >>> res = cochran_q(synthetic_table(models=1, n_items=20, seed=6))
    >>> res[["dataset_type", "dof"]].values.tolist()
    [['objective', 7], ['subjective', 7]]
    """
    return _cochran_q(prompt_sets(load(df)), by=by, outcome=outcome, min_items=min_items)


def _cochran_q(
    ps: PromptSets,
    by: Sequence[str] = ("model", "dataset_type"),
    outcome: str = "consistent",
    min_items: int = MIN_ITEMS,
) -> pd.DataFrame:
    """:func:`cochran_q` on prompt sets already built."""
    if outcome not in COCHRAN_OUTCOMES:
        raise StudyError(f"outcome must be one of {COCHRAN_OUTCOMES}, not {outcome!r}.")
    for c in by:
        if c not in ps.keys.columns:
            raise TableError(f"cochran_q: cannot group by {c!r}; use columns of {GROUPABLE}.")
    keys = ps.keys.copy()
    n = ps.maj.n
    if outcome == "consistent":  # a single answer is consistent by construction: no value
        y = np.where(n >= MIN_SET, (ps.maj.top == n).astype(float), np.nan)
    else:
        single = ps.maj.n_modes == 1
        y = np.where(
            (n > 0) & (ps.original >= 0),
            (single & (ps.maj.majority == ps.original)).astype(float),
            np.nan,
        )
    keep = (keys["category"] != REFERENCE).to_numpy()
    keys, y = keys[keep].reset_index(drop=True), y[keep]
    if not len(keys):
        return pd.DataFrame(columns=[*by, *COCHRAN_COLUMNS])
    # one row of X per (group, subject), one column per category, NaN where no value
    if by:
        g_code, g_keys = codes(keys, list(by))
    else:
        g_code, g_keys = np.zeros(len(keys), dtype=np.int64), pd.DataFrame(index=[0])
    s_code, _ = codes(keys, ["model", "dataset", "item_id"])
    i_code, _ = codes(keys, ["dataset", "item_id"])
    c_code, c_keys = codes(keys, ["category"])
    n_s = int(s_code.max()) + 1
    uniq, row = np.unique(g_code * n_s + s_code, return_inverse=True)
    x_all = np.full((uniq.size, len(c_keys)), np.nan)
    x_all[row, c_code] = y
    item_of_row = np.zeros(uniq.size, dtype=np.int64)
    item_of_row[row] = i_code
    row_group = uniq // n_s
    starts = np.searchsorted(row_group, np.arange(len(g_keys) + 1))
    out = []
    for g in range(len(g_keys)):
        xg = x_all[starts[g] : starts[g + 1]]
        items_g = item_of_row[starts[g] : starts[g + 1]]
        present = ~np.isnan(xg).all(axis=0)
        xg = xg[:, present]
        complete = ~np.isnan(xg).any(axis=1)
        x, cluster = xg[complete], items_g[complete]
        n_items = int(np.unique(cluster).size)
        k = int(present.sum())
        res: dict[str, object] = {
            **{c: g_keys[c].iloc[g] for c in by},
            "n_items": n_items,
            "n_items_dropped": int(np.unique(items_g).size) - n_items,
            "n_subjects": int(complete.sum()),
            "n_categories": k,
            "q": np.nan,
            "dof": max(k - 1, 0),
            "p_value": np.nan,
            "q_clustered": np.nan,
            "dof_clustered": 0,
            "p_value_clustered": np.nan,
            "note": "",
        }
        if k < 2:
            res["note"] = "not computed: fewer than two categories"
        elif n_items < min_items:
            res["note"] = thin_note(n_items, min_items)
        elif x.min() == x.max():
            res["note"] = "not computed: the outcome is the same for every item and category"
        else:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                res.update(cochran_statistics(x, cluster))
            res["note"] = "; ".join(str(w.message) for w in caught)
        rates = x.mean(axis=0) if x.size else np.full(1, np.nan)
        res["min_rate"] = float(rates.min())
        res["max_rate"] = float(rates.max())
        out.append(res)
    return pd.DataFrame(out, columns=[*by, *COCHRAN_COLUMNS])
