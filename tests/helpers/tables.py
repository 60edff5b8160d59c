"""A small valid long table with every column, for the table tests and the fuzz bench."""

from __future__ import annotations

import pandas as pd

__all__ = ["one_item_table"]


def one_item_table(n: int = 4) -> pd.DataFrame:
    """A valid long table of every column: one item, its original prompt and ``n - 1``
    framing variants, all answering B (correct)."""
    return pd.DataFrame(
        {
            "study": "s",
            "model": "m",
            "dataset": "d",
            "dataset_type": "objective",
            "item_id": "q1",
            "category": ["original"] + ["framing"] * (n - 1),
            "variant_id": ["original/0"] + [f"framing/{i}" for i in range(n - 1)],
            "params": "{}",
            "prompt_sha": "x",
            "shots": 0,
            "mode": "choice",
            "raw_output": "B",
            "label": "B",
            "answer": 1,
            "valid": True,
            "invalid_reason": None,
            "gold": 1,
            "correct": True,
            "option_probs": [[0.1, 0.7, 0.1, 0.1]] * n,
            "confidence": 0.5,
            "latency_ms": 3.0,
            "seed": 0,
            "scale": "nominal",
            "n_options": 4,
        }
    )
