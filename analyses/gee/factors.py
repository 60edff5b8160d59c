"""Which formula variables are factors, their levels, and terms that cannot vary.

Steps of :func:`analyses.gee.gee` between the fitted rows and the design, outside the
statistics convention: each has Parameters and Returns; the model, its examples against
statsmodels and geepack, and its references are in :mod:`analyses.gee.fit`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from robustness.core.table import TableError

__all__ = ["drop_flat_terms", "factor_levels", "is_factor"]

_FACTOR_COLUMNS = {
    "model",
    "dataset",
    "dataset_type",
    "item_id",
    "category",
    "variant_id",
    "study",
    "mode",
    "scale",
    "label",
    "invalid_reason",
}


def is_factor(t: pd.DataFrame, var: str, kind: str = "auto", long_table: bool = True) -> bool:
    """Whether ``var`` enters the model as a factor (else as a numeric covariate).

    Parameters
    ----------
    t
        The fitted rows.
    var
        A formula variable.
    kind
        Its :class:`~analyses.gee.formula.FactorSpec` kind: ``'factor'`` (``C(x)``,
        ``factor(x)``), ``'numeric'`` (``I(...)``, ``log(x)``) or ``'auto'`` (a column).
    long_table
        Whether the rows are a long table's, whose id and label columns are factors
        whatever their values.

    Returns
    -------
    bool
        For ``'auto'``: True for booleans and any non-numeric column, as R reads a data
        frame (a numeric code such as a centre 1 / 2 is a covariate unless the formula
        says ``C()`` or ``factor()``).
    """
    if kind != "auto":
        return kind == "factor"
    if long_table and var in _FACTOR_COLUMNS:
        return True
    col = t[var]
    return not (pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col))


def factor_levels(values: pd.Series, given: Sequence[object] | None, var: str) -> list[object]:
    """The levels of a factor in the fitted rows, in the order of the design.

    Parameters
    ----------
    values
        The factor's values in the fitted rows.
    given
        The caller's level order (the first is the reference), or None to sort.
    var
        The variable's name (for the error).

    Returns
    -------
    list
        The present levels, sorted or in ``given``'s order; a value missing from
        ``given`` raises :class:`~robustness.core.table.TableError`.
    """
    present = list(pd.unique(values))
    if given is None:
        return sorted(present, key=lambda v: (str(type(v)), v))
    missing = [v for v in present if v not in list(given)]
    if missing:
        raise TableError(f"levels for {var!r} lack the value(s) {missing!r} found in the table.")
    return [v for v in given if v in present]


def drop_flat_terms(
    data: pd.DataFrame, factors: Sequence[str], terms: Sequence[tuple[str, ...]]
) -> tuple[list[tuple[str, ...]], list[str], list[str]]:
    """Drop the terms of factors that take a single value in the fitted rows.

    Parameters
    ----------
    data
        The fitted rows.
    factors
        The formula's factors.
    terms
        The formula's terms, each a tuple of variables.

    Returns
    -------
    (terms, dropped, notes)
        The terms kept, the labels of those dropped, one note per flat factor.
    """
    flat = [v for v in factors if data[v].nunique() < 2]
    kept = [t for t in terms if not any(v in flat for v in t)]
    dropped = [":".join(t) for t in terms if t not in kept]
    notes = [
        f"{v!r} takes the single value {data[v].iloc[0]!r} in the fitted rows, so the "
        f"term(s) {', '.join(':'.join(t) for t in terms if v in t)} cannot vary and "
        "were dropped."
        for v in flat
        if any(v in t for t in terms)
    ]
    return kept, dropped, notes
