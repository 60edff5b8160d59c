"""lm-eval-shaped ``--log_samples`` folders made from numbers, for importer tests and the bench.

The shape follows what lm-eval 0.4.13 writes (checked against a real run in
tests/test_import_lmeval_real.py): ``results_<date>.json`` with ``model_name``, ``config``,
``configs.<task>.output_type`` and ``lm_eval_version``; ``samples_<task>_<date>.jsonl`` with one
object per doc whose ``arguments`` are ``{"gen_args_i": {"arg_0": context, "arg_1": cont}}``
and whose ``filtered_resps`` are ``[[loglik, is_greedy], ...]`` (multiple choice) or
``[text]`` (generation).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

DATE = "2026-12-02T00-00-00.000001"
LETTERS = "ABCD"


def write_logs(
    folder: Path,
    tasks: dict[str, str],
    n_docs: int = 5,
    seed: int = 0,
    model: str = "org/model",
    version: str = "0.4.13",
    date: str = DATE,
) -> dict[str, list[int]]:
    """Write one model's logs; ``tasks`` maps name -> ``multiple_choice`` | ``generate_until``.

    Returns the model's pick per task and doc (the argmax it logged, or the letter it wrote).
    """
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    picks: dict[str, list[int]] = {}
    for task, kind in tasks.items():
        lines, chosen = [], []
        for doc_id in range(n_docs):
            options = [f"option {k} of doc {doc_id}" for k in range(4)]
            context = f"Question {doc_id}?\nAnswer:"
            gold = int(rng.integers(0, 4))
            doc = {"question": f"Question {doc_id}?", "options": options, "gold": gold}
            if kind == "multiple_choice":
                logliks = rng.normal(-5.0, 2.0, 4)
                pick = int(np.argmax(logliks))
                args = {
                    f"gen_args_{k}": {"arg_0": context, "arg_1": " " + o}
                    for k, o in enumerate(options)
                }
                resps = [[[float(x), False]] for x in logliks]
                filtered = [[float(x), False] for x in logliks]
                metrics = {"acc": float(pick == gold)}
            else:
                pick = int(rng.integers(0, 4))
                text = f"The answer is ({LETTERS[pick]})."
                args = {"gen_args_0": {"arg_0": context, "arg_1": {"until": ["\n"]}}}
                resps, filtered = [[text]], [text]
                metrics = {"exact_match": float(pick == gold)}
            chosen.append(pick)
            record = {
                "doc_id": doc_id,
                "doc": doc,
                "target": gold if kind == "multiple_choice" else LETTERS[gold],
                "arguments": args,
                "resps": resps,
                "filtered_resps": filtered,
                "filter": "none",
                "metrics": list(metrics),
                "doc_hash": "0" * 64,
                "prompt_hash": "1" * 64,
                "target_hash": "2" * 64,
                **metrics,
            }
            lines.append(json.dumps(record))
        (folder / f"samples_{task}_{date}.jsonl").write_text("\n".join(lines) + "\n")
        picks[task] = chosen
    results = {
        "results": {t: {"alias": t} for t in tasks},
        "configs": {t: {"task": t, "output_type": k} for t, k in tasks.items()},
        "versions": {t: 1.0 for t in tasks},
        "config": {"model": "hf", "model_args": f"pretrained={model},revision=main"},
        "model_name": model,
        "model_name_sanitized": model.replace("/", "__"),
        "lm_eval_version": version,
        "date": 1790000000.0,
    }
    (folder / f"results_{date}.json").write_text(json.dumps(results, indent=2))
    return picks
