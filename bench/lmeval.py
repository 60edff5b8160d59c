"""Cloze scoring against lm-evaluation-harness, side by side in one run (issue 29's second
target: at least 2x lm-eval's cloze rate).

Run: ``.venv/bin/python bench/lmeval.py [--rounds 2] [--n 200]``. lm-eval runs in its own
environment, ``.venv-lmeval`` (built by ``make lmeval-env`` when it is missing: torch 2.13.0, then
lm-eval 0.4.13 with its hf extra on the transformers version of ``.venv``).

Both sides get the same 200 MMLU items, the same prompt text (the plain rendered prompt) and
the same continuations (each option after a space), the embedded SmolLM2-135M-Instruct folder,
fp32 on the CPU, batch 16, the threads torch picks with ``OMP_WAIT_POLICY=PASSIVE``: this
toolkit's ``loglikelihood`` and lm-eval's ``HFLM.loglikelihood`` (its model layer, without the
task pipeline around it, which only adds time on its side), each in a worker process
(``bench/workers.py``), chunk by chunk in rotating order. Printed: questions per second of
the median round, the ratio, and the largest difference between the two sides' log-likelihoods
(the same numbers up to float32 noise when both tokenise alike). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from cloze import DATA, load, ratio, report, side_by_side  # noqa: E402
from workers import Worker, embedded_folder  # noqa: E402

LMEVAL_PYTHON = ROOT / ".venv-lmeval" / "bin" / "python"


def ensure_lmeval() -> Path:
    """The Python of the lm-eval environment, built with ``make lmeval-env`` when missing."""
    probe = [str(LMEVAL_PYTHON), "-c", "import lm_eval.models.huggingface"]
    if LMEVAL_PYTHON.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return LMEVAL_PYTHON
    print("building .venv-lmeval (make lmeval-env) ...", flush=True)
    subprocess.run(["make", "-C", str(ROOT), "lmeval-env"], check=True)
    return LMEVAL_PYTHON


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()
    if not (DATA / "mmlu.jsonl").is_file():
        print(f"bench/lmeval.py: skipped, shared data not found in {DATA}")
        return 0
    from robustness.core.prompts import default_spec

    python = ensure_lmeval()
    model = str(embedded_folder())
    size = ("--model", model, "--batch-size", str(args.batch_size))
    started = time.perf_counter()
    ours = Worker(sys.executable, "--kind", "robustness", "--root", str(ROOT), *size)
    theirs = Worker(python, "--kind", "lmeval", *size)
    print(f"model {model}; ours {ours.info}; lm-eval {theirs.info}")
    print(f"started in {time.perf_counter() - started:.0f} s; cores {os.cpu_count()}")
    specs = [default_spec(item) for item in load("mmlu")[: args.n]]
    work = []
    for start in range(0, len(specs), 50):
        pairs = [(s.render(), " " + o) for s in specs[start : start + 50] for o in s.options]
        work.append({"cloze (this)": pairs, "cloze (lm-eval)": pairs})
    paths = {"cloze (this)": (ours, "loglikelihood"), "cloze (lm-eval)": (theirs, "loglikelihood")}
    title = f"cloze: {len(specs)} MMLU items, plain prompt, option texts"
    result = side_by_side(title, paths, work, args.rounds)
    rates = report(result, len(specs), "q")
    print(f"   this / lm-eval = {ratio(result, rates, 'cloze (this)', 'cloze (lm-eval)')}")
    print("   (target >= 2x)")
    a, b = result["outputs"]["cloze (this)"], result["outputs"]["cloze (lm-eval)"]
    diff = max(abs(x[0] - y[0]) for x, y in zip(a, b, strict=True))
    picks = 0
    for i in range(len(specs)):
        mine = [x[0] for x in a[4 * i : 4 * i + 4]]
        other = [y[0] for y in b[4 * i : 4 * i + 4]]
        picks += mine.index(max(mine)) != other.index(max(other))
    print(f"   max |loglik this - lm-eval| = {diff:.2e}; unnormalised picks differing: {picks}")
    ours.close()
    theirs.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
