"""Objective against subjective, like for like: shared families, per model, invalid answers.

Kamal et al. (2026) compare mean agreement C_i (eq. 1) of objective and subjective
items. Such a comparison is only fair when both sides hold the same perturbation
families, the same model and comparable data. This module builds the numbers a reader
can trust:

- :func:`shared_families` splits the perturbation categories into those both dataset
  types have (with a defined C_i) and those one type lacks;
- :func:`type_table` is the paper's Table 2 per model (or pooled, labelled so): mean C_i
  per dataset type and category with stratified item-bootstrap 95 % intervals, the
  objective - subjective gap with its interval, item counts, and an ``all`` row over the
  shared families only;
- :func:`invalid_rates` counts invalid answers by model x dataset type x category and
  reason, and :func:`invalid_gaps` finds models whose invalid rates differ between the
  types by more than a margin;
- :func:`invalid_as_disagreement` rewrites a table so that every invalid answer is a
  vote of its own that agrees with nothing: the sensitivity analysis of the type
  comparison to invalid answers.

Every function takes DataFrames and returns DataFrames; nothing is printed.
:func:`common_families` is plumbing of :func:`type_table` and the pipeline (a list of
names, no statistic), so it carries Parameters and Returns but no formula.

References
----------
Kamal et al. (2026), eq. 1 and Table 2.
Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analyses.bootstrap import bootstrap_items
from analyses.table_input import REFERENCE

__all__ = [
    "INVALID_REASONS",
    "TYPE_TABLE_COLUMNS",
    "common_families",
    "invalid_as_disagreement",
    "invalid_gaps",
    "invalid_rates",
    "shared_families",
    "type_table",
]

TYPES = ("objective", "subjective")
#: Reasons an answer is invalid, as the table's ``invalid_reason`` holds them ("error: ..."
#: is folded into ``error``).
INVALID_REASONS = ("empty", "refusal", "ambiguous", "no_label", "error")
TYPE_TABLE_COLUMNS = [
    "model",
    "category",
    "scope",
    "objective",
    "objective_ci_low",
    "objective_ci_high",
    "subjective",
    "subjective_ci_low",
    "subjective_ci_high",
    "gap",
    "gap_ci_low",
    "gap_ci_high",
    "n_items_objective",
    "n_items_subjective",
]
POOLED = "pooled"


def shared_families(items: pd.DataFrame) -> tuple[list[str], dict[str, list[str]]]:
    """Perturbation categories with a defined C_i on both dataset types, and the rest.

    Parameters
    ----------
    items
        One row per prompt set (``analyses.item_agreement`` output): ``dataset_type``,
        ``category``, ``c_i``.

    Returns
    -------
    (shared, only)
        ``shared``: categories both types have, sorted; ``only``: dataset type -> the
        categories only that type has.

    Notes
    -----
    With F_t the perturbation categories (``original`` excluded) in which type t has a
    prompt set with a defined C_i (Kamal et al. 2026, eq. 1): shared = F_obj & F_subj (the
    intersection), only[t] = F_t - shared.  A type comparison is like for like only over
    ``shared``.

    References
    ----------
    Kamal et al. (2026), eq. 1 and Table 2.

    Examples
    --------
    >>> import pandas as pd
    >>> from analyses import shared_families
    >>> items = pd.DataFrame({
    ...     "dataset_type": ["objective", "objective", "subjective", "subjective"],
    ...     "category": ["paraphrase", "formatting", "paraphrase", "framing"],
    ...     "c_i": [1.0, 0.5, 0.8, 0.6]})
    >>> shared_families(items)
    (['paraphrase'], {'objective': ['formatting'], 'subjective': ['framing']})
    """
    x = items[(items["category"] != REFERENCE) & items["c_i"].notna()]
    have = {t: set(x.loc[x["dataset_type"] == t, "category"]) for t in TYPES}
    shared = sorted(have["objective"] & have["subjective"])
    only = {t: sorted(have[t] - set(shared)) for t in TYPES}
    return shared, only


def common_families(items: pd.DataFrame) -> list[str]:
    """The families every model has with a defined C_i on both dataset types, sorted.

    The pooled comparison averages these only, so no family enters one side from a model
    that lacks it on the other side.

    Parameters
    ----------
    items
        :func:`analyses.item_agreement` output (``model``, ``dataset_type``,
        ``category``, ``c_i``).

    Returns
    -------
    list of str
        The intersection over models of :func:`shared_families`' first element, sorted
        (empty for an empty frame).
    """
    sets = [set(shared_families(g)[0]) for _, g in items.groupby("model", sort=True)]
    return sorted(set.intersection(*sets)) if sets else []


def _one_table(
    items: pd.DataFrame, model: str, n_boot: int, seed: int, shared: Sequence[str]
) -> pd.DataFrame:
    x = items[(items["category"] != REFERENCE) & items["c_i"].notna()]
    if x.empty:
        return pd.DataFrame(columns=TYPE_TABLE_COLUMNS)
    pooled_all = x[x["category"].isin(shared)].assign(category="all")
    boot = bootstrap_items(
        pd.concat([x, pooled_all], ignore_index=True),
        by=("dataset_type", "category"),
        n_boot=n_boot,
        seed=seed,
    )
    rows = []
    cats = sorted(set(x["category"])) + (["all"] if len(pooled_all) else [])
    for cat in cats:
        cell = boot[boot["category"] == cat].set_index("dataset_type")
        row: dict[str, object] = {"model": model, "category": cat}
        if cat == "all":
            row["scope"] = "shared families"
        else:
            row["scope"] = (
                "both types"
                if cat in shared
                else ("objective only" if "objective" in cell.index else "subjective only")
            )
        for t in TYPES:
            if t in cell.index:
                row[t] = cell.at[t, "estimate"]
                row[f"{t}_ci_low"] = cell.at[t, "ci_low"]
                row[f"{t}_ci_high"] = cell.at[t, "ci_high"]
                row[f"n_items_{t}"] = int(cell.at[t, "n_items"])
            else:
                row[t] = row[f"{t}_ci_low"] = row[f"{t}_ci_high"] = np.nan
                row[f"n_items_{t}"] = 0
        gap = "objective - subjective"
        if gap in cell.index:
            row["gap"] = cell.at[gap, "estimate"]
            row["gap_ci_low"] = cell.at[gap, "ci_low"]
            row["gap_ci_high"] = cell.at[gap, "ci_high"]
        else:
            row["gap"] = row["gap_ci_low"] = row["gap_ci_high"] = np.nan
        rows.append(row)
    return pd.DataFrame(rows, columns=TYPE_TABLE_COLUMNS)


def type_table(
    items: pd.DataFrame, *, by_model: bool = True, n_boot: int = 2000, seed: int = 0
) -> pd.DataFrame:
    """Mean agreement C_i by dataset type and category, like for like (Table 2).

    Parameters
    ----------
    items
        ``analyses.item_agreement`` output (one row per prompt set).
    by_model
        One block per model (default); False pools the models into one block whose
        ``model`` column says ``pooled`` (each model's prompt set of an item counts once);
        its ``all`` row pools the families every model has on both types.
    n_boot, seed
        Item-bootstrap replicates (stratified by dataset) and their seed.

    Returns
    -------
    DataFrame
        Columns ``model, category, scope, objective, objective_ci_low, objective_ci_high,
        subjective, subjective_ci_low, subjective_ci_high, gap, gap_ci_low, gap_ci_high,
        n_items_objective, n_items_subjective``. ``scope`` says whether both types have
        the category; the ``all`` row pools the shared families only, so both sides
        average the same families. ``n_items_*`` count items (not prompt sets).

    Notes
    -----
    mean C_i of a cell = sum of C_i over its prompt sets / their number (Kamal et al.
    2026, eq. 1 and Table 2); intervals are 95 % percentile intervals of a bootstrap that
    resamples items within datasets (:func:`analyses.bootstrap_items`).

    References
    ----------
    Kamal et al. (2026), Table 2; Efron & Tibshirani (1993), ch. 13.

    Examples
    --------
    The point estimates are the plain means of C_i, by hand:

    >>> from analyses import item_agreement, type_table
    >>> from analyses.synthetic import synthetic_table
    >>> items = item_agreement(synthetic_table(models=1, n_items=8, seed=2))
    >>> tab = type_table(items, n_boot=200).set_index("category")
    >>> hand = items.query("category == 'paraphrase' and c_i.notna()").groupby(
    ...     "dataset_type")["c_i"].mean()
    >>> row = tab.loc["paraphrase"]
    >>> round(float(row["gap"]), 6) == round(float(hand["objective"] - hand["subjective"]), 6)
    True
    >>> bool(row["gap_ci_low"] <= row["gap"] <= row["gap_ci_high"]), row["scope"]
    (True, 'both types')
    """
    x = items[(items["category"] != REFERENCE) & items["c_i"].notna()]
    if x.empty:
        return pd.DataFrame(columns=TYPE_TABLE_COLUMNS)
    if not by_model:
        return _one_table(x, POOLED, n_boot, seed, common_families(x))
    frames = []
    for model, g in x.groupby("model", sort=True):
        shared, _ = shared_families(g)
        frames.append(_one_table(g, str(model), n_boot, seed, shared))
    return pd.concat(frames, ignore_index=True)


def invalid_rates(t: pd.DataFrame) -> pd.DataFrame:
    """Invalid answers by model x dataset type x category, with their reasons.

    Parameters
    ----------
    t
        A validated long table (``valid``; ``invalid_reason`` when present).

    Returns
    -------
    DataFrame
        One row per cell, ``original`` included, plus an ``all`` row per model and type:
        ``model, dataset_type, category``; ``n_rows`` (rows of the cell); ``n_invalid``
        (rows with ``valid`` False); ``invalid_rate`` (n_invalid / n_rows); and one count
        column per reason (``empty, refusal, ambiguous, no_label, error``; a reason
        starting ``error`` is counted as ``error``; without ``invalid_reason`` every
        invalid row counts as ``no_label``).

    Notes
    -----
    invalid_rate of a cell = (1 / n) sum_j 1[valid_j = False] over its n rows.  Kamal
    et al. (2026) compute C_i (eq. 1) over valid answers only, so a type comparison is
    fair only if the invalid rates are alike (see :func:`invalid_gaps`).

    References
    ----------
    Kamal et al. (2026), eq. 1.

    Examples
    --------
    >>> import pandas as pd
    >>> from analyses import invalid_rates
    >>> t = pd.DataFrame({"model": "m", "dataset_type": "objective", "category": "paraphrase",
    ...     "valid": [True, False, False, True],
    ...     "invalid_reason": [None, "refusal", "error: time-out", None]})
    >>> r = invalid_rates(t).query("category == 'paraphrase'").iloc[0]
    >>> float(r["invalid_rate"]), int(r["refusal"]), int(r["error"]), 2 / 4   # by hand
    (0.5, 1, 1, 0.5)
    """
    valid = t["valid"].to_numpy(dtype=bool, na_value=False)
    if "invalid_reason" in t.columns:
        reason = t["invalid_reason"].astype(object).where(~valid, None)
        reason = reason.map(
            lambda r: None if r is None else ("error" if str(r).startswith("error") else str(r))
        )
    else:
        reason = pd.Series([None if v else "no_label" for v in valid], index=t.index, dtype=object)
    frame = pd.DataFrame(
        {
            "model": t["model"].astype(object).to_numpy(),
            "dataset_type": t["dataset_type"].astype(object).to_numpy(),
            "category": t["category"].astype(object).to_numpy(),
            "invalid": ~valid,
            "reason": reason.to_numpy(),
        }
    )
    frame = pd.concat([frame, frame.assign(category="all")], ignore_index=True)
    keys = ["model", "dataset_type", "category"]
    out = frame.groupby(keys, sort=True).agg(
        n_rows=("invalid", "size"), n_invalid=("invalid", "sum")
    )
    out["invalid_rate"] = out["n_invalid"] / out["n_rows"]
    for r in INVALID_REASONS:
        counts = frame[frame["reason"] == r].groupby(keys, sort=True).size()
        out[r] = counts.reindex(out.index, fill_value=0).astype(np.int64)
    out = out.reset_index()
    out["n_invalid"] = out["n_invalid"].astype(np.int64)
    out["_last"] = out["category"] == "all"
    out = out.sort_values(["model", "dataset_type", "_last", "category"]).drop(columns="_last")
    return out.reset_index(drop=True)


def invalid_gaps(rates: pd.DataFrame, margin: float = 0.10) -> pd.DataFrame:
    """Models whose overall invalid rate differs between the types by more than ``margin``.

    Parameters
    ----------
    rates
        :func:`invalid_rates` output (its ``all`` rows are read).
    margin
        Largest absolute difference of invalid rates that passes without a warning.

    Returns
    -------
    DataFrame
        Columns ``model``; ``objective`` and ``subjective`` (the model's invalid rate over
        all its rows of that type); ``difference`` (subjective - objective); only the
        models with |difference| > ``margin`` (empty when a type is missing).

    Notes
    -----
    difference = r_subj - r_obj with r_t = n_invalid / n_rows over the model's rows of
    type t; flagged when |difference| > margin.  A descriptive screen, not a test.

    References
    ----------
    Kamal et al. (2026), eq. 1 (C_i counts valid answers only).

    Examples
    --------
    >>> import pandas as pd
    >>> from analyses import invalid_gaps, invalid_rates
    >>> t = pd.DataFrame({"model": "m", "category": "paraphrase",
    ...     "dataset_type": ["objective"] * 4 + ["subjective"] * 4,
    ...     "valid": [True, True, True, False, True, False, False, True]})
    >>> invalid_gaps(invalid_rates(t)).round(2).values.tolist()
    [['m', 0.25, 0.5, 0.25]]
    >>> invalid_gaps(invalid_rates(t), margin=0.3).shape[0]        # 0.25 is within 0.3
    0
    """
    a = rates[rates["category"] == "all"].pivot_table(
        index="model", columns="dataset_type", values="invalid_rate", aggfunc="first"
    )
    cols = ["model", "objective", "subjective", "difference"]
    if not set(TYPES) <= set(a.columns):
        return pd.DataFrame(columns=cols)
    a = a.reset_index()
    a["difference"] = a["subjective"] - a["objective"]
    return a.loc[a["difference"].abs() > margin, cols].reset_index(drop=True)


def invalid_as_disagreement(t: pd.DataFrame) -> pd.DataFrame:
    """The table with every invalid answer turned into a vote that agrees with nothing.

    Each invalid row becomes valid with an answer of its own (1,000,000 + its position,
    never a real option and never equal to another), so it counts in N_i of its prompt set
    and lowers C_i = max_y n_i(y) / N_i; its ``agree`` flag is 0 unless the whole set is
    invalid (then every answer is a mode, the tie rule picks one and C_i = 1 / N_i). Used for the
    sensitivity analysis: does the objective - subjective comparison survive when an
    unparseable answer counts as instability rather than being left out?

    The result is for the analyses' internal use: its answers can exceed the scale.

    Parameters
    ----------
    t
        A long table with ``valid`` and ``answer``.

    Returns
    -------
    pandas.DataFrame
        A copy of ``t`` with the same columns, ``valid`` all True and ``answer``
        (nullable ``Int64``) 1,000,000 + row position on the rows that were invalid; the
        table itself when every row is valid.

    Notes
    -----
    For a prompt set with n_i(y) valid answers y and k invalid ones, C_i (Kamal et al.
    2026, eq. 1) becomes

        C_i' = max(max_y n_i(y), 1[k > 0]) / (N_i + k)    <=  C_i = max_y n_i(y) / N_i,

    so the sensitivity analysis can only lower agreement.  This deviates from the paper,
    which leaves invalid answers out; it is reported beside it, never instead.

    References
    ----------
    Kamal et al. (2026), eq. 1.

    Examples
    --------
    A set of answers 1, 1 and one invalid answer: C_i = 2 / 2 = 1 without it, 2 / 3
    with it counted as a disagreeing vote.

    >>> import pandas as pd
    >>> from analyses import invalid_as_disagreement, item_agreement
    >>> t = pd.DataFrame({"model": "m", "dataset": "d", "dataset_type": "objective",
    ...     "item_id": "q", "category": "paraphrase", "variant_id": ["p/0", "p/1", "p/2"],
    ...     "answer": [1, 1, None], "valid": [True, True, False]})
    >>> before = float(item_agreement(t)["c_i"].iloc[0])
    >>> after = float(item_agreement(invalid_as_disagreement(t))["c_i"].iloc[0])
    >>> before, round(after, 4), round(2 / 3, 4)
    (1.0, 0.6667, 0.6667)
    """
    out = t.copy()
    valid = out["valid"].to_numpy(dtype=bool, na_value=False)
    if valid.all():
        return out
    bad = np.flatnonzero(~valid)
    big = 1_000_000
    answer = out["answer"].to_numpy(dtype=np.int64, na_value=-1).copy()
    answer[bad] = big + np.arange(bad.size)
    out["answer"] = pd.array(answer, dtype="Int64")
    out["valid"] = True
    return out
