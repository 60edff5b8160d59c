"""Binomial GEE of agreement (or any 0/1 outcome): the fit, step by step.

:func:`gee` fits ``agree ~ model + dataset_type * category + model:category``
(or any formula) by GEE with logit link, exchangeable (or independence) working
correlation and robust sandwich covariance, in named steps:

1. :func:`analyses.gee.rows.frame_rows` (any frame) or
   :func:`analyses.gee.long_table.fitted_rows` (a long table) -- the rows and the response,
   then the formula's variables evaluated (:func:`analyses.gee.formula.evaluate_variables`);
2. :func:`analyses.gee.factors.drop_flat_terms` -- terms of a one-valued variable are dropped;
3. :func:`analyses.gee.separation.check_separation` and
   :func:`analyses.gee.separation.with_linear_separation` -- factor cells with a constant
   response, or any separating linear combination, are found and named; when there are
   any, the whole model is fitted by the bias-reduced (Firth-type) estimating equation,
   so every estimate stays finite;
4. :func:`analyses.gee.design.build_model_design` -- the treatment-coded design of the
   distinct rows, aliased columns dropped by R's rule;
5. :func:`analyses.gee.solver.aggregate_cells` -- the rows summed into (cluster, design row) cells;
6. :func:`analyses.gee.solver.solve_gee` -- the estimating equations, then the covariance
   step named by ``cov_type`` (:mod:`analyses.gee.covariance`);
7. :func:`analyses.gee.design.sum_coded` -- the same fit in sum-to-zero coding, for Type III.

The equations are in :mod:`analyses.gee.solver`.  Without separation the fit is
geepack's ``geeglm(family = binomial, corstr = "exchangeable")`` (checked against
geepack + car in the tests); with it, the independence fit is brglm2's
``glm(..., method = "brglmFit")``.

References
----------
Liang, K.-Y. & Zeger, S. L. (1986). Biometrika 73(1), 13-22.
Firth, D. (1993). Biometrika 80(1), 27-38.
Halekoh, U., Hojsgaard, S. & Yan, J. (2006). The R package geepack for generalized
estimating equations. Journal of Statistical Software 15(2).
Kamal et al. (2026), Table 3 (the GEE of agreement and its Wald tests).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from analyses.gee.covariance import COV_TYPES, covariance
from analyses.gee.design import build_model_design, sum_coded
from analyses.gee.factors import drop_flat_terms, factor_levels, is_factor
from analyses.gee.formula import Formula, evaluate_variables, parse_formula
from analyses.gee.inference import check_inference, sum_coding_map
from analyses.gee.long_table import CLUSTERS, COMPUTED, DEFAULT_FORMULA, columns_of, fitted_rows
from analyses.gee.result import GEEResult
from analyses.gee.rows import FittedRows, cluster_columns, contiguity_note, frame_rows
from analyses.gee.separation import COLUMNS as SEPARATION_COLUMNS
from analyses.gee.separation import check_separation, with_linear_separation
from analyses.gee.small_sample import DEFAULT_COV_TYPE, DEFAULT_TEST, CorrectionUndefined, cr2_parts
from analyses.gee.solver import CORSTRS, aggregate_cells, solve_gee, solver_notes
from analyses.prompt_sets import PromptSets
from analyses.table_input import load
from robustness.core.errors import AnalysisError
from robustness.core.table import TableError

__all__ = ["fit_rows", "gee", "gee_loaded", "gee_loaded_or_plain"]


def gee(
    df: pd.DataFrame,
    formula: str | None = None,
    cluster: str | Sequence[str] | None = "item",
    *,
    levels: Mapping[str, Sequence[object]] | None = None,
    corstr: str = "exchangeable",
    cov_type: str = "robust",
    test: str = "chi2",
    bias_reduction: bool | str = "auto",
    tol: float = 1e-10,
    max_iter: int = 100,
) -> GEEResult:
    """Binomial GEE of agreement (or another 0/1 outcome) with Wald chi-square tests.

    Parameters
    ----------
    df
        Any DataFrame with a binary (0/1 or boolean) response, or a long table.
    formula
        R-style formula read by formulaic (:mod:`analyses.gee.formula`: ``C()``,
        ``factor()``, ``I()``, numeric covariates, R's term order).  Default
        :data:`DEFAULT_FORMULA`; the paper's Table 3 is ``agree ~ model + dataset *
        category + model:category``.  On a long table the response is a 0/1 column
        or one of ``agree`` (row's answer equals its prompt set's majority),
        ``correct`` (answer equals gold) and ``flip`` (answer differs from the
        original prompt's), computed when the table has no such column.
    cluster
        A column (or a list of columns) of ``df`` whose values mark a cluster, or None
        for one cluster per row: any frame, every row with the values it needs is
        fitted.  Clusters are taken by value (rows with equal values are one cluster
        wherever they lie); geepack's ``geeglm`` groups consecutive rows instead, so a
        note says when a cluster's rows are not contiguous.  ``'item'`` (dataset +
        item_id; the default, as items are shared across models) and ``'model_item'``,
        when not columns of ``df``, fit a long table (validated; rows of category
        ``original``, invalid rows and single-answer prompt sets are left out, each
        with a note).
    levels
        Level order per factor (the first is the reference of treatment coding);
        by default sorted.
    corstr
        Working correlation, ``'exchangeable'`` or ``'independence'``.
    cov_type
        The covariance step, a key of :data:`analyses.gee.covariance.COV_TYPES`:
        ``'robust'`` (the plain sandwich, as geepack and statsmodels: the default here, so
        that a call reproduces R), ``'bias_reduced'`` (Mancl & DeRouen 2001, any working
        correlation; the default of ``robustness analyze`` and ``robustness power``, chosen
        by measured size, README "Size") or ``'cr2'`` (Bell & McCaffrey 2002,
        ``corstr='independence'`` only); :mod:`analyses.gee.small_sample`.
    test
        Reference distribution of the Wald tests, coefficient and contrast p-values:
        ``'chi2'`` (normal for one direction), ``'F'`` (F(q, G - p); t(G - p)) or
        ``'HTZ'`` (Pustejovsky & Tipton 2018, with ``cov_type='cr2'``).  Every table
        states both in ``attrs['inference']``.
    bias_reduction
        ``'auto'`` solves the bias-reduced equation when the data are separated (a
        factor cell with a constant response, or any linear combination of the
        design columns, :func:`analyses.gee.separation.linear_separation`), ``True``
        always, ``False`` never (separation is then an error).
    tol, max_iter
        Convergence: the largest coefficient change below ``tol``.

    Returns
    -------
    GEEResult
        ``.wald(2)``, ``.wald(3)``, ``.coefficients()``, ``.marginal_means()``,
        ``.contrasts()``, ``.notes``, ``.separation``.

    Notes
    -----
    Solves sum_i D_i' V_i^{-1} (y_i - mu_i) = 0 (plus Firth's adjustment
    (1/2) tr(B^{-1} dB/db_r) when bias-reduced); see :mod:`analyses.gee.solver`.
    A fit that does not converge publishes no Wald test, marginal mean or contrast:
    each is withheld with the reason (``GEEResult.withheld``).

    References
    ----------
    Liang & Zeger (1986); Firth (1993); Halekoh et al. (2006); Kamal et al. (2026).

    Examples
    --------
    Coefficients and robust standard errors equal statsmodels' GEE:

    >>> import numpy as np, statsmodels.api as sm, statsmodels.formula.api as smf
    >>> from analyses import agreement_rows
    >>> from analyses.synthetic import synthetic_table
    >>> t = synthetic_table(models=2, n_items=15, seed=4)
    >>> fit = gee(t, "agree ~ model + category", tol=1e-12)
    >>> r = agreement_rows(t)
    >>> d = r[(r.category != "original") & r.valid & r.agree.notna()].copy()
    >>> d = d.assign(agree=d.agree.astype(float), g=d.dataset + "/" + d.item_id)
    >>> d = d.sort_values("g", kind="stable")
    >>> sm_fit = smf.gee("agree ~ model + category", "g", d.astype({"model": object,
    ...     "category": object}), family=sm.families.Binomial(),
    ...     cov_struct=sm.cov_struct.Exchangeable()).fit(ctol=1e-13, ddof_scale=0)
    >>> bool(np.allclose(fit.params, sm_fit.params, rtol=1e-7))
    True
    >>> bool(np.allclose(fit.bse, sm_fit.bse, rtol=1e-7))
    True

    Any frame: geepack's ``ohio`` (wheeze by age and mother's smoking, 537 children).

    >>> import pandas as pd
    >>> ohio = pd.read_csv("tests/fixtures/datasets/ohio.csv")
    >>> round(float(gee(ohio, "resp ~ age * C(smoke)", cluster="id").params["age"]), 6)
    -0.141236
    """
    if not isinstance(df, pd.DataFrame):
        raise TableError(f"gee needs a pandas DataFrame, not {type(df).__name__}.")
    f = parse_formula(DEFAULT_FORMULA if formula is None else formula)
    options = dict(
        levels=levels,
        corstr=corstr,
        cov_type=cov_type,
        test=test,
        bias_reduction=bias_reduction,
        tol=tol,
        max_iter=max_iter,
    )
    if isinstance(cluster, str) and cluster in CLUSTERS and cluster not in df.columns:
        t = load(df, optional=("gold", "correct", *columns_of(f, df.columns)))
        return gee_loaded(t, f, cluster, **options)  # type: ignore[arg-type]
    if f.response in COMPUTED and f.response not in df.columns:
        raise TableError(
            f"formula {f.text!r}: the response {f.response!r} is not a column of the frame; "
            "it is computed from a long table, whose clusters are 'item' or 'model_item' "
            f"(cluster={cluster!r} fits the frame as any data, with its own columns)."
        )
    clusters = cluster_columns(df, cluster)
    rows = frame_rows(df, f, clusters)
    rows.notes.extend(contiguity_note(rows.data, clusters))
    label = cluster if cluster is None or isinstance(cluster, str) else tuple(cluster)
    return fit_rows(rows, f, clusters, label, long_table=False, **options)  # type: ignore[arg-type]


def gee_loaded(
    t: pd.DataFrame,
    formula: str | Formula | None = None,
    cluster: str = "item",
    *,
    ps: PromptSets | None = None,
    levels: Mapping[str, Sequence[object]] | None = None,
    corstr: str = "exchangeable",
    cov_type: str = "robust",
    test: str = "chi2",
    bias_reduction: bool | str = "auto",
    tol: float = 1e-10,
    max_iter: int = 100,
) -> GEEResult:
    """:func:`gee` on a table already checked by ``load`` that keeps the formula's columns.

    The internal twin of :func:`gee` (the pipeline loads and groups the table once): its
    statistics, Notes, References and examples are those of :func:`gee`.

    Parameters
    ----------
    t
        A table checked by ``analyses.table_input.load`` that keeps the formula's columns.
    formula
        As :func:`gee`, or the formula already parsed (it is parsed once per fit).
    cluster, levels, corstr, cov_type, test, bias_reduction, tol, max_iter
        As :func:`gee`.
    ps
        The table's prompt sets, when already built (they give ``agree``).

    Returns
    -------
    GEEResult
        As :func:`gee`.
    """
    f = formula if isinstance(formula, Formula) else parse_formula(formula or DEFAULT_FORMULA)
    if cluster not in CLUSTERS:
        raise AnalysisError(f"cluster must be 'item' or 'model_item', not {cluster!r}.")
    rows = fitted_rows(t, f, ps)
    return fit_rows(
        rows,
        f,
        CLUSTERS[cluster],
        cluster,
        long_table=True,
        levels=levels,
        corstr=corstr,
        cov_type=cov_type,
        test=test,
        bias_reduction=bias_reduction,
        tol=tol,
        max_iter=max_iter,
    )


def _check_options(corstr: str, cov_type: str, test: str = "chi2") -> None:
    if cov_type not in COV_TYPES:
        raise AnalysisError(
            f"cov_type must be one of {', '.join(map(repr, COV_TYPES))}, not {cov_type!r}."
        )
    if corstr not in CORSTRS:
        raise AnalysisError(f"corstr must be one of {', '.join(CORSTRS)}, not {corstr!r}.")
    check_inference(cov_type, test, corstr)


def _variables(rows: FittedRows, f: Formula, long_table: bool) -> tuple[FittedRows, list[str]]:
    """The rows with the formula's variables evaluated, and which variables are factors."""
    data, y, notes = evaluate_variables(f, rows.data), rows.y, list(rows.notes)
    numeric = [v for v in f.variables if f.spec(v).kind == "numeric"]
    bad = data[numeric].isna().any(axis=1).to_numpy() if numeric else np.zeros(len(y), bool)
    if bad.all():
        raise TableError(f"formula {f.text!r}: {numeric[0]!r} is undefined on every row.")
    if bad.any():
        notes.append(
            f"{int(bad.sum())} rows where {', '.join(numeric)} is undefined were excluded."
        )
        data, y = data.loc[~bad].reset_index(drop=True), y[~bad]
    factors = [v for v in f.variables if is_factor(data, v, f.spec(v).kind, long_table)]
    return FittedRows(data, y, notes), factors


