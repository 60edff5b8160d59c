"""The run summary's cache counts are true when one prompt of a batch fails.

Issue 23 saw "19 prompts answered from the cache, 21 by the model" for a fresh 20-prompt run:
one prompt failed, the whole call was asked again prompt by prompt, the 19 answers the first
call had stored came back as cache hits, and the failed prompt was counted as a miss twice.
A retry now asks only the prompts the failed call did not answer, and a miss is counted when
the model answers it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from helpers.fake_runner import FakeRunner

import robustness as rb
from robustness.core.errors import ModelError


class OnePromptFails(FakeRunner):
    """A fake runner whose batches raise ModelError when they hold the poisoned prompt."""

    def __init__(self, poison: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.poison = poison
        self.asked: list[str] = []

    def score_options(
        self, prompts: Sequence[Any], labels: Sequence[Sequence[str]], *, on_batch: Any = None
    ) -> list[Any]:
        results: list[Any] = []
        for start in range(0, len(prompts), self.batch_size):
            chunk = list(range(start, min(start + self.batch_size, len(prompts))))
            texts = [str(prompts[i]) for i in chunk]
            self.asked.extend(texts)
            if self.poison in texts:
                raise ModelError("the poisoned prompt cannot be scored.")
            done = super().score_options(texts, [labels[i] for i in chunk])
            results.extend(done)
            if on_batch is not None:
                on_batch(chunk, done)
        return results


def test_a_fresh_run_with_one_failing_prompt_counts_every_prompt_once(tmp_path) -> None:
    items = rb.demo_items()[:4]
    variants = rb.perturb(items, families=["option_order"], n=4, seed=0)
    assert len(variants) == 20
    prompts = [v.spec.render() for v in variants]
    poison = prompts[-1]  # in the last batch, so every earlier batch was answered and stored
    inner = OnePromptFails(poison, batch_size=4)
    model = rb.model("fake", name="m", mode="choice")
    info: dict[str, Any] = {}
    table = rb.run(variants, [model], runners={"m": inner}, cache=tmp_path / "c.sqlite", info=info)
    counts = info["m"]["cache"]
    assert (counts["hits"], counts["misses"]) == (0, 19), counts
    assert counts["stored"] == 19
    assert int(table["valid"].sum()) == 19
    bad = table[~table["valid"]]
    assert len(bad) == 1 and "poisoned" in bad["invalid_reason"].iloc[0]
    # the 16 prompts of the completed batches went to the model once; the poisoned batch's
    # four (the poisoned one too) once in it and once alone
    assert [inner.asked.count(p) for p in prompts] == [1] * 16 + [2, 2, 2, 2]

    again = OnePromptFails(poison, batch_size=4)
    info = {}
    rb.run(variants, [model], runners={"m": again}, cache=tmp_path / "c.sqlite", info=info)
    assert (info["m"]["cache"]["hits"], info["m"]["cache"]["misses"]) == (19, 0)
    assert again.asked == [poison]  # only the unanswered prompt is asked again


def test_a_retry_after_a_failed_batch_asks_only_the_unanswered_prompts() -> None:
    items = rb.demo_items()[:4]
    variants = rb.perturb(items, families=["option_order"], n=4, seed=0)
    prompts = [v.spec.render() for v in variants]
    poison = prompts[5]  # the second batch fails; the first was answered, the rest never asked
    inner = OnePromptFails(poison, batch_size=4)
    model = rb.model("fake", name="m", mode="choice")
    info: dict[str, Any] = {}
    table = rb.run(variants, [model], runners={"m": inner}, info=info)
    assert (info["m"]["cache"]["hits"], info["m"]["cache"]["misses"]) == (0, 19)
    assert int(table["valid"].sum()) == 19
    # first call: batch 1 (4 prompts) answered, batch 2 failed; the retry asks the 16 prompts
    # without an answer one by one: 4 + 4 + 16 asks in all, batch 1 never twice
    assert len(inner.asked) == 4 + 4 + 16
    assert all(inner.asked.count(p) == 1 for p in prompts[:4])
