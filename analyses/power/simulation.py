"""Power of the study's tests by simulation, and the items a planned study needs.

:func:`power` simulates ``sims`` tables of a planned :class:`~analyses.power.effects.Design`
under :class:`~analyses.power.effects.Effects` (from a pilot table or from assumptions; the
data-generating model is in :mod:`analyses.power.effects`), fits the study's GEE (by default
the type model ``agree ~ model + dataset_type * category + model:category``, clusters =
items, exchangeable working correlation, robust covariance) to each, and reports the share
of simulations in which each test rejects at ``alpha``:

- ``dataset_type`` and ``dataset_type:category``: the Wald chi-square of the term
  (Type II by default, as the study reports it);
- ``contrast:<category>``: the objective - subjective contrast of that category's
  estimated marginal agreement, with its Holm-adjusted p-value (``adjust='holm'``, as the
  study reports it) or the unadjusted one (``adjust='none'``).

A simulation whose fit fails, or whose fit withholds a term, counts as not rejecting that
term (conservative) and is counted in ``n_failed``.  The Monte Carlo standard error of a
power estimate P from S simulations is sqrt(P (1 - P) / S).

:func:`analyses.power.solve.solve_items` finds the smallest number of items per dataset
whose estimated power reaches a target, with the Monte Carlo uncertainty of that answer.

Simulation s is seeded by ``SeedSequence(seed, spawn_key=(s, ...))``: serial, process-
parallel and Ray runs give the same numbers.

References
----------
Liang, K.-Y. & Zeger, S. L. (1986). Biometrika 73(1), 13-22.
Morris, T. P., White, I. R. & Crowther, M. J. (2019). Using simulation studies to evaluate
statistical methods. Statistics in Medicine 38(11), 2074-2102 (Monte Carlo SE of power).
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analyses.gee.small_sample import DEFAULT_COV_TYPE, DEFAULT_TEST
from analyses.power.effects import Design, Effects, calibrate_sigma, simulate_table
from robustness.core.errors import RobustnessError, StudyError

__all__ = ["POWER_COLUMNS", "power", "power_terms"]

POWER_COLUMNS = ["term", "items_per_dataset", "power", "mc_se", "n_sims", "n_failed"]
Mapper = Callable[[Callable, Iterable], Iterator]


def power_terms(effects: Effects) -> list[str]:
    """The tests whose power is estimated, in report order (plumbing; no statistic).

    Parameters
    ----------
    effects
        The effects of the planned study (their categories are read).

    Returns
    -------
    list of str
        ``dataset_type``, ``dataset_type:category`` (two or more categories), and
        ``contrast:<category>`` for each category.
    """
    terms = ["dataset_type"]
    if len(effects.categories) > 1:
        terms.append("dataset_type:category")
    return terms + [f"contrast:{c}" for c in effects.categories]


@dataclass(frozen=True)
class _Job:
    effects: Effects
    design: Design
    sigma: float
    seed: int
    sims: tuple[int, ...]
    formula: str | None
    alpha: float
    wald_type: int
    adjust: str
    cov_type: str = DEFAULT_COV_TYPE
    test: str = DEFAULT_TEST


def _decide(job: _Job, sim: int) -> tuple[np.ndarray, np.ndarray]:
    """(rejected, failed) per term for one simulated table."""
    from analyses.gee import gee

    terms = power_terms(job.effects)
    rejected = np.zeros(len(terms), dtype=bool)
    failed = np.zeros(len(terms), dtype=bool)
    table = simulate_table(job.effects, job.design, job.seed, sim, job.sigma)
    try:
        corstr = "independence" if job.cov_type == "cr2" else "exchangeable"
        fit = gee(
            table, job.formula or DEFAULT, corstr=corstr, cov_type=job.cov_type, test=job.test
        )
        wald = fit.wald(job.wald_type).set_index("term")["p_value"]
        con = fit.contrasts().set_index("category")
    except (RobustnessError, ValueError, FloatingPointError, np.linalg.LinAlgError):
        failed[:] = True
        return rejected, failed
    pcol = "p_holm" if job.adjust == "holm" else "p_value"
    for k, term in enumerate(terms):
        if term.startswith("contrast:"):
            cat = term.split(":", 1)[1]
            p = con[pcol].get(cat, np.nan) if len(con) else np.nan
        else:
            p = wald.get(term, np.nan)
        if p is None or not np.isfinite(p):
            failed[k] = True
        else:
            rejected[k] = p < job.alpha
    return rejected, failed


def _run_chunk(job: _Job) -> tuple[np.ndarray, np.ndarray]:
    # statsmodels' Holm correction calls gc.collect(), which walks every object of the
    # process (about 0.2 s each time after the imports); objects that exist before the
    # chunk are frozen out of the collector meanwhile and released unchanged afterwards.
    frozen = gc.get_freeze_count() == 0
    if frozen:
        gc.freeze()
    try:
        out = [_decide(job, s) for s in job.sims]
    finally:
        if frozen:
            gc.unfreeze()
    return np.array([r for r, _ in out]), np.array([f for _, f in out])


DEFAULT = "agree ~ model + dataset_type * category + model:category"


def _chunks(sims: int, workers: int) -> list[tuple[int, ...]]:
    size = max(1, math.ceil(sims / max(1, 4 * workers)))
    return [tuple(range(a, min(a + size, sims))) for a in range(0, sims, size)]


def _check(sims: int, alpha: float, adjust: str, wald_type: int) -> None:
    if not isinstance(sims, (int, np.integer)) or sims < 1:
        raise StudyError(f"sims must be a positive integer, not {sims!r}.")
    if not 0.0 < alpha < 1.0:
        raise StudyError(f"alpha must lie strictly between 0 and 1, not {alpha!r}.")
    if adjust not in ("holm", "none"):
        raise StudyError(f"adjust must be 'holm' or 'none', not {adjust!r}.")
    if wald_type not in (2, 3):
        raise StudyError(f"wald_type must be 2 or 3, not {wald_type!r}.")


def power(
    effects: Effects,
    items: Sequence[int] = (20, 40, 80),
    design: Design | None = None,
    *,
    sims: int = 200,
    alpha: float = 0.05,
    seed: int = 0,
    workers: int = 1,
    formula: str | None = None,
    wald_type: int = 2,
    adjust: str = "holm",
    mapper: Mapper | None = None,
    progress: Callable[[int], None] | None = None,
    cov_type: str = DEFAULT_COV_TYPE,
    test: str = DEFAULT_TEST,
) -> pd.DataFrame:
    """Power of the study's Wald tests and contrasts for each number of items per dataset.

    Parameters
    ----------
    effects
        :func:`~analyses.power.effects.effects_from_pilot` or
        :func:`~analyses.power.effects.assumed_effects`.
    items
        Items per dataset to evaluate.
    design
        Everything else of the planned study (default: the demo's, 2 + 2 datasets, 2
        variants per family, 1 model); its ``items_per_dataset`` is replaced by each
        value of ``items``.
    sims
        Simulations per number of items.
    alpha
        Significance level.
    seed
        Seed of the simulations (module docstring).
    workers
        Processes (``concurrent.futures.ProcessPoolExecutor``); 1 runs serially.
    formula
        The GEE formula (default: the study's type model).
    wald_type
        2 or 3: the Wald tests' type.
    adjust
        ``'holm'`` (default) or ``'none'``: the p-value of the contrasts.
    mapper
        A ``map``-like callable ``mapper(func, jobs)`` that yields results in order (for
        example ``ray.util.multiprocessing.Pool().imap``); overrides ``workers``.
    progress
        Called with the number of simulations just finished.
    cov_type, test
        The GEE's covariance and the tests' reference distribution
        (:func:`analyses.gee.gee`); ``cov_type='cr2'`` fits the independence working
        model (CR2 is defined for it), the others the exchangeable one.

    Returns
    -------
    pandas.DataFrame
        ``term, items_per_dataset, power, mc_se, n_sims, n_failed``, one row per term and
        number of items.

    Notes
    -----
    power = (1/S) sum_s 1[p_s < alpha], mc_se = sqrt(power (1 - power) / S)
    (Morris et al. 2019, Table 6).  p_s is the p-value of the term's robust Wald
    chi-square in simulation s (Liang & Zeger 1986), or the contrast's (Holm-adjusted)
    p-value.

    References
    ----------
    Morris et al. (2019); Liang & Zeger (1986): see the module.

    Examples
    --------
    A trivial design: one category, one variant per item, no item correlation, so each
    simulated table is two independent binomial samples of 30 and the Wald test of
    ``dataset_type`` is the logit Wald test, z = (logit p1 - logit p2) /
    sqrt(1 / (n p1 (1 - p1)) + 1 / (n p2 (1 - p2))).  The power estimate is the share of
    the same simulated tables where that test, written out by hand, rejects:

    >>> import numpy as np
    >>> from scipy.stats import norm
    >>> from analyses import Design, assumed_effects, power
    >>> from analyses.power.effects import simulate_table
    >>> eff = assumed_effects(base=0.7, gap=0.15, correlation=0.0, categories=("paraphrase",))
    >>> design = Design(items_per_dataset=30, variants_per_family=1, datasets_per_type=(1, 1))
    >>> res = power(eff, items=[30], design=design, sims=5, seed=0,
    ...             formula="agree ~ dataset_type")
    >>> est = res.set_index("term").loc["dataset_type"]
    >>> def rejects(t, n=30):
    ...     p1, p2 = t.groupby("dataset_type")["agree"].mean()
    ...     se = np.sqrt(1 / (n * p1 * (1 - p1)) + 1 / (n * p2 * (1 - p2)))
    ...     z = (np.log(p1 / (1 - p1)) - np.log(p2 / (1 - p2))) / se
    ...     return 2 * norm.sf(abs(z)) < 0.05
    >>> hand = np.mean([rejects(simulate_table(eff, design, 0, s)) for s in range(5)])
    >>> float(est["power"]), float(hand)
    (0.2, 0.2)
    >>> round(float(est["mc_se"]), 4), round(float(np.sqrt(0.2 * 0.8 / 5)), 4)
    (0.1789, 0.1789)
    """
    _check(sims, alpha, adjust, wald_type)
    from analyses.gee.inference import check_inference

    check_inference(cov_type, test, "independence" if cov_type == "cr2" else "exchangeable")
    design = design or Design()
    ns = [int(n) for n in items]
    if not ns or min(ns) < 2:
        raise StudyError(f"items per dataset must be integers of at least 2, not {list(items)}.")
    sigma = calibrate_sigma(effects)
    terms = power_terms(effects)
    jobs = [
        _Job(
            effects,
            design.with_items(n),
            sigma,
            seed,
            chunk,
            formula,
            alpha,
            wald_type,
            adjust,
            cov_type,
            test,
        )
        for n in ns
        for chunk in _chunks(sims, workers)
    ]
    results = _map(jobs, workers, mapper, progress)
    rows = []
    per_n = len(jobs) // len(ns)
    for i, n in enumerate(ns):
        part = results[i * per_n : (i + 1) * per_n]
        rej = np.concatenate([r for r, _ in part])
        fail = np.concatenate([f for _, f in part])
        for k, term in enumerate(terms):
            p = float(rej[:, k].mean())
            rows.append(
                {
                    "term": term,
                    "items_per_dataset": n,
                    "power": p,
                    "mc_se": math.sqrt(p * (1 - p) / sims),
                    "n_sims": sims,
                    "n_failed": int(fail[:, k].sum()),
                }
            )
    out = pd.DataFrame(rows, columns=POWER_COLUMNS)
    out.attrs["sigma"] = sigma
    out.attrs["notes"] = list(effects.notes)
    return out


def _map(
    jobs: list[_Job],
    workers: int,
    mapper: Mapper | None,
    progress: Callable[[int], None] | None,
) -> list[tuple[np.ndarray, np.ndarray]]:
    results = []
    if mapper is not None:
        it = mapper(_run_chunk, jobs)
    elif workers > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            for job, res in zip(jobs, pool.map(_run_chunk, jobs), strict=True):
                results.append(res)
                if progress:
                    progress(len(job.sims))
        return results
    else:
        it = map(_run_chunk, jobs)
    for job, res in zip(jobs, it, strict=True):
        results.append(res)
        if progress:
            progress(len(job.sims))
    return results