def fit_rows(
    rows: FittedRows,
    f: Formula,
    clusters: Sequence[str],
    cluster_label: str | tuple[str, ...] | None,
    *,
    long_table: bool,
    levels: Mapping[str, Sequence[object]] | None = None,
    corstr: str = "exchangeable",
    cov_type: str = "robust",
    test: str = "chi2",
    bias_reduction: bool | str = "auto",
    tol: float = 1e-10,
    max_iter: int = 100,
) -> GEEResult:
    """Fit the GEE of ``f`` to rows already selected (the steps of the module docstring).

    Parameters
    ----------
    rows
        The fitted rows with their 0/1 response and notes.
    f
        The parsed formula.
    clusters
        The cluster columns of ``rows.data``.
    cluster_label
        How the caller named the clusters (kept in the result).
    long_table
        Whether the rows are a long table's (its id columns are factors).
    levels, corstr, cov_type, test, bias_reduction, tol, max_iter
        As :func:`gee`.

    Returns
    -------
    GEEResult
        As :func:`gee`.
    """
    _check_options(corstr, cov_type, test)
    rows, factors = _variables(rows, f, long_table)
    data, y, notes = rows.data, rows.y, list(rows.notes)
    terms, dropped, flat_notes = drop_flat_terms(data, factors, list(f.terms))
    notes += flat_notes
    separation, reduce, sep_notes = check_separation(
        y, data, factors, terms, f.response, bias_reduction
    )
    fit_formula = f.with_terms(terms)
    user_levels = dict(levels or {})
    lev = {v: factor_levels(data[v], user_levels.get(v), v) for v in factors}
    design = build_model_design(fit_formula, data, lev)
    separation, lp_notes = with_linear_separation(design, y, separation, bias_reduction)
    notes += sep_notes + lp_notes
    reduce = reduce or bool(lp_notes)
    if design.aliased:
        notes.append(
            f"{len(design.aliased)} design column(s) are not estimable from the fitted rows "
            f"and were dropped (aliased): {', '.join(design.aliased)}."
        )
    cells, cluster_sizes = aggregate_cells(data, y, design, clusters)
    raw = solve_gee(cells, corstr=corstr, bias_reduction=reduce, tol=tol, max_iter=max_iter)
    notes += solver_notes(raw)
    cr2 = cr2_parts(cells, raw.params) if cov_type == "cr2" else None
    cov = cr2.cov if cr2 is not None else covariance(cov_type, raw, cells)
    b_sum, v_sum, term_of_sum = sum_coded(fit_formula, design, lev, raw.params, cov)
    names = design.names
    numeric = [c for v in fit_formula.variables if v not in lev for c in f.spec(v).columns]
    result = GEEResult(
        formula=f.text,
        response=f.response,
        cluster=cluster_label,
        terms=terms,
        params=pd.Series(raw.params, index=names),
        cov=pd.DataFrame(cov, index=names, columns=names),
        params_sum=b_sum,
        cov_sum=v_sum,
        cov_naive=pd.DataFrame(raw.cov_naive, index=names, columns=names),
        alpha=raw.alpha,
        scale=raw.scale,
        n_obs=len(data),
        n_clusters=cells.n_clusters,
        max_cluster_size=int(cluster_sizes.max()),
        iterations=raw.iterations,
        converged=raw.converged,
        notes=notes,
        separation=separation.reset_index(drop=True).reindex(columns=SEPARATION_COLUMNS),
        dropped_terms=dropped,
        aliased=design.aliased,
        levels=lev,
        grid=design.grid.assign(
            n=np.bincount(design.row_of, minlength=len(design.grid)),
            y_sum=np.bincount(design.row_of, weights=y, minlength=len(design.grid)),
        ),
        corstr=corstr,
        cov_type=cov_type,
        test=test,
        cov_plain=pd.DataFrame(raw.cov_robust, index=names, columns=names),
        bias_reduced=raw.bias_reduced,
        full_names=design.full_names,
        null_basis=design.null_basis,
        model_formula=fit_formula,
        covariates={
            c: pd.to_numeric(data[c], errors="coerce").to_numpy(dtype=float)
            for c in dict.fromkeys(numeric)
        },
        _term_of=design.term_of,
        _term_of_sum=term_of_sum,
        _cr2=cr2,
        _sum_map=sum_coding_map(fit_formula, design, lev) if test == "HTZ" else None,
    )
    for kind in (2, 3):
        result.notes += [n for n in result.wald(kind).attrs["notes"] if n not in result.notes]
    return result


