"""The smallest number of items per dataset whose simulated power reaches a target,
with the Monte Carlo uncertainty of that answer.

:func:`solve_items` doubles from ``start`` until the target is reached, then bisects over
integers (simulation s with n items is the first n items of the same simulation with
more, so estimated power is close to monotone in n: :mod:`analyses.power.effects`).  The
answer n is *clear* when the target lies below the Wilson score interval (``z``) of its
estimated power and above that of the power at n - 1.  When it is not, both are
simulated again with twice the simulations (the first S simulations are the same ones:
common random numbers), moving n up or down
where the longer run says so, until the decision is clear or ``max_sims`` is reached;
the result then says that n is within Monte Carlo noise of its neighbour.

References
----------
Morris, T. P., White, I. R. & Crowther, M. J. (2019). Using simulation studies to evaluate
statistical methods. Statistics in Medicine 38(11), 2074-2102 (Monte Carlo SE of power).
Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
inference. JASA 22(158), 209-212.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from analyses.power.effects import Design, Effects
from analyses.power.simulation import power, power_terms
from robustness.core.errors import StudyError

__all__ = ["SolveResult", "solve_items"]


@dataclass
class SolveResult:
    """The smallest items per dataset reaching ``target`` power for ``terms``.

    ``items`` is None when even ``max_items`` did not reach it; ``table`` holds every
    evaluated number of items (the :func:`~analyses.power.power` columns, ``n_sims``
    saying how many simulations each row had).  ``power_at``/``mc_se_at`` are the
    smallest power over ``terms`` at ``items`` and its Monte Carlo SE, ``power_below``/
    ``mc_se_below`` the same at ``items - 1`` (None when it was not evaluated), ``sims``
    the simulations behind them, and ``clear`` whether the target lies outside both
    Wilson intervals.  ``statement`` says it in one sentence.
    """

    items: int | None
    target: float
    terms: list[str]
    table: pd.DataFrame
    evaluated: list[int] = field(default_factory=list)
    power_at: float | None = None
    mc_se_at: float | None = None
    power_below: float | None = None
    mc_se_below: float | None = None
    sims: int = 0
    clear: bool = False
    statement: str = ""


def wilson(power: float, sims: int, z: float) -> tuple[float, float]:
    """Wilson score interval of a power estimated from ``sims`` simulations.

    Unlike power +- z mc_se it does not shrink to a point at power 0 or 1, so a handful of
    simulations that all reject cannot make a decision look clear (Wilson 1927)."""
    centre = (power * sims + z * z / 2) / (sims + z * z)
    half = z / (sims + z * z) * math.sqrt(power * (1 - power) * sims + z * z / 4)
    return centre - half, centre + half


def _weakest(frame: pd.DataFrame, terms: Sequence[str]) -> tuple[float, float]:
    rows = frame[frame["term"].isin(terms)]
    row = rows.loc[rows["power"].idxmin()]
    return float(row["power"]), float(row["mc_se"])


def _statement(res: SolveResult, z: float) -> str:
    if res.items is None:
        return "not reached"
    at = f"power {res.power_at:.3f} (MC s.e. {res.mc_se_at:.3f})"
    below = (
        f"; at {res.items - 1}: {res.power_below:.3f} (MC s.e. {res.mc_se_below:.3f})"
        if res.power_below is not None
        else ""
    )
    head = f"{res.items} ({at}{below}; {res.sims} simulations each)"
    if res.clear:
        return f"{head}: clear, the target is outside both {z:g}-sigma Wilson intervals"
    return (
        f"{head}: within Monte Carlo noise, {res.items} and its neighbour cannot be told "
        "apart at this number of simulations (give more --sims or --max-sims)"
    )


def solve_items(
    effects: Effects,
    target: float = 0.8,
    terms: Sequence[str] = ("dataset_type",),
    design: Design | None = None,
    *,
    start: int = 10,
    max_items: int = 1280,
    sims: int = 200,
    max_sims: int | None = None,
    z: float = 1.96,
    **kwargs: Any,
) -> SolveResult:
    """The smallest number of items per dataset at which every one of ``terms`` has
    estimated power >= ``target``, and how sure the simulation is of it.

    Parameters
    ----------
    effects, design
        As :func:`analyses.power.power`.
    target
        Power to reach.
    terms
        Terms of :func:`analyses.power.power_terms` that must all reach it.
    start, max_items
        First number of items tried, and the largest.
    sims, max_sims
        Simulations per number of items for the search, and the most the refinement of
        the answer may use (default ``4 * sims``; equal to ``sims``: no refinement).
    z
        Width of the Wilson intervals (in standard normal units) that a clear answer keeps
        the target out of.
    **kwargs
        Passed to :func:`analyses.power.power` (``alpha``, ``seed``, ``workers``, ...).

    Returns
    -------
    SolveResult
        See the class: the answer, the power and Monte Carlo SE at it and below it, the
        simulations behind them, whether the decision is clear, and a sentence.

    Notes
    -----
    With P the estimated power over S simulations, mc_se = sqrt(P (1 - P) / S)
    (Morris et al. 2019, Table 6).  The answer n is clear when the target lies outside
    the Wilson score intervals of P(n) and P(n - 1),
    (P S + z^2 / 2) / (S + z^2) -+ z / (S + z^2) sqrt(P (1 - P) S + z^2 / 4),
    above the first and below the second (Wilson 1927).

    References
    ----------
    Morris et al. (2019): see the module.

    Examples
    --------
    >>> from analyses import Design, assumed_effects, solve_items
    >>> eff = assumed_effects(base=0.5, gap=0.45, correlation=0.0, categories=("paraphrase",))
    >>> design = Design(variants_per_family=1, datasets_per_type=(1, 1))
    >>> res = solve_items(eff, target=0.8, design=design, start=4, max_items=8, sims=4,
    ...                   max_sims=4, formula="agree ~ dataset_type")
    >>> res.items, res.evaluated, res.clear
    (8, [4, 6, 7, 8], False)
    """
    if not 0.0 < target < 1.0:
        raise StudyError(f"the target power must lie strictly between 0 and 1, not {target!r}.")
    known = power_terms(effects)
    unknown = [t for t in terms if t not in known]
    if unknown:
        raise StudyError(f"unknown term(s) {', '.join(unknown)}; choose from {', '.join(known)}.")
    if start < 2 or max_items < start:
        raise StudyError(f"need 2 <= start <= max_items, not start={start}, max={max_items}.")
    max_sims = 4 * sims if max_sims is None else max(int(max_sims), sims)
    frames: dict[tuple[int, int], pd.DataFrame] = {}

    def frame(n: int, s: int) -> pd.DataFrame:
        if (n, s) not in frames:
            frames[(n, s)] = power(effects, [n], design, sims=s, **kwargs)
        return frames[(n, s)]

    def reaches(n: int, s: int = sims) -> bool:
        f = frame(n, s)
        return bool((f[f["term"].isin(terms)]["power"] >= target).all())

    hi, lo = _search(reaches, start, max_items)
    res = SolveResult(hi, target, list(terms), pd.DataFrame(), sims=sims)
    if hi is not None:
        s = sims
        while True:
            res.power_at, res.mc_se_at = _weakest(frame(hi, s), terms)
            clear = wilson(res.power_at, s, z)[0] > target
            res.power_below = res.mc_se_below = None
            if lo is not None and hi - 1 >= 2:
                res.power_below, res.mc_se_below = _weakest(frame(hi - 1, s), terms)
                clear = clear and wilson(res.power_below, s, z)[1] < target
            res.items, res.sims, res.clear = hi, s, clear
            if clear or 2 * s > max_sims:
                break
            s *= 2
            hi, lo = _walk(hi, lo, lambda n, s=s: reaches(n, s), start, max_items)
            if hi is None:
                res.items = None
                break
    keys = sorted(frames)
    latest = {n: (n, s) for n, s in keys}  # the longest run of each number of items
    res.table = pd.concat([frames[latest[n]] for n in sorted(latest)], ignore_index=True)
    res.evaluated = sorted(latest)
    res.statement = _statement(res, z)
    return res


def _search(reaches: Any, start: int, max_items: int) -> tuple[int | None, int | None]:
    """Doubling from ``start``, then bisection: (first reaching, last failing) or None."""
    lo: int | None = None
    hi: int | None = start
    step = start
    while not reaches(step):
        lo = step
        if step >= max_items:
            return None, lo
        step = min(2 * step, max_items)
        hi = step
    if hi is not None and lo is not None:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if reaches(mid):
                hi = mid
            else:
                lo = mid
    return hi, lo


def _walk(
    hi: int, lo: int | None, reaches: Any, start: int, max_items: int
) -> tuple[int | None, int | None]:
    """Move the answer to where the longer simulation puts it, one item at a time."""
    while not reaches(hi):
        if hi >= max_items:
            return None, hi
        lo, hi = hi, hi + 1
    while hi - 1 >= max(start, 2) and lo is not None and reaches(hi - 1):
        hi -= 1
    lo = hi - 1 if lo is not None or hi > start else lo
    return hi, lo
