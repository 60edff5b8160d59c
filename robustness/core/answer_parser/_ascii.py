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
- an alternation of words becomes the set of their first letters, then each word's rest,
  its first character checked (cheaply, by ``re``) before ``(?<=xy)`` checks the word's first
  two, in the model's order, so that at any offset the alternatives are tried in the same
  order and the same one wins;
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
    "MODIFIER",
    "NEGATION",
    "NEG_AGREE",
    "SKIP_WORD",
    "STANCE",
]

# _patterns._NEGATION: \b(?:not|never|no|nor|neither|cannot)\b|n't\b
NEGATION = re.compile(r"n(?:(?<!\w.)(?:ot|ever|o|or|either)\b|'t\b)|c(?<!\w.)annot\b")

# _patterns._CLAUSE_BREAK: [.,;:!?\n—–]|\b(?:but|however|although|though|yet|whereas|while)\b
CLAUSE_BREAK = re.compile(
    r"[.,;:!?\n—–bhatyw](?:(?<=[.,;:!?\n—–])|(?<!\w.)(?:u(?<=bu)t|o(?<=ho)wever|l(?<=al)though"
    r"|h(?<=th)ough|e(?<=ye)t|h(?<=wh)(?:ereas|ile))\b)"
)

CUE = re.compile(
    r"[acorspi](?<!\w.)(?:"
    r"(?:n(?<=an)swer|h(?<=ch)oice|p(?<=op)tion|e(?<=re)sponse|e(?<=se)lection|a(?<=ra)ting"
    r"|i(?<=pi)ck)\s*(?:is|would\s+be|will\s+be|should\s+be|must\s+be|=|:|-(?=\s)|–|—)"
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
    r"[sthcwl](?<!\w.)(?:o(?<=so)|h(?<=th)erefore|h(?<=th)us|e(?<=he)nce|o(?<=co)nsequently"
    r"|h(?<=th)at\s+leaves|h(?<=th)is\s+leaves|h(?<=wh)ich\s+leaves|e(?<=le)aving"
    r"|h(?<=th)e\s+remaining\s+(?:option|choice|answer)|h(?<=th)e\s+only\s+(?:correct|right|"
    r"possible|remaining)\s+(?:option|choice|answer))\b,?[^\S\n]*"
    r"(?:(?:the\s+)?(?:[^\W\d][\w'-]*[^\S\n]+){1,5}?(?:is|are|would\s+be|must\s+be)\b[^\S\n]*)?"
)

CORRECTION = re.compile(
    r"[abcfhilmnorsuw](?<!\w.)(?:"
    r"(?:c(?<=ac)tually|a(?<=wa)it|o(?<=co)rrection|o(?<=oo)ps|n(?<=on)\s+(?:second|further)\s+"
    r"thought|c(?<=sc)ratch\s+that|e(?<=le)t\s+me\s+(?:reconsider|correct\s+(?:that|myself))"
    r"|(?<=i)\s+take\s+(?:that|it)\s+back|(?<=i)\s+was\s+wrong|(?<=i)\s+mean|a(?<=ra)ther"
    r"|n(?<=in)stead|p(?<=up)on\s+reflection|o(?<=so)rry|y(?<=my)\s+(?:mistake|bad)"
    r"|(?<=i)\s+made\s+a\s+mistake|o(?<=no)(?=[^\S\n]*[,.!;:—–]))\b"
    r"|i(?<=fi)nal\s+answer\b"
    r"|(?:u(?<=bu)t|o(?<=ho)wever|l(?<=ul)timately|n(?<=in)\s+the\s+end|n(?<=on)\s+balance"
    r"|f(?<=if)\s+i\s+(?:had|have)\s+to\s+(?:choose|pick)(?:\s+one)?|v(?<=ov)erall)\b)"
)

NEG_AGREE = re.compile(
    r"i(?<!\w.)\s+(?:really\s+|just\s+|simply\s+|personally\s+)?(?:do\s+not|don't|cannot|"
    r"can't|can\s+not)\s+(?:really\s+)?agree\b(?!\s+(?:or|nor|more|less|with\s+neither)\b)"
)

SKIP_WORD = re.compile(
    r"(?:that|probably|likely|definitely|clearly|certainly|surely|simply|just|therefore|thus|"
    r"hence|so|then|most\s+likely|the|a|an|option|choice|letter|label|number|answer|"
    r"response|i|be|to|it's|it\s+is|it\s+must\s+be|it\s+should\s+be|make\s+(?:it|that))"
    r"\s*[:\-]?\s+"
)

MODIFIER = re.compile(
    r"(?:somewhat|mostly|partly|partially|slightly|moderately|completely|totally|fully|"
    r"absolutely|entirely|really|generally|largely|strongly|very\s+much|kind\s+of|sort\s+of|"
    r"tend\s+to)\s+"
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
    "_SKIP_WORD": SKIP_WORD,
    "_MODIFIER": MODIFIER,
}
