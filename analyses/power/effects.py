"""The data-generating model of the power simulations: effects, designs and simulated tables.

A planned study is a :class:`Design` (datasets per type, items per dataset, variants per
family, models) and a set of :class:`Effects` (the marginal agreement per dataset type x
category and the item-level correlation).  :func:`simulate_table` draws one long table of
that design, with the per-row agreement flag ``agree`` simulated directly (0/1) rather than
answers from which agreement would be computed; the study's GEE is then fitted to that
column (``agree`` is a column of the table, so :func:`analyses.gee.gee` uses it as given).

The model: logit-normal item effect
-----------------------------------
Item i of dataset type t has an effect u_i ~ N(0, sigma^2), shared by all its rows (every
category, variant and model), and each row agrees independently given u_i:

    P(agree = 1 | u_i) = expit(a_{t,c} + u_i).

The offsets a_{t,c} are solved so that the *marginal* (population-averaged) agreement is the
stated one, E_u[expit(a_{t,c} + u)] = p_{t,c}, which is what a GEE estimates; the integral is
computed by 40-point Gauss-Hermite quadrature.  Two rows of one item in cells c and d then
have correlation

    rho_{cd}(sigma) = (E_u[m_c(u) m_d(u)] - p_c p_d) / sqrt(p_c (1 - p_c) p_d (1 - p_d)),
    m_c(u) = expit(a_c + u),

and sigma is solved (by Brent's method) so that the mean of rho_{cd} over all ordered pairs
of cells (c, d) of a type (c = d included), averaged over the two types, equals the stated
item-level correlation rho.  That mean is what the exchangeable working correlation of the
GEE (``GEEResult.alpha``, the moment estimator of Liang & Zeger 1986) estimates when every
cell has the same number of rows per item, which is why :func:`effects_from_pilot` takes
rho from a pilot's fit.  Models are exchangeable: the same marginal agreement for every
model, one item effect for all of them.

Seeds and nesting
-----------------
Simulation s draws dataset j of type t from two generators seeded by
``numpy.random.SeedSequence(seed, spawn_key=(s, t, j, 0 | 1))`` (item effects, then row
uniforms, item-major), so a table depends only on (seed, s), not on which process made it,
and the first n items of a design with n' > n items are exactly the design with n items.

:func:`calibrate_sigma` and :func:`simulate_table` are the engine of
:func:`analyses.power.power`: their formulas are the ones above, and their docstrings give
Parameters and Returns only.

References
----------
Liang, K.-Y. & Zeger, S. L. (1986). Biometrika 73(1), 13-22.
Zeger, S. L., Liang, K.-Y. & Albert, P. S. (1988). Models for longitudinal data: a
generalized estimating equation approach. Biometrics 44(4), 1049-1060 (marginal vs
conditional logit models).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.special import expit

from analyses.power.design import Design
from robustness.core.errors import StudyError
from robustness.core.names import FAMILY_ORDER

__all__ = [
    "TYPES",
    "Design",
    "Effects",
    "assumed_effects",
    "calibrate_sigma",
    "effects_from_pilot",
    "simulate_table",
]

TYPES = ("objective", "subjective")
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(40)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()
_P_MIN, _P_MAX = 0.005, 0.995


@dataclass(frozen=True)
class Effects:
    """Marginal agreement per (dataset type, category) and the item-level correlation.

    ``agreement`` has columns ``dataset_type, category, p``; ``correlation`` is rho (see the
    module docstring); ``notes`` say where the numbers came from and what was adjusted.
    """

    agreement: pd.DataFrame
    correlation: float
    source: str = "assumed"
    notes: tuple[str, ...] = field(default=())

    @property
    def categories(self) -> list[str]:
        """The categories, in the toolkit's family order (unknown ones after, sorted)."""
        present = set(self.agreement["category"])
        known = [c for c in FAMILY_ORDER if c in present]
        return known + sorted(present - set(known))

    def with_correlation(self, rho: float, note: str = "") -> Effects:
        """The same agreement with item-level correlation ``rho`` (checked); ``note``
        replaces the note that gave the old rho, so the notes state one rho."""
        kept = tuple(n for n in self.notes if not n.startswith("item-level rho"))
        notes = (*kept, note) if note else self.notes
        return Effects(self.agreement, _check_correlation(rho), self.source, notes)

    def table(self) -> np.ndarray:
        """p as an array of shape (2, n_categories): rows objective, subjective."""
        p = self.agreement.set_index(["dataset_type", "category"])["p"]
        return np.array([[float(p[(t, c)]) for c in self.categories] for t in TYPES])


