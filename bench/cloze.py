"""Benchmark of log-likelihood scoring at the forward floor (issue 29): ratios measured side by
side in one run, each path in its own worker process (``bench/workers.py``), the same requests.

Run: ``.venv/bin/python bench/cloze.py [--only letter,fewshot,posix] [--rounds 2]``.

- ``letter``: the 200 MMLU items, the plain rendered prompt: letter scoring (``score_options``)
  against cloze (``loglikelihood`` of the four option texts, each after a space), this checkout
  and main's code (target: cloze >= 0.85x this checkout's letter rate);
- ``fewshot``: choice mode on chat prompts, MMLU and ARC-Challenge interleaved, zero-shot
  against 3-shot (3 solved exemplars per dataset), questions per second (target: >= 0.8x);
- ``posix``: the POSIX matrix (every response scored under every prompt) of the demo's variants
  (every family, 2 variants each, seed 0, chat prompts, responses generated greedily once, up to
  12 tokens as the demo does) for ``--n-posix`` demo items, this checkout against main's code
  (target: >= 2x).

Each section cuts its work into chunks; within a chunk the paths run one after another in an
order that rotates from chunk to chunk and round to round, so load from other processes falls
on all alike. Printed per path: the seconds of every round, the rate of the median round (wall
clock, and per CPU second of the worker: on a machine shared with other jobs the wall clock
mostly measures waiting for a core), the
token positions the forwards computed and the number of forwards; per section the ratio of the
median rounds and the median of the per-chunk ratios, the largest difference of the numbers
between paths, and the machine's load average before and after. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from workers import Worker, embedded_folder, export_revision  # noqa: E402

DATA = ROOT.parent / "shared" / "data"


def load(name: str) -> list[Any]:
    import robustness as rb

    return rb.load_items(DATA / f"{name}.jsonl")


def side_by_side(
    title: str, paths: dict[str, tuple[Worker, str]], work: Sequence[dict[str, Any]], rounds: int
) -> dict[str, Any]:
    """Run every chunk of ``work`` (path name -> payload) on every path, rotating the order."""
    names = list(paths)
    times = {n: [0.0] * rounds for n in names}
    cpu = {n: [0.0] * rounds for n in names}
    chunk_times: dict[str, list[float]] = {n: [] for n in names}
    tokens = dict.fromkeys(names, 0)
    forwards = dict.fromkeys(names, 0)
    outputs: dict[str, list[Any]] = {n: [] for n in names}
    load_before = os.getloadavg()
    for round_ in range(rounds):
        for c, chunk in enumerate(work):
            shift = (c + round_) % len(names)
            for name in names[shift:] + names[:shift]:
                worker, kind = paths[name]
                seconds, results, positions, count, used = worker.call(kind, chunk[name])
                times[name][round_] += seconds
                cpu[name][round_] += used
                chunk_times[name].append(seconds)
                if round_ == 0:
                    tokens[name] += positions
                    forwards[name] += count
                    outputs[name].extend(results)
            line = "  ".join(f"{n} {chunk_times[n][-1]:.1f}s" for n in names)
            line += "  cpu " + " ".join(f"{cpu[n][round_]:.1f}" for n in names)
            print(f"   round {round_ + 1} chunk {c + 1}: {line}  load {fmt_load(os.getloadavg())}")
            sys.stdout.flush()
    print(f"\n== {title}")
    print(f"   load average before {fmt_load(load_before)}, after {fmt_load(os.getloadavg())}")
    return {
        "times": times,
        "cpu": cpu,
        "chunks": chunk_times,
        "tokens": tokens,
        "forwards": forwards,
        "outputs": outputs,
    }


def fmt_load(load: tuple[float, float, float]) -> str:
    return "/".join(f"{x:.2f}" for x in load)


def report(result: dict[str, Any], units: int, unit: str) -> dict[str, float]:
    """Print each path's figures; return its rate at the median round."""
    rates = {}
    for name, values in result["times"].items():
        median = statistics.median(values)
        rates[name] = units / median
        rounds = " ".join(f"{v:.1f}" for v in values)
        print(
            f"   {name:<22}{rates[name]:>7.2f} {unit}/s (median round {median:6.1f} s; "
            f"rounds {rounds})   positions {result['tokens'][name]:>7}   forwards "
            f"{result['forwards'][name]:>4}"
        )
        used = statistics.median(result["cpu"][name])
        print(f"   {'':<22}{units / used:>7.2f} {unit}/CPU-s (median round {used:6.1f} CPU-s)")
    return rates


