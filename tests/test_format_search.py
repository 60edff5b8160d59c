"""Thompson search of the format space with a runner that is right in some formats only."""

from __future__ import annotations

import math

from robustness.format_search import format_search, sample_formats
from robustness.runners.base import OptionScores


class FormatSensitive:
    """Correct exactly when the prompt's answer cue is upper case ("ANSWER:"), else wrong."""

    def __init__(self, items):
        self.gold = {i.question: i.answer for i in items}
        self.calls = 0

    def score_options(self, prompts, labels, *, on_batch=None):
        out = []
        for prompt, labs in zip(prompts, labels, strict=True):
            self.calls += 1
            question = next(q for q in self.gold if q in prompt)
            upper = prompt.rstrip().endswith(prompt.rstrip().split("\n")[-1].upper())
            pos = self.gold[question] if upper else (self.gold[question] + 1) % len(labs)
            probs = [0.0] * len(labs)
            probs[pos] = 1.0
            out.append(
                OptionScores(
                    tuple(probs), tuple(math.log(p or 1e-9) for p in probs), 1.0, labs[pos], 0.0
                )
            )
        return out


def test_the_search_finds_a_perfect_and_a_hopeless_format(demo):
    items = [i for i in demo if i.dataset_type == "objective"]
    formats = sample_formats(30, seed=2)
    assert formats[0].casing == "title" and len(set(formats)) == 30
    assert any(f.casing == "upper" for f in formats)
    runner = FormatSensitive(items)
    seen = []
    res = format_search(
        items,
        runner,
        budget=400,
        formats=formats,
        batch=8,
        chat=False,
        seed=3,
        progress=lambda name, done, total: seen.append((name, done, total)),
    )
    assert res.search_calls <= 400 and runner.calls == res.calls
    assert res.pilot_calls == len(items)  # the default format on every item, outside the budget
    assert res.calls == res.pilot_calls + res.search_calls + res.reevaluation_calls
    assert res.best_format.casing == "upper" and res.best_accuracy == 1.0
    assert res.worst_format.casing != "upper" and res.worst_accuracy == 0.0
    assert res.spread == 1.0
    # both re-evaluated on every item, with Wilson intervals
    table = res.table().set_index("role")
    assert (table["n"] == len(items)).all()
    assert table.loc["best", "ci_low"] < 1.0 == table.loc["best", "ci_high"]
    # progress after every batch, ending at the number of calls
    assert seen[-1] == ("format_search", res.calls, res.calls)
    assert all(d <= t for _, d, t in seen) and [d for _, d, _ in seen] == sorted(
        d for _, d, _ in seen
    )