def _per_category(value: float | Mapping[str, float], categories: Sequence[str], name: str):
    if isinstance(value, Mapping):
        missing = [c for c in categories if c not in value]
        if missing:
            raise StudyError(f"{name}: no value for categor(ies) {', '.join(missing)}.")
        return np.array([float(value[c]) for c in categories])
    return np.full(len(categories), float(value))


def _check_correlation(rho: float) -> float:
    rho = float(rho)
    if not 0.0 <= rho < 0.95:
        raise StudyError(f"the item-level correlation must be in [0, 0.95), not {rho!r}.")
    return rho


def assumed_effects(
    base: float | Mapping[str, float],
    gap: float | Mapping[str, float],
    correlation: float,
    categories: Sequence[str] = FAMILY_ORDER,
) -> Effects:
    """Effects from assumptions: subjective agreement ``base``, objective = base + ``gap``.

    Parameters
    ----------
    base
        Marginal agreement of subjective items, one number or one per category.
    gap
        Objective minus subjective agreement to detect, one number or one per category
        (0 simulates the null hypothesis of every test).
    correlation
        Item-level correlation rho of two answers to one item (module docstring).
    categories
        The perturbation categories of the planned study.

    Returns
    -------
    Effects
        ``agreement`` (``dataset_type, category, p``: the marginal agreement of each
        type and category), ``correlation`` (rho) and ``source`` ``'assumed'``.

    Notes
    -----
    p_subj,c = base_c and p_obj,c = base_c + gap_c, both strictly inside (0, 1); these are
    marginal (population-averaged) probabilities, which the simulation reaches by solving
    E_u[expit(a_{t,c} + u)] = p_{t,c}, u ~ N(0, sigma^2) (module docstring; the marginal
    model of Zeger, Liang & Albert 1988).

    References
    ----------
    Zeger, Liang & Albert (1988): see the module.

    Examples
    --------
    A large simulated table reaches the stated marginal agreement and, between two
    variants of one item, the stated correlation (Monte Carlo, 2000 items per type):

    >>> import numpy as np
    >>> from analyses import Design, assumed_effects
    >>> from analyses.power.effects import simulate_table
    >>> eff = assumed_effects(base=0.7, gap=0.0, correlation=0.3, categories=("paraphrase",))
    >>> eff.agreement["p"].tolist()
    [0.7, 0.7]
    >>> design = Design(items_per_dataset=2000, variants_per_family=2, datasets_per_type=(1, 1))
    >>> t = simulate_table(eff, design, seed=0)
    >>> bool((abs(t.groupby("dataset_type")["agree"].mean() - 0.7) < 0.03).all())
    True
    >>> pairs = t.pivot_table(index="item_id", columns="variant_id", values="agree")
    >>> round(float(np.corrcoef(pairs.iloc[:, 0], pairs.iloc[:, 1])[0, 1]), 1)
    0.3
    """
    cats = list(dict.fromkeys(categories))
    if not cats:
        raise StudyError("assumed effects need at least one category.")
    sub = _per_category(base, cats, "base agreement")
    obj = sub + _per_category(gap, cats, "gap")
    for label, arr in (("subjective", sub), ("objective", obj)):
        bad = [(c, v) for c, v in zip(cats, arr, strict=True) if not 0.0 < v < 1.0]
        if bad:
            c, v = bad[0]
            raise StudyError(
                f"the {label} agreement of {c!r} is {v:.3f} (base + gap); it must lie "
                "strictly between 0 and 1."
            )
    frame = pd.DataFrame(
        {
            "dataset_type": np.repeat(TYPES, len(cats)),
            "category": cats * 2,
            "p": np.concatenate([obj, sub]),
        }
    )
    return Effects(frame, _check_correlation(correlation), "assumed")


