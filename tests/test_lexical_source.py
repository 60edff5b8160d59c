"""The candidate-source interface: a source written here, not the lexicon, under the guards.

``Scripted`` stands in for a model-based proposer: it reads the whole text once and then
answers for each word from what it read, proposing for every word it knows, guarded or not.
The family must keep every guard on what it proposes.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from perturbations.lexical_substitution import (
    LexicalSubstitution,
    Proposal,
    Text,
    default_lexicon,
    find_slots,
)
from robustness.core.errors import StudyError
from robustness.core.items import Item
from robustness.core.prompts import default_spec

#: (words of a form, part of speech, substitutes), proposed wherever the words stand
SCRIPT = [
    ("not", "x", ("never",)),
    ("answer", "n", ("reply",)),
    ("paris", "n", ("rome",)),
    ("big", "a", ("large", "huge")),
    ("big apple", "n", ("large fruit",)),
    ("apple", "n", ("fruit",)),
    ("no one", "x", ("nobody", "someone")),
    ("increase", "v", ("decrease", "rise")),
    ("student", "n", ("pupil",)),
]


class Scripted:
    """Proposes every form of ``script`` wherever its words stand, longest first; reads each
    text once (a model would be asked once per text) and counts what it was asked."""

    def __init__(self, script=SCRIPT, vetted: bool = True) -> None:
        self.script = [(tuple(words.split()), pos, subs) for words, pos, subs in script]
        self.script.sort(key=lambda row: -len(row[0]))
        self.vetted = vetted
        self.read: dict[str, dict[int, list[Proposal]]] = {}
        self.asked: list[str] = []

    def _read(self, text: Text) -> dict[int, list[Proposal]]:
        found: dict[int, list[Proposal]] = {}
        for i in range(len(text.words)):
            for words, pos, subs in self.script:
                if text.lower(i, len(words)) == words:
                    found.setdefault(i, []).append(Proposal(len(words), subs, pos))
        return found

    def propose(self, text: Text, at: int) -> Iterator[Proposal]:
        if text.written not in self.read:
            self.read[text.written] = self._read(text)
        self.asked.append(text.words[at].group())
        yield from self.read[text.written].get(at, [])


def _changes(text: str, source, protected=frozenset()) -> dict[str, tuple[str, ...]]:
    return {s.word: s.synonyms for s in find_slots(text, source, protected)}


def test_guards_hold_for_whatever_the_source_proposes():
    source = Scripted()
    text = "Do not answer, student: the big apple in Paris is big-19 and big."
    assert _changes(text, source) == {
        "student": ("pupil",),
        "big apple": ("large fruit",),
        "big": ("large", "huge"),
    }
    # task words and capitalised words inside a sentence are not even asked about; a negation
    # is, for a form that keeps it ("no one" -> "nobody"), and "not" -> "never" is refused
    assert not {"answer", "Paris"} & set(source.asked) and "not" in source.asked
    # option words are guarded too, inside a longer form as well
    assert _changes(text, Scripted(), frozenset({"apple"})) == {
        "student": ("pupil",),
        "big": ("large", "huge"),
    }


def test_longest_proposal_that_passes_wins_and_a_negation_keeps_only_its_listed_forms():
    source = Scripted()
    assert _changes("A big apple.", source) == {"big apple": ("large fruit",)}
    assert _changes("A big apples.", source) == {"big": ("large", "huge")}
    # "no one" may become "nobody" (keeps the negation), never "someone"
    assert _changes("There was no one there.", source) == {"no one": ("nobody",)}


def test_family_draws_from_any_source_with_the_same_bytes_per_seed():
    item = Item(
        "s1",
        "demo",
        "objective",
        "A student saw a big apple. Which student is not big?",
        ("Paris", "big apple", "London", "Rome"),
        answer=0,
    )
    fam = LexicalSubstitution(source=Scripted(), rate=1.0)
    spec = default_spec(item)
    out = fam.perturb(spec, item, np.random.default_rng(0), 5)
    again = fam.perturb(spec, item, np.random.default_rng(0), 5)
    assert [s.render() for s, _ in out] == [s.render() for s, _ in again]
    assert out and all(s.options == spec.options and s.labels == spec.labels for s, _ in out)
    # "big" and "apple" are option words; the repeated noun "student" changes in both places
    assert {s.question for s, _ in out} == {"A pupil saw a big apple. Which pupil is not big?"}


def test_one_source_only():
    with pytest.raises(StudyError, match="a lexicon or a source, not both"):
        LexicalSubstitution(lexicon=default_lexicon(), source=Scripted())


def test_the_lexicon_is_a_vetted_source():
    lexicon = default_lexicon()
    assert lexicon.vetted is True
    text = Text("Which of the following is approximately true?")
    proposals = list(lexicon.propose(text, 5))
    assert proposals and {p.size for p in proposals} == {1}
    assert "roughly" in proposals[0].substitutes


@pytest.mark.slow
def test_a_source_that_is_not_vetted_has_its_opposites_refused_at_run_time():
    text = "Prices increase when a big student arrives."
    vetted, open_ended = Scripted(), Scripted(vetted=False)
    assert _changes(text, vetted)["increase"] == ("decrease", "rise")
    assert _changes(text, open_ended) == {
        "increase": ("rise",),
        "big": ("large", "huge"),
        "student": ("pupil",),
    }
