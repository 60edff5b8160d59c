"""The named steps of :func:`analyses.gee.gee` between the fitted rows and the solver.

Flat terms (a factor with one value) are dropped; separated cells are found and
decide the bias-reduced fit; the treatment-coded design of the distinct rows is
built with its aliased columns and null space; rows are summed into (cluster,
design row) cells; the fit is re-expressed in sum-to-zero coding for Type III.

These are internal steps of :func:`analyses.gee.gee`, outside the statistics convention:
each has Parameters and Returns (and Notes where there is a formula); the model, its
examples against statsmodels and geepack, and its references are in :mod:`analyses.gee`.

References
----------
Chambers, J. M. & Hastie, T. J. (1992). Statistical Models in S, ch. 2 (model
matrices, contrasts and aliasing as R builds them).
Firth, D. (1993). Bias reduction of maximum likelihood estimates. Biometrika 80(1), 27-38.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analyses.design import build_design, independent_columns
from analyses.formula import Formula
from analyses.gee_solver import Cells, SolverFit
from analyses.separation import find_separation
from analyses.table_input import codes
from robustness.core.errors import AnalysisError
from robustness.core.table import TableError

__all__ = [
    "CLUSTERS",
    "ModelDesign",
    "aggregate_cells",
    "build_model_design",
    "check_separation",
    "drop_flat_terms",
    "factor_levels",
    "is_factor",
    "solver_notes",
    "sum_coded",
]

CLUSTERS = {"item": ("dataset", "item_id"), "model_item": ("model", "dataset", "item_id")}
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


def is_factor(t: pd.DataFrame, var: str) -> bool:
    """Whether ``var`` enters the model as a factor (else as a numeric covariate).

    Parameters
    ----------
    t
        The fitted rows.
    var
        A formula variable.

    Returns
    -------
    bool
        True for the table's categorical columns, booleans and any non-numeric column.
    """
    if var in _FACTOR_COLUMNS:
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


def check_separation(
    y: np.ndarray,
    data: pd.DataFrame,
    factors: Sequence[str],
    terms: Sequence[tuple[str, ...]],
    response: str,
    bias_reduction: bool | str = "auto",
) -> tuple[pd.DataFrame, bool, list[str]]:
    """Find the separated cells and decide whether to solve the bias-reduced equation.

    Parameters
    ----------
    y
        The 0/1 response of the fitted rows.
    data
        The fitted rows.
    factors, terms
        The model's factors and terms.
    response
        The response's name (for the error).
    bias_reduction
        ``'auto'``, True or False (see Notes).

    Returns
    -------
    (cells, reduce, notes)
        The separated cells (``term, cell, n_rows, value``), whether the fit is
        bias-reduced, and a note naming the cells.

    Notes
    -----
    ``bias_reduction='auto'`` reduces bias exactly when a cell is separated; ``True``
    always; ``False`` never, and a separated cell is then an error (its coefficient
    would run to infinity).
    """
    if y.min() == y.max():
        raise TableError(
            f"the response {response!r} is {int(y[0])} on every fitted row; "
            "there is nothing to model."
        )
    _, cells = find_separation(y, data[list(factors)], terms)
    notes: list[str] = []
    if not cells.empty:
        if bias_reduction is False:
            first = cells.iloc[0]
            raise TableError(
                f"separation: in cell {first['cell']} of term {first['term']!r} the response "
                f"is always {first['value']} ({first['n_rows']} rows); refit with "
                "bias_reduction='auto' to keep such cells by a bias-reduced fit."
            )
        listed = "; ".join(f"{r.term} [{r.cell}] all {r.value}" for r in cells.itertuples())
        notes.append(
            f"separation: {len(cells)} cell(s) with a constant response: {listed}. They stay "
            "in the model: the whole model is fitted by the bias-reduced (Firth-type, "
            "Jeffreys-prior) estimating equation, which keeps every estimate finite."
        )
    reduce = bias_reduction is True or (bias_reduction == "auto" and not cells.empty)
    if bias_reduction not in (True, False, "auto"):
        raise AnalysisError(
            f"bias_reduction must be 'auto', True or False, not {bias_reduction!r}."
        )
    return cells.reset_index(drop=True), reduce, notes


@dataclass(frozen=True)
class ModelDesign:
    """The design of the distinct rows: kept columns, names, terms, aliasing."""

    grid: pd.DataFrame
    row_of: np.ndarray
    x: np.ndarray
    names: list[str]
    term_of: np.ndarray
    full_names: tuple[str, ...]
    aliased: list[str]
    null_basis: np.ndarray


def _null_basis(x: np.ndarray, tol: float = 1e-8) -> np.ndarray:
    """Orthonormal basis of the null space of x (p x k): the non-estimable directions."""
    if x.size == 0:
        return np.zeros((x.shape[1], 0))
    _, s, vt = np.linalg.svd(x, full_matrices=True)
    rank = int(np.sum(s > tol * s.max())) if s.size else 0
    return vt[rank:].T


def build_model_design(
    f: Formula, data: pd.DataFrame, levels: Mapping[str, Sequence[object]]
) -> ModelDesign:
    """Treatment-coded design of the distinct rows of ``data`` over the formula's variables.

    Parameters
    ----------
    f
        The parsed formula (its terms as fitted).
    data
        The fitted rows.
    levels
        Factor -> levels (the first is the reference).

    Returns
    -------
    ModelDesign
        ``grid`` (distinct rows), ``row_of`` (each row's grid row), ``x`` (kept
        columns), their ``names`` and ``term_of``, all ``full_names``, the
        ``aliased`` names and the ``null_basis`` of the full design (used to check
        that a marginal mean is estimable).

    Notes
    -----
    A column is aliased when it lies in the span of the columns before it (R's
    pivoted-QR rule, :func:`analyses.design.independent_columns`).
    """
    row_of, grid = codes(data, list(f.variables))
    x_full, names, term_of = build_design(f, grid, levels, "treatment")
    keep = independent_columns(x_full)
    return ModelDesign(
        grid=grid,
        row_of=row_of,
        x=x_full[:, keep],
        names=[n for n, k in zip(names, keep, strict=True) if k],
        term_of=np.asarray(term_of)[keep],
        full_names=tuple(names),
        aliased=[n for n, k in zip(names, keep, strict=True) if not k],
        null_basis=_null_basis(x_full),
    )


def aggregate_cells(
    data: pd.DataFrame, y: np.ndarray, design: ModelDesign, cluster: str
) -> tuple[Cells, np.ndarray]:
    """Sum the rows into (cluster, design row) cells; also return each cluster's size.

    Parameters
    ----------
    data
        The fitted rows (with the cluster columns).
    y
        Their 0/1 response.
    design
        :func:`build_model_design` of the rows.
    cluster
        A key of :data:`CLUSTERS`.

    Returns
    -------
    (Cells, numpy.ndarray)
        The cells (design, cluster and design-row codes, counts n, sums of y and y^2)
        and the number of rows of each cluster.

    Notes
    -----
    Exact: mu depends on a row only through its design row, so every sum of the
    estimating equations is a sum over cells of counts times per-row values.
    """
    cl_code, cl_keys = codes(data, list(CLUSTERS[cluster]))
    n_u = len(design.grid)
    cell, inv = np.unique(cl_code * n_u + design.row_of, return_inverse=True)
    inv = inv.ravel()
    cells = Cells(
        x=design.x,
        cluster=cell // n_u,
        row=cell % n_u,
        n=np.bincount(inv, minlength=cell.size).astype(float),
        ysum=np.bincount(inv, weights=y, minlength=cell.size),
        y2sum=np.bincount(inv, weights=y * y, minlength=cell.size),
        n_clusters=len(cl_keys),
    )
    return cells, np.bincount(cl_code)


def sum_coded(
    f: Formula, design: ModelDesign, levels: Mapping[str, Sequence[object]], raw: SolverFit
) -> tuple[pd.Series, pd.DataFrame, np.ndarray]:
    """The same fit in sum-to-zero coding: b_sum = A b, V_sum = A V A' with X_sum A = X.

    Parameters
    ----------
    f, design, levels
        The formula, the treatment-coded design and the levels of the fit.
    raw
        The solver's fit (treatment coding).

    Returns
    -------
    (params_sum, cov_sum, term_of_sum)
        The sum-coded coefficients (Series by name), their robust covariance (DataFrame)
        and each coefficient's term index.

    Notes
    -----
    The two codings span the same column space, so A solves X_sum A = X exactly.
    """
    xs_full, names_s, term_of_s = build_design(f, design.grid, levels, "sum")
    keep = independent_columns(xs_full)
    a_map, *_ = np.linalg.lstsq(xs_full[:, keep], design.x, rcond=None)
    names = [n for n, k in zip(names_s, keep, strict=True) if k]
    return (
        pd.Series(a_map @ raw.params, index=names),
        pd.DataFrame(a_map @ raw.cov_robust @ a_map.T, index=names, columns=names),
        np.asarray(term_of_s)[keep],
    )


def solver_notes(raw: SolverFit) -> list[str]:
    """Sentences on a fit that did not converge or whose working correlation is not valid.

    Parameters
    ----------
    raw
        The solver's fit.

    Returns
    -------
    list of str
        A note when it did not converge, and one when alpha makes the exchangeable
        working correlation not positive definite (1 + (n - 1) alpha <= 0 for clusters of
        n >= 1 - 1 / alpha rows).
    """
    notes = []
    if not raw.converged:
        notes.append(
            f"the GEE did not converge in {raw.iterations} iterations (last step "
            f"{raw.max_step:.3g}); treat its numbers with care."
        )
    if raw.not_positive_definite:
        size = int(np.ceil(1 - 1 / raw.alpha))  # 1 - a + n a <= 0 from this n on (a < 0)
        notes.append(
            f"alpha = {raw.alpha:.4g} is so negative that the exchangeable working "
            f"correlation is not positive definite for clusters of {size} or more "
            "rows; as geepack does, the fit goes on (the robust covariance stays "
            "valid), but consider cluster='model_item'."
        )
    return notes
