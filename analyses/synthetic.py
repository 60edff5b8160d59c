"""Seeded synthetic long tables with a known, controllable robustness structure.

The generator writes a table of the shape a real study writes (several models,
objective multiple-choice and subjective agree-scale datasets, the ``original``
prompt plus the eight perturbation families with ``n_variants`` variants each,
invalid rows, gold and correctness, option probabilities and confidence) and
lets the caller set how stable each dataset type x category is.  Tests, the
benchmark and the other packages use it to exercise the analyses before a real
model has answered anything.

How an answer comes about
-------------------------
For every model m and item i an *original answer* a0 is drawn: for objective
items it is the gold option with probability ``accuracy`` (shifted per model by
``model_effect`` on the logit scale), otherwise a uniformly chosen wrong option;
for subjective items it is the item's consensus point on the scale moved by a
small model-specific step.  For every perturbation category c the model's
*category answer* is a0, or, with probability ``category_shift``, a different
one (a systematic shift that a whole family of prompts causes).  Each variant
then gives the category answer with probability

    s = expit(logit(stability[dataset_type, c]) + model_effect[m] + u_i),

with ``u_i ~ N(0, item_sd)`` an item effect shared by every model (which makes
instability an item property, as measured in real studies), and otherwise a
"drift" answer: a neighbouring scale point for ordinal items (80 %), any other
option otherwise.  A share ``invalid_rate`` of rows is invalid (no answer,
with a reason), as a normaliser would record them.

Example
-------
>>> from analyses.synthetic import synthetic_table
>>> t = synthetic_table(models=2, n_items=3, n_variants=2, seed=1)
>>> sorted(t["category"].unique())[:3]
['formatting', 'framing', 'label_substitution']
>>> len(t) == 2 * 4 * 3 * (1 + 8 * 2)
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit, logit

from analyses.synthetic_draws import (
    Items,
    Rows,
    category_answers,
    draw_items,
    drift,
    original_answers,
    probabilities,
)
from robustness.core.errors import AnalysisError
from robustness.core.names import FAMILY_ORDER

#: The eight perturbation families of the toolkit, in their canonical order.
FAMILIES: tuple[str, ...] = FAMILY_ORDER

#: Default probability that a variant repeats its category's answer, by dataset type.
#: Objective questions are more stable than subjective ones; option order, label
#: substitution and logical equivalence (negation with a reversed scale) hurt most.
DEFAULT_STABILITY: dict[tuple[str, str], float] = {
    ("objective", "option_order"): 0.86,
    ("objective", "label_substitution"): 0.88,
    ("objective", "spelling_noise"): 0.94,
    ("objective", "lexical_substitution"): 0.92,
    ("objective", "paraphrase"): 0.91,
    ("objective", "formatting"): 0.95,
    ("objective", "logical_equivalence"): 0.87,
    ("objective", "framing"): 0.92,
    ("subjective", "option_order"): 0.70,
    ("subjective", "label_substitution"): 0.75,
    ("subjective", "spelling_noise"): 0.84,
    ("subjective", "lexical_substitution"): 0.80,
    ("subjective", "paraphrase"): 0.76,
    ("subjective", "formatting"): 0.85,
    ("subjective", "logical_equivalence"): 0.60,
    ("subjective", "framing"): 0.72,
}
_FALLBACK_STABILITY = {"objective": 0.88, "subjective": 0.75}

_LABELS = np.array(list("ABCDEFGHIJKLMNOPQRSTUVWXYZ"), dtype=object)
_REASONS = np.array(["no_label", "refusal", "ambiguous", "empty"], dtype=object)
_REFUSAL_TEXT = {
    "no_label": "I think it depends on the context.",
    "refusal": "I'm sorry, I can't answer that.",
    "ambiguous": "A or B",
    "empty": "",
}


@dataclass(frozen=True)
class SyntheticDataset:
    """One dataset of the synthetic study: its name, type and response scale."""

    name: str
    dataset_type: str  # "objective" | "subjective"
    n_options: int
    scale: str  # "nominal" | "ordinal"


#: Two objective multiple-choice sets (4 and 5 options), a 4-point and a 5-point agree scale.
DEFAULT_DATASETS: tuple[SyntheticDataset, ...] = (
    SyntheticDataset("mc_science", "objective", 4, "nominal"),
    SyntheticDataset("mc_trivia", "objective", 5, "nominal"),
    SyntheticDataset("pct_agree4", "subjective", 4, "ordinal"),
    SyntheticDataset("survey_likert5", "subjective", 5, "ordinal"),
)


def _model_names(models: Sequence[str] | int) -> list[str]:
    if isinstance(models, (int, np.integer)):
        if models < 1:
            raise AnalysisError(f"models must be at least 1, not {models}.")
        return [f"model_{k + 1}" for k in range(int(models))]
    names = [str(m) for m in models]
    if not names or len(set(names)) != len(names):
        raise AnalysisError(f"models must be distinct non-empty names, not {names!r}.")
    return names


def _per_model(value: float | Sequence[float], n: int, name: str) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(value, dtype=float))
    if arr.size == 1:
        return np.full(n, float(arr[0]))
    if arr.size != n:
        raise AnalysisError(f"{name} has {arr.size} values for {n} models.")
    return arr


def _check_arguments(
    categories: Sequence[str],
    n_variants: int,
    stability: Mapping[tuple[str, str], float] | None,
    accuracy: float,
    category_shift: float,
    invalid_rate: float,
) -> tuple[list[str], dict[tuple[str, str], float]]:
    """The categories as strings and the stability table, or one error naming the argument."""
    cats = [str(c) for c in categories]
    if "original" in cats:
        raise AnalysisError("categories must not include 'original'; it is always added.")
    if len(set(cats)) != len(cats):
        raise AnalysisError(f"categories must be distinct, not {cats!r}.")
    if n_variants < 1:
        raise AnalysisError(f"n_variants must be at least 1, not {n_variants}.")
    for prob, label in (
        (accuracy, "accuracy"),
        (category_shift, "category_shift"),
        (invalid_rate, "invalid_rate"),
    ):
        if not 0.0 <= prob <= 1.0:
            raise AnalysisError(f"{label} must lie in [0, 1], not {prob}.")
    stab = dict(DEFAULT_STABILITY)
    for key, value in (stability or {}).items():
        if not 0.0 < float(value) < 1.0:
            raise AnalysisError(f"stability[{key!r}] must lie strictly in (0, 1), not {value}.")
        stab[(str(key[0]), str(key[1]))] = float(value)
    return cats, stab


def _repeat_probability(
    items: Items,
    rows: Rows,
    cats: list[str],
    stab: Mapping[tuple[str, str], float],
    m_eff: np.ndarray,
) -> np.ndarray:
    """s = expit(logit(stability[type, c]) + model_effect[m] + u_i) of every row."""
    base = np.array(
        [
            [stab.get((t, c), _FALLBACK_STABILITY[t]) for c in cats] or [0.5]
            for t in ("objective", "subjective")
        ]
    )
    type_idx = np.where(items.objective[rows.i], 0, 1)
    return expit(
        logit(base[type_idx, np.maximum(rows.ci, 0)]) + m_eff[rows.m] + items.effect[rows.i]
    )


def _answer_columns(
    items: Items,
    rows: Rows,
    names: list[str],
    answer: np.ndarray,
    valid: np.ndarray,
    reason: np.ndarray,
    study: str,
) -> dict[str, object]:
    """The schema's columns from ``study`` to ``correct``."""
    n_rows = rows.n
    obj_row = items.objective[rows.i]
    gold = items.gold[rows.i]
    ans_col = pd.array(np.where(valid, answer, 0), dtype="Int64")
    ans_col[~valid] = pd.NA
    gold_col = pd.array(np.where(obj_row, gold, 0), dtype="Int64")
    gold_col[~obj_row] = pd.NA
    correct = pd.array(answer == gold, dtype="boolean")
    correct[~(valid & obj_row)] = pd.NA
    labels = _LABELS[answer]
    raw = labels.copy()
    raw[~valid] = [_REFUSAL_TEXT[r] for r in reason[~valid]]
    label_col = labels.astype(object)
    label_col[~valid] = None
    return {
        "study": np.full(n_rows, study, dtype=object),
        "model": np.array(names, dtype=object)[rows.m],
        "dataset": items.dataset[rows.i],
        "dataset_type": items.dataset_type[rows.i],
        "item_id": items.item_id[rows.i],
        "category": rows.category,
        "variant_id": rows.variant_id,
        "params": rows.params,
        "prompt_sha": np.full(n_rows, None, dtype=object),
        "shots": pd.array(np.zeros(n_rows, dtype=np.int64), dtype="Int64"),
        "mode": np.full(n_rows, "choice", dtype=object),
        "raw_output": raw,
        "label": label_col,
        "answer": ans_col,
        "valid": valid,
        "invalid_reason": reason,
        "gold": gold_col,
        "correct": correct,
    }


