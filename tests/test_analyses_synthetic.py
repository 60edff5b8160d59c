"""The synthetic table generator: schema, determinism, structure."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analyses.synthetic import FAMILIES, synthetic_table
from robustness.core.table import validate


def test_passes_the_schema_and_has_the_layout():
    t = synthetic_table(models=3, n_items=4, n_variants=2, seed=0)
    v = validate(t)
    assert len(v) == 3 * 4 * 4 * (1 + 8 * 2)
    assert set(t.category) == {"original", *FAMILIES}
    assert set(t.dataset_type) == {"objective", "subjective"}
    assert set(t.n_options) == {4, 5}
    assert not t.valid.all() or len(t) < 50
    assert t.loc[~t.valid, "answer"].isna().all()
    assert t.loc[t.dataset_type == "subjective", "gold"].isna().all()
    probs = np.array(t.loc[t.n_options == 4, "option_probs"].tolist())
    assert np.allclose(probs.sum(axis=1), 1.0)


def test_same_seed_same_table_other_seed_other_table():
    a = synthetic_table(n_items=3, seed=42)
    b = synthetic_table(n_items=3, seed=42)
    c = synthetic_table(n_items=3, seed=43)
    pd.testing.assert_frame_equal(a, b)
    assert not a["answer"].equals(c["answer"])
    g = synthetic_table(n_items=3, seed=np.random.default_rng(42))
    pd.testing.assert_frame_equal(a.drop(columns="seed"), g.drop(columns="seed"))
    assert (a["seed"] == 42).all() and (g["seed"] == 0).all()


def test_invalid_rate_and_accuracy_are_respected():
    t = synthetic_table(
        models=2,
        n_items=200,
        n_variants=1,
        invalid_rate=0.1,
        accuracy=0.8,
        category_shift=0.0,
        seed=1,
    )
    assert abs((~t.valid).mean() - 0.1) < 0.02
    orig = t[(t.category == "original") & t.valid & (t.dataset_type == "objective")]
    assert abs(orig["correct"].astype(bool).mean() - 0.8) < 0.05


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="invalid_rate"):
        synthetic_table(invalid_rate=1.5)
    with pytest.raises(ValueError, match="original"):
        synthetic_table(categories=["original"])
    with pytest.raises(ValueError, match="stability"):
        synthetic_table(stability={("objective", "framing"): 1.0})
