"""Power by simulation (issue 15): the data-generating model, the two validations, the CLI."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_effectsize
from typer.testing import CliRunner

from analyses.gee import gee
from analyses.power.effects import (
    Design,
    assumed_effects,
    calibrate_sigma,
    effects_from_pilot,
    simulate_table,
)
from analyses.power.simulation import power, power_terms
from analyses.power.solve import solve_items
from analyses.synthetic import synthetic_table
from robustness.core.errors import StudyError

ONE_CELL = Design(items_per_dataset=120, variants_per_family=1, models=1, datasets_per_type=(1, 1))


def test_simulated_table_has_the_shape_the_gee_needs_and_nests():
    e = assumed_effects(0.7, 0.1, 0.2, ["option_order", "framing"])
    d = Design(6, 2, 2, (2, 1))
    t = simulate_table(e, d, seed=3, sim=1)
    assert len(t) == 3 * 6 * 2 * 2 * 2
    assert set(t["dataset_type"]) == {"objective", "subjective"}
    assert t["item_id"].nunique() == 18
    assert set(t["agree"]) <= {0, 1}
    # the same (seed, sim) is the same table; the first n items are the design with n items
    assert t.equals(simulate_table(e, d, seed=3, sim=1))
    bigger = simulate_table(e, d.with_items(10), seed=3, sim=1)
    prefix = bigger[bigger["item_id"].isin(t["item_id"])].reset_index(drop=True)
    assert prefix.equals(t)
    assert not t.equals(simulate_table(e, d, seed=3, sim=2))


def test_marginal_agreement_and_correlation_are_what_was_asked():
    """The GEE fitted to a large simulated table recovers p and rho (the mapping of rho)."""
    e = assumed_effects(
        {"option_order": 0.7, "framing": 0.85}, 0.08, 0.25, ["option_order", "framing"]
    )
    t = simulate_table(e, Design(400, 3, 1, (1, 1)), seed=0)
    fit = gee(t, "agree ~ dataset_type * category")
    assert fit.alpha == pytest.approx(0.25, abs=0.03)
    observed = t.groupby(["dataset_type", "category"])["agree"].mean()
    want = e.agreement.set_index(["dataset_type", "category"])["p"]
    assert np.allclose(observed.sort_index(), want.sort_index(), atol=0.03)
    assert calibrate_sigma(assumed_effects(0.7, 0.1, 0.0, ["framing"])) == 0.0


@pytest.mark.slow  # 300 simulated GEE fits per term
def test_type_one_error_at_a_null_gap_is_alpha():
    e = assumed_effects(0.75, 0.0, 0.2, ["option_order", "framing"])
    sims = 300
    res = power(e, [50], Design(50, 2, 1, (1, 1)), sims=sims, seed=11).set_index("term")
    bound = 3 * math.sqrt(0.05 * 0.95 / sims)
    for term in ("dataset_type", "dataset_type:category"):
        assert abs(res.loc[term, "power"] - 0.05) < bound, (term, res.loc[term, "power"])
    assert (res["n_failed"] == 0).all()


@pytest.mark.slow  # 500 simulated GEE fits
def test_one_observation_per_cluster_matches_the_two_proportion_power():
    p_obj, p_sub, n = 0.75, 0.6, ONE_CELL.items_per_dataset
    e = assumed_effects(p_sub, p_obj - p_sub, 0.0, ["paraphrase"])
    sims = 500
    res = power(e, [n], ONE_CELL, sims=sims, seed=5).set_index("term")
    se = math.sqrt(p_obj * (1 - p_obj) / n + p_sub * (1 - p_sub) / n)
    z = stats.norm.ppf(0.975)
    closed = stats.norm.cdf(abs(p_obj - p_sub) / se - z) + stats.norm.cdf(
        -abs(p_obj - p_sub) / se - z
    )
    h = proportion_effectsize(p_obj, p_sub)
    arcsine = NormalIndPower().power(h, nobs1=n, alpha=0.05, ratio=1.0)
    assert abs(closed - arcsine) < 0.02  # the two closed forms agree with each other
    bound = 3 * math.sqrt(closed * (1 - closed) / sims)
    assert abs(res.loc["dataset_type", "power"] - closed) < bound
    # the contrast (difference of proportions, delta-method SE) is the unpooled z test itself
    assert abs(res.loc["contrast:paraphrase", "power"] - closed) < bound
    assert res.loc["dataset_type", "mc_se"] == pytest.approx(
        math.sqrt(res.loc["dataset_type", "power"] * (1 - res.loc["dataset_type", "power"]) / sims)
    )


def test_parallel_and_serial_give_the_same_numbers():
    e = assumed_effects(0.7, 0.15, 0.1, ["option_order", "framing"])
    d = Design(8, 2, 1, (1, 1))
    serial = power(e, [8, 12], d, sims=6, seed=2, workers=1)
    parallel = power(e, [8, 12], d, sims=6, seed=2, workers=2)
    pd.testing.assert_frame_equal(serial, parallel)
    assert list(serial.columns[:4]) == ["term", "items_per_dataset", "power", "mc_se"]
    assert list(serial["term"][:3]) == power_terms(e)[:3]


@pytest.mark.slow  # a bisection of simulated power curves (about 10 s of CPU)
def test_solve_items_finds_the_first_number_reaching_the_target():
    e = assumed_effects(0.5, 0.3, 0.0, ["framing"])
    d = Design(10, 1, 1, (1, 1))
    res = solve_items(e, 0.8, ["dataset_type"], d, start=16, sims=40, seed=1)
    assert res.items is not None
    table = res.table[res.table["term"] == "dataset_type"].set_index("items_per_dataset")
    assert table.loc[res.items, "power"] >= 0.8
    below = [n for n in res.evaluated if n < res.items]
    assert below and (table.loc[below, "power"] < 0.8).all()
    assert res.items - 1 in res.evaluated  # bisection ran down to a neighbour
    with pytest.raises(StudyError, match="unknown term"):
        solve_items(e, 0.8, ["dataset_type:category"], d)


def test_effects_from_a_pilot_and_the_gap_override():
    t = synthetic_table(models=2, n_items=12, seed=0)
    e = effects_from_pilot(t)
    assert e.source == "pilot" and 0.0 <= e.correlation < 1.0
    grid = e.agreement.pivot(index="category", columns="dataset_type", values="p")
    assert grid.notna().all().all() and len(grid) == 8
    # p is the observed mean agreement of the fitted rows
    fit = gee(t, "agree ~ dataset_type * category")
    assert e.correlation == pytest.approx(fit.alpha)
    null = effects_from_pilot(t, gap=0.0).agreement.pivot(
        index="category", columns="dataset_type", values="p"
    )
    assert np.allclose(null["objective"], null["subjective"])
    assert np.allclose(null["subjective"], grid["subjective"])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(base=0.95, gap=0.1, correlation=0.1), "strictly between 0 and 1"),
        (dict(base=0.7, gap=0.1, correlation=1.2), "correlation"),
        (dict(base={"framing": 0.7}, gap=0.1, correlation=0.1), "no value"),
    ],
)
def test_bad_assumptions_are_one_clear_error(kwargs, match):
    with pytest.raises(StudyError, match=match):
        assumed_effects(categories=["framing", "paraphrase"], **kwargs)


def test_power_command_writes_the_csv_and_the_curve(tmp_path):
    from robustness.cli import app

    pilot = tmp_path / "pilot.csv"
    synthetic_table(models=1, n_items=8, seed=2).drop(columns=["option_probs"]).to_csv(
        pilot, index=False
    )
    out = tmp_path / "pw"
    args = ["power", "--pilot", str(pilot), "--items", "6,10", "--sims", "3", "--gap", "0"]
    res = CliRunner().invoke(app, [*args, "--workers", "1", "--datasets", "1,1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    frame = pd.read_csv(out / "power.csv")
    assert list(frame.columns[:4]) == ["term", "items_per_dataset", "power", "mc_se"]
    assert set(frame["items_per_dataset"]) == {6, 10}
    assert {"dataset_type", "dataset_type:category"} <= set(frame["term"])
    assert any(t.startswith("contrast:") for t in frame["term"])
    assert (out / "power_curve.png").stat().st_size > 1000
    bad = CliRunner().invoke(app, ["power", "--out", str(out), "--base", "0.7"])
    assert bad.exit_code != 0 and "--correlation" in str(bad.exception)


def test_the_power_command_prints_notes_and_terms_without_terminal_escapes(tmp_path):
    import io

    from rich.console import Console

    from robustness.commands.power import _print

    evil = "\x1b]0;PWNED\x07\x1b[2Jevil"
    table = pd.DataFrame(
        {"items_per_dataset": [4, 4], "term": [evil, "contrast:x"], "power": [0.5, 0.7]}
    )
    info = {
        "alpha": 0.05,
        "sims": 4,
        "notes": [f"categories with only one dataset type left out: {evil}"],
        "solve": {"target": 0.8, "terms": [evil], "items": None},
    }
    buf = io.StringIO()
    _print(Console(file=buf, width=200, force_terminal=False), table, info, tmp_path)
    out = buf.getvalue()
    assert "left out: evil" in out
    assert "\x1b" not in out and "\x07" not in out


def test_a_pilot_sets_the_simulated_design_unless_an_option_overrides_it(tmp_path):
    import json

    from robustness.cli import app

    table = synthetic_table(models=2, n_items=6, n_variants=3, seed=2)
    pilot = tmp_path / "pilot.csv"
    table.drop(columns=["option_probs"]).to_csv(pilot, index=False)
    n_types = table.drop_duplicates("dataset").groupby("dataset_type").size()
    base = ["power", "--pilot", str(pilot), "--sims", "2", "--gap", "0", "--workers", "1"]
    res = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "a")])
    assert res.exit_code == 0, res.output
    design = json.loads((tmp_path / "a" / "power.json").read_text())["design"]
    assert design["variants_per_family"] == 3 and design["models"] == 2
    assert design["items_per_dataset"] == [6]
    assert design["datasets_per_type"] == [int(n_types["objective"]), int(n_types["subjective"])]
    assert set(design["from"].values()) == {"pilot"}
    assert "design simulated: 6 items per dataset (pilot), 3 variants per family (pilot)" in (
        " ".join(res.output.split())
    )
    assert set(pd.read_csv(tmp_path / "a" / "power.csv")["items_per_dataset"]) == {6}
    res = CliRunner().invoke(
        app, [*base, "--variants", "1", "--models", "1", "--out", str(tmp_path / "b")]
    )
    assert res.exit_code == 0, res.output
    design = json.loads((tmp_path / "b" / "power.json").read_text())["design"]
    assert (design["variants_per_family"], design["models"]) == (1, 1)
    assert design["from"] == {
        "items": "pilot",
        "variants": "option",
        "models": "option",
        "datasets": "pilot",
    }


def _separated_pilot():
    t = synthetic_table(models=1, n_items=10, n_variants=3, seed=5)
    cell = t["category"] == "paraphrase"
    t = t.assign(answer=t["answer"].where(~cell, 0), valid=t["valid"] | cell)
    correct = (t["answer"] == t["gold"]).astype("boolean")
    return t.assign(correct=correct.where(t["gold"].notna() & t["valid"], pd.NA))


def test_the_pilot_notes_state_one_rho_and_it_is_the_one_simulated():
    for pilot in (synthetic_table(models=1, n_items=10, seed=1), _separated_pilot()):
        e = effects_from_pilot(pilot)
        said = [n for n in e.notes if "rho" in n or "correlation" in n]
        assert len(said) == 1, e.notes
        assert f"rho {e.correlation:.3f}" in said[0]
        assert "rho = 0" not in said[0] or e.correlation == 0
        other = e.with_correlation(0.2, "item-level rho 0.2, set by --correlation")
        said = [n for n in other.notes if "rho" in n]
        assert said == ["item-level rho 0.2, set by --correlation"] and other.correlation == 0.2
    fit = gee(_separated_pilot(), "agree ~ dataset_type * category")
    assert fit.bias_reduced and "bias-reduced" in " ".join(
        effects_from_pilot(_separated_pilot()).notes
    )


def _check_solve(res, z=1.96):
    table = res.table[res.table["term"] == "dataset_type"].set_index("items_per_dataset")
    at = table.loc[res.items]
    assert int(at["n_sims"]) == res.sims
    p = float(at["power"])
    assert res.power_at == pytest.approx(p)
    assert res.mc_se_at == pytest.approx(math.sqrt(p * (1 - p) / res.sims))
    below = table.loc[res.items - 1]
    assert res.power_below == pytest.approx(float(below["power"]))
    from statsmodels.stats.proportion import proportion_confint

    def interval(power):  # statsmodels' Wilson interval, on the count of rejections
        return proportion_confint(round(power * res.sims), res.sims, 0.05, method="wilson")

    margin_ok = interval(p)[0] > res.target and interval(res.power_below)[1] < res.target
    assert res.clear == margin_ok
    assert "MC s.e." in res.statement
    if not res.clear:
        assert "within Monte Carlo noise" in res.statement


@pytest.mark.parametrize("max_sims", [8, 32])
def test_solve_reports_its_monte_carlo_uncertainty_and_refines_or_says_noise(max_sims):
    e = assumed_effects(0.5, 0.4, 0.0, ["framing"])
    d = Design(10, 1, 1, (1, 1))
    res = solve_items(
        e,
        0.8,
        ["dataset_type"],
        d,
        start=4,
        sims=8,
        max_sims=max_sims,
        seed=3,
        formula="agree ~ dataset_type",
    )
    assert res.items is not None
    _check_solve(res)
    if not res.clear:
        assert res.sims == max_sims  # it simulated as far as it was allowed


def test_the_wilson_interval_matches_statsmodels_and_never_collapses_at_0_or_1():
    from statsmodels.stats.proportion import proportion_confint

    from analyses.power.solve import wilson

    for hits, sims in [(0, 4), (4, 4), (31, 40), (79, 100), (81, 100)]:
        ours = wilson(hits / sims, sims, 1.959963984540054)
        theirs = proportion_confint(hits, sims, 0.05, method="wilson")
        assert ours == pytest.approx(theirs, abs=1e-12)
    assert wilson(1.0, 4, 1.96)[0] < 0.8  # four rejections of four do not clear 0.8
