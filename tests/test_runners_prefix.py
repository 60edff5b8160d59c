"""Shared-prefix scoring in the transformers runner: the trie on hand examples, then the same
numbers and picks as the unshared computation over every perturbation family on the shared items
(3-shot prompts, chat and plain text, choice, cloze and POSIX pairs), within the memory budget,
with the runner's batching and padding cap, and the noise floor with sharing on."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers.tiny import tiny_model, tiny_tokenizer

import robustness as rb
from robustness.answers import prompt_for
from robustness.core.prompts import Exemplar, default_spec
from robustness.runners import noise_floor
from robustness.runners.continuations import Row, pack_pairs
from robustness.runners.hf import HFRunner
from robustness.runners.prefix_trie import PrefixNode, build_tree, prune_tree, shared_tokens

TOL = 1e-4


# --------------------------------------------------------------------- the trie, by hand
SEQS = [[1, 2, 3, 4, 5], [1, 2, 3, 6, 7], [1, 2, 8], [9, 9]]
LIMITS = [4, 4, 2, 1]


def shape(node: PrefixNode) -> tuple[int, list[int], list[Any]]:
    return node.depth, sorted(node.rows), [shape(c) for c in node.children]


def test_tree_splits_where_rows_diverge() -> None:
    tree = build_tree(SEQS, LIMITS)
    # rows 0-2 share [1, 2]; rows 0 and 1 go on to share [1, 2, 3]; row 3 shares nothing.
    assert shape(tree) == (0, [3], [(2, [2], [(3, [0, 1], [])])])
    assert tree.children[0].size == 3 and tree.children[0].children[0].size == 2


def test_pruning_keeps_points_that_save_enough() -> None:
    tree = build_tree(SEQS, LIMITS)
    # [1, 2] saves (3 - 1) * 2 = 4 positions; [1, 2, 3] saves (2 - 1) * 1 = 1 more.
    assert shape(prune_tree(tree, 1)) == shape(tree)
    assert shape(prune_tree(tree, 4)) == (0, [3], [(2, [0, 1, 2], [])])
    assert shape(prune_tree(tree, 5)) == (0, [0, 1, 2, 3], [])
    # positions run: plain 5 + 5 + 3 + 2 = 15; [1, 2] once + suffixes 1 + 3 + 3 + row 3 = 11;
    # with [3] cached too: 2 + 1 (row 2) + 1 + 2 + 2 + 2 (row 3) = 10.
    assert shared_tokens(prune_tree(tree, 5), SEQS) == 15
    assert shared_tokens(prune_tree(tree, 4), SEQS) == 11
    assert shared_tokens(prune_tree(tree, 1), SEQS) == 10


def test_a_row_never_shares_the_positions_it_reads() -> None:
    seqs = [[5, 6, 7], [5, 6, 7], [5, 6, 8]]
    tree = build_tree(seqs, [2, 2, 2])
    assert shape(tree) == (0, [], [(2, [0, 1, 2], [])])


# --------------------------------------------------------------------- runners
def long_runner(sharing: str = "auto", seed: int = 1, **kwargs: Any) -> HFRunner:
    """A tiny random Llama that accepts few-shot prompts (4096 positions), byte-level tokens."""
    tokenizer = tiny_tokenizer()
    model = tiny_model(len(tokenizer), seed, max_position_embeddings=4096)
    kwargs.setdefault("threads", 1)
    kwargs.setdefault("batch_size", 4)
    return HFRunner(
        model, tokenizer, model_id=f"long-{seed}", revision="t", prefix_sharing=sharing, **kwargs
    )


def twin(runner: HFRunner) -> HFRunner:
    """The same model and settings with prefix sharing off."""
    return HFRunner(
        runner.model,
        runner.tokenizer,
        model_id=runner.model_id,
        revision="t",
        batch_size=runner.batch_size,
        threads=1,
        max_padding=runner.max_padding,
        prefix_sharing="off",
    )


@pytest.fixture(scope="module")
def variants(shared_items: list[Any]) -> list[Any]:
    """Every family on two items of each shared dataset; objective items get 3 exemplars."""
    by_dataset: dict[str, list[Any]] = {}
    for item in shared_items:
        by_dataset.setdefault(item.dataset, []).append(item)
    chosen, base = [], {}
    for items in by_dataset.values():
        solved = [it for it in items[2:] if it.answer is not None][:3]
        shots = [
            Exemplar(question=it.question, options=it.options, answer=it.answer) for it in solved
        ]
        for item in items[:2]:
            chosen.append(item)
            base[(item.dataset, item.item_id)] = default_spec(
                item, shots if item.answer is not None else ()
            )
    return rb.perturb(chosen, families="all", n=1, seed=0, base=base)


def assert_same_scores(shared: list[Any], plain: list[Any]) -> None:
    assert len(shared) == len(plain)
    for a, b in zip(shared, plain, strict=True):
        assert a.argmax == b.argmax
        np.testing.assert_allclose(a.label_logprobs, b.label_logprobs, atol=TOL, rtol=0)
        np.testing.assert_allclose(a.probs, b.probs, atol=TOL, rtol=0)
        assert a.top_token == b.top_token
        assert abs(a.top_prob - b.top_prob) < TOL


@pytest.mark.parametrize("chat", [False, True])
def test_choice_mode_is_unchanged_by_sharing(variants: list[Any], chat: bool) -> None:
    runner = long_runner()
    plain = twin(runner)
    assert len({v.category for v in variants}) == 9  # the original and all eight families
    prompts = [prompt_for(v, chat) for v in variants]
    labels = [list(v.spec.labels) for v in variants]
    assert_same_scores(runner.score_options(prompts, labels), plain.score_options(prompts, labels))
    # the exemplars (and the chat preamble) were run once, not once per prompt
    assert runner.prefix.tokens_run < 0.6 * plain.prefix.tokens_run
    assert 0 < runner.prefix.peak_estimate <= runner.prefix.budget


@pytest.mark.parametrize("chat", [False, True])
def test_cloze_scores_and_picks_are_unchanged(variants: list[Any], chat: bool) -> None:
    runner = long_runner(seed=2)
    plain = twin(runner)
    pairs, owner = [], []
    for i, v in enumerate(variants):
        for option in v.spec.options:
            pairs.append((prompt_for(v, chat), option if chat else " " + option))
            owner.append(i)
    shared, alone = runner.loglikelihood(pairs), plain.loglikelihood(pairs)
    for a, b in zip(shared, alone, strict=True):
        assert a.n_tokens == b.n_tokens
        assert abs(a.logprob - b.logprob) < TOL
    for i in range(len(variants)):
        mine = [j for j, o in enumerate(owner) if o == i]
        score = [shared[j].logprob / shared[j].n_tokens for j in mine]
        ref = [alone[j].logprob / alone[j].n_tokens for j in mine]
        assert int(np.argmax(score)) == int(np.argmax(ref))
    assert runner.prefix.tokens_run < 0.3 * plain.prefix.tokens_run
    assert runner.prefix.peak_estimate <= runner.prefix.budget


def test_posix_pairs_are_unchanged(variants: list[Any]) -> None:
    runner = long_runner(seed=3)
    plain = twin(runner)
    item = variants[0].item_id
    prompts = [prompt_for(v, True) for v in variants if v.item_id == item]
    responses = ["B", "The answer is C.", "I would pick A because it is right."]
    pairs = [(p, r) for p in prompts for r in responses]
    shared, alone = runner.loglikelihood(pairs), plain.loglikelihood(pairs)
    assert [a.n_tokens for a in shared] == [b.n_tokens for b in alone]
    np.testing.assert_allclose(
        [a.logprob for a in shared], [b.logprob for b in alone], atol=TOL, rtol=0
    )
    assert runner.prefix.tokens_run * 2 <= plain.prefix.tokens_run


def test_unpadded_rows_on_one_prefix() -> None:
    runner = long_runner(seed=8)
    plain = twin(runner)
    stem = "Read this long shared preamble carefully before answering. " * 3
    prompts = [stem + f"Item {k}: pick one.\nAnswer:" for k in range(4)]  # equal lengths
    labels = [["A", "B", "C", "D"]] * 4
    assert_same_scores(runner.score_options(prompts, labels), plain.score_options(prompts, labels))
    assert runner.prefix.tokens_run < 0.5 * plain.prefix.tokens_run


def test_a_cache_that_would_break_the_budget_is_not_built(
    variants: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = long_runner(seed=4)
    plain = twin(runner)
    monkeypatch.setattr(runner.prefix, "past_bytes", lambda slots, width: 1 << 60)
    prompts = [prompt_for(v, False) for v in variants[:12]]
    labels = [list(v.spec.labels) for v in variants[:12]]
    assert_same_scores(runner.score_options(prompts, labels), plain.score_options(prompts, labels))
    # no cache point fits, so every row ran from its first token
    assert runner.prefix.tokens_run == plain.prefix.tokens_run


def test_shared_batches_keep_batch_size_and_padding_cap(variants: list[Any]) -> None:
    runner = long_runner(seed=5, batch_size=3, max_padding=0.25)
    seen: list[tuple[int, list[int]]] = []
    forward = runner.model.forward

    def spy(*args: Any, **kwargs: Any) -> Any:
        ids = kwargs["input_ids"]
        seen.append((ids.shape[0], (ids != runner.pad_id).sum(-1).tolist()))
        return forward(*args, **kwargs)

    runner.model.forward = spy  # type: ignore[method-assign]
    pairs = [(prompt_for(v, False), " " + o) for v in variants[:10] for o in v.spec.options]
    runner.loglikelihood(pairs)
    assert seen and all(rows <= 3 for rows, _ in seen)
    for _, real in seen:
        # pad tokens never take more than a quarter of the longest row of a batch; the pad id
        # may occur as a real token, so this bounds non-pad counts from below only loosely.
        assert min(real) >= 0.75 * max(real) - 1


def test_noise_floor_with_sharing_on_flips_nothing(variants: list[Any]) -> None:
    runner = long_runner(seed=6)
    prompts = [prompt_for(v, True) for v in variants]
    labels = [list(v.spec.labels) for v in variants]
    floor = noise_floor(runner, prompts, labels, k=12, rng=np.random.default_rng(0))
    assert floor.flips == 0
    assert floor.max_abs_logprob_diff < TOL
    assert floor.runner["prefix_sharing"] == "auto"


def test_sliding_window_models_are_not_shared() -> None:
    from transformers import MistralConfig, MistralForCausalLM

    from robustness.runners.prefix import PrefixScorer

    config = MistralConfig(
        vocab_size=300,
        hidden_size=48,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        sliding_window=16,
    )
    scorer = PrefixScorer(MistralForCausalLM(config).eval(), 0, lambda n, b: [], 4)
    assert not scorer.supported
    rows = [Row.causal([1, 2, 3, 4] * 20, 1)] * 2
    assert scorer.plan(rows) is None
    assert scorer.plan(rows, force=True) is None


def test_generate_runs_length_sorted_batches() -> None:
    runner = long_runner(seed=7, batch_size=2, max_padding=None)
    widths: list[int] = []
    generate = runner.model.generate

    def spy(*args: Any, **kwargs: Any) -> Any:
        widths.append(int(kwargs["input_ids"].shape[1]))
        return generate(*args, **kwargs)

    runner.model.generate = spy  # type: ignore[method-assign]
    prompts = ["a b", "a longer prompt than that", "mid size one", "x"]
    runner.generate(prompts, 2)
    assert widths == sorted(widths, reverse=True) and len(widths) == 2


@pytest.mark.slow
def test_smollm2_shared_equals_unshared(variants: list[Any], shared_items: list[Any]) -> None:
    from robustness.runners import make_runner

    runner = make_runner("hf", "embedded", batch_size=8)
    assert isinstance(runner, HFRunner) and runner.prefix_sharing == "auto"
    plain = twin(runner)
    wanted = {it.item_id for it in shared_items if it.dataset in {"mmlu", "political_compass"}}
    chosen = [v for v in variants if v.item_id in wanted]
    assert len({v.category for v in chosen}) == 9
    prompts = [prompt_for(v, True) for v in chosen]
    labels = [list(v.spec.labels) for v in chosen]
    assert_same_scores(runner.score_options(prompts, labels), plain.score_options(prompts, labels))
    pairs = [(prompt_for(v, True), o) for v in chosen[:6] for o in v.spec.options]
    shared, alone = runner.loglikelihood(pairs), plain.loglikelihood(pairs)
    np.testing.assert_allclose(
        [a.logprob for a in shared], [b.logprob for b in alone], atol=TOL, rtol=0
    )


@pytest.mark.parametrize("sharing", ["auto", "off"])
def test_logits_budget_splits_batches_not_numbers(variants: list[Any], sharing: str) -> None:
    runner = long_runner(sharing, seed=9, batch_size=8)
    reference = twin(runner)
    pairs = [(prompt_for(v, False), " " + o) for v in variants[:4] for o in v.spec.options]
    expected = reference.loglikelihood(pairs)
    vocab = int(runner.model.config.vocab_size)
    # room for the logits of about two rows: packed rows read all their options at once
    prompts, responses = runner._encode_pairs(pairs)
    rows = pack_pairs(prompts, responses)[0] if sharing == "auto" else None
    widest = max(row.keep for row in rows) if rows else 8
    runner.max_logits_bytes = runner.prefix.max_logits_bytes = 3 * widest * vocab * 4
    seen: list[tuple[int, int]] = []
    forward = runner.model.forward

    def spy(*args: Any, **kwargs: Any) -> Any:
        out = forward(*args, **kwargs)
        if int(kwargs["logits_to_keep"]) > 1:
            seen.append((kwargs["input_ids"].shape[0], out.logits.numel() * 4))
        return out

    runner.model.forward = spy  # type: ignore[method-assign]
    got = runner.loglikelihood(pairs)
    np.testing.assert_allclose(
        [g.logprob for g in got], [e.logprob for e in expected], atol=TOL, rtol=0
    )
    # a batch holds one row, or no more logits than the budget; some hold more than one
    assert seen and all(rows == 1 or size <= runner.max_logits_bytes for rows, size in seen)
    assert max(rows for rows, _ in seen) > 1
    assert len(seen) > 1


@pytest.mark.slow
def test_smollm2_cloze_and_posix_equal_unshared_on_every_family(variants: list[Any]) -> None:
    """SmolLM2 in fp32: cloze log-likelihoods within 1e-4 of the unshared computation and the
    same length-normalised pick, for every family on one item of each shared dataset (3-shot
    chat prompts for objective items), and a POSIX matrix of each item's prompts."""
    from robustness.runners import make_runner

    runner = make_runner("hf", "embedded", batch_size=8)
    assert isinstance(runner, HFRunner) and runner.prefix_sharing == "auto"
    plain = twin(runner)
    first: dict[str, str] = {}  # dataset -> its first item
    for v in variants:
        first.setdefault(v.item.dataset, v.item_id)
    chosen = [v for v in variants if v.item_id in set(first.values())]
    assert len({v.category for v in chosen}) == 9
    pairs, owner = [], []
    for i, v in enumerate(chosen):
        for option in v.spec.options:
            pairs.append((prompt_for(v, True), option))
            owner.append(i)
    shared, alone = runner.loglikelihood(pairs), plain.loglikelihood(pairs)
    assert [a.n_tokens for a in shared] == [b.n_tokens for b in alone]
    np.testing.assert_allclose(
        [a.logprob for a in shared], [b.logprob for b in alone], atol=TOL, rtol=0
    )
    for i in range(len(chosen)):
        mine = [j for j, o in enumerate(owner) if o == i]
        score = [shared[j].logprob / shared[j].n_tokens for j in mine]
        ref = [alone[j].logprob / alone[j].n_tokens for j in mine]
        assert int(np.argmax(score)) == int(np.argmax(ref))
    item = chosen[0].item_id
    prompts = [prompt_for(v, True) for v in chosen if v.item_id == item]
    responses = ["B", "The answer is C.", "I would pick A because it is right."]
    posix = [(p, r) for p in prompts for r in responses]
    np.testing.assert_allclose(
        [a.logprob for a in runner.loglikelihood(posix)],
        [b.logprob for b in plain.loglikelihood(posix)],
        atol=TOL,
        rtol=0,
    )
