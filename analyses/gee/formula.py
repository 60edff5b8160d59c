"""Model formulas in R's notation, read by formulaic: ``y ~ a + b * C(c) + I(x^2)``.

formulaic (Wilkinson notation, installed with statsmodels) tokenises and parses the
formula; this module walks its syntax tree into R's terms, so that the term-to-column
structure Type II / III tests and the reference grid need stays ours:

- operators: ``+`` (add terms), ``-`` (remove a term), ``:`` (interaction), ``*``
  (``a * b`` = ``a + b + a:b``), ``/`` and ``%in%`` (nesting: ``a / b`` = ``a + a:b``),
  ``^`` (``(a + b + c)^2``: the interactions up to order 2) and parentheses;
- variables: a column name (a factor when the column is not numeric or is boolean, a
  numeric covariate otherwise, as R reads a data frame: a numeric code such as a centre
  1 / 2 is a covariate unless the formula says ``C(centre)`` or ``factor(centre)``);
  ``C(x)`` and ``factor(x)`` (a factor); ``I(expr)`` and ``log``, ``exp``, ``sqrt``,
  ``abs``, ``log2``, ``log10``, ``log1p`` of columns (numeric; arithmetic ``+ - * / ^``
  on columns and numbers, ``^`` the power as in R).  Nothing else is evaluated.

Terms are ordered as R orders them: by degree, then by first appearance; variables
inside a term follow their first appearance in the formula, so ``category:model`` is
named ``model:category`` when ``model`` came first.  The intercept is always present
(``- 1`` / ``+ 0`` are refused: the Wald tests and marginal means here assume it).
Every error quotes the whole formula.

References
----------
Wilkinson, G. N. & Rogers, C. E. (1973). Symbolic description of factorial models
for analysis of variance. Applied Statistics 22(3), 392-399.
Chambers, J. M. & Hastie, T. J. (1992). Statistical Models in S, ch. 2 (terms).

Example
-------
>>> from analyses.gee.formula import parse_formula
>>> f = parse_formula("agree ~ model + dataset_type * category + model:category")
>>> f.labels
['model', 'dataset_type', 'category', 'dataset_type:category', 'model:category']
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from robustness.core.errors import AnalysisError

__all__ = ["FactorSpec", "Formula", "FormulaError", "evaluate_variables", "parse_formula"]

#: Bounds that keep parsing and model fitting cheap: characters, parenthesis depth, terms.
MAX_FORMULA_CHARS = 2000
MAX_DEPTH = 50
MAX_TERMS = 256
_NAME = re.compile(r"[A-Za-z_.][A-Za-z0-9_.]*")
_MATH = {
    "log": np.log,
    "exp": np.exp,
    "sqrt": np.sqrt,
    "abs": np.abs,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
}
_ARITH: dict[type, Any] = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
    ast.Div: np.divide,
    ast.Pow: np.power,
}


class FormulaError(AnalysisError):
    """A formula that cannot be read; the message quotes it and says where (an
    :class:`~robustness.core.errors.AnalysisError`, so a bad ``--formula`` is one clean error)."""


@dataclass(frozen=True)
class FactorSpec:
    """One variable of a formula: its text, how it enters and the columns it reads.

    ``kind`` is ``'auto'`` (a column: factor or numeric by its values), ``'factor'``
    (``C(x)``, ``factor(x)``) or ``'numeric'`` (``I(...)``, ``log(x)``, ...).
    """

    expr: str
    kind: str
    columns: tuple[str, ...]
    code: ast.expr | None = dataclasses.field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Formula:
    """A parsed formula: response, variables in order of appearance, ordered terms.

    ``specs`` describes each variable (:class:`FactorSpec`); a variable without one is
    a plain column name.
    """

    text: str
    response: str
    variables: tuple[str, ...]
    terms: tuple[tuple[str, ...], ...]
    specs: tuple[FactorSpec, ...] = ()

    @property
    def labels(self) -> list[str]:
        """Term labels as R writes them, e.g. ``'dataset_type:category'``."""
        return [":".join(t) for t in self.terms]

    def spec(self, variable: str) -> FactorSpec:
        """The :class:`FactorSpec` of a variable (a plain column when none is recorded)."""
        for s in self.specs:
            if s.expr == variable:
                return s
        return FactorSpec(variable, "auto", (variable,))

    @property
    def columns(self) -> tuple[str, ...]:
        """The table columns the variables read, in order of first appearance."""
        out: dict[str, None] = {}
        for v in self.variables:
            out.update(dict.fromkeys(self.spec(v).columns))
        return tuple(out)

    def with_terms(self, terms: Sequence[tuple[str, ...]]) -> Formula:
        """The same formula with ``terms`` (e.g. after dropping the flat ones)."""
        return dataclasses.replace(self, terms=tuple(terms))


def _fail(text: str, what: str) -> FormulaError:
    shown = text if len(text) <= 200 else text[:180] + "..."
    return FormulaError(f"formula {shown!r}: {what}.")


def _columns_of(node: ast.AST, text: str, expr: str) -> tuple[str, ...]:
    """Check a numeric expression uses only columns, numbers, arithmetic and _MATH."""
    found: list[str] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            fn = sub.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            owner = getattr(fn.value, "id", "") if isinstance(fn, ast.Attribute) else ""
            if name not in _MATH or owner not in ("", "np", "numpy") or len(sub.args) != 1:
                raise _fail(text, f"{expr!r}: only {', '.join(_MATH)} of one argument are allowed")
            if sub.keywords:
                raise _fail(text, f"{expr!r}: keyword arguments are not supported")
        elif isinstance(sub, ast.Name):
            found.append(sub.id)
        elif isinstance(sub, ast.Constant):
            if not isinstance(sub.value, int | float) or isinstance(sub.value, bool):
                raise _fail(text, f"{expr!r}: {sub.value!r} is not a number")
        elif isinstance(sub, ast.BinOp) and type(sub.op) not in _ARITH:
            raise _fail(text, f"{expr!r}: only + - * / ^ are allowed")
        elif isinstance(sub, ast.UnaryOp) and not isinstance(sub.op, ast.USub | ast.UAdd):
            raise _fail(text, f"{expr!r}: only unary - and + are allowed")
        elif not isinstance(
            sub, ast.Call | ast.Name | ast.Constant | ast.BinOp | ast.UnaryOp | ast.Attribute
        ) and not isinstance(sub, ast.operator | ast.unaryop | ast.expr_context):
            raise _fail(text, f"{expr!r}: {type(sub).__name__} is not allowed")
    modules = {"np", "numpy"}
    return tuple(dict.fromkeys(c for c in found if c not in _MATH and c not in modules))


def _factor_spec(token: str, text: str) -> FactorSpec:
    """The :class:`FactorSpec` of one formulaic token (a name or a Python call)."""
    if _NAME.fullmatch(token):
        return FactorSpec(token, "auto", (token,))
    try:
        tree = ast.parse(token.replace("^", "**"), mode="eval").body
    except SyntaxError:
        raise _fail(text, f"{token!r} cannot be read") from None
    if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name):
        fn, args = tree.func.id, tree.args
        if fn in ("C", "factor"):
            if len(args) != 1 or not isinstance(args[0], ast.Name) or tree.keywords:
                raise _fail(text, f"{token!r}: {fn}() takes one column name")
            return FactorSpec(token, "factor", (args[0].id,))
        if fn == "I":
            if len(args) != 1 or tree.keywords:
                raise _fail(text, f"{token!r}: I() takes one expression")
            return FactorSpec(token, "numeric", _columns_of(args[0], text, token), args[0])
    return FactorSpec(token, "numeric", _columns_of(tree, text, token), tree)


class _Walker:
    """Turns formulaic's syntax tree into R's terms (frozensets of variables)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.order: list[str] = []
        self.specs: dict[str, FactorSpec] = {}

    def check_size(self, n: int) -> None:
        if n > MAX_TERMS:
            raise _fail(self.text, f"the formula expands to more than {MAX_TERMS} terms")

    def leaf(self, token: Any) -> list[frozenset[str]]:
        kind = str(getattr(token.kind, "value", token.kind))
        value = str(token.token)
        if kind == "value":
            if value == "1":
                return [frozenset()]
            if value == "0":
                raise _fail(self.text, "removing the intercept is not supported")
            raise _fail(self.text, f"the value {value} is not a term")
        if kind not in ("name", "python"):
            raise _fail(self.text, f"{value!r} is not a term")
        source = str(getattr(token, "source", "") or "")
        start, end = getattr(token, "source_start", None), getattr(token, "source_end", None)
        expr = value
        if kind == "python" and source and start is not None and end is not None:
            expr = source[int(start) : int(end) + 1].strip()
        spec = (
            FactorSpec(expr, "auto", (expr,)) if kind == "name" else _factor_spec(expr, self.text)
        )
        if expr not in self.specs:
            self.specs[expr] = spec
            self.order.append(expr)
        return [frozenset([expr])]

    def node(self, n: Any) -> list[frozenset[str]]:
        if not hasattr(n, "operator"):
            return self.leaf(n)
        op, args = n.operator.symbol, list(n.args)
        if not args or len(args) > 2:
            raise _fail(self.text, f"the operator {op!r} is not supported here")
        if len(args) == 1:
            inner = self.node(args[0])
            if op == "+":
                return inner
            if op == "-" and frozenset() in inner:
                raise _fail(self.text, "removing the intercept is not supported")
            if op == "-":
                return []
            raise _fail(self.text, f"the operator {op!r} is not supported")
        if op == "^" or op == "**":
            return self.power(args)
        left, right = self.node(args[0]), self.node(args[1])
        if op == "+":
            out = left + [t for t in right if t not in left]
        elif op == "-":
            if frozenset() in right:
                raise _fail(self.text, "removing the intercept is not supported")
            out = [t for t in left if t not in right]
        elif op == ":":
            self.check_size(len(left) * len(right))
            out = list(dict.fromkeys(a | b for a in left for b in right))
        elif op == "*":
            self.check_size(len(left) + len(right) + len(left) * len(right))
            both = [a | b for a in left for b in right]
            out = list(dict.fromkeys([*left, *right, *both]))
        elif op in ("/", "in"):
            outer, inner = (left, right) if op == "/" else (right, left)
            whole = frozenset().union(*outer)
            out = list(dict.fromkeys([*outer, *(whole | t for t in inner)]))
        else:
            raise _fail(self.text, f"the operator {op!r} is not supported")
        self.check_size(len(out))
        return out

    def power(self, args: Sequence[Any]) -> list[frozenset[str]]:
        base = self.node(args[0])
        exponent = str(getattr(args[1], "token", ""))
        if not exponent.isdigit() or int(exponent) < 1:
            raise _fail(self.text, f"the power {exponent!r} must be a positive whole number")
        out = list(base)
        for _ in range(int(exponent) - 1):
            self.check_size(len(out) * len(base))
            out = list(dict.fromkeys([*out, *(a | b for a in out for b in base)]))
        self.check_size(len(out))
        return out


