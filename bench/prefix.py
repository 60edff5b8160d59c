"""Benchmark of shared-prefix scoring: the hf runner with prefix sharing on against the same
runner with it off, side by side in one process on the shared items.

Run: ``.venv/bin/python bench/prefix.py [--only cloze,fewshot,posix,noise] [--rounds 1]``.

- ``cloze``: option-text scoring (the cloze mode: every option as a continuation of the plain
  text prompt) of the first ``--n-cloze`` MMLU items. Also printed against the throughput of
  lm-evaluation-harness on the same items: ``bench/lmeval.py`` measures it side by side in its
  own environment; here, the figure issue 14 reports (3.9 questions/s, SmolLM2-135M, fp32,
  batch 16, 2 cores), which was not measured in this run (target: >= 2x).
- ``fewshot``: choice mode (label probabilities) on chat prompts with 3 solved exemplars per
  dataset, MMLU and ARC-Challenge items interleaved (target: >= 1.5x the unshared runner).
- ``posix``: the POSIX matrix (every response scored under every prompt) of ``--n-posix``
  items x 5 variants (the original and option order, framing, formatting, spelling noise), with
  responses generated once beforehand (targets: >= 2x fewer forward token positions, >= 1.5x
  faster).
- ``noise``: the noise floor (each prompt alone vs in shuffled batches) of the 3-shot prompts
  with sharing on, and the picks of sharing on vs off.

Work is cut into chunks and the two paths alternate which goes first chunk by chunk, so load
from other processes falls on both alike; rates use each path's best round. Token positions
count every position a forward computes (padding included). Timings are printed, never
asserted; on a machine shared with other work the ratios are the figures to read.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATA = ROOT.parent / "shared" / "data"
LM_EVAL_CLOZE_QPS = 3.9  # issue 14: lm-evaluation-harness cloze, 200 MMLU items, measured earlier
TOOLKIT_CLOZE_QPS = 4.1  # issue 14: this toolkit's unshared cloze, measured beside that figure


def load(name: str) -> list[Any]:
    import robustness as rb

    return rb.load_items(DATA / f"{name}.jsonl")


def side_by_side(
    work: Sequence[Any], run: Callable[[Any, Any], Any], on: Any, off: Any, rounds: int
) -> dict[str, Any]:
    """Time ``run(runner, chunk)`` for both runners over every chunk, alternating order."""
    times: dict[str, list[float]] = {"on": [], "off": []}
    tokens = {"on": 0, "off": 0}
    outputs: dict[str, list[Any]] = {"on": [], "off": []}
    for round_ in range(rounds):
        spent = {"on": 0.0, "off": 0.0}
        for c, chunk in enumerate(work):
            order = ("on", "off") if (c + round_) % 2 == 0 else ("off", "on")
            for name in order:
                runner = on if name == "on" else off
                before = runner.prefix.tokens_run
                started = time.perf_counter()
                out = run(runner, chunk)
                spent[name] += time.perf_counter() - started
                if round_ == 0:
                    tokens[name] += runner.prefix.tokens_run - before
                    outputs[name].append(out)
        for name in spent:
            times[name].append(spent[name])
    memory = on.prefix.peak_estimate / on.prefix.budget if on.prefix.budget else 0.0
    return {"times": times, "tokens": tokens, "outputs": outputs, "memory": memory}


def report(title: str, units: int, unit: str, result: dict[str, Any]) -> dict[str, float]:
    times, tokens = result["times"], result["tokens"]
    rate = {name: units / min(values) for name, values in times.items()}
    print(f"\n== {title}")
    for name in ("on", "off"):
        rounds = " ".join(f"{v:.2f}" for v in times[name])
        print(
            f"  sharing {name:<4}{rate[name]:>8.2f} {unit}/s   best {min(times[name]):7.2f} s"
            f"   median {statistics.median(times[name]):7.2f} s   tokens {tokens[name]:>8}"
            f"   rounds: {rounds}"
        )
    speed = rate["on"] / rate["off"]
    fewer = tokens["off"] / max(1, tokens["on"])
    print(f"  speed-up on/off = {speed:.2f}x   forward token positions off/on = {fewer:.2f}x")
    if result.get("memory"):
        print(
            f"  largest estimated peak / batch budget (last shared call) = {result['memory']:.2f}"
        )
    return {"speed": speed, "fewer": fewer, "rate_on": rate["on"], "rate_off": rate["off"]}


def max_abs(a: Sequence[float], b: Sequence[float]) -> float:
    return max((abs(x - y) for x, y in zip(a, b, strict=True)), default=0.0)


def bench_cloze(on: Any, off: Any, n: int, rounds: int) -> None:
    from robustness.core.prompts import default_spec

    items = load("mmlu")[:n]
    specs = [default_spec(item) for item in items]
    chunk = 50
    work = []
    for start in range(0, len(specs), chunk):
        work.append(
            [
                (s.render(), " " + option)
                for s in specs[start : start + chunk]
                for option in s.options
            ]
        )
    result = side_by_side(work, lambda r, pairs: r.loglikelihood(pairs), on, off, rounds)
    figures = report(
        f"cloze: {len(items)} MMLU items, option text as continuation", len(items), "q", result
    )
    shared = [x for out in result["outputs"]["on"] for x in out]
    plain = [x for out in result["outputs"]["off"] for x in out]
    diff = max_abs([x.logprob for x in shared], [x.logprob for x in plain])
    picks = 0
    offset = 0
    for spec in specs:
        k = len(spec.options)
        a = [x.logprob / x.n_tokens for x in shared[offset : offset + k]]
        b = [x.logprob / x.n_tokens for x in plain[offset : offset + k]]
        picks += a.index(max(a)) != b.index(max(b))
        offset += k
    print(f"  max |loglik on - off| = {diff:.2e}; picks that differ: {picks} of {len(specs)}")
    try:
        import lm_eval  # noqa: F401
    except ImportError:
        print(
            f"  lm-evaluation-harness is not installed here, so it was not run: compared with "
            f"the {LM_EVAL_CLOZE_QPS} q/s issue 14 reports (measured earlier, not in this run): "
            f"{figures['rate_on'] / LM_EVAL_CLOZE_QPS:.2f}x (target >= 2x)"
        )
        projected = figures["speed"] * TOOLKIT_CLOZE_QPS / LM_EVAL_CLOZE_QPS
        print(
            f"  projected on the issue's quiet machine: speed-up on/off measured here x "
            f"{TOOLKIT_CLOZE_QPS} / {LM_EVAL_CLOZE_QPS} (toolkit unshared / lm-eval, measured "
            f"side by side in issue 14) = {projected:.2f}x lm-eval (target >= 2x)"
        )
    else:
        print("  lm_eval is importable here; bench/lmeval.py runs it side by side (own env).")


def fewshot_prompts(n: int) -> tuple[list[Any], list[list[str]]]:
    from robustness.core.prompts import Exemplar, default_spec

    columns = []
    for name in ("mmlu", "arc_challenge"):
        items = load(name)
        shots = [
            Exemplar(question=it.question, options=it.options, answer=int(it.answer))
            for it in items[-3:]
        ]
        columns.append([default_spec(item, shots) for item in items[:-3]])
    specs = [col[i] for i in range((n + 1) // 2) for col in columns][:n]
    return [s.messages() for s in specs], [list(s.labels) for s in specs]


def bench_fewshot(on: Any, off: Any, n: int, rounds: int) -> None:
    prompts, labels = fewshot_prompts(n)
    chunk = 16
    work = [(prompts[s : s + chunk], labels[s : s + chunk]) for s in range(0, len(prompts), chunk)]
    result = side_by_side(work, lambda r, c: r.score_options(c[0], c[1]), on, off, rounds)
    report(
        f"choice mode, 3-shot chat prompts: {len(prompts)} MMLU + ARC items",
        len(prompts),
        "q",
        result,
    )
    shared = [x for out in result["outputs"]["on"] for x in out]
    plain = [x for out in result["outputs"]["off"] for x in out]
    diff = max(
        max_abs(a.label_logprobs, b.label_logprobs) for a, b in zip(shared, plain, strict=True)
    )
    flips = sum(a.argmax != b.argmax for a, b in zip(shared, plain, strict=True))
    print(f"  max |label logprob on - off| = {diff:.2e}; picks that differ: {flips}")


def bench_posix(on: Any, off: Any, n: int, rounds: int) -> None:
    import robustness as rb
    from analyses.posix import posix_from_runner
    from robustness.answers import prompt_for

    items = load("mmlu")[: n // 2] + load("political_compass")[: n - n // 2]
    families = "option_order,framing,formatting,spelling_noise"
    variants = rb.perturb(items, families=families, n=1, seed=0)
    groups: dict[str, list[Any]] = {}
    for v in variants:
        groups.setdefault(v.item_id, []).append(prompt_for(v, True))
    work = []
    for prompts in groups.values():
        responses = [g.text or "A" for g in on.generate(prompts, 16)]
        work.append((prompts, responses))
    sizes = sorted({len(p) for p, _ in work})
    result = side_by_side(work, lambda r, c: posix_from_runner(r, c[0], c[1]).psi, on, off, rounds)
    report(
        f"POSIX: {len(work)} items x {sizes} variants (chat prompts)", len(work), "items", result
    )
    diff = max_abs(result["outputs"]["on"], result["outputs"]["off"])
    print(f"  max |psi on - off| = {diff:.2e}")


def bench_noise(on: Any, off: Any, n: int) -> None:
    import numpy as np

    from robustness.runners import noise_floor

    prompts, labels = fewshot_prompts(n)
    floor = noise_floor(on, prompts, labels, k=n, rng=np.random.default_rng(0))
    print(f"\n== noise floor, sharing on, {floor.k} 3-shot prompts, batch {floor.batch_size}")
    print(
        f"  flips {floor.flips}, max |prob diff| {floor.max_abs_prob_diff:.2e}, "
        f"max |logprob diff| {floor.max_abs_logprob_diff:.2e}"
    )
    shared = on.score_options(prompts, labels)
    plain = off.score_options(prompts, labels)
    flips = sum(a.argmax != b.argmax for a, b in zip(shared, plain, strict=True))
    print(f"  picks with sharing on vs off differing: {flips} of {len(prompts)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--only", default="cloze,fewshot,posix,noise")
    parser.add_argument("--n-cloze", type=int, default=200)
    parser.add_argument("--n-fewshot", type=int, default=48)
    parser.add_argument("--n-posix", type=int, default=20)
    parser.add_argument("--n-noise", type=int, default=24)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()
    if not (DATA / "mmlu.jsonl").is_file():
        print(f"bench/prefix.py: skipped, shared data not found in {DATA}")
        return 0

    import torch

    from robustness.runners import make_runner
    from robustness.runners.hf import HFRunner

    started = time.perf_counter()
    on = make_runner("hf", args.model, batch_size=args.batch_size, device=args.device)
    assert isinstance(on, HFRunner)
    off = HFRunner(
        on.model,
        on.tokenizer,
        model_id=on.model_id,
        revision=on.revision,
        batch_size=on.batch_size,
        chat=on.chat,
        threads=on.threads,
        max_padding=on.max_padding,
        prefix_sharing="off",
    )
    print(
        f"model {on.model_id} on {on.device.type}, {on.dtype}, batch {on.batch_size}, "
        f"max padding {on.max_padding}, torch threads {torch.get_num_threads()}, "
        f"load {time.perf_counter() - started:.1f} s"
    )
    on.score_options(["warm up"], [["A", "B"]])
    off.score_options(["warm up"], [["A", "B"]])
    tasks = set(args.only.split(","))
    if "cloze" in tasks:
        bench_cloze(on, off, args.n_cloze, args.rounds)
    if "fewshot" in tasks:
        bench_fewshot(on, off, args.n_fewshot, args.rounds)
    if "posix" in tasks:
        bench_posix(on, off, args.n_posix, args.rounds)
    if "noise" in tasks:
        bench_noise(on, off, args.n_noise)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
