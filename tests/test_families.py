"""The invariants every perturbation family must keep, on bundled, shared and random items.

- oracle round trip: a respondent that answers by content maps back to the canonical option;
- every displayed option appears once with its label, nothing dropped or duplicated;
- n distinct variants, different from the original;
- the same seed gives byte-identical variants, and a subset of items gets the same variants.
"""

from __future__ import annotations

import json
import math

import pytest
from helpers.oracle import assert_options_once, assert_round_trip
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import robustness as rb
from perturbations.base import REGISTRY, make_family
from perturbations.formatting import enumerate_formats, format_space
from perturbations.label_substitution import LABEL_SETS, roman
from perturbations.logical_equivalence import embed_clause
from perturbations.spelling_noise import PROTECTED
from robustness.core.names import FAMILY_ORDER
from robustness.core.prompts import default_spec
from robustness.core.seeding import family_rng

STRUCTURAL = (
    "option_order",
    "label_substitution",
    "spelling_noise",
    "formatting",
    "logical_equivalence",
    "framing",
)


def variants_of(items, families=STRUCTURAL, n=5, seed=0, **kw):
    return rb.perturb(items, families=families, n=n, seed=seed, **kw)


def check_all(variants):
    for v in variants:
        assert_options_once(v)
        assert_round_trip(v)


def test_every_family_is_registered_under_its_category_name():
    assert set(REGISTRY) == set(FAMILY_ORDER)
    for name in STRUCTURAL:
        assert make_family(name).name == name


def test_round_trip_on_demo_items(demo):
    check_all(variants_of(demo))


@pytest.mark.shared_data
def test_round_trip_on_every_shared_item(shared_items):
    check_all(variants_of(shared_items))


def test_each_family_gives_n_distinct_variants_unlike_the_original(demo):
    variants = variants_of(demo, n=5)
    by_item: dict = {}
    for v in variants:
        by_item.setdefault((v.item.key, v.category), []).append(v)
    for (key, category), vs in by_item.items():
        texts = [v.prompt() for v in vs]
        assert len(set(texts)) == len(texts), (key, category)
        if category == "original":
            continue
        original = by_item[(key, "original")][0].prompt()
        assert original not in texts, (key, category)
        item = vs[0].item
        expected = 5
        if category == "option_order":
            expected = min(5, math.factorial(item.n_options) - 1)  # every scale is shuffled
        if category == "logical_equivalence" and item.is_agree_scale:
            expected = 4  # four negation forms
        assert len(vs) == expected, (key, category, len(vs))
        assert [v.variant_id for v in vs] == [f"{category}/{i}" for i in range(expected)]


def records(variants):
    return "".join(json.dumps(v.to_record(), ensure_ascii=False) + "\n" for v in variants)


def test_same_seed_same_bytes_and_other_seed_differs(demo):
    a, b = records(variants_of(demo, seed=7)), records(variants_of(demo, seed=7))
    assert a == b
    assert records(variants_of(demo, seed=8)) != a


def test_a_subset_of_items_gets_exactly_its_variants_from_the_full_set(demo):
    full = variants_of(demo, seed=3)
    subset_items = demo[5:9] + demo[-3:]
    keys = {i.key for i in subset_items}
    sub = variants_of(subset_items, seed=3)
    assert records(sub) == records([v for v in full if v.item.key in keys])
    # ... and dropping a family does not change another family's variants
    fewer = variants_of(subset_items, families=("framing",), seed=3)
    assert records(fewer) == records([v for v in sub if v.category in ("original", "framing")])


def test_family_rng_depends_on_seed_item_and_family(demo):
    item = demo[0]
    draw = lambda s, i, f: family_rng(s, i, f).integers(0, 2**32, size=4).tolist()  # noqa: E731
    assert draw(0, item, "framing") == draw(0, item, "framing")
    assert draw(0, item, "framing") != draw(1, item, "framing")
    assert draw(0, item, "framing") != draw(0, demo[1], "framing")
    assert draw(0, item, "framing") != draw(0, item, "formatting")


# ------------------------------------------------------------------------------ per family


