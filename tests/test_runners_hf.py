"""The transformers runner on a tiny random Llama: batching, padding, label scoring, likelihoods,
generation and chat rendering, each checked against plain unpadded forward passes."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from helpers.tiny import tiny_runner

from robustness.core.errors import ModelError
from robustness.runners.hf import HFRunner
from robustness.runners.label_trie import build_label_plan

WORDS = [
    "the",
    "answer",
    "is",
    "which",
    "option",
    "of",
    "these",
    "cat",
    "blue",
    "seven",
    "question",
    "Paris",
    "river",
    "choose",
    "best",
]


def random_prompts(n: int, seed: int, max_words: int = 14) -> list[str]:
    rng = np.random.default_rng(seed)
    prompts = []
    for _ in range(n):
        k = int(rng.integers(1, max_words))
        prompts.append(" ".join(rng.choice(WORDS, size=k)) + "\nAnswer:")
    return prompts


@pytest.fixture(scope="module")
def runner() -> HFRunner:
    return tiny_runner(seed=0, batch_size=4)


def with_batch_size(runner: HFRunner, batch_size: int) -> HFRunner:
    return HFRunner(
        runner.model,
        runner.tokenizer,
        model_id=runner.model_id,
        revision="test",
        batch_size=batch_size,
        chat=runner.chat,
        threads=1,
        max_padding=None,
    )


def next_logprobs(runner: HFRunner, ids: list[int]) -> torch.Tensor:
    """log-softmax of the next token after ``ids``: one unpadded forward, default positions."""
    with torch.inference_mode():
        logits = runner.model(input_ids=torch.tensor([ids])).logits[0, -1]
    return torch.log_softmax(logits.double(), dim=-1)


def enc(runner: HFRunner, text: str) -> list[int]:
    return runner.tokenizer.encode(text, add_special_tokens=False)


def test_batches_are_sorted_longest_first() -> None:
    lengths = [3, 9, 1, 9, 5, 2, 7]
    uncapped = tiny_runner(seed=0, max_padding=None)
    batches = uncapped.batches(lengths, 3)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(lengths)))
    assert [lengths[i] for i in flat] == sorted(lengths, reverse=True)
    assert [len(b) for b in batches] == [3, 3, 1]
    capped = tiny_runner(seed=0, max_padding=0.25)
    assert capped.identity()["max_padding"] == 0.25
    assert [[lengths[i] for i in b] for b in capped.batches(lengths, 3)] == [
        [9, 9, 7],
        [5],
        [3],
        [2],
        [1],
    ]
    assert tiny_runner(seed=0).max_padding == 0.25  # the CPU default


def test_collate_left_pads_with_positions(runner: HFRunner) -> None:
    inputs = runner.collate([[5, 6, 7], [8]])
    assert inputs["input_ids"].tolist() == [[5, 6, 7], [runner.pad_id] * 2 + [8]]
    assert inputs["attention_mask"].tolist() == [[1, 1, 1], [0, 0, 1]]
    assert inputs["position_ids"].tolist() == [[0, 1, 2], [0, 0, 0]]
    same = runner.collate([[1, 2], [3, 4]])
    assert same["attention_mask"] is None
    assert same["position_ids"].tolist() == [[0, 1], [0, 1]]


def test_padded_batch_matches_unpadded_forward(runner: HFRunner) -> None:
    prompts = random_prompts(6, seed=1)
    labels = ["A", "B", "C", "D"]
    wide = with_batch_size(runner, len(prompts))  # one batch: every shorter row is padded
    scores = wide.score_options(prompts, [labels] * len(prompts))
    ids = wide.encode_prompts(prompts)
    assert len({len(i) for i in ids}) > 1
    for prompt_ids, score in zip(ids, scores, strict=True):
        ref = next_logprobs(wide, prompt_ids)
        for label, lp in zip(labels, score.label_logprobs, strict=True):
            (bare,), (spaced,) = enc(wide, label), enc(wide, " " + label)
            expected = math.log(math.exp(ref[bare]) + math.exp(ref[spaced]))
            assert lp == pytest.approx(expected, abs=1e-5)
        assert score.top_prob == pytest.approx(math.exp(ref.max()), abs=1e-6)
        assert score.top_token == wide.tokenizer.decode([int(ref.argmax())])


def test_batched_equals_one_at_a_time(runner: HFRunner) -> None:
    prompts = random_prompts(9, seed=2)
    label_sets = [["A", "B", "C", "D"], ["1", "2", "10"], ["α", "β", "γ"]] * 3
    single = with_batch_size(runner, 1)
    batched = with_batch_size(runner, 4)
    one = single.score_options(prompts, label_sets)
    many = batched.score_options(prompts, label_sets)
    for a, b in zip(one, many, strict=True):
        np.testing.assert_allclose(a.probs, b.probs, atol=1e-5)
        np.testing.assert_allclose(a.label_logprobs, b.label_logprobs, atol=1e-4)
        assert a.top_prob == pytest.approx(b.top_prob, abs=1e-5)
        assert a.top_token == b.top_token
    pairs = [(p, " the answer is B") for p in prompts]
    ll_one = single.loglikelihood(pairs)
    ll_many = batched.loglikelihood(pairs)
    for a, b in zip(ll_one, ll_many, strict=True):
        assert a.n_tokens == b.n_tokens
        assert a.logprob == pytest.approx(b.logprob, abs=1e-4)
    assert [g.text for g in single.generate(prompts, 6)] == [
        g.text for g in batched.generate(prompts, 6)
    ]


def test_probs_are_renormalised_label_logprobs_in_label_order(runner: HFRunner) -> None:
    prompt = random_prompts(1, seed=3)[0]
    labels = ["A", "B", "C", "D"]
    score = runner.score_options([prompt], [labels])[0]
    assert sum(score.probs) == pytest.approx(1.0, abs=1e-12)
    raw = np.exp(score.label_logprobs)
    np.testing.assert_allclose(score.probs, raw / raw.sum(), rtol=1e-12)
    assert sum(raw) < 1.0
    permuted = ["C", "A", "D", "B"]
    again = runner.score_options([prompt], [permuted])[0]
    for label, p, lp in zip(permuted, again.probs, again.label_logprobs, strict=True):
        k = labels.index(label)
        assert p == pytest.approx(score.probs[k], abs=1e-6)
        assert lp == pytest.approx(score.label_logprobs[k], abs=1e-5)


def test_digit_labels_that_are_prefixes_of_each_other(runner: HFRunner) -> None:
    """ "1" and "10" share their first token and " 1" starts with the space token: checked
    against probabilities written out by hand from unpadded forward passes."""
    one, zero, two, space = (
        enc(runner, "1")[0],
        enc(runner, "0")[0],
        enc(runner, "2")[0],
        enc(runner, " ")[0],
    )
    assert enc(runner, "10") == [one, zero]
    assert enc(runner, " 1") == [space, one]
    prompts = random_prompts(3, seed=4)
    scores = runner.score_options(prompts, [["1", "2", "10"]] * 3)
    for prompt_ids, score in zip(runner.encode_prompts(prompts), scores, strict=True):
        p0 = next_logprobs(runner, prompt_ids).exp()
        p_1 = next_logprobs(runner, [*prompt_ids, one]).exp()
        p_s = next_logprobs(runner, [*prompt_ids, space]).exp()
        p_s1 = next_logprobs(runner, [*prompt_ids, space, one]).exp()
        expected = [
            p0[one] * (1 - p_1[zero]) + p0[space] * p_s[one] * (1 - p_s1[zero]),
            p0[two] + p0[space] * p_s[two],
            p0[one] * p_1[zero] + p0[space] * p_s[one] * p_s1[zero],
        ]
        np.testing.assert_allclose(
            np.exp(score.label_logprobs), [float(e) for e in expected], rtol=1e-4
        )
        assert sum(score.probs) == pytest.approx(1.0)


def test_roman_numerals_sharing_letters(runner: HFRunner) -> None:
    i, si = enc(runner, "i")[0], enc(runner, " i")[0]
    assert enc(runner, "iii") == [i, i, i]
    assert enc(runner, " ii") == [si, i]
    prompt = random_prompts(1, seed=5)[0]
    score = runner.score_options([prompt], [["i", "ii", "iii"]])[0]
    ids = runner.encode_prompts([prompt])[0]
    p0 = next_logprobs(runner, ids).exp()
    expected = [0.0, 0.0, 0.0]
    for first in (i, si):
        pa = next_logprobs(runner, [*ids, first]).exp()
        pb = next_logprobs(runner, [*ids, first, i]).exp()
        expected[0] += float(p0[first] * (1 - pa[i]))
        expected[1] += float(p0[first] * pa[i] * (1 - pb[i]))
        expected[2] += float(p0[first] * pa[i] * pb[i])
    np.testing.assert_allclose(np.exp(score.label_logprobs), expected, rtol=1e-4)


def test_greek_letters_sharing_a_lead_byte(runner: HFRunner) -> None:
    alpha, beta = enc(runner, "α"), enc(runner, "β")
    assert len(alpha) == 2 and alpha[0] == beta[0]
    prompt = random_prompts(1, seed=6)[0]
    score = runner.score_options([prompt], [["α", "β", "A"]])[0]
    ids = runner.encode_prompts([prompt])[0]
    p0 = next_logprobs(runner, ids).exp()
    lead, space = alpha[0], enc(runner, " ")[0]
    p_lead = next_logprobs(runner, [*ids, lead]).exp()
    p_space = next_logprobs(runner, [*ids, space]).exp()
    p_space_lead = next_logprobs(runner, [*ids, space, lead]).exp()
    expected = []
    for letter in ("α", "β"):
        tail = enc(runner, letter)[1]
        expected.append(
            float(p0[lead] * p_lead[tail] + p0[space] * p_space[lead] * p_space_lead[tail])
        )
    expected.append(float(p0[enc(runner, "A")[0]] + p0[enc(runner, " A")[0]]))
    np.testing.assert_allclose(np.exp(score.label_logprobs), expected, rtol=1e-4)


def test_plain_letters_need_exactly_one_pass(runner: HFRunner) -> None:
    plan = build_label_plan(("A", "B", "C", "D"), runner._encode_text)
    assert plan.passes == ((),)
    runner = with_batch_size(runner, 4)  # no padding cap: the four prompts form one batch
    calls = []
    original = runner.model.forward

    def counting(*args, **kwargs):
        calls.append(kwargs["input_ids"].shape[0])
        return original(*args, **kwargs)

    runner.model.forward = counting
    try:
        runner.score_options(random_prompts(4, seed=7), [["A", "B", "C", "D"]] * 4)
    finally:
        del runner.model.forward
    assert calls == [4]


def test_loglikelihood_equals_hand_summed_log_softmax(runner: HFRunner) -> None:
    prompts = random_prompts(5, seed=8)
    responses = [" B", " the cat is blue", "seven", " Paris river choose best of these", "x"]
    pairs = [
        *zip(prompts, responses, strict=True),
        ([{"role": "user", "content": "pick one"}], "A"),
    ]
    results = runner.loglikelihood(pairs)
    for (prompt, response), result in zip(pairs, results, strict=True):
        ids = runner.encode_prompts([prompt])[0]
        resp = enc(runner, response)
        with torch.inference_mode():
            logits = runner.model(input_ids=torch.tensor([ids + resp])).logits[0].double()
        logprobs = torch.log_softmax(logits, dim=-1)
        expected = sum(float(logprobs[len(ids) + k - 1, tok]) for k, tok in enumerate(resp))
        assert result.n_tokens == len(resp)
        assert result.logprob == pytest.approx(expected, abs=1e-4)
    empty = runner.loglikelihood([(prompts[0], "")])[0]
    assert (empty.logprob, empty.n_tokens) == (0.0, 0)


def test_generate_matches_a_manual_greedy_loop(runner: HFRunner) -> None:
    prompts = random_prompts(4, seed=9)
    generations = runner.generate(prompts, 5)
    eos = set(runner.eos_ids)
    for prompt, generation in zip(prompts, generations, strict=True):
        ids = runner.encode_prompts([prompt])[0]
        new: list[int] = []
        for _ in range(5):
            token = int(next_logprobs(runner, ids + new).argmax())
            if token in eos:
                break
            new.append(token)
        assert generation.n_tokens == len(new)
        assert generation.text == runner.tokenizer.decode(new, skip_special_tokens=True)
        assert generation.latency_ms > 0


def test_chat_rendering_modes() -> None:
    auto = tiny_runner(seed=1)
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi?"}]
    text, special = auto.render(messages)
    assert text.startswith("<|im_start|>system\nBe brief.") and not special
    assert text.endswith("<|im_start|>assistant\n")
    assert auto.render("plain") == ("plain", True)
    always = tiny_runner(seed=1, chat="always")
    assert always.render("Hi?")[0] == auto.render([{"role": "user", "content": "Hi?"}])[0]
    never = tiny_runner(seed=1, chat=False)
    assert never.render(messages) == ("Be brief.\n\nHi?", True)
    bare = tiny_runner(seed=1, chat_template=None)
    assert bare.render(messages) == ("Be brief.\n\nHi?", True)
    assert bare.identity()["chat"] == "none"
    with pytest.raises(ModelError, match="no chat template"):
        tiny_runner(seed=1, chat_template=None, chat="always")
    scores = auto.score_options([messages], [["A", "B"]])
    assert sum(scores[0].probs) == pytest.approx(1.0)


def test_on_batch_reports_every_position_once(runner: HFRunner) -> None:
    prompts = random_prompts(7, seed=10)
    for call in ("score", "generate", "loglikelihood"):
        seen: dict[int, object] = {}

        def record(positions, results, seen=seen):
            for i, r in zip(positions, results, strict=True):
                assert i not in seen
                seen[i] = r

        if call == "score":
            out = runner.score_options(prompts, [["1", "2", "10"]] * 7, on_batch=record)
        elif call == "generate":
            out = runner.generate(prompts, 3, on_batch=record)
        else:
            out = runner.loglikelihood([(p, " yes") for p in prompts], on_batch=record)
        assert [seen[i] for i in range(len(prompts))] == out


def test_identity_records_numerics(runner: HFRunner) -> None:
    identity = runner.identity()
    assert identity["dtype"] == "float32"
    assert identity["batch_size"] == 4
    assert identity["device"] == "cpu"
    assert identity["backend"] == "hf"


def test_bad_inputs_raise_one_clear_error(runner: HFRunner) -> None:
    with pytest.raises(ModelError, match="2 prompts but 1 label sets"):
        runner.score_options(["a", "b"], [["A", "B"]])
    with pytest.raises(ModelError, match="not distinct"):
        runner.score_options(["a"], [["A", " A"]])
    with pytest.raises(ModelError, match="at least two labels"):
        runner.score_options(["a"], [["A"]])
    with pytest.raises(ModelError, match="empty after tokenisation"):
        runner.score_options([""], [["A", "B"]])
    with pytest.raises(ModelError, match="more than the model's 256"):
        runner.generate(["word " * 100], 2)
    with pytest.raises(ModelError, match="chat message 0"):
        runner.generate([[{"content": "no role"}]], 2)


def test_offline_follows_the_environment_unless_given(monkeypatch: pytest.MonkeyPatch) -> None:
    from robustness.runners.torch_setup import is_offline

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert is_offline() and is_offline(True) and not is_offline(False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    assert not is_offline() and is_offline(True)
    monkeypatch.delenv("HF_HUB_OFFLINE")
    assert not is_offline()
    with pytest.raises(ModelError, match="offline must be"):
        is_offline("yes")  # type: ignore[arg-type]


def test_from_pretrained_downloads_unless_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    import transformers

    asked: list[bool] = []

    def fake(source: str, **kwargs: object) -> object:
        asked.append(bool(kwargs["local_files_only"]))
        raise OSError("not here")

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", fake)
    # the Hub counts as reachable here (its probe has its own tests): what is asked of the
    # loader is the point, whatever HF_HUB_OFFLINE the test run itself has
    monkeypatch.setattr("robustness.runners.torch_setup.check_hub_reachable", lambda *a, **k: None)
    with pytest.raises(ModelError, match="offline, so nothing is downloaded"):
        HFRunner.from_pretrained("org/not-cached", device="cpu", threads=1, offline=True)
    with pytest.raises(ModelError, match="the Hub: not here"):
        HFRunner.from_pretrained("org/not-cached", device="cpu", threads=1, offline=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelError, match="offline"):
        HFRunner.from_pretrained("org/not-cached", device="cpu", threads=1)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    with pytest.raises(ModelError, match="the Hub"):
        HFRunner.from_pretrained("org/not-cached", device="cpu", threads=1)
    assert asked == [True, False, True, False]


def test_threads_fall_back_to_one_when_openmp_spins(monkeypatch: pytest.MonkeyPatch) -> None:
    from robustness.runners import torch_setup

    before = torch.get_num_threads()
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(torch_setup, "_thread_warning_given", False)
    try:
        torch.set_num_threads(2)
        with pytest.warns(RuntimeWarning, match="one CPU thread"):
            assert torch_setup.configure_threads() == 1
        monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")
        torch.set_num_threads(2)
        assert torch_setup.configure_threads() == 2
        assert torch_setup.configure_threads(3) == 3
        with pytest.raises(ModelError, match="threads must be"):
            torch_setup.configure_threads(0)
    finally:
        torch.set_num_threads(before)
