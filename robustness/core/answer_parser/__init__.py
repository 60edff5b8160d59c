"""The answer normaliser: raw generated text -> the displayed label the model chose.

``parse_answer(raw, labels, options)`` reads a model's free-text answer to a prompt that
showed ``options`` under ``labels`` (both in displayed order) and returns a
:class:`ParsedAnswer`: the label as given in ``labels`` and its displayed position, or no
label and one reason: ``"empty"``, ``"refusal"``, ``"ambiguous"`` or ``"no_label"``. Mapping
the displayed position back to the canonical option (undoing reordering, relabelling and
negation) is the variant's job (``Variant.to_canonical``), not this module's.

Reading the text
----------------
A reasoning block is set aside: when the text has a closing ``</think>`` (or
``</thinking>``, ``</thought>``, ``</reasoning>``), only what follows the last one is read,
unless nothing follows it, in which case the block itself is read. The text is then
NFKC-normalised (full-width letters, circled digits and Unicode roman numerals become plain
ones), curly quotes become straight ones, ``*`` and backticks (Markdown emphasis) become
spaces, CJK full stops and commas become ``.`` and ``,``, a space is put between CJK text
and a Latin or Greek letter or digit (``答案是A。`` -> ``答案是 A.``), and only the first
``MAX_CHARS`` characters are read.

A label is recognised as a whole token only: ``ii`` is never read as ``i``, ``B`` is not
found in ``Bob``, ``B-cell``, ``B's`` or ``C++``, ``e`` not in ``e.g.``, and ``3`` not in
``3.5`` or ``13``. Case is ignored when the label set stays unambiguous after case folding
(``b`` -> ``B``, ``II`` -> ``ii``, ``Β`` -> ``β``); a set such as ``("a", "A")`` is matched
case-sensitively. Greek labels may also be named (``beta`` -> ``β``).

Some labels are also ordinary words or numbers: ``a``/``A`` (the article), ``i``/``I`` (the
pronoun) and digits. These *strict* labels count only in a label context: wrapped (``(a)``,
``[a]``, ``a)``, quoted), after a keyword (``option a``), linked to another label (``A or
B``), followed by a separator and an option text (``a. Paris``), alone on their line at the
opening (``a``, ``a.``), or after an answer cue at the end of a sentence (``The answer is
a.``). So ``I think ...`` never selects roman ``I``, ``A mitochondrion ...`` never selects
``A`` (and ``A chloroplast.`` is the option Chloroplast), ``The answer is b, a mammal`` is
b, and ``1. How does this work?`` numbers a line rather than naming label 1. Other labels
(``B``, ``β``, ``iv``) also count as bare tokens in running text, but only in the case the
prompt showed them (``vitamin C`` does name label C; ``c`` in lower case does not).

Option texts are matched as whole words, case-insensitively, with any run of whitespace
between words, an optional trailing full stop, a leading article optional (``Egyptians``
matches ``The Egyptians``) and a two-word ``<adverb>ly <word>`` option also found reversed
(``agree strongly`` matches ``Strongly agree``). The longest option wins where matches
overlap, so ``strongly disagree`` is neither ``Disagree`` nor ``Agree``, and ``disagree`` is
never ``agree``. An option mention is dropped when a negation (``not``, ``never``, ``no``,
``nor``, ``neither``, ``cannot``, ``...n't``) comes before it in the same clause (clauses
end at ``. , ; : ! ?``, a line break, ``but``, ``however``, ``although``, ``though``,
``yet``, ``whereas``, ``while``): ``I do not really agree`` and ``I would not say that I
agree`` name nothing, ``I don't know, but I agree`` is Agree. A negation inside the option
text itself (``Not at all important``, ``Never``) is part of the option.

Words that are not part of any option are ignored, so on a scale without a "somewhat"
point ``I somewhat agree`` is ``Agree``, and ``I completely agree`` is ``Agree`` too: the
parser never infers an intensity the options do not spell out, and keeps the side of the
scale the model named at its plain point. Where the scale has ``Somewhat agree``, that
option is matched, being longer. Stance without the scale's words (``it's a positive
thing``) is not read as agreement: that is no label, not a guess.

On a scale whose middle point names a midpoint (an odd number of options, the middle one
starting with ``Neither``, ``Neutral``, ``Undecided``, ``Unsure``, ``Not sure``, ``No
opinion``, ``Indifferent``, ``Mixed`` or ``In between``), ``Neutral``, ``Undecided``, ``In
the middle``, ``Neither X nor Y`` and a ``Neither`` that ends its sentence also name that
point (``Neither good nor bad`` is the midpoint of an importance scale). On a scale with
exactly one option that is a plain ``Disagree``, negated agreement (``I don't agree``, ``I do
not really agree``, ``I can't agree``, but not ``I don't agree or disagree``, ``I don't fully
agree``) is that option.

Options that are function words (``the``, ``their``, ``there``, ...) count in running text
only when quoted (``The word is "their".``); after a cue or at the opening they count as
usual. A number that numbers a list line (``4. 1``) is not a mention of the option ``4``.

Label and text together
-----------------------
A label followed by a separator and an option text that ends its line or sentence (``B)
Paris``, ``B. Paris.``) or an option text followed by a wrapped label (``Paris (B)``) is one
answer when they agree. When they disagree (``B) London`` where B showed Paris) the output
names two options and is ``"ambiguous"``; small models do this often. A label followed by a
sentence that merely starts with an option's words (``c. Nuclear energy is a type of ...``)
is just the label. With numeric labels and numeric options, a bare number after a cue is a
label (``The answer is 4`` is label 4, not the option "4"); a number that is no label is
read as an option text (``The answer is 1945``). The option text may stand in brackets after
the label: ``4 (Agree)`` is one answer where 4 shows Agree, ``4 (Strongly agree)`` where 4
shows Agree names two options.

A label written with another option's text alone is a *conflict*: the result keeps both
readings (``label_reading``, ``text_reading``) and the ``conflict`` policy decides:
``"ambiguous"`` (the default), ``"label"`` (the label's option) or ``"text"`` (the text's
option). Each reading is the answer with that side of every conflict kept and the other
dropped: ``B) London`` then ``The answer is B`` is B under "label" and still ambiguous
under "text"; any disagreement that is not a conflict stays ambiguous under every policy.

An option whose own text starts like a label (``B. first`` shown as option A) is that option
when its whole text is written (``B. first`` is A); written with another wrapper (``(D)
third`` where option C is ``D. third``) it is a label with another option's text.

Precedence
----------
1. Empty or whitespace-only text -> ``"empty"``.
2. *Clear answer statements* are collected from the whole text:
   a. an answer cue followed by a label or an option text: ``Answer: B``, ``The (correct)
      answer is (B)``, ``the best option would be Paris``, ``My choice: 2``, ``I choose b``,
      ``I would say agree``, ``I'd go with beta``, ``I'd rate it as very important``, ``I'd
      guess B``, ``I lean towards C``; a hedged start (``I think it's C``, ``I believe the
      answer is 3``); a conclusion (``So the process described is (a).``, ``therefore
      nitrogen``, ``That leaves Paris.``, ``The remaining option, Paris``); the same cues in
      Spanish, Portuguese, French, Italian, German, Dutch and Russian (``La respuesta es
      A``, ``Die Antwort lautet B``, ``Ответ: B``, ``Je choisis C``) and in Chinese,
      Japanese and Korean (``答案是A``, ``正确答案：C``, ``答え：B``, ``正解はC``, ``정답은
      B``, ``我选B``); an answer followed by ``is wrong`` / ``: no`` is not stated;
      filler words between the cue and the answer are skipped (``is probably option B``);
      an option text after a cue must end there or run on with a function word (``the
      capital`` is not the option "the"); a chain ``B or C`` / ``B and C`` / ``B, C`` (also
      ``o``, ``y``, ``ou``, ``et``, ``oder``, ``und``, ``или``, ``或``) yields every label in
      it, as a *list*;
   b. a first-person stance naming an option: ``I agree``, ``I strongly disagree``, ``I'd
      agree with``, ``I would somewhat agree`` (the modifier is skipped only when no option
      includes it);
   c. a label or option text followed by a verdict: ``B is correct``, ``Paris is the right
      answer``, ``Option B (Paris) is correct``, ``Paris: yes`` / ``Paris ✅``-style
      checklists (``London: no`` is a rejection, not an opening);
   d. the answer's opening: a label as described above (``B``, ``(B)``, ``B)``, ``B.``,
      ``B. Paris``, ``Option 2 -``), or an option text followed by the end or punctuation
      (``Paris.``, ``Strongly agree``). ``A:`` opening a line that goes on is the answer
      cue of the Q:/A: convention, not label A (``A: Very important``, ``A: [B] Disagree``).
      An opening that repeats the option list (two or more lines starting ``<label>.`` /
      ``<label>)``, or three or more labels written as list entries on the first line) is
      an echo, not an answer (bullets ``-``, ``•``, ``>`` before the labels included). An
      opening of two or more labels (``B, C``, ``a) and d) both seem right``, ``B or C, I
      can't decide``, ``Either 1 or 4``) or option texts (``Sometimes or often``) is a list;
      an opening that asks (``B? I'm not sure``, ``Rarely? Often?``) is no answer;
   e. the answer's closing: a last sentence that is a label as shown or an option text
      alone (``... I lean towards agreeing. 4.``, ``... once a year. Rarely.``), except the
      last line of a numbered list and any echo;
   f. a correction and what it names (see *Commitment*).
   *Commitment*: the answer is the model's last commitment. A correction (``Actually``,
   ``wait``, ``No,``, ``Correction``, ``Oops``, ``Sorry``, ``on second thought``, ``scratch
   that``, ``let me reconsider``, ``I mean``, ``rather``, ``instead``, ``final answer``)
   followed by a clear statement, or followed at once by an answer that ends its sentence
   (not with a question mark: ``Berlin? No. London? No.`` names nothing), starts it: the
   clear statements before it no longer count (``The answer is B. Actually, wait: it's C.``
   is C). A turn (``but``, ``however``, ``ultimately``, ``on balance``,
   ``overall``, ``if I had to choose``) followed at once by an answer that ends its sentence
   does the same (``B and C are both plausible, but B`` is B); a turn followed by anything
   else does not (``I think it's C, but B is also possible`` is C). A list followed by a
   single clear statement is a hedge that the statement settles (``B or C. I'd go with B``
   is B); a list alone is ``"ambiguous"``.
   If all remaining clear statements name the same label, that label is the answer (the
   first one is reported; a model that repeats itself is not ambiguous). If they name
   different labels -> ``"ambiguous"`` (``A) So ... The correct answer is D) Sm``), unless
   the only disagreement is one label with another option's text (the ``conflict`` policy).
3. Without a clear statement, a refusal (``As an AI ...``, ``I'm a helpful AI ...``, ``I
   don't have personal opinions``, ``I cannot answer/provide/choose ...``, ``not capable of
   providing personal opinions``, ``I'm sorry, but``), or a refusal not phrased as declining
   (``I don't know``, ``I have no idea`` / ``no opinion``, ``I prefer not to answer``, ``I'd
   rather not say``, ``No comment``, ``I can't decide``, ``Hard to say``, ``No sé``, ``不知道``)
   -> ``"refusal"``. A refusal that still gives a clear answer counts as that answer (``I
   don't know, but I'd guess B`` is B).
4. Otherwise every *mention* counts: labels in a label context, bare non-strict labels as
   shown, and option texts. A mention followed by ``is wrong``, ``is incorrect`` or ``is
   not``, negated in its clause, or in a sentence that ends in a question mark (``Is it
   B?``), is dropped. One label named -> that label (``The
   capital of France is Paris.``); two or more -> ``"ambiguous"`` (``A or B``, ``Paris or
   London``, an echoed option list); none -> ``"no_label"``.

Robustness and cost
-------------------
The function is pure and never raises on any ``raw`` value: None, NaN, numbers and other
non-strings are a clean invalid result (bytes are decoded as UTF-8); only a bad label set or
an unknown policy raises :class:`robustness.core.errors.ItemError`. Its work is linear in the
text's length, which is bounded by ``MAX_CHARS``: at most 64 cues, stances and corrections
and 256 mentions of labels and 256 of option texts are read per answer, negations are found
once per text, and a cue's scan runs only when one of its words occurs. Patterns are compiled
once per label set and once per option set (``functools.lru_cache``, bounded), and the parse
of a cleaned text is memoised (bounded too), so a table that repeats its answers is read fast.
An ASCII answer (most are) is scanned lower-cased with case-sensitive patterns that find the
same matches and let ``re`` skip to where they can start (``_ascii``); the tests compare every
such shortcut with the form it replaces.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from robustness.core.answer_parser._compile import _compile_labels, _compile_options
from robustness.core.answer_parser._patterns import (
    _CJK_CHAR,
    _THINK_END,
    _THINK_TAG,
    MAX_CHARS,
    _bare_label,
    _clean,
    _refusal,
)
from robustness.core.answer_parser._reader import LABEL, LISTED, TEXT, _Reader
from robustness.core.errors import ItemError

__all__ = [
    "CONFLICT_POLICIES",
    "MAX_CHARS",
    "PARSER_VERSION",
    "REASONS",
    "ParsedAnswer",
    "parse_answer",
]

#: Reasons an answer is invalid, in the order the parser checks for them.
REASONS: tuple[str, ...] = ("empty", "refusal", "ambiguous", "no_label")

#: What a label with another option's text becomes: see :func:`parse_answer`.
CONFLICT_POLICIES: tuple[str, ...] = ("ambiguous", "label", "text")

#: The version of the reading rules; a table row records the version that read it. Raise it
#: whenever a change to this package can change what some answer parses to.
PARSER_VERSION = "2"


@dataclass(frozen=True)
class ParsedAnswer:
    """A parsed model answer.

    ``label`` is the chosen label exactly as given in ``labels``, ``position`` its index in the
    displayed order; both are None when the answer is invalid, and ``reason`` then says why
    (one of :data:`REASONS`). ``reason`` is None for a valid answer.

    ``label_reading`` and ``text_reading`` are set only when the output named a label with
    another option's text ("B. Agree" where B showed Disagree): the displayed position the
    answer has when the label's side of each such conflict is read ("label" policy), and when
    the text's side is ("text" policy); None where that reading is still ambiguous. The
    ``conflict`` policy decided which (if any) became ``position``.
    """

    label: str | None
    position: int | None
    reason: str | None
    label_reading: int | None = None
    text_reading: int | None = None

    @property
    def valid(self) -> bool:
        """True when a single label was recognised."""
        return self.reason is None


_EMPTY = ParsedAnswer(None, None, "empty")
_REFUSAL = ParsedAnswer(None, None, "refusal")
_AMBIGUOUS = ParsedAnswer(None, None, "ambiguous")
_NO_LABEL = ParsedAnswer(None, None, "no_label")

Hit = tuple[int, int, int]


@lru_cache(maxsize=4096)
def _answer(label: str, position: int) -> ParsedAnswer:
    """A valid answer (shared: the frozen dataclass is slow to build)."""
    return ParsedAnswer(label, position, None)


def _single(hits: list[Hit]) -> int | None:
    positions = {pos for pos, _, _ in hits}
    return positions.pop() if len(positions) == 1 else None


def _decide(
    hits: list[Hit], labels: Sequence[str], conflict: str = "ambiguous"
) -> ParsedAnswer | None:
    """One answer from the hits, or ambiguous; a label/text conflict follows ``conflict``."""
    if not hits:
        return None
    pos = _single(hits)
    if pos is not None:
        return _answer(labels[pos], pos)
    if not any(h[2] & (LABEL | TEXT) for h in hits):
        return _AMBIGUOUS
    # the answer under each policy: the label's side or the text's side of each conflict
    by_label = _single([h for h in hits if not h[2] & TEXT])
    by_text = _single([h for h in hits if not h[2] & LABEL])
    if by_label is None and by_text is None:
        return _AMBIGUOUS
    chosen = {"label": by_label, "text": by_text}.get(conflict)
    if chosen is None:
        return ParsedAnswer(None, None, "ambiguous", by_label, by_text)
    return ParsedAnswer(labels[chosen], chosen, None, by_label, by_text)


def _commitment(clear: list[Hit], cut: int) -> list[Hit]:
    """The clear statements that make the last commitment (see the module docstring)."""
    kept = [h for h in clear if h[1] >= cut] if cut else clear
    listed = [h[1] for h in kept if h[2] & LISTED]
    if listed:
        last_list = max(listed)
        after = [h for h in kept if not h[2] & LISTED and h[1] > last_list]
        if after:  # "B or C. I'd go with B": the list was a hedge, the statement decides
            kept = [h for h in kept if not h[2] & LISTED]
    return kept


def _after_reasoning(raw: str) -> str:
    """The answer after a reasoning block: what follows the last ``</think>``, if anything."""
    if "<" not in raw:
        return raw
    last = None
    if "</" in raw:
        for match in _THINK_END.finditer(raw):
            last = match
    if last is None:
        return _THINK_TAG.sub(" ", raw[: 2 * MAX_CHARS])
    tail = raw[last.end() :]
    return tail if tail.strip() else _THINK_TAG.sub(" ", raw[: last.start()])


@lru_cache(maxsize=1024)
def _check_label_set(labels: tuple[str, ...]) -> None:
    bare = [_bare_label(lab) for lab in labels]
    if not bare:
        raise ItemError("parse_answer needs at least one label.")
    if not all(bare):
        raise ItemError(f"empty label in {list(labels)!r}.")
    if len(set(bare)) != len(bare):
        raise ItemError(f"duplicate labels in {list(labels)!r}.")


@lru_cache(maxsize=4096)
def _checked(
    labels: tuple[str, ...], options: tuple[object, ...]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    bad = [lab for lab in labels if not isinstance(lab, str)]
    if bad:
        raise ItemError(f"label {bad[0]!r} in {list(labels)!r} is not a string.")
    if len(labels) != len(options):
        raise ItemError(f"{len(labels)} labels but {len(options)} options.")
    _check_label_set(labels)
    return labels, tuple(str(o) for o in options)


def _check_labels(labels: object, options: object) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if type(labels) in (list, tuple) and type(options) in (list, tuple):
        try:
            return _checked(tuple(labels), tuple(options))  # type: ignore[arg-type]
        except TypeError:
            pass  # an unhashable label or option: the checks below name it
    if isinstance(labels, str) or not isinstance(labels, Sequence):
        raise ItemError(f"labels must be a list of strings, not {type(labels).__name__}.")
    if isinstance(options, str) or not isinstance(options, Sequence):
        raise ItemError(f"options must be a list of strings, not {type(options).__name__}.")
    try:
        return _checked(tuple(labels), tuple(options))
    except TypeError:  # an unhashable label or option
        raise ItemError(
            f"labels and options must be strings, not {list(labels)!r} / {list(options)!r}."
        ) from None


def parse_answer(
    raw: object, labels: Sequence[str], options: Sequence[str], *, conflict: str = "ambiguous"
) -> ParsedAnswer:
    """Read which displayed label a model's raw output chose.

    Parameters
    ----------
    raw
        The model's output. Any string is parsed without raising; None, a missing value
        (NaN) or any other non-string is a clean invalid result ("empty" for None and NaN,
        "no_label" otherwise; bytes are decoded as UTF-8).
    labels
        The displayed labels in displayed order (bare, as "A", "ii", "β", "3"; a wrapper such
        as "(A)" is tolerated).
    options
        The displayed option texts in the same order.
    conflict
        What a label with another option's text alone makes ("B. Agree" where B showed
        Disagree): "ambiguous" (the default), "label" (the label's option) or "text" (the
        text's option). Both readings are on the result either way.

    Returns
    -------
    ParsedAnswer
        The label as given in ``labels`` with its position, or an invalid answer whose
        ``reason`` is "empty", "refusal", "ambiguous" or "no_label". The precedence rules are
        in this module's docstring.

    Raises
    ------
    ItemError
        For a bad label set (none, an empty label, duplicates, a label that is not a
        string, or a count different from ``options``) or an unknown ``conflict`` policy.
    """
    labels, options = _check_labels(labels, options)
    if conflict not in CONFLICT_POLICIES:
        raise ItemError(
            f"conflict policy {conflict!r} is not one of {', '.join(CONFLICT_POLICIES)}."
        )
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", errors="replace")
    if not isinstance(raw, str):
        return _EMPTY if raw is None or raw != raw else _NO_LABEL
    if not raw or raw.isspace():
        return _EMPTY
    return _parse_text(_clean(_after_reasoning(raw)), labels, options, conflict)


@lru_cache(maxsize=1 << 16)
def _parse_text(
    text: str, labels: tuple[str, ...], options: tuple[str, ...], conflict: str
) -> ParsedAnswer:
    """The parse of a cleaned text (memoised: tables repeat their answers many times)."""
    if not text:
        return _NO_LABEL
    reader = _Reader(text, _compile_labels(labels), _compile_options(options))
    verdicts = reader.mentions()[0] if reader.hinted("verdict") else []
    clear = reader.cued() + reader.opening() + reader.closing() + verdicts
    cut, corrected = reader.corrections(clear)
    decided = _decide(_commitment(clear + corrected, cut), labels, conflict)
    if decided is not None:
        return decided
    cjk = not reader.ascii and _CJK_CHAR.search(text)
    if (reader.hinted("refusal") or cjk) and _refusal(text, reader._low, reader.words):
        return _REFUSAL
    return _decide(reader.mentions()[1], labels, conflict) or _NO_LABEL
