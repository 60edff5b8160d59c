"""Continuation trees and the shared forward's pieces: packing by hand, the ancestor mask, packed
log-likelihoods against hand-summed unpadded forwards, grouped-query attention and read-position
logits against transformers' own, and proof that the equality checks catch a broken mask or
broken positions."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch
from helpers.tiny import tiny_model, tiny_tokenizer

from robustness.runners import continuations
from robustness.runners.continuations import PairRows, Row, ancestor_mask, pack_pairs
from robustness.runners.hf import HFRunner
from robustness.runners.prefix_forward import _gqa_sdpa, gqa_attention, run_forward

TOL = 1e-4


# --------------------------------------------------------------------- packing, by hand
def test_responses_of_one_prompt_become_one_tree() -> None:
    rows, reads = pack_pairs([[1, 2, 3]] * 3 + [[4, 5]], [[7, 8, 9], [7, 6, 1], [5, 2], [9]])
    tree, single = rows
    # the responses without their last token: 7 8, 7 6 (7 shared), 5; depth first
    assert tree.tokens == (1, 2, 3, 7, 8, 6, 5)
    assert tree.parents == (-1, 0, 1, 2, 3, 3, 2)
    assert tree.positions == (0, 1, 2, 3, 4, 4, 3)
    assert tree.keep == 5 and tree.branch == 5 and not tree.is_causal
    assert [(r.row, r.at, r.targets) for r in reads] == [
        (0, (2, 3, 4), (7, 8, 9)),
        (0, (2, 3, 5), (7, 6, 1)),
        (0, (2, 6), (5, 2)),
        (1, (1,), (9,)),
    ]
    assert single == Row.causal([4, 5], 1) and single.is_causal


def test_a_long_tail_starts_another_row_of_the_same_prompt() -> None:
    rows, reads = pack_pairs([[1, 2]] * 3, [[5, 6, 7], [8, 9, 1], [3, 4]], max_tail=4)
    assert [r.tokens for r in rows] == [(1, 2, 5, 6, 8, 9), (1, 2, 3)]
    assert [r.row for r in reads] == [0, 0, 1]


def test_ancestor_mask_sees_the_prompt_and_its_own_path_only() -> None:
    rows, _ = pack_pairs([[1, 2, 3]] * 3, [[7, 8, 9], [7, 6, 1], [5, 2]])
    expected = [
        [1, 0, 0, 0, 0],  # 3 (the prompt's last token; the prompt from index 2 on)
        [1, 1, 0, 0, 0],  # 7
        [1, 1, 1, 0, 0],  # 8 follows 7
        [1, 1, 0, 1, 0],  # 6 follows 7, not 8
        [1, 0, 0, 0, 1],  # 5 follows the prompt only
    ]
    assert ancestor_mask(rows[0], 2).astype(int).tolist() == expected


def test_unpacked_pairs_read_each_response_after_its_prompt() -> None:
    pairing = PairRows([[1, 2], [1, 2]], [[5, 6], [7]], packed=False)
    assert [r.tokens for r in pairing.rows] == [(1, 2, 5), (1, 2)]
    done, picks = pairing.picks([1, 0])
    # row 1 keeps 1 position (offset 0), row 0 keeps 2 (offsets 1, 2)
    assert done == [1, 0] and picks == [[(0, 7)], [(1, 5), (2, 6)]]


# --------------------------------------------------------------------- against the model
def runner(sharing: str = "auto", seed: int = 3, **kwargs: Any) -> HFRunner:
    tokenizer = tiny_tokenizer()
    model = tiny_model(len(tokenizer), seed, max_position_embeddings=1024)
    kwargs.setdefault("batch_size", 4)
    return HFRunner(
        model, tokenizer, model_id=f"cont-{seed}", revision="t", threads=1,
        prefix_sharing=sharing, **kwargs,
    )  # fmt: skip


PROMPTS = [
    "Question: which river runs through Paris?\nAnswer:",
    "Question: what colour is the sky?\nAnswer:",
    [{"role": "user", "content": "Pick the best option of these."}],
]
RESPONSES = [" the Seine", " the Seine river", " the Thames", " blue", " B", " blue sky"]


def hand_summed(r: HFRunner, prompt: Any, response: str) -> float:
    """log P(response | prompt) from one unpadded forward at default positions, in float64."""
    ids = r.encode_prompts([prompt])[0]
    resp = r.tokenizer.encode(response, add_special_tokens=False)
    with torch.inference_mode():
        logits = r.model(input_ids=torch.tensor([ids + resp])).logits[0].double()
    logprobs = torch.log_softmax(logits, dim=-1)
    return sum(float(logprobs[len(ids) + k - 1, t]) for k, t in enumerate(resp))


def test_packed_loglikelihoods_equal_hand_summed_forwards() -> None:
    r = runner()
    pairs = [(p, x) for p in PROMPTS for x in RESPONSES]
    results = r.loglikelihood(pairs)
    assert r.prefix.forwards < len(pairs) / 4  # one row per prompt, not per pair
    for (prompt, response), got in zip(pairs, results, strict=True):
        assert got.n_tokens == len(r.tokenizer.encode(response, add_special_tokens=False))
        assert got.logprob == pytest.approx(hand_summed(r, prompt, response), abs=TOL)


@pytest.mark.parametrize("broken", ["siblings visible", "positions in a row"])
def test_the_equality_check_catches_a_broken_tree(
    monkeypatch: pytest.MonkeyPatch, broken: str
) -> None:
    """What the equality tests check is sharp enough: a tree whose tokens see their siblings,
    or whose positions run on as in one long sequence, gives other numbers."""
    r = runner(seed=4)
    pairs = [(PROMPTS[0], x) for x in RESPONSES]
    if broken == "siblings visible":
        monkeypatch.setattr(
            "robustness.runners.prefix_forward.ancestor_mask",
            lambda row, start: np.tril(np.ones((len(row) - start,) * 2, dtype=bool)),
        )
    else:
        original = continuations._pack_one

        def sequential(prompt: Any, responses: Any) -> Any:
            row, at = original(prompt, responses)
            return Row(row.tokens, row.parents, tuple(range(len(row))), row.keep, row.branch), at

        monkeypatch.setattr(continuations, "_pack_one", sequential)
    got = [x.logprob for x in r.loglikelihood(pairs)]
    expected = [hand_summed(r, p, x) for p, x in pairs]
    assert max(abs(a - b) for a, b in zip(got, expected, strict=True)) > 100 * TOL


def test_gqa_attention_equals_transformers_sdpa() -> None:
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    gen = torch.Generator().manual_seed(0)
    query = torch.randn(3, 6, 5, 8, generator=gen)
    key, value = torch.randn(3, 2, 9, 8, generator=gen), torch.randn(3, 2, 9, 8, generator=gen)
    mask = torch.rand(3, 1, 5, 9, generator=gen) > 0.3
    mask[..., -1] = True  # no empty softmax row
    module = torch.nn.Module()
    module.num_key_value_groups = 3  # type: ignore[assignment]
    module.is_causal = True  # type: ignore[assignment]
    ours, _ = _gqa_sdpa(module, query, key, value, mask, scaling=0.3)
    theirs, _ = sdpa_attention_forward(module, query, key, value, mask, scaling=0.3)
    torch.testing.assert_close(ours, theirs, atol=1e-6, rtol=0)
    # without a mask it is transformers' function itself
    plain, _ = _gqa_sdpa(module, query, key, value, None, scaling=0.3)
    stock, _ = sdpa_attention_forward(module, query, key, value, None, scaling=0.3)
    assert torch.equal(plain, stock)


def test_gqa_attention_is_switched_on_for_the_block_only() -> None:
    r = runner(seed=5)
    assert r.model.config._attn_implementation == "sdpa"
    with gqa_attention(r.model):
        assert r.model.config._attn_implementation != "sdpa"
    assert r.model.config._attn_implementation == "sdpa"
    with pytest.raises(RuntimeError), gqa_attention(r.model):
        raise RuntimeError("a failing forward")
    assert r.model.config._attn_implementation == "sdpa"


def test_read_positions_only_equal_the_full_window() -> None:
    r = runner(seed=6)
    rows = [Row.causal([5, 6, 7, 8, 9], 3), Row.causal([5, 6, 7], 1)]
    pieces = [(row, 0, len(row)) for row in rows]
    with torch.inference_mode():
        full, _, _ = run_forward(r.model, r.pad_id, None, [0, 1], pieces, 3, False)
        picked, _, _ = run_forward(r.model, r.pad_id, None, [0, 1], pieces, 3, False, [3, 1])
    assert picked.shape[0] == 4
    torch.testing.assert_close(picked[:3], full[0], atol=1e-5, rtol=0)
    torch.testing.assert_close(picked[3], full[1, -1], atol=1e-5, rtol=0)


def test_shared_and_unshared_agree_on_a_posix_matrix() -> None:
    on, off = runner(seed=7), runner("off", seed=7)
    pairs = [(p, x) for p in PROMPTS for x in RESPONSES]
    a, b = on.loglikelihood(pairs), off.loglikelihood(pairs)
    assert [x.n_tokens for x in a] == [x.n_tokens for x in b]
    np.testing.assert_allclose([x.logprob for x in a], [x.logprob for x in b], atol=TOL, rtol=0)
    assert on.prefix.tokens_run < off.prefix.tokens_run / 2
    assert math.isfinite(sum(x.logprob for x in a))
