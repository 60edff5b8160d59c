"""Formula size limits (issue 17): hostile formulas fail fast with one FormulaError."""

from __future__ import annotations

import pytest

from analyses.gee.formula import MAX_TERMS, FormulaError, parse_formula


@pytest.mark.parametrize(
    ("formula", "message"),
    [
        ("y ~ " + "*".join(f"x{i}" for i in range(21)), "more than 256 terms"),
        ("y ~ " + "(" * 400 + "a" + ")" * 400, "parentheses nest more than 50 deep"),
        ("y ~ " + ":".join(f"(a{i} + b{i})" for i in range(12)), "more than 256 terms"),
        ("y ~ " + "+".join(f"v{i}" for i in range(300)), "more than 256 terms"),
        ("y ~ " + "a + " * 1000 + "b", "characters long; at most 2,000 are accepted"),
    ],
)
def test_hostile_formulas_fail_fast(formula, message):
    with pytest.raises(FormulaError, match=message) as info:
        parse_formula(formula)
    assert len(str(info.value)) < 400


def test_the_limits_leave_real_formulas_alone():
    f = parse_formula("agree ~ model + dataset_type * category + model:category")
    assert len(f.terms) == 5
    assert len(parse_formula("y ~ " + "*".join("abcdefg")).terms) == 127 < MAX_TERMS
    assert parse_formula("y ~ " + "(" * 50 + "a" + ")" * 50).labels == ["a"]
