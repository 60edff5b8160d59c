"""Study files from the fuzz campaign of issue 17: wrong types, huge values, unreadable files,
and ``[[items]]`` sources with a column mapping."""

from __future__ import annotations

import json
import os

import pytest

from robustness.core.errors import StudyError
from robustness.core.items import per_dataset
from robustness.run import study_items
from robustness.study import MAX_VARIANTS, load_study, load_study_items, study_from_dict


def write(tmp_path, text: str | bytes):
    path = tmp_path / "study.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("study = 5\n", r"\[study\] must be a table .* got 5"),
        ("[study]\nitems = 5\n", r"\[study\] items must be a path or a list of paths, got 5"),
        ("[study]\nitems = [1, 2]\n", r"items must be a path or a list of paths"),
        ("[study]\nfamilies = 3\n", r"families must be .* got 3"),
        ("[study]\nfamilies = [['framing']]\n", r"families must be"),
        ("[study]\nname = ['a']\n", r"\[study\] name must be text, got \['a'\]"),
        ("[study]\nn_variants = 1000000\n", r"n_variants must be a whole number between 0 and "),
        ("[study]\nn_variants = 2.5\n", r"n_variants must be a whole number, got 2\.5"),
        ("[study]\nseed = 99999999999999999999999\n", r"seed must be a whole number >= 0"),
        ("[study]\nshots = 1000\n", r"shots must be a whole number between 0 and 64"),
        ("models = 3\n", r"\[\[models\]\] must be tables, got 3"),
        ("models = [3]\n", r"\[\[models\]\] #1 must be a table"),
        ("[[models]]\nname = 3\n", r"model name must be text, got 3"),
        ("[[models]]\nmode = ['choice']\n", r"mode must be text"),
        ("[[models]]\nbatch_size = 'big'\n", r"batch_size must be a whole number, got 'big'"),
        ("[[models]]\nbatch_size = 0\n", r"batch_size must be a whole number between 1"),
        ("[[models]]\noptions = 4\n", r"options must be a table"),
        ("[[models]]\nchat = 'maybe'\n", r"unknown chat 'maybe'"),
        ("[output]\ntable = 7\n", r"\[output\] table must be text, got 7"),
        ("[output]\ncache = []\n", r"\[output\] cache must be text"),
        ("perturbations = 1\n", r"\[perturbations\] must be a table"),
        ("[perturbations]\nframing = 1\n", r"\[perturbations.framing\] must be a table"),
        ("[perturbations.spelling_noise]\nrate = 'high'\n", r"rate must be a number, got 'high'"),
        ("[perturbations.spelling_noise]\nrate = 7\n", r"rate must be above 0.0 and at most 1"),
        ("[perturbations.spelling_noise]\nrate = 0.0\n", r"rate must be above 0.0"),
        ("[perturbations.spelling_noise]\nrate = nan\n", r"rate must be above"),
        ("[perturbations.lexical_substitution]\nmax_substitutions = 0\n", r"between 1 and 1,000"),
        ("[perturbations.spelling_noise]\nmin_length = 2.5\n", r"must be a whole number"),
        ("[perturbations.lexical_substitution]\ninstruction = 1\n", r"true or false, got 1"),
        ("[perturbations.paraphrase]\noversample = 1000000\n", r"oversample must be between"),
        ("[perturbations.option_order]\nshuffle_ordinal = 'yes'\n", r"true or false"),
        ("[[items]]\nmapping = {}\n", r"\[\[items\]\] #1 needs a path"),
        ("[[items]]\npath = 3\n", r"\[\[items\]\] #1 path must be text"),
        ("[[items]]\npath = 'a.csv'\nmaping = {}\n", r"did you mean 'mapping'"),
        ("[[items]]\npath = 'a.csv'\nmapping = {quest = 'q'}\n", r"unknown field 'quest'"),
        ("[[items]]\npath = 'a.csv'\nmapping = {options = [1]}\n", r"must list column names"),
        ("[[items]]\npath = 'a.csv'\ndataset_type = 'opinion'\n", r"unknown value 'opinion'"),
        ("[study]\nitems = 'a'\n" + "x = " + "[" * 5000 + "]" * 5000 + "\n", r"not valid TOML"),
    ],
)
def test_wrong_types_and_ranges_stop_at_load(tmp_path, text, message):
    with pytest.raises(StudyError, match=message) as info:
        load_study(write(tmp_path, text))
    assert "\n" not in str(info.value) and str(tmp_path) in str(info.value)


