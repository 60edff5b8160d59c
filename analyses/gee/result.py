"""The result of a binomial GEE fit: coefficients, covariances, Wald tests, marginal means.

:class:`GEEResult` is what :func:`analyses.gee.gee` returns.  It holds the numbers of
the fit and delegates the tests to the modules that define them: Wald chi-square per
term to :mod:`analyses.gee.wald`, marginal means to :mod:`analyses.gee.emmeans` and the
objective - subjective contrasts to :mod:`analyses.gee.type_contrasts` (those modules
take plain arrays or a protocol, so none of them imports this one).

References
----------
Liang, K.-Y. & Zeger, S. L. (1986). Biometrika 73(1), 13-22.
Fox, J. & Weisberg, S. (2019). An R Companion to Applied Regression, 3rd ed., ch. 5.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from analyses.gee.emmeans import marginal_means
from analyses.gee.type_contrasts import type_contrasts
from analyses.gee.wald import wald_type2, wald_type3
from robustness.core.errors import AnalysisError

__all__ = ["GEEResult"]


@dataclass
class GEEResult:
    """A fitted binomial GEE with its Wald tests, marginal means and notes.

    Attributes
    ----------
    params, bse, cov
        Coefficients, robust standard errors and robust (sandwich) covariance
        (treatment coding, R's names; aliased columns left out).
    params_sum, cov_sum
        The same fit in sum-to-zero coding (used for Type III).
    alpha, scale
        Exchangeable correlation (0 for independence) and dispersion estimates.
    cov_type
        The covariance step that made ``cov`` (:mod:`analyses.gee.covariance`).
    bias_reduced
        Whether the bias-reduced equation was solved (there were separated cells).
    notes
        Sentences about what was excluded, dropped, withheld or adjusted, and why.
    separation
        Cells whose response is constant (columns ``term, cell, n_rows, value``);
        they stay in the fit.
    grid
        The distinct combinations of the model's variables in the fitted rows, with
        their row count ``n`` and response sum ``y_sum``.
    """

    formula: str
    response: str
    cluster: str
    terms: list[tuple[str, ...]]
    params: pd.Series
    cov: pd.DataFrame
    params_sum: pd.Series
    cov_sum: pd.DataFrame
    cov_naive: pd.DataFrame
    alpha: float
    scale: float
    n_obs: int
    n_clusters: int
    max_cluster_size: int
    iterations: int
    converged: bool
    notes: list[str]
    separation: pd.DataFrame
    dropped_terms: list[str]
    aliased: list[str]
    levels: dict[str, list[object]]
    grid: pd.DataFrame = field(repr=False)
    corstr: str = "exchangeable"
    cov_type: str = "robust"
    bias_reduced: bool = False
    full_names: tuple[str, ...] = field(default=(), repr=False)
    null_basis: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)), repr=False)
    _term_of: np.ndarray = field(default_factory=lambda: np.zeros(0, int), repr=False)
    _term_of_sum: np.ndarray = field(default_factory=lambda: np.zeros(0, int), repr=False)

    @property
    def bse(self) -> pd.Series:
        """Robust standard errors."""
        return pd.Series(np.sqrt(np.diag(self.cov.to_numpy())), index=self.params.index)

    @property
    def term_labels(self) -> list[str]:
        """Term labels as R writes them (``'model:category'``)."""
        return [":".join(t) for t in self.terms]

    def coefficients(self, coding: str = "treatment", level: float = 0.95) -> pd.DataFrame:
        """Coefficients with robust SE, z, p-value and confidence interval.

        Parameters
        ----------
        coding
            ``'treatment'`` (R's default contrasts) or ``'sum'``.
        level
            Confidence level of the interval.

        Returns
        -------
        pandas.DataFrame
            ``coefficient, term, estimate, robust_se, z, p_value, ci_low, ci_high``.

        Notes
        -----
        z = b / se, p = 2 (1 - Phi(|z|)), interval b +- z_{(1+level)/2} se.
        """
        if coding == "treatment":
            b, v, term_of = self.params, self.cov, self._term_of
        elif coding == "sum":
            b, v, term_of = self.params_sum, self.cov_sum, self._term_of_sum
        else:
            raise AnalysisError(f"coding must be 'treatment' or 'sum', not {coding!r}.")
        se = np.sqrt(np.diag(v.to_numpy()))
        z = b.to_numpy() / se
        q = stats.norm.ppf(0.5 + level / 2)
        labels = ["(Intercept)", *self.term_labels]
        return pd.DataFrame(
            {
                "coefficient": b.index,
                "term": [labels[k + 1] for k in term_of],
                "estimate": b.to_numpy(),
                "robust_se": se,
                "z": z,
                "p_value": 2 * stats.norm.sf(np.abs(z)),
                "ci_low": b.to_numpy() - q * se,
                "ci_high": b.to_numpy() + q * se,
            }
        )

    def wald(self, type: int = 2) -> pd.DataFrame:
        """Wald chi-square per term, joint over its columns: ``term, dof, chi2, p_value``.

        ``type=2``: the term's columns after its higher-order relatives', treatment
        coding; ``type=3``: the term's columns in sum-to-zero coding, intercept
        included.  Equal to ``car::Anova(geeglm_fit, type = 2 or 3, test.statistic =
        "Wald")`` on a full-rank design; rank-deficient cases as in
        :mod:`analyses.gee.wald` (``attrs['notes']`` names withheld terms).
        """
        if type in (2, "2", "II"):
            return wald_type2(
                self.params.to_numpy(), self.cov.to_numpy(), self._term_of, self.terms
            )
        if type in (3, "3", "III"):
            return wald_type3(
                self.params_sum.to_numpy(),
                self.cov_sum.to_numpy(),
                self._term_of_sum,
                self.term_labels,
            )
        raise AnalysisError(f"type must be 2 or 3, not {type!r}.")

    def marginal_means(
        self,
        by: Sequence[str] = ("dataset_type", "category"),
        level: float = 0.95,
        scale: str = "link",
    ) -> pd.DataFrame:
        """Estimated marginal mean per cell of ``by``, as emmeans (:mod:`analyses.gee.emmeans`)."""
        return marginal_means(self, by=by, level=level, scale=scale)

    def contrasts(self, level: float = 0.95) -> pd.DataFrame:
        """Objective - subjective contrasts, Holm-adjusted (:mod:`analyses.gee.type_contrasts`)."""
        return type_contrasts(self, level=level)
