"""Model formulas in R's notation: ``y ~ a + b * c + a:c`` (parser only).

Supported: ``+`` (add terms), ``-`` (remove a term), ``:`` (interaction),
``*`` (``a * b`` = ``a + b + a:b``) and parentheses, e.g. ``(a + b):c``.
Terms are ordered as R orders them: by degree, then by first appearance;
variables inside a term follow their first appearance in the formula, so
``category:model`` is named ``model:category`` when ``model`` came first.  The
intercept is always present (``- 1`` / ``+ 0`` are refused: the Wald tests and
marginal means here assume it).

References
----------
Wilkinson, G. N. & Rogers, C. E. (1973). Symbolic description of factorial models
for analysis of variance. Applied Statistics 22(3), 392-399.

Example
-------
>>> from analyses.gee.formula import parse_formula
>>> f = parse_formula("agree ~ model + dataset_type * category + model:category")
>>> f.labels
['model', 'dataset_type', 'category', 'dataset_type:category', 'model:category']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from robustness.core.errors import AnalysisError

__all__ = ["Formula", "FormulaError", "parse_formula"]

_TOKEN = re.compile(r"\s*(?:([A-Za-z_.][A-Za-z0-9_.]*)|(\d+)|(.))")
#: Bounds that keep parsing and model fitting cheap: characters, parenthesis depth, terms.
MAX_FORMULA_CHARS = 2000
MAX_DEPTH = 50
MAX_TERMS = 256


class FormulaError(AnalysisError):
    """A formula that cannot be read; the message quotes it and says where (an
    :class:`~robustness.core.errors.AnalysisError`, so a bad ``--formula`` is one clean error)."""


@dataclass(frozen=True)
class Formula:
    """A parsed formula: response, variables in order of appearance, ordered terms."""

    text: str
    response: str
    variables: tuple[str, ...]
    terms: tuple[tuple[str, ...], ...]

    @property
    def labels(self) -> list[str]:
        """Term labels as R writes them, e.g. ``'dataset_type:category'``."""
        return [":".join(t) for t in self.terms]


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                break
            start = m.start(m.lastindex) if m.lastindex else pos
            if m.group(1):
                self.tokens.append(("name", m.group(1), start))
            elif m.group(2):
                self.tokens.append(("num", m.group(2), start))
            elif m.group(3) and not m.group(3).isspace():
                self.tokens.append(("op", m.group(3), start))
            pos = m.end()
        self.i = 0
        self.depth = 0
        self.order: list[str] = []

    def check_size(self, n: int) -> None:
        if n > MAX_TERMS:
            raise self.fail(f"the formula expands to more than {MAX_TERMS} terms")

    def fail(self, what: str) -> FormulaError:
        where = self.tokens[self.i][2] if self.i < len(self.tokens) else len(self.text)
        text = self.text if len(self.text) <= 120 else self.text[:100] + "..."
        return FormulaError(f"formula {text!r}: {what} at character {where + 1}.")

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, value: str) -> bool:
        tok = self.peek()
        if tok is not None and tok[0] == "op" and tok[1] == value:
            self.i += 1
            return True
        return False

    # Terms are frozensets of variable names; the intercept is the empty set.
    def sum_(self) -> list[frozenset[str]]:
        terms: list[frozenset[str]] = []
        sign = -1 if self.take("-") else 1
        while True:
            part = self.prod()
            if sign > 0:
                terms.extend(t for t in part if t not in terms)
                self.check_size(len(terms))
            else:
                if frozenset() in part:
                    raise self.fail("removing the intercept is not supported")
                terms = [t for t in terms if t not in part]
            if self.take("+"):
                sign = 1
            elif self.take("-"):
                sign = -1
            else:
                return terms

    def prod(self) -> list[frozenset[str]]:
        left = self.inter()
        while self.take("*"):
            right = self.inter()
            self.check_size(len(left) + len(right) + len(left) * len(right))
            both = [a | b for a in left for b in right]
            merged = list(left)
            for t in (*right, *both):
                if t not in merged:
                    merged.append(t)
            left = merged
        return left

    def inter(self) -> list[frozenset[str]]:
        left = self.atom()
        while self.take(":"):
            right = self.atom()
            self.check_size(len(left) * len(right))
            out: list[frozenset[str]] = []
            for a in left:
                for b in right:
                    if a | b not in out:
                        out.append(a | b)
            left = out
        return left

    def atom(self) -> list[frozenset[str]]:
        tok = self.peek()
        if tok is None:
            raise self.fail("a term is missing")
        kind, value, _ = tok
        if kind == "name":
            self.i += 1
            if value not in self.order:
                self.order.append(value)
            return [frozenset([value])]
        if kind == "num":
            self.i += 1
            if value == "1":
                return [frozenset()]
            if value == "0":
                raise self.fail("removing the intercept is not supported")
            raise self.fail(f"the number {value} is not a term")
        if self.take("("):
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise self.fail(f"parentheses nest more than {MAX_DEPTH} deep")
            inner = self.sum_()
            self.depth -= 1
            if not self.take(")"):
                raise self.fail("a closing parenthesis is missing")
            return inner
        raise self.fail(f"{value!r} is not allowed here")


def parse_formula(text: str) -> Formula:
    """Parse ``response ~ terms``; raise :class:`FormulaError` naming the fault and its place.

    Parameters
    ----------
    text
        An R-style formula such as ``agree ~ model + dataset_type * category``.

    Returns
    -------
    Formula
        ``response``, ``variables`` (in order of appearance) and ``terms`` (R's order).

    Notes
    -----
    ``a * b`` = ``a + b + a:b``; ``(a + b):c`` = ``a:c + b:c``; ``- t`` removes t.

    References
    ----------
    Wilkinson & Rogers (1973).

    Examples
    --------
    >>> parse_formula("y ~ a * b - a").labels
    ['b', 'a:b']
    """
    if not isinstance(text, str) or "~" not in text:
        raise FormulaError(f"formula {text!r:.200} must read 'response ~ terms'.")
    if len(text) > MAX_FORMULA_CHARS:
        raise FormulaError(
            f"formula {text[:60]!r}... is {len(text):,} characters long; at most "
            f"{MAX_FORMULA_CHARS:,} are accepted."
        )
    lhs, rhs = text.split("~", 1)
    response = lhs.strip()
    if not re.fullmatch(r"[A-Za-z_.][A-Za-z0-9_.]*", response):
        raise FormulaError(f"formula {text!r}: the response {response!r} must be one column name.")
    p = _Parser(rhs)
    if not p.tokens:
        raise FormulaError(f"formula {text!r} has no terms after '~'.")
    terms = p.sum_()
    if p.i != len(p.tokens):
        raise p.fail(f"unexpected {p.tokens[p.i][1]!r}")
    if response in p.order:
        raise FormulaError(f"formula {text!r}: the response {response!r} is also a term.")
    order = {v: k for k, v in enumerate(p.order)}
    real = [t for t in terms if t]
    first = {t: k for k, t in enumerate(real)}
    ranked = sorted(real, key=lambda t: (len(t), first[t]))
    named = tuple(tuple(sorted(t, key=order.__getitem__)) for t in ranked)
    return Formula(text=text, response=response, variables=tuple(p.order), terms=named)
