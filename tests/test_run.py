"""Whole studies: the three modes on a tiny model on disk, resume after SIGKILL, the real model."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import robustness as rb
from robustness.cli import app
from robustness.core.table import read_metadata, read_table

FAMILIES = ["option_order", "label_substitution", "formatting", "framing", "logical_equivalence"]


def study_file(
    tmp_path: Path,
    folder: Path,
    *,
    models: list[dict],
    items: int = 3,
    families=FAMILIES,
    n: int = 2,
) -> Path:
    lines = [
        "[study]",
        'name = "t"',
        "seed = 1",
        f"families = {list(families)!r}".replace("'", '"'),
        f"n_variants = {n}",
        "",
        "[output]",
        'table = "out/t.parquet"',
        "",
    ]
    for m in models:
        lines.append("[[models]]")
        lines.append(f'model = "{folder}"')
        lines += [f"{k} = {v!r}".replace("'", '"') for k, v in m.items()]
    path = tmp_path / "study.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_three_modes_make_one_valid_table_with_metadata(tmp_path, tiny_folder):
    models = [
        {"name": "c", "mode": "choice", "batch_size": 4},
        {"name": "z", "mode": "cloze", "batch_size": 4},
        {"name": "g", "mode": "generate", "batch_size": 4, "max_new_tokens": 3},
    ]
    config = rb.load_study(study_file(tmp_path, tiny_folder, models=models))
    table, meta = rb.run_study(config, limit=3, noise_floor=4)
    n_variants = meta["n_variants"]
    assert len(table) == 3 * n_variants
    disk = read_table(config.table_path)
    assert len(disk) == len(table) and set(disk["mode"]) == {"choice", "cloze", "generate"}
    on_disk = read_metadata(config.table_path)
    assert on_disk["study"]["name"] == "t" and on_disk["version"] == rb.__version__
    assert on_disk["models"]["c"]["runner"]["dtype"] == "float32"
    assert on_disk["models"]["c"]["runner"]["batch_size"] == 4
    assert on_disk["models"]["c"]["noise_floor"]["k"] == 4
    choice = disk[disk["mode"] == "choice"]
    assert choice["valid"].all() and choice["confidence"].between(0, 1).all()
    assert choice["option_probs"].map(lambda p: abs(sum(p) - 1) < 1e-6).all()
    gen = disk[disk["mode"] == "generate"]
    assert (~gen["valid"]).sum() > 0  # random weights rarely name a label: rows kept, not dropped
    assert (
        gen.loc[~gen["valid"], "invalid_reason"]
        .isin(["empty", "refusal", "ambiguous", "no_label"])
        .all()
    )


def test_a_repeated_run_makes_no_model_call(tmp_path, tiny_folder):
    config = rb.load_study(study_file(tmp_path, tiny_folder, models=[{"name": "c"}]))
    first, meta1 = rb.run_study(config, limit=2)
    second, meta2 = rb.run_study(config, limit=2)
    assert meta1["models"]["c"]["cache"]["model_calls"] > 0
    assert meta2["models"]["c"]["cache"]["model_calls"] == 0
    assert meta2["models"]["c"]["cache"]["hits"] == len(second)
    cols = ["item_id", "variant_id", "answer", "option_probs"]
    pd.testing.assert_frame_equal(first[cols], second[cols])
    _, meta3 = rb.run_study(config, limit=2, resume=False)
    assert meta3["models"]["c"]["cache"]["hits"] == 0


def cache_rows(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1) as conn:
            return conn.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


@pytest.mark.slow  # two runs of a model in child processes (about 20 s of CPU)
def test_sigkill_mid_run_then_resume_loses_and_duplicates_nothing(tmp_path, tiny_folder):
    exe = str(Path(sys.executable).with_name("robustness"))
    models = [{"name": "c", "batch_size": 1}]
    killed_dir, clean_dir = tmp_path / "killed", tmp_path / "clean"
    killed_dir.mkdir()
    clean_dir.mkdir()
    killed = study_file(killed_dir, tiny_folder, models=models, n=3)
    clean = study_file(clean_dir, tiny_folder, models=models, n=3)
    cache = killed_dir / "out" / "t.cache.sqlite"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [exe, "run", str(killed), "--limit", "6"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while cache_rows(cache) < 10 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    stored = cache_rows(cache)
    assert stored >= 10
    assert not (killed_dir / "out" / "t.parquet").exists()
    # resume, and an uninterrupted run for comparison
    for study in (killed, clean):
        subprocess.run(
            [exe, "run", str(study), "--limit", "6"], env=env, check=True, capture_output=True
        )
    a = read_table(killed_dir / "out" / "t.parquet")
    b = read_table(clean_dir / "out" / "t.parquet")
    assert len(a) == len(b) and not a.duplicated(["item_id", "variant_id"]).any()
    cols = ["item_id", "category", "variant_id", "answer", "prompt_sha"]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    meta = read_metadata(killed_dir / "out" / "t.parquet")
    assert meta["models"]["c"]["cache"]["hits"] >= stored  # the killed run's work was reused


def test_cli_errors_are_one_line(tmp_path):
    bad = tmp_path / "s.toml"
    bad.write_text("[study]\nn_variant = 2\n")
    exe = str(Path(sys.executable).with_name("robustness"))
    done = subprocess.run([exe, "run", str(bad)], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "did you mean 'n_variants'" in done.stderr
    missing = tmp_path / "m.toml"
    missing.write_text('[[models]]\nmodel = "/nowhere/model"\n')
    done = subprocess.run([exe, "run", str(missing)], capture_output=True, text=True)
    assert done.returncode == 2 and "does not exist" in done.stderr


def test_validate_command(tmp_path, tiny_folder):
    config = rb.load_study(study_file(tmp_path, tiny_folder, models=[{"name": "c"}]))
    rb.run_study(config, limit=1, csv=True)
    result = CliRunner().invoke(app, ["validate", str(config.table_path.with_suffix(".csv"))])
    assert result.exit_code == 0 and "valid long table" in result.output
    broken = read_table(config.table_path)
    broken.loc[0, "dataset_type"] = "factual"
    broken.to_csv(tmp_path / "broken.csv", index=False)
    result = CliRunner().invoke(app, ["validate", str(tmp_path / "broken.csv")])
    assert result.exit_code != 0
    assert "column 'dataset_type', row 0" in str(result.exception)


@pytest.mark.slow
def test_real_embedded_model_end_to_end(tmp_path):
    study = tmp_path / "real.toml"
    study.write_text(
        '[study]\nname = "real"\nfamilies = ["option_order", "label_substitution"]\n'
        'n_variants = 2\n[[models]]\nname = "smol"\nmode = "choice"\n'
        '[[models]]\nname = "smol-gen"\nmode = "generate"\nmax_new_tokens = 8\n'
        '[output]\ntable = "real.parquet"\n'
    )
    result = CliRunner().invoke(app, ["run", str(study), "--limit", "3"])
    assert result.exit_code == 0, result.output
    table = read_table(tmp_path / "real.parquet")
    assert set(table["model"]) == {"smol", "smol-gen"}
    choice = table[table["model"] == "smol"]
    assert choice["valid"].all() and choice["confidence"].between(0, 1).all()
    assert (choice["answer"] == choice["gold"]).any()  # the model knows something
    meta = read_metadata(tmp_path / "real.parquet")
    assert meta["models"]["smol"]["runner"]["model_id"].startswith("embedded:")
    assert meta["models"]["smol"]["chat"] is True


def test_few_shot_exemplars_come_from_the_same_dataset_and_never_the_item(demo):
    from robustness.run import exemplars_for

    base = exemplars_for(demo, shots=2, seed=0)
    objective = [i for i in demo if i.dataset_type == "objective"]
    assert set(base) == {i.key for i in objective}  # subjective items have no gold to show
    by_question = {i.question: i for i in demo}
    for item in objective:
        spec = base[item.key]
        assert len(spec.exemplars) == 2
        for ex in spec.exemplars:
            source = by_question[ex.question]
            assert source.dataset == item.dataset and source.key != item.key
            assert source.n_options == item.n_options and ex.answer == source.answer
        text = spec.render()
        assert text.index(spec.exemplars[0].question) < text.index(item.question)
    again = exemplars_for(demo, shots=2, seed=0)
    assert all(again[k] == base[k] for k in base)
    assert any(exemplars_for(demo, shots=2, seed=1)[k] != base[k] for k in base)
    # variants of a few-shot study keep the exemplars and are counted in the table
    config = rb.StudyConfig(families=("option_order",), n_variants=1, shots=2)
    from robustness.run import study_variants

    variants = study_variants(config, objective[:2], pool=demo)
    assert len(variants) == 4 and all(len(v.spec.exemplars) == 2 for v in variants)


@pytest.mark.slow
@pytest.mark.shared_data
def test_reduced_types_study_example(tmp_path):
    """examples/types_study.toml, cut to 2 items per dataset and two families."""
    import tomllib

    from conftest import REPO, shared_paths

    from robustness.study import study_from_dict

    shared_paths()  # skips with a reason when ../shared/data is absent
    data = tomllib.loads((REPO / "examples" / "types_study.toml").read_text())
    data["study"].update(items_per_dataset=2, families=["option_order", "framing"], n_variants=1)
    data["output"]["table"] = str(tmp_path / "types.parquet")
    config = study_from_dict(data, base_dir=REPO / "examples")
    table, _ = rb.run_study(config)
    assert sorted(table["dataset"].unique()) == [
        "arc_challenge",
        "mmlu",
        "political_compass",
        "valuebench",
    ]
    assert table.groupby("dataset")["item_id"].nunique().eq(2).all()
    assert table["valid"].all() and set(table["category"]) == {
        "original",
        "option_order",
        "framing",
    }


@pytest.mark.slow
def test_cli_ray_flag_gives_the_same_table(tmp_path, tiny_folder):
    pytest.importorskip("ray", reason="ray is a dev extra: make test installs it")
    exe = str(Path(sys.executable).with_name("robustness"))
    tables = []
    for name, extra in (("plain", []), ("ray", ["--ray", "--workers", "2"])):
        folder = tmp_path / name
        folder.mkdir()
        study = study_file(folder, tiny_folder, models=[{"name": "c", "batch_size": 1}])
        done = subprocess.run(
            [exe, "run", str(study), "--limit", "3", *extra],
            capture_output=True,
            text=True,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
        )
        assert done.returncode == 0, done.stderr[-2000:]
        tables.append(read_table(folder / "out" / "t.parquet"))
        if extra:
            assert read_metadata(folder / "out" / "t.parquet")["ray"] == {
                "address": "local",
                "workers": 2,
            }
    cols = ["item_id", "variant_id", "answer", "option_probs"]
    a, b = (t.sort_values(["item_id", "variant_id"])[cols].reset_index(drop=True) for t in tables)
    pd.testing.assert_frame_equal(a, b)


def test_a_study_without_items_stops_before_loading_a_model(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    study = tmp_path / "s.toml"
    study.write_text(f'[study]\nitems = ["{empty}"]\n')  # the embedded model, never loaded
    exe = str(Path(sys.executable).with_name("robustness"))
    done = subprocess.run([exe, "run", str(study)], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert f"{empty}: the item file holds no items" in done.stderr  # named, issue 24
    done = subprocess.run(
        [exe, "perturb", "--families", "framing", "--param", "spelling_noise.rate=0.2"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "not among the families run" in done.stderr
    done = subprocess.run(
        [
            exe,
            "perturb",
            "--families",
            "spelling_noise",
            "--param",
            "spelling_noise.rate=abc",
            "--out",
            str(tmp_path / "v.jsonl"),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "rate and min_length must be numbers" in done.stderr
    done = subprocess.run(
        [exe, "analyze", str(tmp_path / "none.parquet"), "-o", "/dev/null/x"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1


# ----------------------------------------------------------------- one loop, one contract
def test_rb_run_is_silent_when_the_output_is_not_interactive(capfd):
    from helpers.fake_runner import FakeRunner

    variants = rb.perturb(rb.demo_items()[:2], families=["option_order"], n=2, seed=0)
    runner = FakeRunner(batch_size=2)
    table = rb.run(variants, [rb.model("fake", name="f", mode="choice")], runners={"f": runner})
    assert len(table) == len(variants) and table["valid"].all()
    out, err = capfd.readouterr()
    assert out == "" and err == ""  # pytest captures: not a terminal, so no bar
    assert not getattr(runner, "closed", False)  # a ready runner stays the caller's


def test_the_progress_bar_draws_on_an_interactive_console_only():
    import io

    from rich.console import Console

    from robustness.progress import auto_progress

    def draw(console: Console) -> str:
        with auto_progress(None, console) as update:
            if update is not None:
                update("model-x", 3, 4)
        return console.file.getvalue()  # type: ignore[attr-defined]

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    shown = draw(Console(file=Terminal(), force_terminal=True, force_interactive=True))
    assert "model-x" in shown and "3/4" in shown
    # a pipe stays quiet even when rich is told to colour it (FORCE_COLOR in a CI log).
    assert draw(Console(file=io.StringIO(), force_terminal=True, force_interactive=True)) == ""
    assert draw(Console(file=Terminal(), force_terminal=True, force_interactive=False)) == ""
    given = []
    with auto_progress(lambda *a: given.append(a)) as update:
        update("m", 1, 2)  # a caller's own callback is used as it is
    assert given == [("m", 1, 2)]


def test_runners_the_loop_opens_are_closed_and_every_runner_keeps_the_contract(tmp_path):
    from helpers.fake_runner import FakeRunner

    from robustness.executors import Local
    from robustness.runners import CachedRunner, Runner
    from robustness.runners.cached import MemoryCache
    from robustness.runners.openai import make_openai_runner

    opened: list[FakeRunner] = []

    def factory(model: rb.ModelConfig) -> FakeRunner:
        opened.append(FakeRunner(model_id=model.model))
        return opened[-1]

    variants = rb.perturb(rb.demo_items()[:2], families=["option_order"], n=1, seed=0)
    models = [rb.model("a", name="a"), rb.model("b", name="b", mode="generate")]
    info: dict = {}
    table = rb.run(variants, models, executor=Local(factory), info=info)
    assert [r.model_id for r in opened] == ["a", "b"] and all(r.closed for r in opened)
    assert set(table["model"]) == {"a", "b"} and info["a"]["chat"] is False
    assert info["b"]["cache"]["misses"] == len(variants)  # an in-memory cache without a file
    served = make_openai_runner("m", base_url="http://127.0.0.1:1/v1", chat="never")
    for runner in (FakeRunner(), served, CachedRunner(FakeRunner(), MemoryCache())):
        assert isinstance(runner, Runner)
    assert served.uses_chat is False
    assert make_openai_runner("m", base_url="http://127.0.0.1:1/v1").uses_chat is True