def effects_from_pilot(table: pd.DataFrame, gap: float | None = None) -> Effects:
    """Effects estimated from a pilot long table.

    Parameters
    ----------
    table
        A long table (any number of models, both dataset types unless ``gap`` is given).
    gap
        When given, the objective agreement of every category is set to the subjective one
        plus ``gap`` (0: the null); with only one dataset type in the pilot, the other is
        that one shifted by ``gap``.

    Returns
    -------
    Effects
        p per (dataset type, category): the observed mean of the agreement flag over the
        rows the study's GEE fits; rho: the exchangeable working correlation of the GEE
        ``agree ~ dataset_type * category`` (clusters = items) fitted to the pilot.

    Notes
    -----
    p is clipped to [0.005, 0.995] (a separated pilot cell would give an infinite offset);
    every clip is named in ``notes``.  p_{t,c} = sum of agree / number of rows in the cell;
    rho is the moment estimate of the exchangeable working correlation (Liang & Zeger
    1986), clipped to [0, 0.9].

    References
    ----------
    Liang & Zeger (1986): see the module.

    Examples
    --------
    p is the mean agreement flag of each cell, by hand:

    >>> from analyses import agreement_rows, effects_from_pilot
    >>> from analyses.synthetic import synthetic_table
    >>> pilot = synthetic_table(models=1, n_items=6, categories=("paraphrase", "formatting"),
    ...                         n_variants=3, seed=2)
    >>> eff = effects_from_pilot(pilot)
    >>> rows = agreement_rows(pilot).query("category != 'original' and agree.notna()")
    >>> hand = rows.assign(a=rows["agree"].astype(float)).groupby(
    ...     ["dataset_type", "category"])["a"].mean()
    >>> [round(float(v), 4) for v in eff.agreement["p"]] == [round(float(v), 4) for v in hand]
    True
    >>> 0.0 <= eff.correlation <= 0.9
    True
    """
    from analyses.gee import gee

    types_present = sorted(set(table["dataset_type"])) if "dataset_type" in table else []
    formula = "agree ~ dataset_type * category" if len(types_present) == 2 else "agree ~ category"
    fit = gee(table, formula)
    grid = fit.grid.copy()
    if "dataset_type" not in grid.columns:
        grid["dataset_type"] = types_present[0]
    cells = grid.groupby(["dataset_type", "category"], sort=True)[["n", "y_sum"]].sum()
    p = (cells["y_sum"] / cells["n"]).rename("p").reset_index()
    notes = [f"pilot: {fit.n_obs} rows of {fit.n_clusters} items"]
    if gap is None:
        if len(types_present) < 2:
            raise StudyError(
                f"the pilot has only {', '.join(types_present) or 'no'} items: give --gap "
                "to set the other dataset type's agreement."
            )
    else:
        have = set(p["dataset_type"])
        ref = "subjective" if "subjective" in have else "objective"
        base = p[p["dataset_type"] == ref].set_index("category")["p"]
        sub = base if ref == "subjective" else base - float(gap)
        p = pd.DataFrame(
            {
                "dataset_type": np.repeat(TYPES, len(base)),
                "category": list(base.index) * 2,
                "p": np.concatenate([sub + float(gap), sub]),
            }
        )
        notes.append(f"objective agreement set to subjective + {float(gap):g} in every category")
    complete = p.pivot(index="category", columns="dataset_type", values="p").dropna()
    dropped = sorted(set(p["category"]) - set(complete.index))
    if dropped:
        notes.append(f"categories with only one dataset type left out: {', '.join(dropped)}")
    p = p[p["category"].isin(complete.index)].reset_index(drop=True)
    clipped = p["p"].clip(_P_MIN, _P_MAX)
    for r in p[clipped != p["p"]].itertuples():
        notes.append(f"p of {r.dataset_type}/{r.category} = {r.p:.3f} clipped to [0.005, 0.995]")
    p["p"] = clipped
    if p.empty:
        raise StudyError("the pilot has no category with agreement for both dataset types.")
    rho = float(np.clip(fit.alpha, 0.0, 0.9))
    notes.append(
        f"item-level rho {rho:.3f}: the exchangeable working correlation of the pilot's GEE"
        + (f" ({fit.alpha:.3f} clipped to [0, 0.9])" if rho != fit.alpha else "")
        + (
            ", fitted by the bias-reduced equation (the pilot has separated cells)"
            if fit.bias_reduced
            else ""
        )
        + "; --correlation overrides it"
    )
    return Effects(p, _check_correlation(rho), "pilot", tuple(notes))


