"""The noise floor: how much answers move from batching and numerics alone.

A prompt's answer should not depend on which other prompts share its batch, but padding,
kernel choice and reduced precision make it depend a little. ``noise_floor`` samples K prompts
(with a seeded numpy Generator), scores each one alone, then scores the same prompts again in
shuffled batches of the runner's batch size (each batch a separate call, so batch composition is
random), and reports how many argmax answers flip and how far the label probabilities move. A
study's measured sensitivity means something only above this floor.

Always give the bare runner: through a cache, the second scoring would just read the first.
A ``CachedRunner`` is therefore unwrapped automatically.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from robustness.core.errors import ModelError
from robustness.runners.base import OptionScores, Prompt, Runner, check_label_sets


@dataclass(frozen=True)
class NoiseFloor:
    """Result of :func:`noise_floor`, JSON-able through :meth:`to_dict` for table metadata.

    ``flips`` counts sampled prompts whose argmax label differs between the one-at-a-time and
    the batched scoring; ``max_abs_prob_diff`` / ``mean_abs_prob_diff`` are over every label
    probability of every sampled prompt; ``max_abs_logprob_diff`` is over the raw label
    log-probabilities (finite ones only); ``indices`` are the sampled prompt positions.
    """

    k: int
    batch_size: int
    flips: int
    flip_rate: float
    max_abs_prob_diff: float
    mean_abs_prob_diff: float
    max_abs_logprob_diff: float
    indices: tuple[int, ...]
    runner: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (tuples become lists)."""
        data = asdict(self)
        data["indices"] = list(self.indices)
        return data


def noise_floor(
    runner: Runner,
    prompts: Sequence[Prompt],
    labels: Sequence[Sequence[str]],
    k: int,
    rng: np.random.Generator,
    *,
    batch_size: int | None = None,
) -> NoiseFloor:
    """Re-score ``k`` sampled prompts alone and in shuffled batches; see the module docstring.

    ``batch_size`` defaults to the runner's own (``runner.batch_size``, else 8). ``k`` larger
    than the number of prompts uses them all.
    """
    check_label_sets(prompts, labels, "noise_floor")
    if k < 1:
        raise ModelError(f"the noise floor needs k >= 1 prompts, got {k}.")
    if not prompts:
        raise ModelError("the noise floor needs at least one prompt.")
    from robustness.runners.cached import CachedRunner

    if isinstance(runner, CachedRunner):
        runner = runner.runner
    size = int(batch_size or getattr(runner, "batch_size", 8) or 8)
    chosen = rng.choice(len(prompts), size=min(k, len(prompts)), replace=False)
    indices = tuple(int(i) for i in chosen)

    alone: dict[int, OptionScores] = {}
    for i in indices:
        alone[i] = runner.score_options([prompts[i]], [labels[i]])[0]
    shuffled = [indices[j] for j in rng.permutation(len(indices))]
    batched: dict[int, OptionScores] = {}
    for start in range(0, len(shuffled), size):
        chunk = shuffled[start : start + size]
        scores = runner.score_options([prompts[i] for i in chunk], [labels[i] for i in chunk])
        batched.update(zip(chunk, scores, strict=True))

    flips = sum(alone[i].argmax != batched[i].argmax for i in indices)
    prob_diffs = np.array(
        [abs(a - b) for i in indices for a, b in zip(alone[i].probs, batched[i].probs, strict=True)]
    )
    lp_diffs = [
        abs(a - b)
        for i in indices
        for a, b in zip(alone[i].label_logprobs, batched[i].label_logprobs, strict=True)
        if np.isfinite(a) and np.isfinite(b)
    ]
    return NoiseFloor(
        k=len(indices),
        batch_size=size,
        flips=int(flips),
        flip_rate=flips / len(indices),
        max_abs_prob_diff=float(np.nanmax(prob_diffs)) if prob_diffs.size else 0.0,
        mean_abs_prob_diff=float(np.nanmean(prob_diffs)) if prob_diffs.size else 0.0,
        max_abs_logprob_diff=float(max(lp_diffs)) if lp_diffs else 0.0,
        indices=indices,
        runner=runner.identity(),
    )
