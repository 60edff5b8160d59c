"""lm-eval 0.4.13 itself on the embedded model, over prompts our ``perturb`` rendered; then
``robustness import lm-eval``, ``validate`` and ``analyze`` on its real ``--log_samples`` output.

The shared MMLU items are perturbed (original, option_order, formatting); each (family,
variant) becomes one lm-eval YAML task over a JSONL of those exact prompts, the choices in
canonical order, so lm-eval's argmax index is our canonical answer. lm-eval runs in
``.venv-lmeval`` (``make lmeval-env``) as a subprocess: ``--model hf`` on the converted
embedded SmolLM2 folder, fp32 on the CPU. Our side scores the same (prompt, " " + option)
pairs with the hf runner's ``loglikelihood`` and picks the argmax of the summed
log-likelihoods, lm-eval's ``acc`` rule. (Our ``cloze`` mode divides by the option's token
count; lm-eval logs no token counts, so the comparison uses the unnormalised rule on both
sides.) Checked: lm-eval's contexts are our rendered prompts byte for byte; its picks agree
with ours on at least 99% of prompts (every disagreement printed with both log-likelihoods);
where the answers agree, agreement and the GEE's Wald table are identical.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
LMEVAL_PYTHON = REPO / ".venv-lmeval" / "bin" / "python"
N_ITEMS = 20
FAMILIES = ("option_order", "formatting")

pytestmark = [pytest.mark.lmeval, pytest.mark.slow]


def _lmeval_python() -> Path:
    probe = [str(LMEVAL_PYTHON), "-c", "import lm_eval, lm_eval.models.huggingface"]
    if not (LMEVAL_PYTHON.exists() and subprocess.run(probe, capture_output=True).returncode == 0):
        subprocess.run(["make", "-C", str(REPO), "lmeval-env"], check=True)
    return LMEVAL_PYTHON


def _task_yaml(name: str, data: Path) -> str:
    return "\n".join(
        [
            f"task: {name}",
            "dataset_path: json",
            "dataset_kwargs:",
            "  data_files:",
            f"    test: {json.dumps(str(data))}",
            "test_split: test",
            "output_type: multiple_choice",
            "doc_to_text: prompt",
            "doc_to_choice: options",
            "doc_to_target: gold",
            'target_delimiter: " "',
            "metric_list:",
            "  - metric: acc",
            "",
        ]
    )


@pytest.fixture(scope="module")
def study(shared_items, tmp_path_factory):
    import robustness as rb
    from robustness.runners.embedded import ensure_converted

    python = _lmeval_python()
    items = [i for i in shared_items if i.dataset == "mmlu"][:N_ITEMS]
    variants = rb.perturb(items, families=list(FAMILIES), n=2, seed=0)
    root = tmp_path_factory.mktemp("lmeval")
    tasks: dict[str, list] = {}
    for v in variants:
        tasks.setdefault(f"rb_{v.variant_id.replace('/', '_')}", []).append(v)
    task_dir, task_map = root / "tasks", []
    task_dir.mkdir()
    for name, group in tasks.items():
        assert [v.item.item_id for v in group] == [i.item_id for i in items]  # doc_id = position
        docs = []
        for v in group:
            canonical = [None] * len(v.spec.options)
            for pos, text in enumerate(v.spec.options):
                canonical[v.canonical_at(pos)] = text
            docs.append({"prompt": v.spec.render(), "options": canonical, "gold": v.item.answer})
        data = task_dir / f"{name}.jsonl"
        data.write_text("".join(json.dumps(d) + "\n" for d in docs))
        (task_dir / f"{name}.yaml").write_text(_task_yaml(name, data))
        category, variant = group[0].variant_id.split("/")
        task_map.append(
            f'[tasks.{name}]\ndataset = "mmlu"\ndataset_type = "objective"\n'
            f'category = "{category}"\nvariant = {variant}\n'
        )
    (root / "map.toml").write_text("\n".join(task_map))
    folder = ensure_converted().path
    env = {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "OMP_NUM_THREADS": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    command = [
        str(python),
        "-m",
        "lm_eval",
        "--model",
        "hf",
        "--model_args",
        f"pretrained={folder},dtype=float32",
        "--tasks",
        ",".join(tasks),
        "--include_path",
        str(task_dir),
        "--output_path",
        str(root / "out"),
        "--log_samples",
        "--device",
        "cpu",
        "--batch_size",
        "8",
    ]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1500)
    assert done.returncode == 0, done.stderr[-3000:]
    return {"root": root, "variants": variants, "items": items, "folder": folder}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "robustness.cli", *args],
        capture_output=True,
        text=True,
        timeout=1200,
    )


@pytest.fixture(scope="module")
def imported(study):
    out = study["root"] / "imported.parquet"
    done = _cli(
        "import",
        "lm-eval",
        str(study["root"] / "out"),
        "--out",
        str(out),
        "--map",
        str(study["root"] / "map.toml"),
    )
    assert done.returncode == 0, done.stderr
    from robustness.core.table import read_table

    return out, read_table(out)


@pytest.fixture(scope="module")
def ours(study):
    """Our hf runner's log-likelihoods of the same pairs, as a long table (raw argmax)."""
    from robustness.runners.hf import HFRunner

    runner = HFRunner.from_pretrained(study["folder"], batch_size=8)
    rows, pairs = [], []
    for v in study["variants"]:
        for c in range(len(v.spec.options)):
            pos = next(p for p in range(len(v.spec.options)) if v.canonical_at(p) == c)
            pairs.append((v.spec.render(), " " + v.spec.options[pos]))
    scores = [r.logprob for r in runner.loglikelihood(pairs)]
    at = 0
    for v in study["variants"]:
        k = len(v.spec.options)
        mine = scores[at : at + k]
        at += k
        answer = int(np.argmax(mine))
        rows.append(
            {
                "model": "ours",
                "dataset": "mmlu",
                "dataset_type": "objective",
                "item_id": v.item.item_id,
                "category": v.category,
                "variant_id": v.variant_id,
                "answer": answer,
                "valid": True,
                "gold": v.item.answer,
                "correct": answer == v.item.answer,
                "logliks": mine,
            }
        )
    return pd.DataFrame(rows)


