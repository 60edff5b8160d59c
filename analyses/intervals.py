"""Confidence intervals for a binomial proportion."""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["wilson_interval"]


def wilson_interval(successes: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (Wilson 1927).

    Parameters
    ----------
    successes, n
        Successes k and trials n.
    level
        Confidence level.

    Returns
    -------
    tuple of float
        ``(low, high)``; NaN for n = 0.

    Notes
    -----
    With p = k / n and z the normal quantile,
    (p + z^2 / 2n +- z sqrt(p (1 - p) / n + z^2 / 4n^2)) / (1 + z^2 / n).

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
    inference. JASA 22, 209-212.

    Examples
    --------
    >>> from statsmodels.stats.proportion import proportion_confint
    >>> lo, hi = wilson_interval(17, 30)
    >>> ref = proportion_confint(17, 30, method="wilson")
    >>> bool(abs(lo - ref[0]) < 1e-12 and abs(hi - ref[1]) < 1e-12)
    True
    """
    if n <= 0:
        return (np.nan, np.nan)
    z = float(stats.norm.ppf(0.5 + level / 2))
    p = successes / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z / den * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (float(centre - half), float(centre + half))