def gee_loaded_or_plain(
    t: pd.DataFrame,
    formula: str,
    cluster: str,
    *,
    ps: PromptSets | None = None,
    cov_type: str = DEFAULT_COV_TYPE,
    test: str = DEFAULT_TEST,
) -> tuple[GEEResult, list[str]]:
    """:func:`gee_loaded` with ``cov_type``/``test``, and a note wherever the design rules
    them out: the plain sandwich with chi-square where the correction does not exist (a
    cluster alone identifies a coefficient), the chi-square reference where F(q, G - p)
    does not (G <= p).

    Parameters
    ----------
    t, formula, cluster, ps
        As :func:`gee_loaded`.
    cov_type, test
        As :func:`gee`; the defaults are the measured choice (README "Size").

    Returns
    -------
    (GEEResult, list of str)
        The fit and the notes of the fallback (empty when there was none).
    """
    try:
        fit = gee_loaded(t, formula, cluster, ps=ps, cov_type=cov_type, test=test)
    except CorrectionUndefined as exc:
        fit = gee_loaded(t, formula, cluster, ps=ps, cov_type="robust", test="chi2")
        return fit, [f"{exc} Its tests use the plain sandwich with chi-square instead."]
    if test == "F" and fit.n_clusters <= len(fit.params):
        note = (
            f"F(q, G - p) does not exist with {fit.n_clusters} clusters for {len(fit.params)} "
            "coefficients; its tests use the chi-square reference instead."
        )
        fit = gee_loaded(t, formula, cluster, ps=ps, cov_type=fit.cov_type, test="chi2")
        return fit, [note]
    return fit, []
