"""Benchmark of choice-mode scoring: our runner against the floor and against a naive loop.

Run: ``.venv/bin/python bench/runner.py [--n 24] [--batch-size 16] [--rounds 3]``.

On one fixed set of multiple-choice prompts built from ``../shared/data`` (the first items of
MMLU, ARC-Challenge and the Political Compass, interleaved; chat messages, labels A, B, C, ...)
it prints side by side, measured in the same process:

- ``runner``: ``HFRunner.score_options`` end to end (chat template, tokenisation, batching,
  padding, forward, label probabilities, and prefix sharing as the runner chooses it: here the
  chat template's preamble is the only common prefix, so this is the no-regression check);
- ``floor``: only the model calls of the raw batched forward pass, over exactly the token
  batches the runner builds (tensors prepared before the clock starts);
- ``naive``: one prompt at a time through ``model.generate(max_new_tokens=1)`` with scores, the
  way a first script would do it;

as prompts per second, the ratios runner/floor (target >= 0.95) and runner/naive, and the
process's peak resident memory after each phase (plus peak CUDA memory on a GPU). The three
paths are timed batch by batch in rotating order for ``--rounds`` rounds; rates use each
path's best round (other processes on a shared CPU only ever add time) and the median ratio is
printed too. Timings are printed, never
asserted.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robustness.runners import apply_thread_defaults, make_runner  # noqa: E402

apply_thread_defaults()  # OMP_WAIT_POLICY=PASSIVE before torch, unless set

DATA = ROOT.parent / "shared" / "data"
FILES = ("mmlu.jsonl", "arc_challenge.jsonl", "political_compass.jsonl")


def load_prompts(data: Path, n: int) -> tuple[list[list[dict[str, str]]], list[list[str]]]:
    """``n`` chat prompts with their label sets, interleaving the files' first items."""
    columns = []
    for name in FILES:
        with (data / name).open(encoding="utf-8") as handle:
            columns.append([json.loads(line) for line in handle if line.strip()])
    prompts, labels = [], []
    row = 0
    while len(prompts) < n:
        for items in columns:
            if row < len(items) and len(prompts) < n:
                item = items[row]
                marks = [chr(ord("A") + k) for k in range(len(item["options"]))]
                body = "\n".join(f"{m}. {o}" for m, o in zip(marks, item["options"], strict=True))
                text = f"{item['question']}\n\n{body}\n\nAnswer with the letter of one option only."
                prompts.append([{"role": "user", "content": text}])
                labels.append(marks)
        row += 1
    return prompts, labels


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def time_runner(runner: Any, prompts: list[Any], labels: list[list[str]]) -> float:
    started = time.perf_counter()
    runner.score_options(prompts, labels)
    return time.perf_counter() - started


def time_floor(runner: Any, batches: list[dict[str, Any]]) -> float:
    import torch

    started = time.perf_counter()
    with torch.inference_mode():
        for inputs in batches:
            runner.model(**inputs, logits_to_keep=1, use_cache=False)
    if runner.device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - started