def test_the_variant_limit_is_named():
    assert MAX_VARIANTS == 1000
    study_from_dict({"study": {"n_variants": MAX_VARIANTS}})
    with pytest.raises(StudyError, match="1,000"):
        study_from_dict({"study": {"n_variants": MAX_VARIANTS + 1}})


def test_non_utf8_study_file_and_a_folder(tmp_path):
    with pytest.raises(StudyError, match=r"byte 10 is not valid UTF-8"):
        load_study(write(tmp_path, b"[study]\n#\xff\n"))
    with pytest.raises(StudyError, match="is a folder"):
        load_study(tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_unreadable_study_file(tmp_path):
    path = write(tmp_path, "")
    path.chmod(0)
    with pytest.raises(StudyError, match="cannot be read"):
        load_study(path)


SURVEY = """statement,o1,o2,o3,kind
Taxes should be lower.,Disagree,Neutral,Agree,x
"Question [1, 2]",No,Maybe,Yes,x
"""
QUIZ = '{"question": "2+2?", "options": ["3", "4"], "answer": 1, "dataset_type": "objective"}\n'


def test_items_tables_take_a_column_mapping(tmp_path):
    (tmp_path / "survey.csv").write_text(SURVEY, encoding="utf-8")
    (tmp_path / "quiz.jsonl").write_text(QUIZ, encoding="utf-8")
    path = write(
        tmp_path,
        '[study]\nitems = ["quiz.jsonl"]\n\n[[items]]\npath = "survey.csv"\n'
        'mapping = { question = "statement", options = ["o1", "o2", "o3"] }\n'
        'dataset = "survey"\ndataset_type = "subjective"\n',
    )
    cfg = load_study(path)
    assert cfg.items == ("quiz.jsonl", "survey.csv")
    items = load_study_items(cfg)
    assert [i.dataset for i in items] == ["quiz", "survey", "survey"]
    assert items[1].options == ("Disagree", "Neutral", "Agree") and items[1].meta["kind"] == "x"
    assert items[2].question == "Question [1, 2]"
    assert cfg.to_dict()["items"][1]["mapping"]["options"] == ["o1", "o2", "o3"]
    # the mapped source round-trips through the stored configuration
    again = study_from_dict({"study": {}, "items": cfg.to_dict()["items"][1:]}, base_dir=tmp_path)
    assert len(load_study_items(again)) == 2
    stored = study_from_dict({"study": {"items": cfg.to_dict()["items"]}}, base_dir=tmp_path)
    assert stored.sources == cfg.sources


def test_items_per_dataset_stratifies_by_dataset_type(tmp_path):
    def record(i: int, kind: str) -> str:
        options = ["a", "b"] if kind == "objective" else ["Agree", "Disagree"]
        return json.dumps(
            {
                "item_id": f"{kind}{i}",
                "question": f"q{i}?",
                "options": options,
                "answer": 0 if kind == "objective" else None,
                "dataset_type": kind,
                "dataset": f"mixed-{kind}",
            }
        )

    lines = [record(i, "objective") for i in range(6)] + [record(i, "subjective") for i in range(4)]
    (tmp_path / "both.jsonl").write_text("\n".join(lines), encoding="utf-8")
    cfg = load_study(write(tmp_path, '[study]\nitems = "both.jsonl"\nitems_per_dataset = 2\n'))
    chosen = study_items(cfg)
    kinds = [i.dataset_type for i in chosen]
    assert kinds.count("objective") == 2 and kinds.count("subjective") == 2
    assert per_dataset(chosen, 1) == [chosen[0], chosen[2]]


def test_an_item_in_two_sources_is_refused(tmp_path):
    twin = QUIZ.replace("{", '{"item_id": "q1", ', 1)
    (tmp_path / "a.jsonl").write_text(twin, encoding="utf-8")
    (tmp_path / "b.jsonl").write_text(twin, encoding="utf-8")
    cfg = load_study(
        write(
            tmp_path,
            '[[items]]\npath = "a.jsonl"\ndataset = "d"\n'
            '[[items]]\npath = "b.jsonl"\ndataset = "d"\n',
        )
    )
    with pytest.raises(StudyError, match=r"item 'q1' of dataset 'd' is also in"):
        load_study_items(cfg)


def test_the_python_api_bounds_n_variants_too():
    import robustness as rb

    with pytest.raises(StudyError, match="from 0 to 1,000, got 1000000"):
        rb.perturb(rb.demo_items()[:1], "framing", n=1_000_000)
    with pytest.raises(StudyError, match="model path or id must be text, got 5"):
        rb.model(5)
