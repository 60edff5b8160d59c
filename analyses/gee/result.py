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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from analyses.gee.emmeans import marginal_means
from analyses.gee.formula import Formula
from analyses.gee.inference import (
    check_inference,
    describe_inference,
    one_direction_p,
    tester_for,
)
from analyses.gee.small_sample import CR2Parts
from analyses.gee.type_contrasts import CONTRAST_COLUMNS, type_contrasts
from analyses.gee.wald import COLUMNS as WALD_COLUMNS
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
        (treatment coding, R's names; aliased columns left out); ``bse_robust`` and
        ``bse_model`` name the robust and the model-based standard errors apart.
    cov_naive
        The model-based covariance phi B^{-1} (geepack's ``vbeta.naiv``).
    params_sum, cov_sum
        The same fit in sum-to-zero coding (used for Type III).
    alpha, scale
        Exchangeable correlation (0 for independence) and dispersion estimates.
    cov_type, test
        The covariance step that made ``cov`` (:mod:`analyses.gee.covariance`) and the
        reference distribution of the tests (``'chi2'``, ``'F'``, ``'HTZ'``,
        :mod:`analyses.gee.small_sample`); :attr:`inference` says both in words.
    cov_plain
        The plain sandwich, whatever ``cov_type`` (geepack's).
    bias_reduced
        Whether the bias-reduced equation was solved (there were separated cells).
    notes
        Sentences about what was excluded, dropped, withheld or adjusted, and why.
    converged
        Whether the solver converged; when it did not, :attr:`withheld` says why the
        Wald tests, marginal means and contrasts are withheld (empty tables).
    separation
        Cells whose response is constant (columns ``term, cell, n_rows, value``);
        they stay in the fit.
    model_formula
        The parsed formula with the fitted terms (for the reference grid).
    covariates
        Each numeric column the model reads -> its values on the fitted rows (for the
        reference grid's covariate levels, emmeans' ``cov.keep`` and ``cov.reduce``).
    grid
        The distinct combinations of the model's variables in the fitted rows, with
        their row count ``n`` and response sum ``y_sum``.
    """

    formula: str
    response: str
    cluster: str | tuple[str, ...] | None
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
    model_formula: Formula | None = field(default=None, repr=False)
    covariates: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    bias_reduced: bool = False
    full_names: tuple[str, ...] = field(default=(), repr=False)
    null_basis: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)), repr=False)
    _term_of: np.ndarray = field(default_factory=lambda: np.zeros(0, int), repr=False)
    _term_of_sum: np.ndarray = field(default_factory=lambda: np.zeros(0, int), repr=False)
    test: str = "chi2"
    cov_plain: pd.DataFrame | None = field(default=None, repr=False)
    _cr2: CR2Parts | None = field(default=None, repr=False)
    _sum_map: np.ndarray | None = field(default=None, repr=False)

    @property
    def inference(self) -> str:
        """The covariance and reference distribution of every p-value, in words."""
        return describe_inference(self.cov_type, self.test, self.n_clusters, len(self.params))

    @property
    def bse(self) -> pd.Series:
        """Robust standard errors (from ``cov``; the same as :attr:`bse_robust`)."""
        return pd.Series(np.sqrt(np.diag(self.cov.to_numpy())), index=self.params.index)

    @property
    def bse_robust(self) -> pd.Series:
        """Robust (sandwich, or the ``cov_type`` correction) standard errors."""
        return self.bse

    @property
    def bse_model(self) -> pd.Series:
        """Model-based standard errors, named apart from the robust ones.

        Bias-reduced fit: sqrt(diag(B^{-1})), the dispersion fixed at 1 as for a
        binomial GLM -- brglm2's ``summary(glm(..., method = "brglmFit"))`` standard
        errors, that is sqrt(diag(cov_naive) / scale), since ``cov_naive`` = phi B^{-1}
        carries the estimated dispersion phi.  Plain fit: sqrt(diag(cov_naive)), geepack's
        naive (model-based) standard errors, phi included.
        """
        v = self.cov_naive.to_numpy() / (self.scale if self.bias_reduced else 1.0)
        return pd.Series(np.sqrt(np.diag(v)), index=self.params.index)

    @property
    def withheld(self) -> str:
        """Why the tests and means of this fit are withheld ('' when they are published)."""
        if self.converged:
            return ""
        return (
            f"the GEE did not converge in {self.iterations} iterations, so its Wald tests, "
            "marginal means and contrasts are withheld (an unconverged estimate is not one)"
        )

    def _withheld_table(self, columns: Sequence[str]) -> pd.DataFrame:
        table = pd.DataFrame(columns=list(columns))
        table.attrs["notes"] = [self.withheld + "."]
        return table

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
        z = b / se; p = 2 (1 - Phi(|z|)) for ``test='chi2'``, 2 (1 - T(|z|)) with G - p
        df for ``'F'`` and with the HTZ df of the coefficient for ``'HTZ'``; the interval
        b +- z_{(1+level)/2} se is normal.  ``attrs['inference']`` names both.
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
        table = pd.DataFrame(
            {
                "coefficient": b.index,
                "term": [labels[k + 1] for k in term_of],
                "estimate": b.to_numpy(),
                "robust_se": se,
                "z": z,
                "p_value": self._coefficient_p(z, coding),
                "ci_low": b.to_numpy() - q * se,
                "ci_high": b.to_numpy() + q * se,
            }
        )
        table.attrs["inference"] = self.inference
        return table

    def _coefficient_p(self, z: np.ndarray, coding: str) -> np.ndarray:
        """Two-sided p-values of the coefficients' z under the fit's reference."""
        if self.test == "chi2":
            return np.asarray(2 * stats.norm.sf(np.abs(z)))
        p = len(self.params)
        # b_sum[k] = A[k] b: its direction in treatment coordinates is the row A[k]
        use_map = coding == "sum" and self._sum_map is not None
        rows = self._sum_map if use_map and self._sum_map is not None else np.eye(p)
        b = self.params.to_numpy()
        return np.array(
            [
                one_direction_p(self.test, float(zk), rows[k], self.n_clusters, self._cr2, b)
                for k, zk in enumerate(z)
            ]
        )

    def wald(self, type: int = 2, test: str | None = None) -> pd.DataFrame:
        """Wald test per term, joint over its columns: ``term, dof, chi2, p_value``.

        ``type=2``: the term's columns after its higher-order relatives', treatment
        coding; ``type=3``: the term's columns in sum-to-zero coding, intercept
        included.  With ``cov_type='robust'`` and ``test='chi2'`` equal to
        ``car::Anova(geeglm_fit, type = 2 or 3, test.statistic = "Wald")`` on a
        full-rank design; rank-deficient cases as in :mod:`analyses.gee.wald`
        (``attrs['notes']`` names withheld terms).  ``test`` (default the fit's):
        ``'F'`` or ``'HTZ'`` add the columns ``F, df_denom``
        (:mod:`analyses.gee.small_sample`); ``attrs['inference']`` names the covariance
        and the reference distribution of the p-values.
        """
        if type not in (2, "2", "II", 3, "3", "III"):
            raise AnalysisError(f"type must be 2 or 3, not {type!r}.")
        test = self.test if test is None else test
        check_inference(self.cov_type, test, self.corstr)
        if self.withheld:
            table = self._withheld_table(WALD_COLUMNS)
            table["dof"] = table["dof"].astype(int)
            return table
        b = self.params.to_numpy()
        if type in (2, "2", "II"):
            tester = tester_for(test, b, self.n_clusters, self._cr2)
            out = wald_type2(b, self.cov.to_numpy(), self._term_of, self.terms, tester=tester)
        else:
            tester = tester_for(test, b, self.n_clusters, self._cr2, self._sum_map)
            out = wald_type3(
                self.params_sum.to_numpy(),
                self.cov_sum.to_numpy(),
                self._term_of_sum,
                self.term_labels,
                tester=tester,
            )
        out.attrs["inference"] = describe_inference(self.cov_type, test, self.n_clusters, len(b))
        return out

    def marginal_means(
        self,
        by: Sequence[str] = ("dataset_type", "category"),
        level: float = 0.95,
        scale: str = "link",
        cov_keep: int = 2,
        cov_reduce: Callable[[np.ndarray], float] | Mapping[str, float] | None = None,
    ) -> pd.DataFrame:
        """Estimated marginal mean per cell of ``by``, as emmeans (:mod:`analyses.gee.emmeans`)."""
        if self.withheld:
            return self._withheld_table([*by, "estimate", "se", "ci_low", "ci_high"])
        return marginal_means(
            self, by=by, level=level, scale=scale, cov_keep=cov_keep, cov_reduce=cov_reduce
        )

    def contrasts(self, level: float = 0.95) -> pd.DataFrame:
        """Objective - subjective contrasts, Holm-adjusted (:mod:`analyses.gee.type_contrasts`)."""
        if self.withheld:
            return self._withheld_table(CONTRAST_COLUMNS)
        return type_contrasts(self, level=level)