def time_naive(runner: Any, prompts: list[Any], labels: list[list[str]]) -> float:
    import torch

    model, tokenizer = runner.model, runner.tokenizer
    started = time.perf_counter()
    for prompt, marks in zip(prompts, labels, strict=True):
        text = tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
        ids = tokenizer(text, add_special_tokens=False, return_tensors="pt").to(runner.device)
        with torch.inference_mode():
            out = model.generate(
                **ids,
                max_new_tokens=1,
                do_sample=False,
                output_scores=True,
                return_dict_in_generate=True,
                pad_token_id=runner.pad_id,
            )
        probs = torch.softmax(out.scores[0][0].float(), dim=-1)
        picked = [int(tokenizer.encode(" " + m, add_special_tokens=False)[0]) for m in marks]
        _ = probs[picked] / probs[picked].sum()
    if runner.device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--n", type=int, default=24)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--max-padding", default="auto", help="auto, none, or a fraction in [0, 1)")
    args = parser.parse_args()
    if not all((args.data / name).is_file() for name in FILES):
        print(f"bench/runner.py: skipped, shared data not found in {args.data}")
        return 0

    import torch

    started = time.perf_counter()
    max_padding: float | str | None = args.max_padding
    if args.max_padding == "none":
        max_padding = None
    elif args.max_padding != "auto":
        max_padding = float(args.max_padding)
    runner = make_runner(
        "hf",
        args.model,
        dtype=args.dtype,
        device=args.device,
        batch_size=args.batch_size,
        max_padding=max_padding,
    )
    load_s = time.perf_counter() - started
    prompts, labels = load_prompts(args.data, args.n)
    ids = runner.encode_prompts(prompts)
    groups = runner.batches([len(r) for r in ids])
    batches = [runner.collate([ids[i] for i in group]) for group in groups]
    tokens = sum(len(r) for r in ids)
    print(
        f"model {runner.model_id} on {runner.device.type}, {runner.dtype}, "
        f"batch size {args.batch_size}, max padding {runner.max_padding}, "
        f"torch threads {torch.get_num_threads()}, "
        f"load {load_s:.2f} s"
    )
    print(
        f"{len(prompts)} prompts, {tokens} tokens (mean {tokens / len(prompts):.0f}, "
        f"max {max(len(r) for r in ids)}), {len(batches)} batches"
    )

    # warm-up: one small batch through each path.
    runner.score_options(prompts[:2], labels[:2])
    time_floor(runner, batches[-1:])
    memory: dict[str, float] = {"load": peak_rss_mb()}
    if runner.device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()

    # Paths are timed batch by batch, in an order that rotates with batch and round, so load
    # from other processes falls on all three alike. A batch's prompts given to the runner
    # form exactly that batch again (it is already sorted and within the padding cap).
    paths = ("runner", "floor", "naive")
    times: dict[str, list[float]] = {name: [] for name in paths}
    for round_ in range(args.rounds):
        spent = dict.fromkeys(paths, 0.0)
        for b, (members, inputs) in enumerate(zip(groups, batches, strict=True)):
            sub_prompts = [prompts[i] for i in members]
            sub_labels = [labels[i] for i in members]
            shift = (round_ + b) % len(paths)
            for name in paths[shift:] + paths[:shift]:
                if name == "runner":
                    spent[name] += time_runner(runner, sub_prompts, sub_labels)
                elif name == "floor":
                    spent[name] += time_floor(runner, [inputs])
                else:
                    spent[name] += time_naive(runner, sub_prompts, sub_labels)
                memory[name] = peak_rss_mb()
        for name in paths:
            times[name].append(spent[name])

    # the best round estimates each path's own cost; other processes only ever add time.
    rate = {name: len(prompts) / min(values) for name, values in times.items()}
    print()
    print(f"{'path':<8}{'prompts/s':>11}{'best s':>9}{'median s':>10}  all rounds (s)")
    for name, values in times.items():
        rounds = " ".join(f"{v:.2f}" for v in values)
        print(
            f"{name:<8}{rate[name]:>11.2f}{min(values):>9.2f}"
            f"{statistics.median(values):>10.2f}  {rounds}"
        )
    print()
    median_ratio = statistics.median(times["floor"]) / statistics.median(times["runner"])
    print(
        f"runner / floor = {rate['runner'] / rate['floor']:.3f} best-of-{args.rounds}, "
        f"{median_ratio:.3f} median   (target >= 0.95)"
    )
    print(f"runner / naive = {rate['runner'] / rate['naive']:.2f}x")
    print(f"prefix sharing: {runner.prefix_sharing}; load from other processes adds to all paths")
    print(
        "peak RSS after each phase (MiB): " + ", ".join(f"{k} {v:.0f}" for k, v in memory.items())
    )
    if runner.device.type == "cuda":
        print(f"peak CUDA memory: {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
