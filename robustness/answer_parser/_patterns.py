"""The answer parser's fixed vocabulary: regular expressions, word lists, text cleaning."""

from __future__ import annotations

import re
import unicodedata

#: Only this many characters of a raw output are read (a rambling model's tail is ignored).
MAX_CHARS = 4000

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
