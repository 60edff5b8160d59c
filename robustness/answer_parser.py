"""The answer normaliser: raw generated text -> the displayed label the model chose.

``parse_answer(raw, labels, options)`` reads a model's free-text answer to a prompt that
showed ``options`` under ``labels`` (both in displayed order) and returns a
:class:`ParsedAnswer`: the label as given in ``labels`` and its displayed position, or no
label and one reason: ``"empty"``, ``"refusal"``, ``"ambiguous"`` or ``"no_label"``. Mapping
the displayed position back to the canonical option (undoing reordering, relabelling and
negation) is the variant's job (``Variant.to_canonical``), not this module's.

Reading the text
----------------
The text is NFKC-normalised (full-width letters, circled digits and Unicode roman numerals
become plain ones), curly quotes become straight ones, ``*`` and backticks (Markdown
emphasis) become spaces, and only the first ``MAX_CHARS`` characters are read.

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
read as an option text (``The answer is 1945``).

Precedence
----------
1. Empty or whitespace-only text -> ``"empty"``.
2. *Clear answer statements* are collected from the whole text:
   a. an answer cue followed by a label or an option text: ``Answer: B``, ``The (correct)
      answer is (B)``, ``the best option would be Paris``, ``My choice: 2``, ``I choose b``,
      ``I would say agree``, ``I'd go with beta``, ``I'd rate it as very important``;
      filler words between the cue and the answer are skipped (``is probably option B``);
      an option text after a cue must end there or run on with a function word (``the
      capital`` is not the option "the"); a chain ``B or C`` / ``B and C`` / ``B, C`` yields
      every label in it;
   b. a first-person stance naming an option: ``I agree``, ``I strongly disagree``, ``I'd
      agree with``, ``I would somewhat agree`` (the modifier is skipped only when no option
      includes it);
   c. a label or option text followed by a verdict: ``B is correct``, ``Paris is the right
      answer``;
   d. the answer's opening: a label as described above (``B``, ``(B)``, ``B)``, ``B.``,
      ``B. Paris``, ``Option 2 -``), or an option text followed by the end or punctuation
      (``Paris.``, ``Strongly agree``). ``A:`` opening a line that goes on is the answer
      cue of the Q:/A: convention, not label A (``A: Very important``, ``A: [B] Disagree``).
      An opening that repeats the option list (two or more lines starting ``<label>.`` /
      ``<label>)``, or three or more labels written as list entries on the first line) is
      an echo, not an answer.
   If all clear statements name the same label, that label is the answer (the first one is
   reported; a model that repeats itself is not ambiguous). If they name different labels,
   or a label with another option's text -> ``"ambiguous"`` (``A) So ... The correct answer
   is D) Sm``).
3. Without a clear statement, a refusal (``As an AI ...``, ``I'm a helpful AI ...``, ``I
   don't have personal opinions``, ``I cannot answer/provide/choose ...``, ``not capable of
   providing personal opinions``, ``I'm sorry, but``) -> ``"refusal"``. A refusal that still
   gives a clear answer counts as that answer.
4. Otherwise every *mention* counts: labels in a label context, bare non-strict labels as
   shown, and option texts. A mention followed by ``is wrong``, ``is incorrect`` or ``is
   not``, or negated in its clause, is dropped. One label named -> that label (``The
   capital of France is Paris.``); two or more -> ``"ambiguous"`` (``A or B``, ``Paris or
   London``, an echoed option list); none -> ``"no_label"``.

The function is pure, never raises on any ``raw`` string, and compiles its patterns once per
label set and once per option set (``functools.lru_cache``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["MAX_CHARS", "REASONS", "ParsedAnswer", "parse_answer"]

#: Reasons an answer is invalid, in the order the parser checks for them.
REASONS: tuple[str, ...] = ("empty", "refusal", "ambiguous", "no_label")

#: Only this many characters of a raw output are read (a rambling model's tail is ignored).
MAX_CHARS = 4000


@dataclass(frozen=True)
class ParsedAnswer:
    """A parsed model answer.

    ``label`` is the chosen label exactly as given in ``labels``, ``position`` its index in the
    displayed order; both are None when the answer is invalid, and ``reason`` then says why
    (one of :data:`REASONS`). ``reason`` is None for a valid answer.
    """

    label: str | None
    position: int | None
    reason: str | None

    @property
    def valid(self) -> bool:
        """True when a single label was recognised."""
        return self.reason is None


_EMPTY = ParsedAnswer(None, None, "empty")
_REFUSAL = ParsedAnswer(None, None, "refusal")
_AMBIGUOUS = ParsedAnswer(None, None, "ambiguous")
_NO_LABEL = ParsedAnswer(None, None, "no_label")

GREEK_NAMES = {
    "α": "alpha",
    "β": "beta",
    "γ": "gamma",
    "δ": "delta",
    "ε": "epsilon",
    "ζ": "zeta",
    "η": "eta",
    "θ": "theta",
    "ι": "iota",
    "κ": "kappa",
    "λ": "lambda",
    "μ": "mu",
    "ν": "nu",
    "ξ": "xi",
    "ο": "omicron",
    "π": "pi",
    "ρ": "rho",
    "σ": "sigma",
    "τ": "tau",
    "υ": "upsilon",
    "φ": "phi",
    "χ": "chi",
    "ψ": "psi",
    "ω": "omega",
}
# Labels that are also everyday words: counted only in a label context.
_WORDLIKE = {"a", "i"}

# Token boundaries around a label: not inside a word, not a degree sign's C, not "B's",
# "B-cell", "C++", "C#", "e.g.", "3.5" or "1,000".
_LB = r"(?<![\w°\-])(?<!\w')"
_RB = r"(?![\w+#°])(?!['\-]\w)(?![.,]\d)(?!\.\w\.)"

_TRANSLATE = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201b": "'",
        "\u2032": "'",
        "`": " ",
        "*": " ",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\r": "\n",
        "\u2028": "\n",
        "\u2029": "\n",
    }
)
_SPACES = re.compile(r"[^\S\n]+")

_CLAUSE_BREAK = re.compile(
    r"[.,;:!?\n]|\b(?:but|however|although|though|yet|whereas|while)\b", re.IGNORECASE
)
_NEGATION = re.compile(r"\b(?:not|never|no|nor|neither|cannot)\b|n't\b", re.IGNORECASE)
_VERDICT_GOOD = re.compile(
    r"\s*(?:is|would\s+be|seems\s+to\s+be|must\s+be|should\s+be)\s+"
    r"(?:the\s+|a\s+|definitely\s+|clearly\s+)?(?:correct|right|best|true)\b",
    re.IGNORECASE,
)
_VERDICT_BAD = re.compile(
    r"\s*(?:is|are|would\s+be)\s+(?:not\b|wrong|incorrect|false|a\s+wrong)", re.IGNORECASE
)
# What may follow a strict label after an answer cue: the end of the sentence or "because".
_STRICT_END = re.compile(r"\s*(?:$|[.,;:!?)\]}>\"'\n]|[-–—]\s|(?:because|since)\b)", re.IGNORECASE)
# What may follow a strict label at the opening: nothing more on its line.
_LINE_END = re.compile(r"[^\S\n]*[.:!]?[^\S\n]*(?:$|\n)")
# What may follow any other label, or an option text, at the opening: a separator or the end.
_OPENING_END = re.compile(r"\s*(?:$|[.,;:!?)\]}>\"'\n(]|[-–—=])")
# An option text after a label is that label's description when nothing else follows it.
_DESCRIPTION_END = re.compile(r"[^\S\n]*(?:$|[.,;:!?)\]}\"'\n(])")
# An option text after a cue must end there, or run on with a function word only.
_HEAD_OPTION_END = re.compile(
    r"\s*(?:$|[^\w\s]|\b(?:because|since|as|which|who|that|with|and|or|but|is|was|to|in|on|"
    r"for|so|of|here|there|about|overall|too)\b)",
    re.IGNORECASE,
)
_SEPARATOR = re.compile(r"[^\S\n]*[.):\]\-–—=]?[^\S\n]*")
_CUE = re.compile(
    r"\b(?:answer|choice|option|response|selection|rating|pick)\s*"
    r"(?:is|would\s+be|will\s+be|should\s+be|must\s+be|=|:|-(?=\s)|–|—)"
    r"|\bI(?:'d|'ll)?\s+(?:would\s+|will\s+|shall\s+)?(?:probably\s+|definitely\s+)?"
    r"(?:choose|select|pick|go\s+(?:with|for)|opt\s+for|say|answer(?:\s+with)?"
    r"|vote\s+for|rate\s+(?:it|this)(?:\s+as)?)\b\s*:?",
    re.IGNORECASE,
)
_STANCE = re.compile(
    r"\bI(?:'d)?\s+(?:(?:would|do|really|also|personally|must|can\s+only|think\s+I|feel\s+I)"
    r"\s+)*",
    re.IGNORECASE,
)
_SKIP_WORD = re.compile(
    r"(?:that|probably|likely|definitely|clearly|certainly|surely|simply|just|therefore|thus|"
    r"hence|so|then|most\s+likely|the|a|an|option|choice|letter|label|number|answer|"
    r"response|I|be|to)\s*[:\-]?\s+",
    re.IGNORECASE,
)
_MODIFIER = re.compile(
    r"(?:somewhat|mostly|partly|partially|slightly|moderately|completely|totally|fully|"
    r"absolutely|entirely|really|generally|largely|strongly|very\s+much|kind\s+of|sort\s+of|"
    r"tend\s+to)\s+",
    re.IGNORECASE,
)
_PUNCT_SKIP = re.compile(r"[\s\"'(\[]*(?:[:=]|[-–—](?=\s))?\s*")
_CHAIN = re.compile(r"\s*(?:,|/|&|\bor\b|\band\b)\s*(?:(?:option|choice)\s+)?", re.IGNORECASE)
_LEAD_SKIP = re.compile(
    r"[\s>•\-\"'#]*(?:(?:option|choice|answer|letter)\s*[:\-]?\s*)?", re.IGNORECASE
)
# "A: <answer>" at the opening is the answer cue of the Q:/A: convention, not label A.
_QA_CUE = re.compile(r"A\s*:[^\S\n]*(?=\S)")
_LIST_NUMBER = re.compile(r"[.)](?:\s|$)")
_ARTICLE = re.compile(r"(?:the|a|an)\s+", re.IGNORECASE)
_SPACE = re.compile(r"\s+")
_LINK = re.compile(r"\s*(?:,|/|&|\bor\b|\band\b)\s*", re.IGNORECASE)
# Option texts so common in prose that a bare mention of them is not an answer.
_FUNCTION_WORDS = frozenset(
    {
        "the",
        "a",
        "an",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "as",
        "is",
        "are",
        "be",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "and",
        "or",
        "but",
        "if",
        "then",
        "than",
        "there",
        "their",
        "they",
        "them",
        "they're",
        "he",
        "she",
        "we",
        "you",
        "your",
        "i",
        "me",
        "my",
        "his",
        "her",
        "our",
        "not",
        "so",
        "do",
        "does",
    }
)
_REFUSAL_RE = re.compile(
    r"\bas\s+an?\s+(?:ai|a\.i\.|artificial\s+intelligence|(?:large\s+)?language\s+model|llm|"
    r"assistant|chatbot|machine|computer\s+program)\b"
    r"|\bI\s*(?:am|'m)\s+(?:just\s+|only\s+|merely\s+)?an?\s+(?:[\w-]+\s+){0,2}(?:ai|"
    r"language\s+model|assistant|chatbot|computer\s+program|machine)\b"
    r"|\bI\s+(?:do\s+not|don't)\s+have\s+(?:any\s+)?(?:personal\s+|my\s+own\s+)?"
    r"(?:opinions?|beliefs?|views?|preferences?|feelings?|experiences?|emotions?|personal)\b"
    r"|\bI\s+(?:cannot|can't|can\s+not|am\s+unable\s+to|'m\s+unable\s+to|am\s+not\s+able\s+to|"
    r"'m\s+not\s+able\s+to|won't|will\s+not|am\s+not\s+in\s+a\s+position\s+to)\s+"
    r"(?:\w+\s+)?(?:answer|provide|give|express|share|choose|select|pick|offer|form|make|"
    r"determine|help|assist|comply|take\s+sides|have\s+(?:personal|an?\s+opinion|opinions)|"
    r"agree\s+or\s+disagree|endorse|hold)"
    r"|\b(?:not\s+capable\s+of|incapable\s+of|unable\s+to)\s+(?:providing|giving|having|"
    r"expressing|sharing|forming|holding|provide|give|have|express|share|form|hold)\s+"
    r"(?:\w+\s+)?(?:opinions?|views?|beliefs?|preferences?|feelings?|an?\s+opinion)"
    r"|\bI'?m\s+sorry,?\s+but\b|\bI\s+apologi[sz]e,?\s+but\b"
    r"|\bnot\s+(?:able|appropriate|possible)\s+for\s+me\s+to\b",
    re.IGNORECASE,
)


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFKC", text[:MAX_CHARS]).translate(_TRANSLATE)
    return _SPACES.sub(" ", text).strip()


def _bare_label(label: str) -> str:
    """The label without a wrapper the caller may have left on it: "(A)", "A.", "[a]", "A)"."""
    text = _clean(label)
    m = re.fullmatch(r"[(\[{<]?\s*(.+?)\s*[)\]}>.:]?", text)
    return m.group(1) if m and m.group(1) else text


@dataclass(frozen=True)
class _Labels:
    lookup: dict[str, int]  # surface (casefolded when `fold`) -> position
    fold: bool
    strict: frozenset[str]  # lookup keys that count only in a label context
    exact: frozenset[str]  # surfaces as shown, the only ones counted as bare tokens
    head: re.Pattern[str]  # a label at a given position (after a cue, at the start)
    mention: re.Pattern[str]  # every label occurrence in running text
    list_line: re.Pattern[str]  # a line that starts like an option list entry
    inline: re.Pattern[str]  # a label written as a list entry inside a line: (B), B), B.

    def position(self, surface: str) -> int | None:
        key = surface.casefold() if self.fold else surface
        pos = self.lookup.get(key)
        if pos is None:
            pos = self.lookup.get(surface.casefold())
        return pos

    def is_strict(self, surface: str) -> bool:
        return (surface.casefold() if self.fold else surface) in self.strict or (
            surface.casefold() in self.strict
        )


@lru_cache(maxsize=1024)
def _compile_labels(labels: tuple[str, ...]) -> _Labels:
    if not labels:
        raise ValueError("parse_answer needs at least one label")
    bare = [_bare_label(lab) for lab in labels]
    if any(not b for b in bare):
        raise ValueError(f"empty label in {list(labels)!r}")
    if len(set(bare)) != len(bare):
        raise ValueError(f"duplicate labels in {list(labels)!r}")
    fold = len({b.casefold() for b in bare}) == len(bare)
    lookup: dict[str, int] = {}
    strict: set[str] = set()
    surfaces: set[str] = set()
    names: set[str] = set()
    for pos, b in enumerate(bare):
        key = b.casefold() if fold else b
        lookup[key] = pos
        surfaces.add(b)
        if fold:
            surfaces.update({b.lower(), b.upper(), b.casefold()})
        if b.casefold() in _WORDLIKE or b.isdigit():
            strict.add(key)
        name = GREEK_NAMES.get(b.casefold())
        if name and name not in lookup:
            lookup[name] = pos
            strict.add(name)
            names.update({name, name.capitalize(), name.upper()})
    alternation = "|".join(re.escape(s) for s in sorted(surfaces, key=lambda s: (-len(s), s)))
    core = alternation if fold else f"(?-i:{alternation})"
    if names:
        core = "|".join(re.escape(s) for s in sorted(names, key=len, reverse=True)) + "|" + core
    core = f"(?:{core})"
    head = re.compile(
        rf"(?P<open>[(\[{{<\"'])?\s*{_LB}(?P<lab>{core})(?:\s*(?P<close>[)\]}}>\"'])|{_RB})",
        re.IGNORECASE,
    )
    mention = re.compile(
        rf"[(\[{{<\"']\s*(?P<w>{core})\s*[)\]}}>\"']"
        rf"|\b(?:option|choice|letter|label|number|alternative|answer)\s*[:#]?\s*{_LB}"
        rf"(?P<k>{core}){_RB}"
        rf"|(?m:^)\s*(?P<l>{core})\s*[.:](?=\s|$)"
        rf"|{_LB}(?P<p>{core})\)"
        rf"|{_LB}(?P<b>{core}){_RB}",
        re.IGNORECASE,
    )
    list_line = re.compile(
        rf"(?m)^[ \t]*[(\[]?[ \t]*(?P<lab>{core})[ \t]*[.)\]:][ \t]+\S", re.IGNORECASE
    )
    inline = re.compile(
        rf"[(\[]\s*(?P<w>{core})\s*[)\]]|{_LB}(?P<p>{core})\)|{_LB}(?P<d>{core})[.:](?= )",
        re.IGNORECASE,
    )
    return _Labels(
        lookup,
        fold,
        frozenset(strict),
        frozenset(bare) | frozenset(names),
        head,
        mention,
        list_line,
        inline,
    )


@dataclass(frozen=True)
class _Options:
    pattern: re.Pattern[str] | None  # every option text, longest alternative first
    groups: dict[str, int]  # regex group name -> option position
    weak: frozenset[str]  # groups whose text is a function word ("the", "their")


def _option_alternatives(text: str) -> list[tuple[int, str]]:
    words = _clean(text).rstrip(".").split()
    if not words:
        return []
    forms = [words]
    if len(words) > 1 and words[0].lower() in {"the", "a", "an"}:
        forms.append(words[1:])
    if len(words) == 2 and words[0].lower().endswith("ly") and len(words[0]) > 3:
        forms.append([words[1], words[0]])
    out = []
    for form in forms:
        body = r"\s+".join(re.escape(w).replace("'", "['’]") for w in form)
        left = r"(?<!\w)(?<!\d[.,])" if re.match(r"\w", form[0]) else ""
        right = r"(?!\w)(?![.,]\d)" if re.search(r"\w$", form[-1]) else ""
        out.append((len(" ".join(form)), f"{left}{body}{right}"))
    return out


@lru_cache(maxsize=4096)
def _compile_options(options: tuple[str, ...]) -> _Options:
    alternatives: list[tuple[int, str, str]] = []
    groups: dict[str, int] = {}
    weak: set[str] = set()
    for pos, text in enumerate(options):
        for k, (length, alt) in enumerate(_option_alternatives(text)):
            name = f"o{pos}_{k}"
            groups[name] = pos
            alternatives.append((length, name, alt))
            if _clean(text).rstrip(".").casefold() in _FUNCTION_WORDS:
                weak.add(name)
    if not alternatives:
        return _Options(None, {}, frozenset())
    alternatives.sort(key=lambda a: (-a[0], a[1]))
    body = "|".join(f"(?P<{name}>{alt})" for _, name, alt in alternatives)
    return _Options(re.compile(body, re.IGNORECASE), groups, frozenset(weak))


def _negated(text: str, start: int) -> bool:
    """True when a negation precedes `start` in the same clause ("I do not really agree")."""
    window = text[max(0, start - 160) : start]
    clause_start = 0
    for m in _CLAUSE_BREAK.finditer(window):
        clause_start = m.end()
    return _NEGATION.search(window, clause_start) is not None


class _Reader:
    """One parse: the cleaned text with its compiled label and option patterns.

    Every finder returns hits as (displayed position, offset in the text).
    """

    def __init__(self, text: str, labels: _Labels, options: _Options) -> None:
        self.text = text
        self.labels = labels
        self.options = options

    # -- heads: a label or an option text starting exactly at `pos` ------------------------

    def option_at(self, pos: int) -> tuple[int, int] | None:
        """(option position, end) for an option text at `pos` (after an optional article)."""
        pattern = self.options.pattern
        if pattern is None:
            return None
        for start in (pos, self._after(_ARTICLE, pos)):
            if start is None:
                continue
            m = pattern.match(self.text, start)
            if m and m.lastgroup:
                if _negated(self.text, m.start()):
                    return None
                return self.options.groups[m.lastgroup], m.end()
        return None

    def description_at(self, pos: int, *, needs_separator: bool) -> tuple[int, int] | None:
        """An option text right after a label that ends its line or sentence: "B) Paris"."""
        sep = _SEPARATOR.match(self.text, pos)
        if sep is None or (needs_separator and not sep.group().strip()):
            return None
        hit = self.option_at(sep.end())
        if hit is not None and _DESCRIPTION_END.match(self.text, hit[1]):
            return hit
        return None

    def label_at(self, pos: int, *, opening: bool = False) -> list[tuple[int, int]]:
        """The label starting at `pos`, with the option text describing it, or [].

        Returns [(label position, end)] or, when the label is followed by the text of a
        different option ("B) London" where B showed Paris), both: the caller sees a conflict.
        Strict labels (words, numbers) need a wrapper, a description, or the end of the
        sentence (after a cue) or of the line (at the opening); other labels at the opening
        need a separator or the end.
        """
        m = self.labels.head.match(self.text, pos)
        if not m:
            return []
        label_pos = self.labels.position(m.group("lab"))
        if label_pos is None or (m.group("open") and not m.group("close")):
            return []
        end = m.end()
        wrapped = bool(m.group("close")) and (bool(m.group("open")) or m.group("close") == ")")
        strict = self.labels.is_strict(m.group("lab"))
        # "A chloroplast" is an article and an option; "A. Chloroplast" is a label and one.
        described = self.description_at(end, needs_separator=strict and not wrapped)
        if not (wrapped or described):
            if strict:
                guard = _LINE_END if opening else _STRICT_END
                if not guard.match(self.text, end):
                    return []
            elif opening and not _OPENING_END.match(self.text, end):
                return []
        if described is None:
            return [(label_pos, end)]
        if described[0] == label_pos:
            return [(label_pos, described[1])]
        return [(label_pos, end), (described[0], described[1])]

    def answer_at(self, pos: int, *, labels_too: bool = True) -> list[tuple[int, int]]:
        """Every answer named from `pos` on, skipping filler words and following "B or C"."""
        found: list[tuple[int, int]] = []
        pos = _PUNCT_SKIP.match(self.text, pos).end()  # type: ignore[union-attr]
        for _ in range(6):
            heads = self.label_at(pos) if labels_too else []
            end = heads[-1][1] if heads else -1
            if not heads:
                hit = self.option_at(pos)
                # An option after a cue must end there ("the capital" is not option "the"),
                # unless it continues a chain ("agree and disagree at once").
                if hit is not None and (found or _HEAD_OPTION_END.match(self.text, hit[1])):
                    heads, end = [hit], hit[1]
            if heads:
                found.extend((p, pos) for p, _ in heads)
                chain = _CHAIN.match(self.text, end)
                if not chain:
                    break
                pos = chain.end()
                labels_too = True
                continue
            if found:
                break
            skipped = _SKIP_WORD.match(self.text, pos) or _MODIFIER.match(self.text, pos)
            if not skipped:
                break
            pos = skipped.end()
        return found

    def _after(self, pattern: re.Pattern[str], pos: int) -> int | None:
        m = pattern.match(self.text, pos)
        return m.end() if m else None

    # -- clear answer statements -----------------------------------------------------------

    def cued(self) -> list[tuple[int, int]]:
        """Answers after a cue ("The answer is B") or a stance ("I strongly disagree")."""
        out = []
        for m in _CUE.finditer(self.text):
            out.extend(self.answer_at(m.end()))
        for m in _STANCE.finditer(self.text):
            out.extend(self.answer_at(m.end(), labels_too=False))
        return out

    def is_echo(self) -> bool:
        """True when the answer repeats the option list instead of choosing from it."""
        listed = {
            self.labels.position(m.group("lab")) for m in self.labels.list_line.finditer(self.text)
        }
        if len(listed - {None}) >= 2:
            return True
        first_line = self.text.split("\n", 1)[0]
        inline = {
            self.labels.position(m.group(m.lastgroup))
            for m in self.labels.inline.finditer(first_line)
            if m.lastgroup
        }
        return len(inline - {None}) >= 3

    def opening(self) -> list[tuple[int, int]]:
        """The answer's first words: a label or an option text standing alone."""
        if self.is_echo():
            return []
        pos = _LEAD_SKIP.match(self.text).end()  # type: ignore[union-attr]
        qa = _QA_CUE.match(self.text, pos)
        if qa:
            return self.answer_at(qa.end())
        heads = self.label_at(pos, opening=True)
        if heads:
            return [(p, pos) for p, _ in heads]
        hit = self.option_at(pos)
        if hit is None or not _OPENING_END.match(self.text, hit[1]):
            return []
        # "Paris (B)": an option text followed by a wrapped label names both.
        after = _SPACE.match(self.text, hit[1])
        tail = after.end() if after else hit[1]
        if self.text[tail : tail + 1] in ("(", "["):
            heads = self.label_at(tail)
            if heads:
                return [(hit[0], pos), (heads[0][0], tail)]
        return [(hit[0], pos)]

    # -- mentions in running text ----------------------------------------------------------

    def mentions(self) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """(verdicts such as "B is correct", plain mentions) anywhere in the text."""
        verdicts: list[tuple[int, int]] = []
        plain: list[tuple[int, int]] = []
        text = self.text
        found = []
        for m in self.labels.mention.finditer(text):
            kind = m.lastgroup
            surface = m.group(kind) if kind else None
            pos = self.labels.position(surface) if surface else None
            if surface is not None and pos is not None:
                found.append((kind, surface, pos, m.start(), m.end()))
        for i, (kind, surface, pos, start, end) in enumerate(found):
            if _VERDICT_GOOD.match(text, end):
                verdicts.append((pos, start))
                continue
            if kind == "b" and (surface not in self.labels.exact or self.labels.is_strict(surface)):
                # A bare word-like label as shown counts when linked to another label:
                # "A or B", "B, A", "1 and 2".
                linked = surface in self.labels.exact and (
                    (i > 0 and _LINK.fullmatch(text, found[i - 1][4], start) is not None)
                    or (
                        i + 1 < len(found)
                        and _LINK.fullmatch(text, end, found[i + 1][3]) is not None
                    )
                )
                if not linked:
                    continue
            if (
                kind == "l"
                and self.labels.is_strict(surface)
                and not (
                    _LINE_END.match(text, end) or self.description_at(end, needs_separator=False)
                )
            ):
                continue  # "1. How does this work?" numbers a line; it is not label 1
            if _VERDICT_BAD.match(text, end) or _negated(text, start):
                continue
            plain.append((pos, start))
        if self.options.pattern is not None:
            for m in self.options.pattern.finditer(text):
                if not m.lastgroup:
                    continue
                pos = self.options.groups[m.lastgroup]
                if _VERDICT_GOOD.match(text, m.end()):
                    verdicts.append((pos, m.start()))
                    continue
                if m.lastgroup in self.options.weak and not self._quoted(m.start(), m.end()):
                    continue
                line_start = text.rfind("\n", 0, m.start()) + 1
                if (
                    m.group().isdigit()
                    and _LIST_NUMBER.match(text, m.end())
                    and not text[line_start : m.start()].strip()
                ):
                    continue  # "4. 1" numbers a list line; it does not name option "4"
                if _VERDICT_BAD.match(text, m.end()) or _negated(text, m.start()):
                    continue
                plain.append((pos, m.start()))
        return verdicts, plain

    def _quoted(self, start: int, end: int) -> bool:
        before = self.text[start - 1] if start > 0 else ""
        after = self.text[end] if end < len(self.text) else ""
        return before in "\"'" and before != "" and after == before


