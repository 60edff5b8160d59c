"""Record generate-mode outputs of the embedded model for the parser corpus (by hand).

Not run by the tests. Run it from the repository root when the corpus should grow:

    python tests/data/make_generate_corpus.py [--n 320] [--max-new-tokens 48]

It perturbs the bundled demo items with every family (``robustness.perturb``, seed 0),
picks a seeded sample stratified over family x label style x item type, asks the embedded
SmolLM2-135M-Instruct through ``robustness.runners.make_runner()`` in generate mode (greedy,
chat template when the runner has one, as ``robustness run`` does) and writes one JSON
object per prompt to ``tests/data/smollm2_generate_outputs.jsonl``: ``gen_id``, ``item_id``,
``category``, ``variant_id``, ``label_style``, ``labels``, ``options`` (displayed order),
``kind`` ("mc" or the scale), the rendered ``prompt`` and the model's ``raw`` text.

The expected parse is NOT produced here: each output copied into the corpus was decided
by a person reading it.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "smollm2_generate_outputs.jsonl"


def label_style(labels: tuple[str, ...]) -> str:
    first = labels[0]
    if first.isdigit():
        return "digits"
    if first in ("i", "I"):
        return "roman_lower" if first == "i" else "roman_upper"
    if first in ("a", "A"):
        return "lower" if first == "a" else "upper"
    if "α" <= first <= "ω":
        return "greek"
    return "symbols"


def kind(item) -> str:
    if item.scale == "nominal":
        return "mc"
    return str(item.meta.get("response_scale", "ordinal"))


def main() -> None:
    import robustness as rb
    from robustness.answers import prompt_for
    from robustness.run import uses_chat
    from robustness.runners import make_runner

    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=320)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    args = parser.parse_args()

    items = rb.demo_items()
    variants = rb.perturb(items, families="all", n=3, seed=0)
    strata = defaultdict(list)
    for v in variants:
        strata[(v.category, label_style(v.spec.labels), kind(v.item))].append(v)
    rng = np.random.default_rng(0)
    keys = sorted(strata)
    picked = []
    while len(picked) < args.n and any(strata.values()):
        for key in keys:
            pool = strata[key]
            if pool and len(picked) < args.n:
                picked.append(pool.pop(int(rng.integers(len(pool)))))
    runner = make_runner("hf", "embedded", batch_size=16)
    chat = uses_chat(runner)
    prompts = [prompt_for(v, chat) for v in picked]
    results = runner.generate(prompts, args.max_new_tokens)
    with OUT.open("w", encoding="utf-8") as fh:
        for i, (v, res) in enumerate(zip(picked, results, strict=True)):
            row = {
                "gen_id": f"gen-{i + 1:03d}",
                "item_id": v.item.item_id,
                "category": v.category,
                "variant_id": v.variant_id,
                "label_style": label_style(v.spec.labels),
                "kind": kind(v.item),
                "labels": list(v.spec.labels),
                "options": list(v.spec.options),
                "prompt": v.spec.render(),
                "raw": res.text,
                "max_new_tokens": args.max_new_tokens,
            }
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
