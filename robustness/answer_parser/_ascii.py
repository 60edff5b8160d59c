r"""The scanning patterns again, for ASCII answers: the same matches, found faster.

Python's ``re`` tries a pattern at every offset of the text unless the pattern starts with a
literal or a set of literals it can look for first, and under re.IGNORECASE it compares
letters one case-folding call at a time. Most answers are ASCII, where re.IGNORECASE is
plain ASCII case folding. There, each pattern below, run case-sensitively on the lower-cased
text (same length, same offsets), finds exactly the matches its model in ``_patterns``
finds in the text, and it starts with the letters its matches can start with, so ``re``
skips to them:

- the word boundary ``\b`` before a word becomes ``(?<!\w.)`` after the word's first letter
  (no word character before that letter);
- an alternation of words becomes the set of their first letters, then each word's rest
  behind ``(?<=x)`` (its first letter), in the model's order, so that at any offset the
  alternatives are tried in the same order and the same one wins;
- every letter is lower case (``I`` is ``i``).

``tests/test_answer_parser_fast.py`` compares each pattern with its model on random texts.
"""

from __future__ import annotations

import re

__all__ = [
    "CLAUSE_BREAK",
    "CONCLUSION",
    "CORRECTION",
    "CUE",
    "HEDGE_CUE",
    "MODELS",
    "NEGATION",
    "NEG_AGREE",
    "STANCE",
]

# _patterns._NEGATION: \b(?:not|never|no|nor|neither|cannot)\b|n't\b
NEGATION = re.compile(r"n(?:(?<!\w.)(?:ot|ever|o|or|either)\b|'t\b)|c(?<!\w.)annot\b")

# _patterns._CLAUSE_BREAK: [.,;:!?\n—–]|\b(?:but|however|although|though|yet|whereas|while)\b
CLAUSE_BREAK = re.compile(
    r"[.,;:!?\n—–bhatyw](?:(?<=[.,;:!?\n—–])|(?<!\w.)(?:(?<=b)ut|(?<=h)owever|(?<=a)lthough"
    r"|(?<=t)hough|(?<=y)et|(?<=w)(?:hereas|hile))\b)"
)

CUE = re.compile(
    r"[acorspi](?<!\w.)(?:"
    r"(?:(?<=a)nswer|(?<=c)hoice|(?<=o)ption|(?<=r)esponse|(?<=s)election|(?<=r)ating"
    r"|(?<=p)ick)\s*(?:is|would\s+be|will\s+be|should\s+be|must\s+be|=|:|-(?=\s)|–|—)"
    r"|(?<=i)(?:'d|'ll)?\s+(?:would\s+|will\s+|shall\s+)?(?:probably\s+|definitely\s+)?"
    r"(?:choose|select|pick|go\s+(?:with|for)|opt\s+for|say|answer(?:\s+with)?|guess"
    r"|lean\s+(?:towards?|to)"
    r"|vote\s+for|rate\s+(?:it|this)(?:\s+as)?)\b\s*:?)"
)

STANCE = re.compile(
    r"i(?<!\w.)(?:'d)?\s+(?:(?:would|do|really|also|personally|must|can\s+only|think\s+i"
    r"|feel\s+i)\s+)*"
)

HEDGE_CUE = re.compile(
    r"i(?<!\w.)\s+(?:think|believe|guess|suppose|reckon|feel\s+like)\s+(?:that\s+)?"
    r"(?:it(?:'s|\s+is|\s+would\s+be|\s+must\s+be|\s+should\s+be)\s+|the\s+answer\s+is\s+)?"
)

CONCLUSION = re.compile(
    r"[sthcwl](?<!\w.)(?:(?<=s)o|(?<=t)herefore|(?<=t)hus|(?<=h)ence|(?<=c)onsequently"
    r"|(?<=t)hat\s+leaves|(?<=t)his\s+leaves|(?<=w)hich\s+leaves|(?<=l)eaving"
    r"|(?<=t)he\s+remaining\s+(?:option|choice|answer)|(?<=t)he\s+only\s+(?:correct|right|"
    r"possible|remaining)\s+(?:option|choice|answer))\b,?[^\S\n]*"
    r"(?:(?:the\s+)?(?:[^\W\d][\w'-]*[^\S\n]+){1,5}?(?:is|are|would\s+be|must\s+be)\b[^\S\n]*)?"
)

CORRECTION = re.compile(
    r"[abcfhilmnorsuw](?<!\w.)(?:"
    r"(?:(?<=a)ctually|(?<=w)ait|(?<=c)orrection|(?<=o)ops|(?<=o)n\s+(?:second|further)\s+"
    r"thought|(?<=s)cratch\s+that|(?<=l)et\s+me\s+(?:reconsider|correct\s+(?:that|myself))"
    r"|(?<=i)\s+take\s+(?:that|it)\s+back|(?<=i)\s+was\s+wrong|(?<=i)\s+mean|(?<=r)ather"
    r"|(?<=i)nstead|(?<=u)pon\s+reflection|(?<=s)orry|(?<=m)y\s+(?:mistake|bad)"
    r"|(?<=i)\s+made\s+a\s+mistake|(?<=n)o(?=[^\S\n]*[,.!;:—–]))\b"
    r"|(?<=f)inal\s+answer\b"
    r"|(?:(?<=b)ut|(?<=h)owever|(?<=u)ltimately|(?<=i)n\s+the\s+end|(?<=o)n\s+balance"
    r"|(?<=i)f\s+i\s+(?:had|have)\s+to\s+(?:choose|pick)(?:\s+one)?|(?<=o)verall)\b)"
)

NEG_AGREE = re.compile(
    r"i(?<!\w.)\s+(?:really\s+|just\s+|simply\s+|personally\s+)?(?:do\s+not|don't|cannot|"
    r"can't|can\s+not)\s+(?:really\s+)?agree\b(?!\s+(?:or|nor|more|less|with\s+neither)\b)"
)

#: Each pattern's model in ``_patterns`` (by name there), for the tests.
MODELS = {
    "_NEGATION": NEGATION,
    "_CLAUSE_BREAK": CLAUSE_BREAK,
    "_CUE": CUE,
    "_STANCE": STANCE,
    "_HEDGE_CUE": HEDGE_CUE,
    "_CONCLUSION": CONCLUSION,
    "_CORRECTION": CORRECTION,
    "_NEG_AGREE": NEG_AGREE,
}