def ratio(result: dict[str, Any], rates: dict[str, float], top: str, bottom: str) -> str:
    """``top``/``bottom`` as rate ratio of the median rounds and median of per-chunk ratios."""
    per_chunk = [
        b / a for a, b in zip(result["chunks"][top], result["chunks"][bottom], strict=True)
    ]
    cpu = statistics.median(result["cpu"][bottom]) / statistics.median(result["cpu"][top])
    return (
        f"{rates[top] / rates[bottom]:.2f}x (median round, wall), "
        f"{statistics.median(per_chunk):.2f}x (median of {len(per_chunk)} chunk ratios, wall), "
        f"{cpu:.2f}x (median round, CPU seconds)"
    )


def max_diff(a: Sequence[Any], b: Sequence[Any]) -> float:
    return max((abs(x[0] - y[0]) for x, y in zip(a, b, strict=True)), default=0.0)


def bench_letter(new: Worker, old: Worker | None, rounds: int, n: int) -> None:
    from robustness.core.prompts import default_spec

    specs = [default_spec(item) for item in load("mmlu")[:n]]
    work = []
    for start in range(0, len(specs), 50):
        part = specs[start : start + 50]
        chunk: dict[str, Any] = {
            "letter (this)": ([s.render() for s in part], [list(s.labels) for s in part]),
            "cloze (this)": [(s.render(), " " + o) for s in part for o in s.options],
        }
        if old is not None:
            chunk["cloze (main)"] = chunk["cloze (this)"]
        work.append(chunk)
    paths = {"letter (this)": (new, "score_options"), "cloze (this)": (new, "loglikelihood")}
    if old is not None:
        paths["cloze (main)"] = (old, "loglikelihood")
    result = side_by_side(
        f"letter vs cloze: {len(specs)} MMLU items, plain prompt", paths, work, rounds
    )
    rates = report(result, len(specs), "q")
    print(
        f"   cloze / letter (this) = {ratio(result, rates, 'cloze (this)', 'letter (this)')}"
        "   (target >= 0.85x)"
    )
    if old is not None:
        print(f"   cloze this / main     = {ratio(result, rates, 'cloze (this)', 'cloze (main)')}")
        out = result["outputs"]
        print(
            "   max |loglik this - main| = "
            f"{max_diff(out['cloze (this)'], out['cloze (main)']):.2e}"
        )
        picks = 0
        for i in range(len(specs)):
            a = [x[0] / x[1] for x in out["cloze (this)"][4 * i : 4 * i + 4]]
            b = [x[0] / x[1] for x in out["cloze (main)"][4 * i : 4 * i + 4]]
            picks += a.index(max(a)) != b.index(max(b))
        print(f"   picks that differ (length-normalised): {picks} of {len(specs)}")