def test_option_order_shuffles_every_scale_and_reversal_only_is_a_parameter(demo):
    nominal = next(i for i in demo if i.scale == "nominal" and i.n_options == 4)
    vs = variants_of([nominal], families=("option_order",))[1:]
    assert all(v.spec.order != (0, 1, 2, 3) for v in vs)
    assert all(v.params["schedule"] == "balanced" for v in vs)
    legacy = variants_of(
        [nominal], families=("option_order",), options={"option_order": {"schedule": "legacy"}}
    )[1:]
    assert [v.spec.order for v in legacy[:3]] == [(3, 2, 1, 0), (1, 2, 3, 0), (3, 0, 1, 2)]
    # Ordinal scales are shuffled by default, as Kamal et al. (2026) shuffle survey items,
    # with the balanced schedule (tests/test_option_order_balance.py), all orders distinct.
    ordinal = next(i for i in demo if i.scale == "ordinal" and i.n_options >= 4)
    shuffled = variants_of([ordinal], families=("option_order",))[1:]
    assert len(shuffled) == 5
    assert len({v.spec.order for v in shuffled}) == 5
    (rev,) = variants_of(
        [ordinal], families=("option_order",), options={"option_order": {"shuffle_ordinal": False}}
    )[1:]
    assert rev.params == {"schedule": "reversal", "kind": "reversal"}
    two = rb.Item("t", "toy", "objective", "Yes or no?", ("Yes", "No"), answer=0)
    assert len(variants_of([two], families=("option_order",))) == 2  # only one other order


def test_label_sets_cover_the_classic_sets():
    assert LABEL_SETS["roman_lower"](4) == ("i", "ii", "iii", "iv")
    assert LABEL_SETS["roman_upper"](10)[-1] == "X"
    assert LABEL_SETS["digits"](4) == ("1", "2", "3", "4")
    assert LABEL_SETS["greek"](3) == ("α", "β", "γ")
    assert LABEL_SETS["late_letters"](11)[-1] == "Z"
    assert LABEL_SETS["late_letters"](12) is None  # P..Z holds 11: the set is skipped beyond
    assert [roman(n) for n in (9, 14, 40, 1994)] == ["ix", "xiv", "xl", "mcmxciv"]


def test_label_substitution_uses_new_sets_and_wrappers(demo):
    vs = variants_of(demo[:1], families=("label_substitution",))[1:]
    sets = [v.params["label_set"] for v in vs]
    assert len(set(sets)) == 5 and "upper" not in sets
    for v in vs:
        assert v.params["wrapper"] == v.spec.format.wrap(v.spec.labels[0])
        assert v.params["wrapper"] in v.prompt()


def test_spelling_noise_never_touches_options_digits_or_negations():
    item = rb.Item(
        "n",
        "toy",
        "objective",
        "Which statement about the 1969 landing is not correct, nor plausible?",
        ("Apollo eleven landed", "Nobody walked there", "It was televised"),
        answer=1,
    )
    vs = variants_of(
        [item], families=("spelling_noise",), options={"spelling_noise": {"rate": 1.0}}
    )[1:]
    assert len(vs) == 5
    for v in vs:
        assert v.spec.options == item.options and "1969" in v.spec.question
        assert " not " in v.spec.question and " nor " in v.spec.question
        assert v.params["n_edits"] >= 1 and v.spec.question != item.question
        for edit in v.params["edits"]:
            assert edit["word"].lower() not in PROTECTED and edit["to"] != edit["word"]
    with pytest.raises(ValueError, match="rate"):
        variants_of([item], families=("spelling_noise",), options={"spelling_noise": {"rate": 0}})


def test_formatting_space_is_enumerable_and_sampled_without_the_original(demo):
    space = format_space()
    formats = enumerate_formats()
    assert len(set(formats)) == len(formats) and len(formats) < len(space)
    assert all(f.option_layout == "inline" or f.inline_separator == "; " for f in formats)
    vs = variants_of(demo, families=("formatting",))
    original = default_spec(demo[0]).format
    for v in vs[1:6]:
        assert v.spec.format != original and v.params["format"]
    # formatting/i is the same format for every item, so accuracy per format is defined
    index = {}
    for v in vs:
        if v.category == "formatting":
            index.setdefault(v.variant_id, set()).add(v.params["format_index"])
    assert len(index) == 5 and all(len(s) == 1 for s in index.values())
    assert len({next(iter(s)) for s in index.values()}) == 5


def test_logical_equivalence_negates_agree_statements_and_reverses_the_scale(demo):
    agree = next(i for i in demo if i.is_agree_scale)
    vs = variants_of([agree], families=("logical_equivalence",))[1:]
    assert len(vs) == 4 and all(v.spec.negated for v in vs)
    k = agree.n_options
    for v in vs:
        assert v.answer_map == {lab: k - 1 - i for i, lab in enumerate(v.spec.labels)}
        clause, whole = embed_clause(agree.question)
        assert clause in v.spec.question or whole in v.spec.question
    assert any(v.spec.question.startswith("It is not the case that") for v in vs)
    other = next(i for i in demo if i.scale == "ordinal" and not i.is_agree_scale)
    assert not any(v.spec.negated for v in variants_of([other], families=("logical_equivalence",)))


def test_embed_clause_lowers_only_safe_first_words():
    assert embed_clause("Taxes should rise.") == ("taxes should rise", "Taxes should rise")
    assert embed_clause("I enjoy parties.")[0] == "I enjoy parties"
    assert embed_clause("NATO keeps us safe.")[0] == "NATO keeps us safe"


