"""POSIX through the real embedded model: the runner's loglikelihood call end to end."""

from __future__ import annotations

import numpy as np
import pytest

import robustness as rb
from analyses import posix_from_runner
from robustness.run import prompt_for, uses_chat


@pytest.fixture(scope="module")
def runner():
    from robustness.runners import make_runner

    return make_runner(model="embedded", batch_size=8)


@pytest.mark.slow
def test_posix_of_framing_variants_with_the_real_model(runner, demo):
    item = next(i for i in demo if i.dataset_type == "objective")
    variants = rb.perturb([item], families="framing", n=3, seed=0)
    chat = uses_chat(runner)
    prompts = [prompt_for(v, chat) for v in variants[1:]]
    res = posix_from_runner(
        runner, prompts, original=prompt_for(variants[0], chat), max_new_tokens=6
    )
    assert res.original_index == 0 and res.loglik.shape == (4, 4)
    assert np.isfinite(res.psi) and res.psi >= 0
    assert np.all(res.lengths >= 1) and np.all(res.loglik < 0)
    # the matrix is what the runner says pair by pair, and psi is the paper's formula
    direct = runner.loglikelihood([(res.prompts[1], res.responses[2])])[0]
    assert res.loglik[1, 2] == pytest.approx(direct.logprob, abs=1e-4)
    n = 4
    by_hand = sum(
        abs((res.loglik[i, j] - res.loglik[j, j]) / res.lengths[j])
        for i in range(n)
        for j in range(n)
        if i != j
    ) / (n * (n - 1))
    assert res.psi == pytest.approx(by_hand)
    assert res.responses[0] == runner.generate([res.prompts[0]], 6)[0].text


@pytest.mark.slow
def test_posix_is_zero_when_every_prompt_is_the_same(runner, demo):
    item = demo[0]
    (original,) = rb.perturb([item], families=[], n=0)
    prompt = prompt_for(original, uses_chat(runner))
    res = posix_from_runner(runner, [prompt, prompt, prompt], responses=["A", "B", "A"])
    assert res.psi == pytest.approx(0.0, abs=1e-5)