def _depth(text: str) -> int:
    depth = top = 0
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        top = max(top, depth)
    return top


def parse_formula(text: str) -> Formula:
    """Parse ``response ~ terms`` (by formulaic); raise :class:`FormulaError` quoting it.

    Parameters
    ----------
    text
        An R-style formula such as ``agree ~ model + dataset_type * category``.

    Returns
    -------
    Formula
        ``response``, ``variables`` (in order of appearance), ``terms`` (R's order)
        and ``specs`` (how each variable enters).

    Notes
    -----
    ``a * b`` = ``a + b + a:b``; ``(a + b):c`` = ``a:c + b:c``; ``a / b`` = ``a + a:b``;
    ``(a + b)^2`` = ``a + b + a:b``; ``- t`` removes t.

    References
    ----------
    Wilkinson & Rogers (1973); Chambers & Hastie (1992), ch. 2.

    Examples
    --------
    >>> parse_formula("y ~ a * b - a").labels
    ['b', 'a:b']
    >>> parse_formula("resp ~ age * C(smoke)").labels
    ['age', 'C(smoke)', 'age:C(smoke)']
    """
    from formulaic.errors import FormulaSyntaxError
    from formulaic.parser import DefaultFormulaParser

    if not isinstance(text, str) or "~" not in text:
        raise FormulaError(f"formula {text!r:.200} must read 'response ~ terms'.")
    if len(text) > MAX_FORMULA_CHARS:
        raise FormulaError(
            f"formula {text[:60]!r}... is {len(text):,} characters long; at most "
            f"{MAX_FORMULA_CHARS:,} are accepted."
        )
    if _depth(text) > MAX_DEPTH:
        raise _fail(text, f"parentheses nest more than {MAX_DEPTH} deep")
    lhs, rhs = text.split("~", 1)
    response = lhs.strip()
    if not _NAME.fullmatch(response):
        raise _fail(text, f"the response {response!r} must be one column name")
    if not rhs.strip():
        raise _fail(text, "there are no terms after '~'")
    try:
        tree = DefaultFormulaParser().get_ast(text)
    except FormulaSyntaxError as exc:
        first = str(exc).splitlines()[0].rstrip(".").replace("insuffient", "insufficient")
        if "context marker" in first:
            first = "a parenthesis is not closed"
        elif "insufficient arguments" in first:
            first += " (a term is missing)"
        raise _fail(text, first) from None
    except (ValueError, TypeError) as exc:
        raise _fail(text, str(exc).splitlines()[0].rstrip(".")) from None
    walker = _Walker(text)
    if not hasattr(tree, "args") or len(tree.args) != 2:
        raise _fail(text, "it must read 'response ~ terms' with one '~'")
    terms = walker.node(tree.args[1])
    if response in walker.order or any(response in s.columns for s in walker.specs.values()):
        raise _fail(text, f"the response {response!r} is also a term")
    order = {v: k for k, v in enumerate(walker.order)}
    real = [t for t in terms if t]
    appearance = {t: k for k, t in enumerate(real)}
    ranked = sorted(real, key=lambda t: (len(t), appearance[t]))
    named = tuple(tuple(sorted(t, key=order.__getitem__)) for t in ranked)
    used = [v for v in walker.order if any(v in t for t in named)]
    specs = tuple(walker.specs[v] for v in used)
    return Formula(text, response, tuple(used), named, specs)


