"""vLLM's prefix caching on against off, number by number, on the real engine.

Run in ``.venv-vllm`` (``make setup-vllm``): ``.venv-vllm/bin/python bench/vllm_prefix.py
[--items 7]``. Without vllm (or without ../shared/data) it prints one SKIP line and exits 0.
The prompts are those of the engine tests' kind: ``--items`` items of each of the six shared
datasets, each with its original prompt and one variant (the eight families in turn). Each
engine (prefix caching off, then on; one at a time, the same settings otherwise) scores the
labels (choice mode) and every option's log-likelihood (cloze mode); the script prints the
largest difference between the two engines, whether every pick is the same, and the seconds
of each call. The runner's default (off) is kept unless every number is equal
(``robustness/runners/vllm/__init__.py`` records what this measured).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data"
DATASETS = ("mmlu", "arc_challenge", "culturalbench", "political_compass", "valuebench", "wvs")
FAMILIES = (
    "option_order",
    "label_substitution",
    "spelling_noise",
    "lexical_substitution",
    "paraphrase",
    "formatting",
    "logical_equivalence",
    "framing",
)

from robustness.runners import apply_thread_defaults  # noqa: E402

apply_thread_defaults()


def workload(per_dataset: int) -> list[Any]:
    """The original and one variant of the first ``per_dataset`` items of each dataset."""
    import robustness as rb

    items = [i for name in DATASETS for i in rb.load_items(DATA / f"{name}.jsonl")[:per_dataset]]
    found = rb.perturb(items, families=list(FAMILIES), n=1, seed=0)
    by_item: dict[tuple[str, str], dict[str, Any]] = {}
    for v in found:
        by_item.setdefault((v.item.dataset, v.item_id), {}).setdefault(v.category, v)
    chosen = []
    for k, (_, per_category) in enumerate(sorted(by_item.items())):
        turn = [FAMILIES[(k + j) % len(FAMILIES)] for j in range(len(FAMILIES))]
        family = next((f for f in turn if f in per_category), None)
        chosen.append(per_category["original"])
        if family is not None:
            chosen.append(per_category[family])
    return chosen


def measure(prefix: bool, variants: list[Any]) -> dict[str, Any]:
    """Label probabilities and option log-likelihoods of one engine, with the seconds."""
    from robustness.answers import prompt_for
    from robustness.runners import make_runner

    runner = make_runner(
        "vllm", "embedded", batch_size=64, max_model_len=2048, enable_prefix_caching=prefix
    )
    try:
        prompts = [prompt_for(v, runner.uses_chat) for v in variants]
        lead = "" if runner.uses_chat else " "
        pairs = [
            (p, lead + o) for p, v in zip(prompts, variants, strict=True) for o in v.spec.options
        ]
        started = time.perf_counter()
        choice = runner.score_options(prompts, [list(v.spec.labels) for v in variants])
        middle = time.perf_counter()
        cloze = runner.loglikelihood(pairs)
        done = time.perf_counter()
    finally:
        runner.close()
    return {
        "probs": [list(c.probs) for c in choice],
        "picks": [c.argmax for c in choice],
        "logprobs": [c.logprob for c in cloze],
        "seconds": (middle - started, done - middle),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=7)
    args = parser.parse_args()
    if importlib.util.find_spec("vllm") is None:
        print("SKIP: vllm is not installed here: make setup-vllm, then run with .venv-vllm.")
        return
    if not all((DATA / f"{name}.jsonl").is_file() for name in DATASETS):
        print(f"SKIP: shared data not found in {DATA}")
        return
    variants = workload(args.items)
    off, on = measure(False, variants), measure(True, variants)
    dp = max(
        abs(a - b)
        for x, y in zip(off["probs"], on["probs"], strict=True)
        for a, b in zip(x, y, strict=True)
    )
    dl = max(abs(a - b) for a, b in zip(off["logprobs"], on["logprobs"], strict=True))
    equal = off["probs"] == on["probs"] and off["logprobs"] == on["logprobs"]
    print(f"{len(variants)} prompts, {len(off['logprobs'])} cloze responses")
    print(f"choice: picks equal {off['picks'] == on['picks']}, largest |dp| {dp:.3e}")
    print(f"cloze: largest |d log P| {dl:.3e}; every number equal: {equal}")
    print(
        "seconds (choice, cloze): off {:.1f}, {:.1f}; on {:.1f}, {:.1f}".format(
            *off["seconds"], *on["seconds"]
        )
    )


if __name__ == "__main__":
    main()