def _offsets(p: np.ndarray, sigma: float) -> np.ndarray:
    """a with E_u[expit(a + u)] = p, u ~ N(0, sigma^2), by vectorised bisection."""
    u = sigma * _NODES
    lo = np.full(p.shape, -80.0)
    hi = np.full(p.shape, 80.0)
    for _ in range(80):
        mid = (lo + hi) / 2
        above = (expit(mid[..., None] + u) * _WEIGHTS).sum(-1) > p
        hi = np.where(above, mid, hi)
        lo = np.where(above, lo, mid)
    return (lo + hi) / 2


def _mean_correlation(p: np.ndarray, sigma: float) -> float:
    """Mean over types of the mean over ordered cell pairs of rho_cd(sigma)."""
    a = _offsets(p, sigma)
    out = []
    for row_p, row_a in zip(p, a, strict=True):
        m = expit(row_a[:, None] + sigma * _NODES)  # (C, K)
        second = (m * _WEIGHTS) @ m.T
        sd = np.sqrt(row_p * (1 - row_p))
        corr = (second - np.outer(row_p, row_p)) / np.outer(sd, sd)
        out.append(corr.mean())
    return float(np.mean(out))


def calibrate_sigma(effects: Effects) -> float:
    """The item-effect sd sigma whose mean pairwise correlation is ``effects.correlation``.

    Parameters
    ----------
    effects
        The marginal agreement and the item-level correlation rho.

    Returns
    -------
    float
        sigma >= 0 (0 when rho = 0).

    Notes
    -----
    Solves mean_{t} mean_{c,d} rho_{cd}(sigma) = rho by Brent's method on [0, 15].
    """
    rho = effects.correlation
    if rho == 0:
        return 0.0
    p = effects.table()
    top = _mean_correlation(p, 15.0)
    if rho >= top:
        raise StudyError(
            f"an item-level correlation of {rho:.3f} cannot be reached with these agreement "
            f"levels (at most {top:.3f}); give a smaller one."
        )
    return float(brentq(lambda s: _mean_correlation(p, s) - rho, 0.0, 15.0, xtol=1e-10))


def simulate_table(
    effects: Effects,
    design: Design,
    seed: int,
    sim: int = 0,
    sigma: float | None = None,
) -> pd.DataFrame:
    """One simulated long table of ``design`` under ``effects``.

    Parameters
    ----------
    effects, design
        The model and the planned study.
    seed, sim
        The study's power seed and the simulation's index (module docstring).
    sigma
        The item-effect sd (default: :func:`calibrate_sigma`).

    Returns
    -------
    pandas.DataFrame
        ``model, dataset, dataset_type, item_id, category, variant_id, answer, valid,
        agree``: one row per model x item x category x variant; ``agree`` (0/1) is the
        simulated agreement flag, ``answer`` repeats it (so the table validates) and every
        row is valid.  No ``original`` rows: the GEE does not fit them.
    """
    sigma = calibrate_sigma(effects) if sigma is None else float(sigma)
    cats = effects.categories
    offsets = _offsets(effects.table(), sigma)
    n, C = design.items_per_dataset, len(cats)
    M, V = design.models, design.variants_per_family
    blocks = []
    for t_idx, dtype in enumerate(TYPES):
        for j in range(design.datasets_per_type[t_idx]):
            ss = [np.random.SeedSequence(seed, spawn_key=(sim, t_idx, j, k)) for k in (0, 1)]
            u = sigma * np.random.default_rng(ss[0]).standard_normal(n)
            draws = np.random.default_rng(ss[1]).random((n, C, M, V))
            prob = expit(offsets[t_idx][None, :] + u[:, None])  # (n, C)
            agree = (draws < prob[:, :, None, None]).astype(np.int64)
            name = f"{dtype}_{j + 1}"
            item = np.repeat(np.arange(n), C * M * V)
            blocks.append(
                pd.DataFrame(
                    {
                        "model": np.tile(np.repeat([f"model_{m + 1}" for m in range(M)], V), n * C),
                        "dataset": name,
                        "dataset_type": dtype,
                        "item_id": np.char.add(f"{name}_i", item.astype(str)),
                        "category": np.tile(np.repeat(np.array(cats, dtype=object), M * V), n),
                        "variant_id": np.tile([f"v{v}" for v in range(V)], n * C * M).astype(
                            object
                        ),
                        "answer": agree.ravel(),
                        "valid": True,
                        "agree": agree.ravel(),
                    }
                )
            )
    out = pd.concat(blocks, ignore_index=True)
    out["variant_id"] = out["category"] + "/" + out["variant_id"]
    return out
