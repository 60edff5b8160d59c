"""Ask models every variant and collect the answers in the long table.

Three modes, chosen per model:

- ``choice``: one forward pass per prompt; the answer is the displayed label with
  the highest next-token probability.  ``option_probs`` holds the label
  probabilities renormalised over the labels, in canonical order; ``confidence``
  the top next-token probability over the whole vocabulary (ProSA eq. 3).
- ``cloze``: the log-likelihood of each option text as the continuation of the
  prompt, divided by its number of tokens (the mean log-probability per token,
  so long options are not penalised for their length); the answer is the best
  option, ``option_probs`` the softmax of the normalised scores.
- ``generate``: greedy decoding, then :func:`robustness.core.answer_parser.parse_answer`;
  outputs that do not parse stay in the table as invalid rows with their reason.

A failure of the model on one prompt is recorded as an invalid row
(``invalid_reason = "error: ..."``) and the run goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from robustness.core.answer_parser import parse_answer
from robustness.core.errors import ModelError
from robustness.core.table import COLUMNS
from robustness.core.variants import Variant
from robustness.reparse import display_json, reading_columns
from robustness.runners.base import BatchCallback, Prompt
from robustness.study import ModelConfig

#: ``progress(model_name, done, total)`` after each completed batch.
Progress = Callable[[str, int, int], None]


def prompt_for(variant: Variant, chat: bool) -> Prompt:
    """The variant as chat messages (chat models) or as one text ending with the answer cue."""
    return variant.spec.messages() if chat else variant.spec.render()


def _base_row(
    variant: Variant, study: str, model: ModelConfig, seed: int, chat: bool
) -> dict[str, Any]:
    item = variant.item
    return {
        "study": study,
        "model": model.name,
        "dataset": item.dataset,
        "dataset_type": item.dataset_type,
        "item_id": item.item_id,
        "category": variant.category,
        "variant_id": variant.variant_id,
        "params": variant.params_json(),
        "prompt_sha": variant.spec.sha(chat),
        "shots": len(variant.spec.exemplars),
        "mode": model.mode,
        "gold": item.answer,
        "seed": seed,
        "scale": item.scale,
        "n_options": item.n_options,
        "prompt": variant.spec.render(),
    }


def _answer(
    row: dict[str, Any],
    variant: Variant,
    position: int | None,
    label: str | None,
    reason: str | None,
) -> None:
    answer = variant.canonical_at(position) if position is not None else None
    row["label"] = label
    row["answer"] = answer
    row["valid"] = answer is not None
    row["invalid_reason"] = None if answer is not None else (reason or "no_label")
    gold = variant.item.answer
    row["correct"] = (answer == gold) if (answer is not None and gold is not None) else None


def _canonical_probs(variant: Variant, displayed: Sequence[float]) -> list[float]:
    out = [0.0] * variant.item.n_options
    for pos, p in enumerate(displayed):
        out[variant.canonical_at(pos)] = float(p)
    return out


def _error_row(row: dict[str, Any], message: str) -> dict[str, Any]:
    row.update(
        raw_output=None,
        label=None,
        answer=None,
        valid=False,
        invalid_reason=f"error: {message}"[:500],
        correct=None,
        option_probs=None,
        confidence=None,
        latency_ms=None,
    )
    return row


def _call(
    fn: Callable[[Sequence[int], BatchCallback], list[Any]],
    inputs: Sequence[int],
    on_batch: BatchCallback | None = None,
) -> list[Any]:
    """Call ``fn(positions, callback)`` on all positions; if that call fails, ask again, one by
    one, only the positions its batches had not answered (those came back through
    ``callback`` and are kept, not asked again), and keep each error as that position's result.

    ``on_batch`` sees every answered position once, in the caller's numbering.
    """
    answered: dict[int, Any] = {}

    def record(asked: Sequence[int]) -> BatchCallback:
        def callback(local: Sequence[int], results: Sequence[Any]) -> None:
            mine = [asked[j] for j in local]
            answered.update(zip(mine, results, strict=True))
            if on_batch is not None:
                on_batch(mine, results)

        return callback

    try:
        return fn(inputs, record(inputs))
    except (ModelError, RuntimeError, ValueError) as whole:
        left = [i for i in inputs if i not in answered]
        if len(left) == 1:  # the one prompt the batches did not answer is the one that failed
            answered[left[0]] = whole
            left = []
        for one in left:
            try:
                answered[one] = fn([one], record([one]))[0]
            except (ModelError, RuntimeError, ValueError) as exc:
                answered[one] = exc
        return [answered[i] for i in inputs]


def answer_rows(
    runner: Any,
    variants: Sequence[Variant],
    model: ModelConfig,
    *,
    study: str = "study",
    seed: int = 0,
    chat: bool = False,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """One table row per variant: ask ``runner`` in ``model.mode`` and normalise the answers."""
    prompts = [prompt_for(v, chat) for v in variants]
    total, done = len(variants), 0

    def on_batch(positions: Sequence[int], results: Sequence[Any]) -> None:
        nonlocal done
        done += len(positions)
        if progress is not None:
            progress(model.name, min(done, total), total)

    rows = [_base_row(v, study, model, seed, chat) for v in variants]
    if model.mode == "choice":
        labels = [list(v.spec.labels) for v in variants]
        results = _call(
            lambda idx, callback: runner.score_options(
                [prompts[i] for i in idx], [labels[i] for i in idx], on_batch=callback
            ),
            list(range(total)),
            on_batch,
        )
        for row, v, res in zip(rows, variants, results, strict=True):
            if isinstance(res, Exception):
                _error_row(row, str(res))
                continue
            pos = res.argmax
            row["raw_output"] = v.spec.labels[pos]
            _answer(row, v, pos, v.spec.labels[pos], None)
            row["option_probs"] = _canonical_probs(v, res.probs)
            row["confidence"] = float(res.top_prob)
            row["latency_ms"] = float(res.latency_ms)
    elif model.mode == "generate":
        results = _call(
            lambda idx, callback: runner.generate(
                [prompts[i] for i in idx], model.max_new_tokens, on_batch=callback
            ),
            list(range(total)),
            on_batch,
        )
        for row, v, res in zip(rows, variants, results, strict=True):
            if isinstance(res, Exception):
                _error_row(row, str(res))
                continue
            parsed = parse_answer(res.text, v.spec.labels, v.spec.options, conflict=model.conflict)
            row["raw_output"] = res.text
            _answer(row, v, parsed.position, parsed.label, parsed.reason)
            canonical = [v.canonical_at(i) for i in range(len(v.spec.labels))]
            row["display"] = display_json(v.spec.labels, v.spec.options, canonical)
            row.update(reading_columns(parsed, canonical))
            row["option_probs"] = None
            row["confidence"] = None
            row["latency_ms"] = float(res.latency_ms)
    else:
        rows = _cloze_rows(runner, variants, prompts, rows, chat, on_batch)
    for row in rows:
        for column in COLUMNS:
            row.setdefault(column, None)
    return rows


def _cloze_rows(
    runner: Any,
    variants: Sequence[Variant],
    prompts: Sequence[Prompt],
    rows: list[dict[str, Any]],
    chat: bool,
    on_batch: Any,
) -> list[dict[str, Any]]:
    pairs, owner = [], []
    for i, v in enumerate(variants):
        for option in v.spec.options:
            pairs.append((prompts[i], option if chat else " " + option))
            owner.append(i)
    results = _call(
        lambda idx, callback: runner.loglikelihood([pairs[j] for j in idx], on_batch=callback),
        list(range(len(pairs))),
    )
    per_variant: list[list[Any]] = [[] for _ in variants]
    for j, res in zip(owner, results, strict=True):
        per_variant[j].append(res)
    for row, v, res in zip(rows, variants, per_variant, strict=True):
        errors = [r for r in res if isinstance(r, Exception)]
        if errors:
            _error_row(row, str(errors[0]))
            continue
        scores = np.array([r.logprob / max(1, r.n_tokens) for r in res])
        probs = np.exp(scores - scores.max())
        probs /= probs.sum()
        pos = int(np.argmax(scores))
        row["raw_output"] = v.spec.options[pos]
        _answer(row, v, pos, v.spec.labels[pos], None)
        row["option_probs"] = _canonical_probs(v, probs)
        row["confidence"] = None
        row["latency_ms"] = None
    if on_batch is not None:
        on_batch(list(range(len(variants))), per_variant)
    return rows


def rows_to_table(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Rows -> a DataFrame with the schema's columns first, in schema order."""
    df = pd.DataFrame(list(rows), columns=None if rows else list(COLUMNS))
    ordered = [c for c in COLUMNS if c in df.columns]
    df = df[ordered + [c for c in df.columns if c not in COLUMNS]]
    for col in ("answer", "gold", "shots", "seed", "n_options"):
        if col in df.columns:
            df[col] = df[col].astype("Int64")
    for col in ("valid",):
        df[col] = df[col].astype(bool)
    if "correct" in df.columns:
        df["correct"] = df["correct"].astype("boolean")
    for col in ("confidence", "latency_ms"):
        if col in df.columns:
            df[col] = pd.to_numeric(df[col], errors="coerce").astype("float64")
    return df