def synthetic_table(
    *,
    models: Sequence[str] | int = 3,
    n_items: int | Mapping[str, int] = 20,
    datasets: Sequence[SyntheticDataset] = DEFAULT_DATASETS,
    categories: Sequence[str] = FAMILIES,
    n_variants: int = 5,
    stability: Mapping[tuple[str, str], float] | None = None,
    accuracy: float = 0.65,
    model_effect: float | Sequence[float] = 0.0,
    item_sd: float = 1.0,
    category_shift: float = 0.08,
    invalid_rate: float = 0.02,
    with_probs: bool = True,
    study: str = "synthetic",
    seed: int | np.random.Generator = 0,
) -> pd.DataFrame:
    """A realistic long table with known robustness structure; same seed, same table.

    Parameters
    ----------
    models
        Model names, or how many to name ``model_1`` ... .
    n_items
        Items per dataset, or a mapping dataset name -> items.
    datasets
        The datasets (name, type, number of options, scale); by default two
        objective sets with 4 and 5 options and two agree scales with 4 and 5 points.
    categories
        Perturbation categories; ``original`` (one variant per item) is always added.
    n_variants
        Variants per item and category.
    stability
        Probability that a variant repeats its category answer, by
        ``(dataset_type, category)``; missing pairs take :data:`DEFAULT_STABILITY`
        (0.88 / 0.75 for categories it does not know).  This is the knob that
        sets agreement: expected C_i rises with it.
    accuracy
        Probability that a model's original answer to an objective item is gold.
    model_effect
        Logit shift per model (one value or one per model) applied to both
        accuracy and stability: positive is a stronger, more stable model.
    item_sd
        Standard deviation of the item effect on the stability logit, shared
        by all models.
    category_shift
        Probability that a whole category's answers move away from the original answer.
    invalid_rate
        Share of rows that are invalid (``valid=False``, no answer, a reason).
    with_probs
        Whether to fill ``option_probs`` and ``confidence`` (lists per row cost
        time on very large tables).
    study
        Value of the ``study`` column.
    seed
        Seed or :class:`numpy.random.Generator`; every random choice comes from it.
        An integer seed is also written to the ``seed`` column (0 for a Generator).

    Returns
    -------
    pandas.DataFrame
        The long table (all schema columns plus ``scale`` and ``n_options``);
        it passes :func:`robustness.core.table.validate`.

    Notes
    -----
    A variant of category c repeats the category answer with probability
    s = expit(logit(stability[type, c]) + model_effect[m] + u_i), u_i ~ N(0, item_sd^2)
    (module docstring); the category answer is the original answer a0 except with
    probability ``category_shift``.  With no invalid rows, C_i of a set (Kamal et al.
    2026, eq. 1) is at least the share of its variants giving the category answer, whose
    expectation is s; so E[C_i] >= s given u_i, and ``stability`` sets agreement.
    The data are made up: they test the analyses, they are no evidence about models.

    References
    ----------
    Kamal et al. (2026), eq. 1 (the agreement whose structure the table imitates).

    Examples
    --------
    >>> from analyses.synthetic import synthetic_table
    >>> t = synthetic_table(models=["a", "b"], n_items=5, n_variants=3, seed=7)
    >>> t.groupby("dataset_type")["item_id"].nunique().to_dict()
    {'objective': 10, 'subjective': 10}

    With no item effect, no shift and no invalid rows, the share of variants that repeat
    the original answer estimates s (here 0.9) within its binomial error:

    >>> import numpy as np
    >>> t = synthetic_table(models=1, n_items=100, categories=("paraphrase",), n_variants=4,
    ...     stability={("objective", "paraphrase"): 0.9, ("subjective", "paraphrase"): 0.9},
    ...     item_sd=0.0, category_shift=0.0, invalid_rate=0.0, with_probs=False, seed=0)
    >>> key = ["dataset", "item_id"]
    >>> orig = t[t["category"] == "original"].set_index(key)["answer"]
    >>> var = t[t["category"] == "paraphrase"].join(orig.rename("a0"), on=key)
    >>> share = float((var["answer"] == var["a0"]).mean())
    >>> se = np.sqrt(0.9 * 0.1 / len(var))
    >>> bool(abs(share - 0.9) < 3 * se)
    True
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    names = _model_names(models)
    cats, stab = _check_arguments(
        categories, n_variants, stability, accuracy, category_shift, invalid_rate
    )
    m_eff = _per_model(model_effect, len(names), "model_effect")
    items = draw_items(datasets, n_items, item_sd, rng)
    mi_m, mi_i, a0 = original_answers(items, len(names), accuracy, m_eff, rng)
    rows = Rows.lay_out(mi_m, mi_i, cats, n_variants)
    cat_answer = category_answers(items, mi_i, a0, len(cats), category_shift, rng)
    s = _repeat_probability(items, rows, cats, stab, m_eff)
    target = np.where(rows.ci >= 0, cat_answer[rows.mi, np.maximum(rows.ci, 0)], a0[rows.mi])
    stays = ~(rows.ci >= 0) | (rng.random(rows.n) < s)
    answer = target.copy()
    moved = ~stays
    k, ordinal = items.n_options[rows.i], items.ordinal[rows.i]
    answer[moved] = drift(rng, target[moved], k[moved], ordinal[moved])
    valid = rng.random(rows.n) >= invalid_rate
    reason = np.full(rows.n, None, dtype=object)
    reason[~valid] = _REASONS[
        np.floor(rng.random(int((~valid).sum())) * _REASONS.size).astype(np.int64)
    ]
    out = _answer_columns(items, rows, names, answer, valid, reason, study)
    out["option_probs"], out["confidence"] = probabilities(k, answer, s, with_probs, rng)
    out["latency_ms"] = np.round(rng.gamma(4.0, 30.0, rows.n), 3)
    study_seed = int(seed) if isinstance(seed, (int, np.integer)) else 0
    out["seed"] = pd.array(np.full(rows.n, study_seed, dtype=np.int64), dtype="Int64")
    out["scale"] = items.scale[rows.i]
    out["n_options"] = pd.array(k, dtype="Int64")
    return pd.DataFrame(out)