def _aligned(study, imported_table: pd.DataFrame) -> pd.DataFrame:
    ids = {str(k): item.item_id for k, item in enumerate(study["items"])}
    return imported_table.assign(item_id=imported_table["item_id"].map(ids))


def test_lmeval_scored_our_exact_prompts(study, imported):
    _, table = imported
    rendered = {(v.item.item_id, v.variant_id): v.spec.render() for v in study["variants"]}
    theirs = _aligned(study, table)
    assert len(theirs) == len(rendered)
    for row in theirs.itertuples():
        assert row.prompt == rendered[(row.item_id, row.variant_id)], row.variant_id


def test_picks_agree_and_disagreements_are_shown(study, imported, ours):
    theirs = _aligned(study, imported[1]).set_index(["item_id", "variant_id"])
    mine = ours.set_index(["item_id", "variant_id"]).loc[theirs.index]
    same = theirs["answer"].to_numpy() == mine["answer"].to_numpy()
    for key in theirs.index[~same]:
        print(
            f"disagreement {key}: lm-eval {theirs.loc[key, 'logliks']} "
            f"(pick {theirs.loc[key, 'answer']}); ours {mine.loc[key, 'logliks']} "
            f"(pick {mine.loc[key, 'answer']})"
        )
    gap = max(
        np.abs(np.array(json.loads(a)) - np.array(b)).max()
        for a, b in zip(theirs["logliks"], mine["logliks"], strict=True)
    )
    print(f"{same.sum()} of {same.size} picks agree; max |loglik difference| = {gap:.2e}")
    assert same.mean() >= 0.99


def test_agreement_and_gee_identical_where_answers_agree(study, imported, ours):
    import analyses as an

    theirs = _aligned(study, imported[1])
    key = ["item_id", "variant_id"]
    both = theirs.merge(ours[[*key, "answer"]], on=key, suffixes=("", "_ours"))
    bad_items = set(both.loc[both["answer"] != both["answer_ours"], "item_id"])
    cols = [
        "model",
        "dataset",
        "dataset_type",
        "item_id",
        "category",
        "variant_id",
        "answer",
        "valid",
        "gold",
        "correct",
    ]
    a = theirs[~theirs["item_id"].isin(bad_items)][cols].assign(model="m")
    b = ours[~ours["item_id"].isin(bad_items)][cols].assign(model="m")
    a = a.sort_values(key).reset_index(drop=True)
    b = b.sort_values(key).reset_index(drop=True).astype(a.dtypes.to_dict())
    pd.testing.assert_frame_equal(an.agreement_table(a), an.agreement_table(b))
    formula = "agree ~ category"
    wa, wb = an.gee(a, formula).wald(type=2), an.gee(b, formula).wald(type=2)
    pd.testing.assert_frame_equal(wa, wb)
    print(wa.to_string())


def test_validate_and_analyze_end_to_end(study, imported):
    path, _ = imported
    done = _cli("validate", str(path))
    assert done.returncode == 0, done.stderr
    out = study["root"] / "analysis"
    done = _cli("analyze", str(path), "-o", str(out), "--min-items", "5")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "## Multi-prompt accuracy" in (out / "report.md").read_text()
    mp = pd.read_csv(out / "tables" / "multi_prompt.csv")
    assert set(mp["scope"]) == {"option_order", "formatting", "all prompts"}
    print(mp[["scope", "n_prompts", "mean", "max", "min", "cps", "worst_case"]].to_string())