def test_framing_covers_all_four_styles(demo):
    vs = variants_of(demo[:1], families=("framing",), n=12)[1:]
    assert {v.params["style"] for v in vs} == {
        "plain",
        "role_play",
        "emotional",
        "output_requirement",
    }
    assert len(vs) == 12  # 3 wordings x 4 styles, all distinct from the original instruction


# ------------------------------------------------------------------------ property-based

WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
AGREE_SCALES = (
    ("Disagree", "Agree"),
    ("Strongly disagree", "Disagree", "Agree", "Strongly agree"),
    ("Strongly disagree", "Disagree", "Neither agree nor disagree", "Agree", "Strongly agree"),
)


@st.composite
def items(draw):
    kind = draw(st.sampled_from(["nominal", "agree", "ordinal"]))
    question = " ".join(draw(st.lists(WORDS, min_size=1, max_size=12))).capitalize()
    if kind == "agree":
        options = draw(st.sampled_from(AGREE_SCALES))
    else:
        words = draw(
            st.lists(
                st.lists(WORDS, min_size=1, max_size=4).map(" ".join),
                min_size=2,
                max_size=8,
                unique_by=str.casefold,
            )
        )
        options = tuple(w.capitalize() for w in words)
    if len({o.casefold() for o in options}) < len(options):
        options = tuple(f"{o} {i}" for i, o in enumerate(options))
    if kind == "nominal":
        answer = draw(st.integers(0, len(options) - 1))
        return rb.Item("h", "hyp", "objective", question, options, answer=answer)
    return rb.Item("h", "hyp", "subjective", question + ".", options, scale="ordinal")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(item=items(), seed=st.integers(0, 2**31 - 1))
def test_round_trip_property(item, seed):
    check_all(variants_of([item], seed=seed, n=3))


@settings(max_examples=60, deadline=None)
@given(item=items(), seed=st.integers(0, 2**31 - 1))
def test_formats_sampled_anywhere_in_the_space_round_trip(item, seed):
    import numpy as np

    space = format_space(statement=item.is_agree_scale)
    rng = np.random.default_rng(seed)
    base = default_spec(item)
    for fmt in space.sample(rng, 5):
        check_all([rb.Variant(item, "formatting", "formatting/x", base.with_(format=fmt), {})])


def test_subjective_multiple_choice_is_never_asked_for_the_correct_option():
    item = rb.Item(
        "o",
        "toy",
        "subjective",
        "Which season do you like most?",
        ("Spring", "Summer", "Autumn", "Winter"),
        scale="nominal",
    )
    for v in variants_of(
        [item],
        families=(*STRUCTURAL, "paraphrase"),
        n=5,
        options={},
        family_objects=_cheap_text_families(),
    ):
        text = v.spec.instruction.lower()
        assert "correct" not in text and "not false" not in text and "right option" not in text, (
            v.variant_id,
            v.spec.instruction,
        )


def test_only_single_declarative_statements_are_negated():
    scale = ("Strongly disagree", "Disagree", "Agree", "Strongly agree")
    for text in (
        "Taxes should rise. The rich pay too little.",
        "Do you agree that taxes should rise?",
        "Taxes should rise; wages too.",
    ):
        item = rb.Item("s", "toy", "subjective", text, scale, scale="ordinal")
        vs = variants_of([item], families=("logical_equivalence",))[1:]
        assert vs and not any(v.spec.negated for v in vs), text
        assert all(v.spec.question == text for v in vs)


def _cheap_text_families():
    from perturbations.paraphrase import Paraphrase
    from perturbations.similarity import NgramSimilarity

    return {"paraphrase": Paraphrase(similarity=NgramSimilarity(), threshold=0.0)}


def test_options_that_refer_to_other_options_survive_reordering_and_relabelling():
    from perturbations.references import refers_by_label, refers_by_position

    assert refers_by_position("All of the above") and refers_by_position("none of these")
    assert refers_by_label("Both A and B") and refers_by_label("Options 1 and 3")
    assert not refers_by_label("A cat and a dog") and not refers_by_position("Abovementioned")
    above = rb.Item(
        "a",
        "toy",
        "objective",
        "Which are mammals?",
        ("Bat", "Whale", "Dog", "All of the above"),
        answer=3,
    )
    vs = variants_of([above], families=("option_order", "label_substitution"))
    orders = [v for v in vs if v.category == "option_order"]
    assert len(orders) == 5 and all(v.spec.options[-1] == "All of the above" for v in orders)
    assert all(v.params["pinned"] == [3] for v in orders)
    check_all(vs)
    both = rb.Item(
        "b", "toy", "objective", "Which fly?", ("Bat", "Crow", "Both A and B", "Neither"), answer=2
    )
    assert [
        v.category for v in variants_of([both], families=("option_order", "label_substitution"))
    ] == ["original"]
