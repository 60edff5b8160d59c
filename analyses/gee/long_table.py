"""The long table's rows a GEE fits and its response: the first step of :func:`analyses.gee.gee`.

A row enters the model when it belongs to a perturbation category (``original``
is the reference prompt, not a category), is valid, has a value of the response
and of every formula variable, and -- for the computed ``agree`` -- its prompt set
has at least two valid answers (agreement is undefined otherwise).  Every reason
a row is left out is counted in a note.

These are steps of :func:`analyses.gee.gee`, outside the statistics convention (no
formula of their own): the model and its references are in :mod:`analyses.gee.fit`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analyses.gee.formula import Formula, parse_formula
from analyses.gee.rows import FittedRows, binary_response
from analyses.prompt_sets import MIN_SET, PromptSets, prompt_sets
from analyses.table_input import REFERENCE, correct_column
from robustness.core.table import TableError

__all__ = [
    "CLUSTERS",
    "COMPUTED",
    "DEFAULT_FORMULA",
    "FittedRows",
    "columns_of",
    "fitted_rows",
    "formula_columns",
]

DEFAULT_FORMULA = "agree ~ model + dataset_type * category + model:category"
COMPUTED = ("agree", "correct", "flip")
#: The long table's clusters: items (shared by the models), or one model's items.
CLUSTERS = {"item": ("dataset", "item_id"), "model_item": ("model", "dataset", "item_id")}


def formula_columns(columns: Sequence[str], formula: str | None = None) -> list[str]:
    """Table columns a formula uses (its response when it is a column, and its variables).

    Parameters
    ----------
    columns
        The table's column names.
    formula
        R-style formula (default :data:`DEFAULT_FORMULA`).

    Returns
    -------
    list of str
        The response (when it is a column) and the variables, in formula order.

    Notes
    -----
    Raises :class:`~robustness.core.table.TableError` naming a variable the table lacks,
    or a response that is neither a column nor one of :data:`COMPUTED`.

    Examples
    --------
    >>> formula_columns(["model", "category", "answer"], "agree ~ model + category")
    ['model', 'category']
    """
    return columns_of(parse_formula(DEFAULT_FORMULA if formula is None else formula), columns)


def columns_of(f: Formula, columns: Sequence[str]) -> list[str]:
    """:func:`formula_columns` of a formula already parsed (the fit parses it once).

    Parameters
    ----------
    f
        The parsed formula.
    columns
        The table's columns.

    Returns
    -------
    list of str
        The response (when a column of the table) and every column the formula names,
        in the formula's order; raises TableError naming a column the table lacks.
    """
    text = f.text
    cols = list(columns)
    missing = [v for v in f.columns if v not in cols]
    if missing:
        raise TableError(
            f"formula {text!r} names column(s) {', '.join(map(repr, missing))} that the table "
            f"lacks; it has {', '.join(map(repr, cols))}."
        )
    if f.response not in cols and f.response not in COMPUTED:
        raise TableError(
            f"formula {text!r}: the response {f.response!r} is not a column of the "
            f"table and not one of {', '.join(COMPUTED)} (computed)."
        )
    return [c for c in (f.response, *f.columns) if c in cols]


def _response(
    t: pd.DataFrame, response: str, user_columns: set[str], ps: PromptSets | None
) -> np.ndarray:
    """The response per row as 0.0 / 1.0 / NaN: a user column or a computed outcome."""
    if response in user_columns:
        return binary_response(t[response], response)
    if ps is None:
        ps = prompt_sets(t)
    if response == "agree":
        return ps.agree
    if response == "flip":
        orig = ps.original[ps.group]
        out = (ps.answer != orig).astype(float)
        out[~ps.valid | (orig < 0)] = np.nan
        return out
    corr = correct_column(t)
    if corr is None:
        raise TableError("response 'correct' needs a 'correct' or a 'gold' column in the table.")
    return corr


def fitted_rows(t: pd.DataFrame, f: Formula, ps: PromptSets | None = None) -> FittedRows:
    """Select the rows a GEE of ``f`` fits, with their response and notes.

    Parameters
    ----------
    t
        A table checked by ``analyses.table_input.load`` that keeps the formula's columns.
    f
        The parsed formula.
    ps
        The table's prompt sets when already computed.

    Returns
    -------
    FittedRows
        ``data`` (the fitted rows, index reset), ``y`` (their response) and
        ``notes`` (one sentence per reason rows were left out, with its count).

    Notes
    -----
    Kept: category != 'original', valid, response and variables present, and for
    the computed ``agree`` a prompt set of at least ``MIN_SET`` valid answers.

    References
    ----------
    Kamal et al. (2026), section 3 (agreement over the valid variants of a set).

    Examples
    --------
    >>> from analyses.synthetic import synthetic_table
    >>> from analyses.table_input import load
    >>> t = load(synthetic_table(models=1, n_items=4, seed=1))
    >>> rows = fitted_rows(t, parse_formula("agree ~ category"))
    >>> bool((rows.data["category"] != "original").all()), len(rows.y) == len(rows.data)
    (True, True)
    """
    user_columns = set(columns_of(f, t.columns))
    if ps is None and f.response in ("agree", "flip") and f.response not in user_columns:
        ps = prompt_sets(t)  # built once: it gives the response and the set sizes
    y_all = _response(t, f.response, user_columns, ps)
    notes: list[str] = []
    valid = t["valid"].to_numpy(dtype=bool, na_value=False)
    perturbed = (t["category"] != REFERENCE).to_numpy()
    var_missing = np.zeros(len(t), dtype=bool)
    for v in f.columns:
        var_missing |= t[v].isna().to_numpy()
    use = perturbed & valid & ~np.isnan(y_all) & ~var_missing
    n_invalid = int((perturbed & ~valid).sum())
    if n_invalid:
        notes.append(f"{n_invalid} invalid rows (valid == False) were excluded.")
    n_orig = int((~perturbed).sum())
    if n_orig:
        notes.append(
            f"{n_orig} rows of category 'original' (the reference prompt) are not "
            "part of the model."
        )
    single = np.zeros(len(t), dtype=bool)
    if f.response == "agree" and f.response not in user_columns:
        assert ps is not None
        single = perturbed & valid & (ps.maj.n[ps.group] < MIN_SET)
        if single.any():
            notes.append(
                f"{int(single.sum())} rows are the only valid answer of their prompt "
                "set, where agreement is undefined; they were excluded (see the flip "
                "rate for those categories)."
            )
    n_other = int((perturbed & valid & ~use & ~single).sum())
    if n_other:
        notes.append(
            f"{n_other} valid rows without a value of the response or of a formula "
            "variable were excluded."
        )
    if not use.any():
        raise TableError("no valid rows of a perturbation category are left to model.")
    return FittedRows(t.loc[use].reset_index(drop=True), y_all[use], notes)
