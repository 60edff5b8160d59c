"""Performance spread across prompt formats (FormatSpread).

Sclar et al. (2024), "Quantifying language models' sensitivity to spurious
features in prompt design": a model's accuracy can move by tens of points
between plausible, meaning-preserving prompt formats, so a single format says
little.  For a set of formats F with accuracies acc(f) the *spread* is

    spread = max_f acc(f) - min_f acc(f),

reported here with the standard deviation and quantiles of acc over F.  A
format is any variant id (by default ``variant_id``; pass ``format_col='params'``
when the same format has different ids across items).  The original prompt is
one of the formats: with ``category`` among the grouping columns its rows join
every perturbation category's group (``include_original``).  An unparseable
answer counts as wrong (``invalid='wrong'``), as FormatSpread scores it.

The search of a format space under a budget is :func:`analyses.thompson.thompson_search`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analyses.accuracy import check_invalid, correct_outcome
from analyses.prompt_sets import MIN_SET, prompt_sets
from analyses.table_input import REFERENCE, load
from robustness.core.errors import StudyError, TableError

__all__ = ["format_accuracy", "format_spread"]

SPREAD_COLUMNS = [
    "n_formats",
    "mean",
    "min",
    "max",
    "spread",
    "sd",
    "q05",
    "q25",
    "median",
    "q75",
    "q95",
    "best_format",
    "worst_format",
    "n_invalid",
    "invalid",
]


def _metric(t: pd.DataFrame, metric: str, invalid: str) -> tuple[np.ndarray, np.ndarray]:
    """(outcome per row, invalid-and-scorable per row) for ``metric``."""
    if metric == "correct":
        return correct_outcome(t, invalid)
    if metric == "agree":
        ps = prompt_sets(t)
        y = ps.agree
        bad = ~ps.valid & (ps.maj.n[ps.group] >= MIN_SET)
        if invalid == "wrong":
            y[bad] = 0.0
        return y, bad
    raise StudyError(f"metric must be 'correct' or 'agree', not {metric!r}.")


def format_accuracy(
    df: pd.DataFrame,
    by: Sequence[str] = ("model", "dataset", "category"),
    format_col: str = "variant_id",
    metric: str = "correct",
    invalid: str = "wrong",
    include_original: bool = True,
) -> pd.DataFrame:
    """Mean of ``metric`` per prompt format within each ``by`` group.

    Parameters
    ----------
    df
        Long table.
    by
        Grouping columns.
    format_col
        Column naming the format (``variant_id`` or ``params``).
    metric
        ``'correct'`` (answer equals gold; objective items) or ``'agree'``
        (answer equals its prompt set's majority).
    invalid
        ``'wrong'`` (default, as FormatSpread): an invalid answer scores 0;
        ``'drop'``: it is left out.
    include_original
        With ``metric='correct'`` and ``category`` in ``by``: the ``original``
        rows are one more format of every other category's group (and form no
        group of their own).

    Returns
    -------
    pandas.DataFrame
        ``by`` columns, ``format``, ``accuracy`` (mean of the metric), ``n`` (rows
        scored), ``n_invalid`` (invalid rows, whichever rule).

    Notes
    -----
    acc(f) = (1 / n_f) sum_{rows r in format f} Y_r.

    References
    ----------
    Sclar, M., Choi, Y., Tsvetkov, Y., Suhr, A. (2024). Quantifying language models'
    sensitivity to spurious features in prompt design. ICLR 2024.

    Examples
    --------
    >>> import pandas as pd
    >>> from analyses import format_accuracy
    >>> t = pd.DataFrame({"model": "m", "dataset": "d", "dataset_type": "objective",
    ...     "item_id": ["a", "b"] * 2, "category": ["original"] * 2 + ["formatting"] * 2,
    ...     "variant_id": ["o/0", "o/0", "f/1", "f/1"], "answer": [0, 0, 0, None],
    ...     "gold": 0, "valid": [True, True, True, False]})
    >>> format_accuracy(t)[["category", "format", "accuracy", "n_invalid"]].values.tolist()
    [['formatting', 'f/1', 0.5, 1], ['formatting', 'o/0', 1.0, 0]]
    """
    check_invalid(invalid)
    cols = [c for c in (*by, format_col) if c in df.columns]
    t = load(df, optional=("gold", "correct", *cols))
    for c in (*by, format_col):
        if c not in t.columns:
            raise TableError(f"format_accuracy: the table has no column {c!r}.")
    y, bad = _metric(t, metric, invalid)
    keys = [*by, format_col]
    frame = t[keys].astype(object).assign(_y=y, _inv=bad)
    frame = frame[~np.isnan(y) | bad]
    if include_original and metric == "correct" and "category" in by:
        frame = _with_original(frame, [c for c in by if c != "category"])
    g = frame.groupby(keys, sort=True, dropna=False)
    out = g.agg(accuracy=("_y", "mean"), n=("_y", "count"), n_invalid=("_inv", "sum"))
    out = out.reset_index()
    out["n"] = out["n"].astype(np.int64)
    out["n_invalid"] = out["n_invalid"].astype(np.int64)
    return out.rename(columns={format_col: "format"})


def _with_original(frame: pd.DataFrame, rest: list[str]) -> pd.DataFrame:
    """Copy the original rows into every other category of the same ``rest`` group."""
    is_ref = (frame["category"] == REFERENCE).to_numpy()
    orig, others = frame[is_ref], frame[~is_ref]
    cats = others[[*rest, "category"]].drop_duplicates()
    copies = orig.drop(columns="category")
    copies = copies.merge(cats, on=rest) if rest else copies.merge(cats, how="cross")
    return pd.concat([others, copies[frame.columns]], ignore_index=True)


def format_spread(
    df: pd.DataFrame,
    by: Sequence[str] = ("model", "dataset", "category"),
    format_col: str = "variant_id",
    metric: str = "correct",
    min_n: int = 1,
    invalid: str = "wrong",
    include_original: bool = True,
) -> pd.DataFrame:
    """Spread of accuracy across formats, max - min, with sd and quantiles (FormatSpread).

    Parameters
    ----------
    df, by, format_col, metric, invalid, include_original
        As in :func:`format_accuracy`.
    min_n
        Formats scored on fewer rows are left out.

    Returns
    -------
    pandas.DataFrame
        ``by`` columns, ``n_formats``, ``mean``, ``min``, ``max``, ``spread``,
        ``sd`` (n - 1), ``q05``, ``q25``, ``median``, ``q75``, ``q95``,
        ``best_format``, ``worst_format``, ``n_invalid`` (invalid rows over the
        group's formats, whichever rule) and ``invalid`` (the rule).

    Notes
    -----
    spread = max_f acc(f) - min_f acc(f) over the formats f of a group
    (Sclar et al. 2024, section 3).

    References
    ----------
    Sclar, M., Choi, Y., Tsvetkov, Y., Suhr, A. (2024). Quantifying language models'
    sensitivity to spurious features in prompt design. ICLR 2024.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from analyses import format_spread
    >>> t = pd.DataFrame({"model": "m", "dataset": "d", "dataset_type": "objective",
    ...     "item_id": ["a", "b"] * 3, "category": "formatting",
    ...     "variant_id": ["f/0", "f/0", "f/1", "f/1", "f/2", "f/2"],
    ...     "answer": [0, 0, 0, 1, 1, 1], "gold": 0, "valid": True})
    >>> r = format_spread(t).iloc[0]
    >>> float(r["spread"]), r["best_format"], r["worst_format"]
    (1.0, 'f/0', 'f/2')
    >>> bool(np.isclose(r["sd"], np.std([1.0, 0.5, 0.0], ddof=1)))
    True
    """
    acc = format_accuracy(
        df,
        by=by,
        format_col=format_col,
        metric=metric,
        invalid=invalid,
        include_original=include_original,
    )
    acc = acc[acc["n"] >= min_n]
    rows = []
    for key, g in acc.groupby(list(by), sort=True, dropna=False):
        a = g["accuracy"].to_numpy(float)
        fm = g["format"].to_numpy(object)
        q = np.quantile(a, [0.05, 0.25, 0.5, 0.75, 0.95])
        key = key if isinstance(key, tuple) else (key,)
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "n_formats": a.size,
                "mean": a.mean(),
                "min": a.min(),
                "max": a.max(),
                "spread": a.max() - a.min(),
                "sd": a.std(ddof=1) if a.size > 1 else np.nan,
                "q05": q[0],
                "q25": q[1],
                "median": q[2],
                "q75": q[3],
                "q95": q[4],
                "best_format": fm[int(np.argmax(a))],
                "worst_format": fm[int(np.argmin(a))],
                "n_invalid": int(g["n_invalid"].sum()),
                "invalid": invalid,
            }
        )
    return pd.DataFrame(rows, columns=[*by, *SPREAD_COLUMNS])
