"""Budgeted runs (issue 28): which cells a budget asks, nesting, the design record, bad input."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from helpers.fake_runner import FakeRunner

import robustness as rb
from robustness.budget import budget_order, check_budget, minimum_cells, select_budget
from robustness.core.errors import StudyError
from robustness.study import study_from_dict


@pytest.fixture(scope="module")
def variants():
    items = rb.demo_items()
    return rb.perturb(items, families="formatting,option_order,framing", n=4, seed=0)


def cells(vs):
    return {(v.item.dataset, v.item_id, v.category, v.variant_id) for v in vs}


def test_every_original_and_every_variant_is_asked(variants):
    chosen, design = select_budget(variants, 0.15, seed=3)
    asked = cells(chosen)
    assert {v for v in cells(variants) if v[2] == "original"} <= asked
    assert {(c[2], c[3]) for c in cells(variants)} == {(c[2], c[3]) for c in asked}
    assert design["n_asked"] == len(chosen) == int(0.15 * len(variants))
    assert design["n_grid"] == len(variants) and design["seed"] == 3
    # the asked variants keep the order they were given in
    order = {id(v): k for k, v in enumerate(variants)}
    assert [order[id(v)] for v in chosen] == sorted(order[id(v)] for v in chosen)


def test_a_larger_budget_adds_cells_and_drops_none(variants):
    previous: set = set()
    for budget in (0.1, 0.2, 0.35, 0.6, 0.9, 1.0):
        asked = cells(select_budget(variants, budget, seed=7)[0])
        assert previous <= asked
        previous = asked
    assert previous == cells(variants)


def test_the_same_seed_gives_the_same_cells_and_another_seed_others(variants):
    a = cells(select_budget(variants, 0.3, seed=1)[0])
    assert a == cells(select_budget(list(variants), 0.3, seed=1)[0])
    assert a != cells(select_budget(variants, 0.3, seed=2)[0])


def test_strata_are_asked_in_proportion_to_the_grid(variants):
    _, design = select_budget(variants, 0.4, seed=0)
    n_orig = sum(v.category == "original" for v in variants)
    share = (design["n_asked"] - n_orig) / (design["n_grid"] - n_orig)
    for s in design["strata"]:
        if s["category"] == "original":
            assert s["asked"] == s["grid"]
        else:  # the one-per-variant cover moves a stratum by at most its variants
            assert abs(s["asked"] - share * s["grid"]) <= 5, s


def test_items_within_a_stratum_are_balanced(variants):
    chosen, _ = select_budget(variants, 0.5, seed=0)
    per_item = Counter((v.item.dataset, v.item_id) for v in chosen if v.category == "formatting")
    items = {(v.item.dataset, v.item_id) for v in variants}
    counts = [per_item.get(i, 0) for i in items]
    assert max(counts) - min(counts) <= 2  # cyclic order: each item as often as the next


def test_the_order_is_a_permutation_of_the_cells(variants):
    order = budget_order(variants, seed=5)
    assert len(order) == len(set(order)) == len(variants)
    n_orig = sum(v.category == "original" for v in variants)
    assert {c[2] for c in order[:n_orig]} == {"original"}


@pytest.mark.parametrize("bad", [0, 0.0, -0.2, 1.5, float("nan"), float("inf"), True, "0.2", None])
def test_a_budget_outside_zero_to_one_is_one_clear_error(bad):
    with pytest.raises(StudyError, match=r"^budget must be a fraction above 0 and at most 1"):
        check_budget(bad)


def test_a_budget_too_small_to_see_every_variant_names_the_smallest(variants):
    need = minimum_cells(variants)
    with pytest.raises(StudyError) as info:
        select_budget(variants, 0.02, seed=0, where="--budget")
    message = str(info.value)
    assert message.startswith("--budget 0.02 asks") and f"fewer than the {need}" in message
    smallest = float(message.rsplit(" ", 1)[1].rstrip("."))
    select_budget(variants, smallest, seed=0)  # the budget it names works


def test_the_study_file_takes_a_budget_and_checks_it():
    assert study_from_dict({"study": {"budget": 0.25}}).budget == 0.25
    assert study_from_dict({}).budget == 1.0
    with pytest.raises(StudyError, match=r"s.toml: \[study\] budget must be a fraction"):
        study_from_dict({"study": {"budget": 0}}, source="s.toml")


def test_rb_run_asks_the_budget_and_a_larger_budget_reuses_the_cache(tmp_path, variants):
    model = [rb.model("fake", name="f", mode="choice")]
    cache = tmp_path / "c.sqlite"
    small = rb.run(variants, model, runners={"f": FakeRunner()}, cache=cache, budget=0.2, seed=4)
    assert len(small) == int(0.2 * len(variants))
    assert small.attrs["budget"]["fraction"] == 0.2
    info: dict = {}
    large = rb.run(
        variants, model, runners={"f": FakeRunner()}, cache=cache, budget=0.5, seed=4, info=info
    )
    keys = ["dataset", "item_id", "category", "variant_id"]
    old = set(map(tuple, small[keys].to_numpy()))
    assert old <= set(map(tuple, large[keys].to_numpy()))
    assert info["f"]["cache"]["hits"] == len(small)  # nothing asked twice
    assert info["f"]["cache"]["misses"] == len(large) - len(small)
    full = rb.run(variants, model, runners={"f": FakeRunner()}, budget=1)
    assert len(full) == len(variants) and "budget" not in full.attrs


def test_cli_budget_writes_the_design_and_bad_budgets_are_one_line(tmp_path, monkeypatch):
    study = tmp_path / "s.toml"
    study.write_text(
        '[study]\nfamilies = ["formatting", "framing"]\nn_variants = 3\n'
        '[output]\ntable = "t.parquet"\n[[models]]\nname = "f"\n'
    )
    exe = str(Path(sys.executable).with_name("robustness"))
    for bad in ("0", "1.5", "0.001"):
        done = subprocess.run(
            [exe, "run", str(study), "--budget", bad], capture_output=True, text=True
        )
        assert done.returncode == 2 and done.stderr.strip().count("\n") == 0, done.stderr
        assert "--budget" in done.stderr
    from typer.testing import CliRunner

    import robustness.executors
    from robustness.cli import app
    from robustness.core.table import read_metadata, read_table

    monkeypatch.setattr(robustness.executors, "open_runner", lambda m: FakeRunner(model_id=m.name))
    result = CliRunner().invoke(app, ["run", str(study), "--budget", "0.4"])
    assert result.exit_code == 0, result.output
    assert "budget 0.4:" in result.output
    meta = read_metadata(tmp_path / "t.parquet")
    table = read_table(tmp_path / "t.parquet")
    assert meta["budget"]["fraction"] == 0.4 and meta["budget"]["n_asked"] == len(table)
    assert len(table) < meta["budget"]["n_grid"]
