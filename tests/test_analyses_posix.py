"""POSIX on hand-computed matrices, and the runner helper with a fake runner."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from analyses import posix, posix_from_runner, posix_table
from robustness.core.errors import ModelError

LL = np.array(
    [[-3.0, -5.0, -4.0], [-6.0, -2.0, -8.0], [-4.0, -4.0, -1.0]]
)  # LL[i, j] = log P(y_j | x_i)
LENGTHS = [3, 2, 1]
# column 0: |(-6+3)/3| + |(-4+3)/3| = 1 + 1/3; column 1: |(-5+2)/2| + |(-4+2)/2| = 1.5 + 1;
# column 2: |(-4+1)/1| + |(-8+1)/1| = 3 + 7  -> total 13 + 5/6 over N (N - 1) = 6
HAND = (1 + 1 / 3 + 1.5 + 1 + 3 + 7) / 6


def test_hand_computed_matrix():
    assert posix(LL, LENGTHS) == pytest.approx(HAND)


def test_not_the_released_code_variants():
    # transposed matrix (the released code's indexing) gives another number here
    assert posix(LL.T, LENGTHS) != pytest.approx(HAND)
    # dividing by a fixed max_new_tokens instead of L_{y_j} also differs
    assert posix(LL, [64, 64, 64]) != pytest.approx(HAND)


def test_identical_prompts_give_zero_and_scale_with_length():
    same = np.array([[-4.0, -2.0], [-4.0, -2.0]])
    assert posix(same, [4, 2]) == 0.0
    m = np.array([[-1.0, -3.0], [-5.0, -1.0]])
    # (|(-5+1)/L0| + |(-3+1)/L1|) / 2
    assert posix(m, [2, 1]) == pytest.approx((2 + 2) / 2)
    assert posix(m, [4, 2]) == pytest.approx((1 + 1) / 2)


@pytest.mark.parametrize(
    ("ll", "lengths", "needle"),
    [
        (np.zeros((2, 3)), [1, 1], "square"),
        (np.zeros((1, 1)), [1], "at least two"),
        (np.zeros((2, 2)), [1], "one entry per response"),
        (np.zeros((2, 2)), [1, 0], "positive token count"),
        (np.array([[0.0, -np.inf], [0.0, 0.0]]), [1, 1], r"loglik\[0, 1\]"),
    ],
)
def test_errors_name_the_problem(ll, lengths, needle):
    with pytest.raises(ValueError, match=needle):
        posix(ll, lengths)


class FakeRunner:
    """Scores (prompt, response) pairs from a table; records its calls."""

    def __init__(self, prompts, responses, ll, tokens):
        self.index_p = {p: i for i, p in enumerate(prompts)}
        self.index_r = {r: j for j, r in enumerate(responses)}
        self.ll, self.tokens, self.responses = ll, tokens, responses
        self.calls: list[list[tuple[str, str]]] = []
        self.generated: list[tuple[list[str], int]] = []

    def loglikelihood(self, pairs):
        self.calls.append(list(pairs))
        return [
            SimpleNamespace(
                logprob=self.ll[self.index_p[p], self.index_r[r]],
                n_tokens=self.tokens[self.index_r[r]],
            )
            for p, r in pairs
        ]

    def generate(self, prompts, max_new_tokens):
        self.generated.append((list(prompts), max_new_tokens))
        return [SimpleNamespace(text=self.responses[self.index_p[p]]) for p in prompts]


def test_runner_helper_collects_the_matrix_in_one_call():
    prompts = ["Q: 2+2? A:", "Question: 2+2?\nAnswer:", "2+2 = ?"]
    responses = ["4", "four", "4."]
    runner = FakeRunner(prompts, responses, LL, LENGTHS)
    res = posix_from_runner(runner, prompts, responses)
    assert res.psi == pytest.approx(HAND)
    assert len(runner.calls) == 1 and len(runner.calls[0]) == 9
    assert runner.calls[0][1] == (prompts[0], responses[1])  # row-major: prompt i, response j
    np.testing.assert_array_equal(res.loglik, LL)
    np.testing.assert_array_equal(res.lengths, LENGTHS)


def test_runner_helper_generates_and_adds_the_original():
    prompts = ["orig", "var1", "var2"]
    responses = ["a", "b", "c"]
    runner = FakeRunner(prompts, responses, LL, LENGTHS)
    res = posix_from_runner(runner, ["var1", "var2"], original="orig", max_new_tokens=7)
    assert runner.generated == [(["orig", "var1", "var2"], 7)]
    assert res.original_index == 0 and res.responses == responses
    assert res.psi == pytest.approx(HAND)


def test_runner_helper_passes_chat_prompts_through_and_rejects_empty_responses():
    seen = []

    class Chat:
        def loglikelihood(self, pairs):
            seen.extend(p for p, _ in pairs)
            return [SimpleNamespace(logprob=-1.0, n_tokens=len(r)) for _, r in pairs]

    chats = [[{"role": "user", "content": "2+2?"}], [{"role": "user", "content": "two plus two?"}]]
    assert posix_from_runner(Chat(), chats, ["4", "four"]).psi == 0.0
    assert seen[0] is chats[0]
    with pytest.raises(ValueError, match="has no tokens"):
        posix_from_runner(Chat(), chats, ["4", ""])


def test_runner_helper_rejects_bad_runners():
    class Short:
        def loglikelihood(self, pairs):
            return [SimpleNamespace(logprob=-1.0, n_tokens=1)]

    with pytest.raises(ModelError, match="returned 1 results for 4 pairs"):
        posix_from_runner(Short(), ["a", "b"], ["x", "y"])

    class NoAttrs:
        def loglikelihood(self, pairs):
            return [(-1.0, 1)] * len(pairs)

    with pytest.raises(ModelError, match=r"\.logprob and \.n_tokens"):
        posix_from_runner(NoAttrs(), ["a", "b"], ["x", "y"])


def test_posix_table_from_stored_pairs():
    rows = [
        {
            "model": "m",
            "item_id": "q",
            "prompt_index": i,
            "response_index": j,
            "logprob": LL[i, j],
            "n_tokens": LENGTHS[j],
        }
        for i in range(3)
        for j in range(3)
    ]
    out = posix_table(pd.DataFrame(rows), by=["model", "item_id"])
    assert out["posix"].iloc[0] == pytest.approx(HAND) and out["n_prompts"].iloc[0] == 3
    with pytest.raises(ValueError, match="exactly once"):
        posix_table(pd.DataFrame(rows[:-1]), by=["model", "item_id"])
