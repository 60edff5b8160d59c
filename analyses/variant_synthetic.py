"""Long tables drawn from a known Rasch model of variants and items (tests and bench/budget.py).

:func:`rasch_formats` draws format-like variants, each a combination of factor levels whose
effects add up on the logit scale, and :func:`rasch_table` the binary outcomes
``Y_vi ~ Bernoulli(sigma(theta_v - beta_i))`` of the cells ``asked`` as a long table of
objective items (``correct``, ``answer``, ``gold``) with the variants' ``params`` as a
formatting family writes them, so :func:`analyses.estimate_variants` can be checked against
the truth.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["RaschFormats", "rasch_formats", "rasch_table"]


@dataclass(frozen=True)
class RaschFormats:
    """Variants as factor combinations: ``levels[v, f]`` is variant v's level of field f
    (0 = the original's), ``theta`` their abilities (variant 0 is the original)."""

    levels: np.ndarray
    theta: np.ndarray
    fields: tuple[str, ...]


def rasch_formats(
    n_variants: int,
    rng: np.random.Generator,
    n_fields: int = 6,
    n_levels: int = 4,
    field_sd: float = 0.4,
    residual_sd: float = 0.1,
    mean: float = 0.0,
) -> RaschFormats:
    """Format-like variants with known abilities.

    Parameters
    ----------
    n_variants
        Variants; the first is the original (every field at level 0).
    rng
        Draws the effects, the levels and the residuals.
    n_fields, n_levels
        Factor fields and levels per field.
    field_sd, residual_sd, mean
        theta_v = mean + sum_f effect[f, level_vf] + N(0, residual_sd), effects N(0, field_sd)
        with level 0 at 0.

    Returns
    -------
    RaschFormats
        The levels and the abilities.
    """
    effects = rng.normal(0.0, field_sd, size=(n_fields, n_levels))
    effects[:, 0] = 0.0
    levels = rng.integers(0, n_levels, size=(n_variants, n_fields))
    levels[0] = 0
    theta = mean + effects[np.arange(n_fields), levels].sum(axis=1)
    theta += rng.normal(0.0, residual_sd, size=n_variants)
    return RaschFormats(levels, theta, tuple(f"field{k}" for k in range(n_fields)))


def rasch_table(
    theta: np.ndarray,
    beta: np.ndarray,
    rng: np.random.Generator,
    asked: np.ndarray | None = None,
    levels: np.ndarray | None = None,
    model: str = "m",
    datasets: Sequence[str] = ("d1", "d2"),
) -> pd.DataFrame:
    """The asked cells (``asked[v, i]``, default all) of Y ~ Bernoulli(sigma(theta_v - beta_i)).

    Parameters
    ----------
    theta, beta
        Abilities of the variants and difficulties of the items.
    rng
        Draws the outcomes.
    asked
        Which cells to return (variants x items; default all).
    levels
        The variants' factor levels (:func:`rasch_formats`), written to ``params``.
    model, datasets
        The model name; dataset names the items alternate between.

    Returns
    -------
    pandas.DataFrame
        A long table of objective rows (``correct``, ``answer``, ``gold``, ``params``).

    Notes
    -----
    Variant 0 is the ``original``; the others are ``formatting/k`` with ``params`` holding the
    fields where ``levels`` (variants x fields) differs from the original's (none: no fields).
    Items alternate between ``datasets``. Every cell's outcome is drawn (so the same seed gives
    the same full grid whatever is asked) and the asked ones are returned.
    """
    n_v, n_i = len(theta), len(beta)
    p = 1.0 / (1.0 + np.exp(-(np.asarray(theta)[:, None] - np.asarray(beta)[None, :])))
    y = rng.random((n_v, n_i)) < p
    asked = np.ones((n_v, n_i), dtype=bool) if asked is None else np.asarray(asked, dtype=bool)
    v_idx, i_idx = np.nonzero(asked)
    params = []
    for v in range(n_v):
        fmt = {} if levels is None else {f"field{f}": f"l{x}" for f, x in enumerate(levels[v]) if x}
        params.append(json.dumps({"format_index": v, "format": fmt}) if v else "{}")
    correct = y[v_idx, i_idx]
    return pd.DataFrame(
        {
            "model": model,
            "dataset": [datasets[int(i) % len(datasets)] for i in i_idx],
            "dataset_type": "objective",
            "item_id": [f"i{i:04d}" for i in i_idx],
            "category": ["original" if v == 0 else "formatting" for v in v_idx],
            "variant_id": ["original" if v == 0 else f"formatting/{v}" for v in v_idx],
            "answer": np.where(correct, 0, 1),
            "valid": True,
            "gold": 0,
            "correct": correct,
            "params": [params[v] for v in v_idx],
        }
    )