def _numeric(node: ast.AST, frame: pd.DataFrame) -> np.ndarray:
    if isinstance(node, ast.Name):
        return np.asarray(pd.to_numeric(frame[node.id], errors="coerce"), dtype=float)
    if isinstance(node, ast.Constant):
        return np.full(len(frame), float(node.value))  # type: ignore[arg-type]
    if isinstance(node, ast.UnaryOp):
        value = _numeric(node.operand, frame)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp):
        out: np.ndarray = _ARITH[type(node.op)](
            _numeric(node.left, frame), _numeric(node.right, frame)
        )
        return out
    assert isinstance(node, ast.Call)
    fn = node.func
    name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
    result: np.ndarray = _MATH[name](_numeric(node.args[0], frame))
    return result


def evaluate_variables(f: Formula, frame: pd.DataFrame) -> pd.DataFrame:
    """The formula's variables on the rows of ``frame``: one column per variable.

    Parameters
    ----------
    f
        The parsed formula.
    frame
        Rows with the columns the formula reads (:attr:`Formula.columns`).

    Returns
    -------
    pandas.DataFrame
        ``frame``'s columns plus one column per variable that is not a plain column,
        named by its text (``C(smoke)`` holds smoke's values as a factor, ``I(age^2)``
        the numbers; an undefined value, such as the log of 0, is NaN).
    """
    extra = {}
    with np.errstate(all="ignore"):
        for v in f.variables:
            s = f.spec(v)
            if not set(s.columns) <= set(frame.columns):
                continue  # already a column (a reference grid holds the factor's levels)
            if s.kind == "factor":
                extra[v] = frame[s.columns[0]].astype(object)
            elif s.kind == "numeric" and s.code is not None:
                values = _numeric(s.code, frame)
                extra[v] = np.where(np.isfinite(values), values, np.nan)
    return frame.assign(**extra) if extra else frame