def bench_fewshot(new: Worker, rounds: int, n: int) -> None:
    from robustness.core.prompts import Exemplar, default_spec

    zero, three = [], []
    for name in ("mmlu", "arc_challenge"):
        items = load(name)
        shots = [
            Exemplar(question=it.question, options=it.options, answer=int(it.answer))
            for it in items[-3:]
        ]
        zero.append([default_spec(it) for it in items[: n // 2]])
        three.append([default_spec(it, shots) for it in items[: n // 2]])
    mix = lambda cols: [c[i] for i in range(n // 2) for c in cols]  # noqa: E731
    zs, fs = mix(zero), mix(three)
    work = []
    for start in range(0, len(zs), 48):
        z, f = zs[start : start + 48], fs[start : start + 48]
        work.append(
            {
                "zero-shot": ([s.messages() for s in z], [list(s.labels) for s in z]),
                "3-shot": ([s.messages() for s in f], [list(s.labels) for s in f]),
            }
        )
    paths = {"zero-shot": (new, "score_options"), "3-shot": (new, "score_options")}
    result = side_by_side(
        f"choice mode, chat prompts: {len(zs)} MMLU + ARC items", paths, work, rounds
    )
    rates = report(result, len(zs), "q")
    print(
        f"   3-shot / zero-shot = {ratio(result, rates, '3-shot', 'zero-shot')}   (target >= 0.8x)"
    )


def bench_posix(new: Worker, old: Worker, rounds: int, n: int) -> None:
    import numpy as np

    import robustness as rb
    from analyses.posix import posix
    from robustness.answers import prompt_for
    from robustness.core.items import demo_items, per_dataset
    from robustness.core.names import FAMILY_ORDER

    items = per_dataset(demo_items(), max(1, n // 4))[:n]
    variants = rb.perturb(items, families=list(FAMILY_ORDER), n=2, seed=0)
    groups: dict[str, list[Any]] = {}
    for v in variants:
        groups.setdefault(v.item_id, []).append(prompt_for(v, True))
    work = []
    for prompts in groups.values():
        generated = new.call("generate", (prompts, 12))[1]
        responses = [text or "A" for text in generated]
        pairs = [(p, r) for p in prompts for r in responses]
        work.append({"posix (this)": pairs, "posix (main)": pairs})
    sizes = sorted({len(p) for p in groups.values()})
    paths = {"posix (this)": (new, "loglikelihood"), "posix (main)": (old, "loglikelihood")}
    result = side_by_side(
        f"POSIX: {len(work)} demo items x {sizes} prompts, N x N pairs", paths, work, rounds
    )
    rates = report(result, len(work), "items")
    print(
        f"   this / main = {ratio(result, rates, 'posix (this)', 'posix (main)')}   (target >= 2x)"
    )
    out = result["outputs"]
    print(f"   max |loglik this - main| = {max_diff(out['posix (this)'], out['posix (main)']):.2e}")
    psi, offset = [], 0
    for chunk in work:
        k = round(len(chunk["posix (this)"]) ** 0.5)
        pair = []
        for name in ("posix (this)", "posix (main)"):
            cells = out[name][offset : offset + k * k]
            ll = np.array([c[0] for c in cells]).reshape(k, k)
            lengths = np.diag(np.array([float(c[1]) for c in cells]).reshape(k, k))
            pair.append(posix(ll, lengths))
        psi.append(abs(pair[0] - pair[1]))
        offset += k * k
    print(f"   max |psi this - main| = {max(psi):.2e}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="letter,fewshot,posix")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--baseline", default="main", help="git revision to compare against")
    parser.add_argument("--n-letter", type=int, default=200)
    parser.add_argument("--n-fewshot", type=int, default=96)
    parser.add_argument("--n-posix", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()
    if not (DATA / "mmlu.jsonl").is_file():
        print(f"bench/cloze.py: skipped, shared data not found in {DATA}")
        return 0
    tasks = set(args.only.split(","))
    model = str(embedded_folder())
    common = ("--kind", "robustness", "--model", model, "--batch-size", str(args.batch_size))
    started = time.perf_counter()
    new = Worker(sys.executable, *common, "--root", str(ROOT))
    old = None
    if tasks & {"letter", "posix"}:
        baseline = export_revision(args.baseline)
        old = Worker(sys.executable, *common, "--root", str(baseline))
        print(f"baseline: {args.baseline} exported to {baseline}")
    print(f"model {model}, batch {args.batch_size}, fp32 CPU; workers: {new.info}")
    print(f"started in {time.perf_counter() - started:.0f} s; cores {os.cpu_count()}")
    if "letter" in tasks:
        bench_letter(new, old, args.rounds, args.n_letter)
    if "fewshot" in tasks:
        bench_fewshot(new, args.rounds, args.n_fewshot)
    if "posix" in tasks and old is not None:
        bench_posix(new, old, args.rounds, args.n_posix)
    for worker in (new, old):
        if worker is not None:
            worker.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
