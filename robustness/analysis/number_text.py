"""Numbers as a paper prints them: p-values, degrees of freedom, estimates.

Formatting plumbing for the console and the report, outside the statistics convention
(no formula, no reference): each function has Parameters and Returns.

>>> fmt_p(0.0004), fmt_p(2e-11), fmt_p(0.0312), fmt_p(float("nan"))
('< 0.001', '2.0e-11', '0.031', '-')
>>> fmt_dof(6.0), fmt(0.12345), fmt(None), fmt(-0.0), fmt_p(0.0)
('6', '0.123', '-', '0.000', '< 1e-300')
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

__all__ = ["fmt", "fmt_dof", "fmt_p", "is_missing"]


def is_missing(value: Any) -> bool:
    """None, pandas NA and NaN are missing; everything else is a value.

    Parameters
    ----------
    value
        Anything.

    Returns
    -------
    bool
        True for None, ``pandas.NA``, NaN and NaT; False otherwise (lists and arrays
        included).
    """
    if value is None:
        return True
    try:
        import pandas as pd

        return bool(pd.isna(value))  # NaN, NaT and pd.NA
    except (TypeError, ValueError):  # a list or an array is a value
        return False


def fmt(value: Any, digits: int = 3) -> str:
    """A number with ``digits`` decimals (tiny non-zero values in scientific notation).

    Parameters
    ----------
    value
        A number (or anything: a non-number is returned as ``str(value)``).
    digits
        Decimals.

    Returns
    -------
    str
        ``'-'`` when missing; an integer or a boolean as it is; otherwise ``digits``
        decimals, or one decimal of scientific notation when it would round to zero.
    """
    if is_missing(value):
        return "-"
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return f"{0.0:.{digits}f}"  # no "-0.000"
    if abs(x) < 0.5 * 10 ** (-digits):
        return f"{x:.1e}"
    return f"{x:.{digits}f}"


def fmt_p(p: Any) -> str:
    """A p-value: three decimals, "< 0.001" below, scientific notation below 1e-4.

    Parameters
    ----------
    p
        A p-value (or missing).

    Returns
    -------
    str
        ``'-'`` when missing, ``'< 1e-300'`` at 0 (an underflowed tail), ``'1.2e-05'``
        below 1e-4, ``'< 0.001'`` below 0.001, else three decimals.
    """
    if is_missing(p):
        return "-"
    x = float(p)
    if x <= 0:
        return "< 1e-300"  # the chi-square tail underflows to 0 beyond about 1e-308
    if x < 1e-4:
        return f"{x:.1e}"
    if x < 0.001:
        return "< 0.001"
    return f"{x:.3f}"


def fmt_dof(dof: Any) -> str:
    """Degrees of freedom as a whole number.

    Parameters
    ----------
    dof
        Degrees of freedom (or missing).

    Returns
    -------
    str
        The rounded whole number, or ``'-'`` when missing or not finite.
    """
    if is_missing(dof):
        return "-"
    x = float(dof)
    return str(round(x)) if math.isfinite(x) else "-"