def _decide(hits: list[tuple[int, int]], labels: Sequence[str]) -> ParsedAnswer | None:
    if not hits:
        return None
    if len({pos for pos, _ in hits}) > 1:
        return _AMBIGUOUS
    pos = min(hits, key=lambda h: h[1])[0]
    return ParsedAnswer(labels[pos], pos, None)


def parse_answer(raw: str, labels: Sequence[str], options: Sequence[str]) -> ParsedAnswer:
    """Read which displayed label a model's raw output chose.

    ``labels`` are the displayed labels in displayed order (bare, as "A", "ii", "β", "3"; a
    wrapper such as "(A)" is tolerated), ``options`` the displayed option texts in the same
    order. Returns the label as given in ``labels`` with its position, or an invalid
    :class:`ParsedAnswer` whose ``reason`` is "empty", "refusal", "ambiguous" or "no_label".
    The precedence rules are in this module's docstring. Raises ValueError only for a bad
    label set (none, an empty one, duplicates, or a count different from ``options``); any
    ``raw`` string is parsed without raising.
    """
    if len(labels) != len(options):
        raise ValueError(f"{len(labels)} labels but {len(options)} options")
    compiled_labels = _compile_labels(tuple(labels))
    compiled_options = _compile_options(tuple(str(o) for o in options))
    if not isinstance(raw, str) or not raw.strip():
        return _EMPTY
    text = _clean(raw)
    if not text:
        return _NO_LABEL
    reader = _Reader(text, compiled_labels, compiled_options)
    verdicts, plain = reader.mentions()
    clear = reader.cued() + reader.opening() + verdicts
    decided = _decide(clear, labels)
    if decided is not None:
        return decided
    if _REFUSAL_RE.search(text):
        return _REFUSAL
    return _decide(plain, labels) or _NO_LABEL
