"""Paired tests of binary outcomes: Cochran's Q across categories, McNemar between two models.

Both come from pingouin (``pingouin.cochran``, ``pingouin.chi2_mcnemar``); this
module only builds the paired data from the long table.

Cochran's Q (Cochran 1950): b subjects (items) each observed under k
conditions (categories) with a binary outcome; with C_j the column totals, R_i
the row totals and N the grand total,

    Q = (k - 1) [k sum_j C_j^2 - N^2] / [k N - sum_i R_i^2]  ~  chi-square(k - 1).

McNemar (1947): on prompts answered by both models, with b the prompts where
only model A succeeds and c where only model B does,

    chi2 = (|b - c| - 1)^2 / (b + c)  ~  chi-square(1)    (continuity-corrected),

and the exact p-value is the two-sided binomial test of b against b + c at 1/2.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pingouin as pg

from analyses._counts import MIN_SET, PromptSets, prompt_sets
from analyses._data import REFERENCE, correct_column, load

COCHRAN_OUTCOMES = ("consistent", "majority_is_original")


def cochran_q(
    df: pd.DataFrame,
    by: Sequence[str] = ("model", "dataset_type"),
    outcome: str = "consistent",
) -> pd.DataFrame:
    """Cochran's Q test across perturbation categories, per ``by`` group (pingouin).

    Subjects are items (dataset + item_id); conditions are the perturbation
    categories (``original`` excluded); the binary outcome of an item in a
    category is, for ``outcome='consistent'``, whether all its valid variants
    gave the same answer (C_i = 1; undefined for a set with one answer), and for
    ``'majority_is_original'``, whether the set's majority equals the original
    prompt's answer.  Items without a
    value in every category are left out (``n_items_dropped``).

    Columns: ``by``, ``n_items``, ``n_items_dropped``, ``n_categories``, ``q``,
    ``dof``, ``p_value``, ``min_rate`` and ``max_rate`` (the outcome's lowest and
    highest rate over the categories, on the complete items).

    Examples
    --------
    >>> from analyses import cochran_q
    >>> from analyses.synthetic import synthetic_table
    >>> res = cochran_q(synthetic_table(models=1, n_items=20, seed=6))
    >>> res[["dataset_type", "dof"]].values.tolist()
    [['objective', 7], ['subjective', 7]]
    """
    return cochran_sets(prompt_sets(load(df)), by=by, outcome=outcome)


def cochran_sets(
    ps: PromptSets, by: Sequence[str] = ("model", "dataset_type"), outcome: str = "consistent"
) -> pd.DataFrame:
    """:func:`cochran_q` on prompt sets already built (used by the pipeline)."""
    if outcome not in COCHRAN_OUTCOMES:
        raise ValueError(f"outcome must be one of {COCHRAN_OUTCOMES}, not {outcome!r}.")
    keys = ps.keys.copy()
    n = ps.maj.n
    if outcome == "consistent":  # a single answer is consistent by construction: no value
        y = np.where(n >= MIN_SET, (ps.maj.top == n).astype(float), np.nan)
    else:
        y = np.where(
            (n > 0) & (ps.original >= 0), (ps.maj.majority == ps.original).astype(float), np.nan
        )
    keys["y"] = y
    keys["subject"] = keys["dataset"].astype(str) + "\x1f" + keys["item_id"].astype(str)
    keys = keys[keys["category"] != REFERENCE]
    rows = []
    for key, g in keys.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        if g["model"].nunique() > 1 and "model" not in by:
            g = g.assign(subject=g["model"].astype(str) + "\x1f" + g["subject"])
        wide = g.pivot_table(index="subject", columns="category", values="y", aggfunc="first")
        complete = wide.dropna()
        row = {
            **dict(zip(by, key, strict=True)),
            "n_items": len(complete),
            "n_items_dropped": len(wide) - len(complete),
            "n_categories": wide.shape[1],
        }
        constant = complete.to_numpy().min() == complete.to_numpy().max() if len(complete) else True
        if wide.shape[1] < 2 or len(complete) < 2 or constant:  # Q is 0/0 when nothing varies
            row.update(q=np.nan, dof=max(wide.shape[1] - 1, 0), p_value=np.nan)
        else:
            long = complete.reset_index().melt(
                id_vars="subject", var_name="category", value_name="y"
            )
            res = pg.cochran(long, dv="y", within="category", subject="subject")
            row.update(
                q=float(res["Q"].iloc[0]),
                dof=int(res["dof"].iloc[0]),
                p_value=float(res["p_unc"].iloc[0]),
            )
        rates = complete.mean()
        row["min_rate"] = float(rates.min()) if len(complete) else np.nan
        row["max_rate"] = float(rates.max()) if len(complete) else np.nan
        rows.append(row)
    return pd.DataFrame(
        rows,
        columns=[
            *by,
            "n_items",
            "n_items_dropped",
            "n_categories",
            "q",
            "dof",
            "p_value",
            "min_rate",
            "max_rate",
        ],
    )


def mcnemar(
    df: pd.DataFrame,
    model_a: str,
    model_b: str,
    outcome: str = "correct",
    by: Sequence[str] = (),
) -> pd.DataFrame:
    """McNemar's test between two models on the same prompts (pingouin ``chi2_mcnemar``).

    Prompts are matched on (dataset, item_id, category, variant_id); a pair
    counts when both rows are valid and have the outcome (``'correct'``: answer
    equals gold; ``'agree'``: answer equals its prompt set's majority).  With no
    discordant pair the test is undefined; it is then reported as chi2 = 0 and
    p = 1.  Columns: ``by``, ``model_a``, ``model_b``, ``outcome``, ``n_pairs``,
    ``both``, ``only_a``, ``only_b``, ``neither``, ``chi2``, ``dof``,
    ``p_approx``, ``p_exact``.

    Examples
    --------
    >>> from analyses import mcnemar
    >>> from analyses.synthetic import synthetic_table
    >>> t = synthetic_table(models=2, n_items=20, seed=8)
    >>> r = mcnemar(t, "model_1", "model_2").iloc[0]
    >>> int(r["both"] + r["only_a"] + r["only_b"] + r["neither"]) == int(r["n_pairs"])
    True
    """
    t = load(df, optional=("gold", "correct", *[c for c in by if c in df.columns]))
    return mcnemar_loaded(t, model_a, model_b, outcome=outcome, by=by)


def mcnemar_loaded(
    t: pd.DataFrame,
    model_a: str,
    model_b: str,
    outcome: str = "correct",
    by: Sequence[str] = (),
    ps: PromptSets | None = None,
) -> pd.DataFrame:
    """:func:`mcnemar` on a table already checked by ``load`` (used by the pipeline)."""
    for c in by:
        if c not in t.columns:
            raise ValueError(f"mcnemar: the table has no column {c!r}.")
    models = set(t["model"].unique())
    for m in (model_a, model_b):
        if m not in models:
            raise ValueError(
                f"mcnemar: model {m!r} is not in the table (models: {sorted(models)!r})."
            )
    if outcome == "correct":
        y = correct_column(t)
        if y is None:
            raise ValueError("outcome 'correct' needs a 'correct' or a 'gold' column.")
    elif outcome == "agree":
        y = (ps or prompt_sets(t)).agree
    else:
        raise ValueError(f"outcome must be 'correct' or 'agree', not {outcome!r}.")
    keys = ["dataset", "item_id", "category", "variant_id"]
    base = t[[*keys, *[c for c in by if c not in keys], "model"]].copy()
    base["y"] = y
    base = base[~np.isnan(y)]
    a = base[base["model"] == model_a].drop(columns="model")
    b = base[base["model"] == model_b].drop(columns=["model", *[c for c in by if c not in keys]])
    pairs = a.merge(b, on=keys, suffixes=("_a", "_b"))
    groups = pairs.groupby(list(by), sort=True) if by else [((), pairs)]
    rows = []
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        ya, yb = g["y_a"].to_numpy(), g["y_b"].to_numpy()
        cells = {
            "both": int(((ya == 1) & (yb == 1)).sum()),
            "only_a": int(((ya == 1) & (yb == 0)).sum()),
            "only_b": int(((ya == 0) & (yb == 1)).sum()),
            "neither": int(((ya == 0) & (yb == 0)).sum()),
        }
        if cells["only_a"] + cells["only_b"] == 0:
            stat = {"chi2": 0.0, "dof": 1, "p_approx": 1.0, "p_exact": 1.0}
        else:
            data = pd.DataFrame({"a": ya.astype(int), "b": yb.astype(int)})
            _, res = pg.chi2_mcnemar(data, "a", "b")
            stat = {
                "chi2": float(res["chi2"].iloc[0]),
                "dof": int(res["dof"].iloc[0]),
                "p_approx": float(res["p_approx"].iloc[0]),
                "p_exact": float(res["p_exact"].iloc[0]),
            }
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "model_a": model_a,
                "model_b": model_b,
                "outcome": outcome,
                "n_pairs": len(g),
                **cells,
                **stat,
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            *by,
            "model_a",
            "model_b",
            "outcome",
            "n_pairs",
            "both",
            "only_a",
            "only_b",
            "neither",
            "chi2",
            "dof",
            "p_approx",
            "p_exact",
        ],
    )
