"""posix_from_runner renders text and chat prompts alike (issue 17): text goes to a chatting
runner as one user message, as rb.run asks it, and an empty generated response is named."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import robustness as rb
from analyses import posix_from_runner
from robustness.run import prompt_for, uses_chat


class Chatty:
    """Answers only chat messages (as an instruct model does); text gets an empty response."""

    has_chat_template = True

    def __init__(self, chat: str = "auto") -> None:
        self.chat = chat
        self.seen: list[object] = []

    def generate(self, prompts, max_new_tokens):
        self.seen.extend(prompts)
        return [SimpleNamespace(text="" if isinstance(p, str) else "B") for p in prompts]

    def loglikelihood(self, pairs):
        return [SimpleNamespace(logprob=-1.0 - len(str(p)) % 3, n_tokens=len(r)) for p, r in pairs]


def test_text_prompts_reach_a_chat_model_as_messages():
    runner = Chatty()
    res = posix_from_runner(runner, ["Q one?", "Q two?"], original="Q zero?", max_new_tokens=4)
    assert res.responses == ["B", "B", "B"] and np.isfinite(res.psi)
    assert runner.seen[0] == [{"role": "user", "content": "Q zero?"}]
    assert res.original_index == 0


def test_chat_never_keeps_text_and_an_empty_response_is_named():
    with pytest.raises(ValueError, match=r"empty response to prompt 0 \(2 of 2 prompts\)"):
        posix_from_runner(Chatty(chat="never"), ["Q one?", "Q two?"])


@pytest.mark.slow
def test_text_prompts_with_the_real_model(demo):
    from robustness.runners import make_runner

    runner = make_runner(model="embedded", batch_size=8)
    item = next(i for i in demo if i.dataset_type == "objective")
    variants = rb.perturb([item], families="framing", n=2, seed=0)
    text = [prompt_for(v, False) for v in variants]
    chat = [prompt_for(v, uses_chat(runner)) for v in variants]
    a = posix_from_runner(runner, text, max_new_tokens=6)
    b = posix_from_runner(runner, chat, max_new_tokens=6)
    assert a.responses == b.responses and all(r.strip() for r in a.responses)
    assert a.psi == pytest.approx(b.psi)
