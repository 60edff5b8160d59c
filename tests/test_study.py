"""Study files: parsing, defaults, relative paths and one clear error per mistake."""

from __future__ import annotations

import pytest

from robustness.core.errors import StudyError
from robustness.study import load_study, study_from_dict

FULL = """
[study]
name = "types"
seed = 3
items = ["items/a.jsonl"]
families = ["option_order", "framing"]
n_variants = 2
shots = 1
items_per_dataset = 7

[perturbations.framing]

[[models]]
name = "tiny"
backend = "hf"
model = "models/tiny"
mode = "cloze"
batch_size = 4

[[models]]
name = "smol"
mode = "generate"
max_new_tokens = 8

[output]
table = "results/types.parquet"
"""


def write(tmp_path, text):
    path = tmp_path / "study.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_full_study_file(tmp_path):
    cfg = load_study(write(tmp_path, FULL))
    assert cfg.name == "types" and cfg.seed == 3 and cfg.shots == 1
    assert cfg.items_per_dataset == 7
    assert cfg.families == ("option_order", "framing") and cfg.n_variants == 2
    assert [m.name for m in cfg.models] == ["tiny", "smol"]
    assert cfg.models[0].mode == "cloze" and cfg.models[0].batch_size == 4
    assert cfg.models[1].model == "embedded" and cfg.models[1].max_new_tokens == 8
    assert cfg.table_path == tmp_path / "results" / "types.parquet"
    assert cfg.cache_path == tmp_path / "results" / "types.cache.sqlite"
    assert cfg.path(cfg.items[0]) == tmp_path / "items" / "a.jsonl"
    assert cfg.to_dict()["models"][0]["model"] == "models/tiny"


def test_an_empty_study_runs_the_demo_with_the_embedded_model(tmp_path):
    cfg = load_study(write(tmp_path, ""))
    assert cfg.items == () and len(cfg.families) == 8
    (m,) = cfg.models
    assert (m.backend, m.model, m.mode, m.dtype) == ("hf", "embedded", "choice", "float32")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[study]\nn_variant = 3\n",
            r"unknown key 'n_variant' in \[study\]; did you mean "
            r"'n_variants'\?",
        ),
        (
            "[[models]]\nbackend = 'hf'\nmdoe = 'choice'\n",
            r"unknown key 'mdoe' in \[\[models\]\] "
            r"#1; did you mean 'mode'",
        ),
        ("[[models]]\nmode = 'logits'\n", "unknown mode 'logits'"),
        ("[[models]]\nbackend = 'tgi'\n", "unknown backend 'tgi'"),
        ("[[models]]\ndtype = 'int4'\n", "unknown dtype 'int4'"),
        ("[study]\nfamilies = ['option_order', 'typo']\n", "unknown perturbation family 'typo'"),
        ("[study]\nn_variants = -1\n", "n_variants must be a whole number"),
        ("[outputs]\ntable = 'x'\n", r"unknown key 'outputs' in the file; did you mean 'output'"),
        ("[[models]]\nname = 'a'\n[[models]]\nname = 'a'\n", "share the name 'a'"),
        (
            "[study]\nfamilies = ['framing']\n[perturbations.option_order]\n",
            r"\[perturbations.option_order\] names a family the study does not run",
        ),
        ("[study\n", "not valid TOML"),
    ],
)
def test_mistakes_stop_with_one_sentence(tmp_path, text, message):
    with pytest.raises(StudyError, match=message) as info:
        load_study(write(tmp_path, text))
    assert "\n" not in str(info.value)


def test_missing_file():
    with pytest.raises(StudyError, match="no such study file"):
        load_study("/nonexistent/study.toml")


def test_dict_interface_matches_the_file(tmp_path):
    import tomllib

    assert study_from_dict(tomllib.loads(FULL), base_dir=tmp_path) == load_study(
        write(tmp_path, FULL)
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[study]\nfamilies = ['spelling_noise']\n[perturbations.spelling_noise]\nratee = 0.2\n",
            r"\[perturbations.spelling_noise\] has no parameter 'ratee'; it takes min_length, rate",
        ),
        ("[output]\ntable = 'out/t.csv'\n", r"table 'out/t.csv' must end in .parquet"),
    ],
)
def test_more_mistakes_caught_when_the_file_is_read(tmp_path, text, message):
    with pytest.raises(StudyError, match=message):
        load_study(write(tmp_path, text))


def test_unnamed_studies_get_their_own_table_and_cache(tmp_path):
    a = tmp_path / "alpha.toml"
    b = tmp_path / "beta.toml"
    a.write_text("")
    b.write_text("")
    ca, cb = load_study(a), load_study(b)
    assert (ca.name, cb.name) == ("alpha", "beta")
    assert ca.table_path != cb.table_path and ca.cache_path != cb.cache_path
    assert ca.table_path.is_absolute()
