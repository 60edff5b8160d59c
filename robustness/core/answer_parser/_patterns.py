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
# Token boundaries around a label: not inside a word, not a degree sign's C, not "B's",
# "B-cell", "C++", "C#", "e.g.", "3.5" or "1,000".
_LB = r"(?<![\w°\-])(?<!\w')"
_RB = r"(?![\w+#°])(?!['\-]\w)(?![.,]\d)(?!\.\w\.)"
# CJK text writes no space before a Latin label ("答案是A。"); cleaning puts one there, so the
# label is a token of its own.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
_CJK_GLUE = re.compile(rf"(?<=[{_CJK}])(?=[^\W{_CJK}])|(?<=[^\W{_CJK}])(?=[{_CJK}])")

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
        "\u0085": "\n",
        "\u3002": ".",
        "\u3001": ",",
        "\u300c": '"',
        "\u300d": '"',
    }
)
# A run of spaces other than one plain space (each run becomes one space): most answers
# have none, and a substitution with no match returns the text as it is.
_SPACES = re.compile(r"[^\S\n]{2,}|[^\S\n ]")

_CLAUSE_BREAK = re.compile(
    r"[.,;:!?\n—–]|\b(?:but|however|although|though|yet|whereas|while)\b", re.IGNORECASE
)
_NEGATION = re.compile(r"\b(?:not|never|no|nor|neither|cannot)\b|n't\b", re.IGNORECASE)
_VERDICT_GOOD = re.compile(
    r"\s*(?:is|would\s+be|seems\s+to\s+be|must\s+be|should\s+be)\s+"
    r"(?:the\s+|a\s+|definitely\s+|clearly\s+)?(?:correct|right|best|true)\b"
    r"|[^\S\n]*[:=\-–—][^\S\n]*(?:yes|correct|right|true|✓|✔|✅)(?!\w)",
    re.IGNORECASE,
)
_VERDICT_BAD = re.compile(
    r"\s*(?:is|are|would\s+be)\s+(?:not\b|wrong|incorrect|false|a\s+wrong)"
    r"|[^\S\n]*[:=\-–—][^\S\n]*(?:no|wrong|incorrect|false|✗|✘|❌)(?!\w)",
    re.IGNORECASE,
)
# What may follow a strict label after an answer cue: the end of the sentence or "because".
_STRICT_END = re.compile(
    r"\s*(?:$|[.,;:!?)\]}>\"'\n(\[]|[-–—]\s|(?:because|since)\b)", re.IGNORECASE
)
# The answer's last sentence: what follows the last sentence break, if it is short.
# Where sentences end: a mention in a sentence ending in "?" is asked about, not named.
_SENTENCE_STOP = re.compile(r"[.!?\n]")
_LAST_SENTENCE = re.compile(r"(?:[.!?:;\n]|\s[-–—])[^.!?:;\n]{1,40}[.!?]*\s*$")
# What opens the last sentence before its first word: spaces, sentence marks and dashes.
_CLOSING_LEAD = re.compile(r"[\s.!?:;\-–—]*")
_CLOSING_TRIM = re.compile(r"[\s\"'(\[]*(.*?)[\s\"')\].!]*$", re.DOTALL)
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
    r"(?:choose|select|pick|go\s+(?:with|for)|opt\s+for|say|answer(?:\s+with)?|guess"
    r"|lean\s+(?:towards?|to)"
    r"|vote\s+for|rate\s+(?:it|this)(?:\s+as)?)\b\s*:?",
    re.IGNORECASE,
)
# The same cues in Spanish, Portuguese, French, Italian, German, Dutch and Russian.
_CUE_OTHER = re.compile(
    r"\b(?:respuesta|resposta|r[ée]ponse|risposta|antwort|antwoord|opci[óo]n|op[çc][ãa]o|"
    r"choix|scelta|ответ|вариант)(?:\s+(?:correcta|correta|correcte|corretta|richtige|"
    r"juiste|final|finale|правильный))?\s*(?:es|sería|é|seria|est|serait|è|sarebbe|ist|"
    r"lautet|wäre|is|это|[:=]|-(?=\s)|–|—)"
    r"|\b(?:elijo|escojo|je\s+choisis|scelgo|ich\s+w[äa]hle|escolho|выбираю)\b",
    re.IGNORECASE,
)
# Chinese, Japanese, Korean: no word boundary before the cue.
_CUE_CJK = re.compile(
    r"(?:正确答案|答案|回答|答え|正解|정답|답)\s*(?:应该|應該)?\s*(?:是|为|為|は|:|은|는)"
    r"|我(?:会|會)?(?:选择|選擇|选|選)"
)
_CJK_CHAR = re.compile(f"[{_CJK}]")
#: Words (casefolded, whole) one of which every match of a cue contains: a text with none of
#: them is not scanned with that cue (most answers are short and need none of the scans).
CUE_HINTS: dict[str, frozenset[str]] = {
    kind: frozenset(words.split())
    for kind, words in {
        "cue": "answer choice option response selection rating pick choose select go opt say "
        "guess lean vote rate",
        "other": "respuesta resposta réponse reponse risposta antwort antwoord opción opcion "
        "opção opcao choix scelta ответ вариант elijo escojo choisis scelgo wähle wahle "
        "escolho выбираю",
        "hedge": "think believe guess suppose reckon feel",
        "conclusion": "so therefore thus hence consequently leaves leaving remaining only",
        "stance": "i",
        "correction": "actually wait correction oops thought scratch let take wrong mean rather "
        "instead reflection sorry mistake bad no final but however ultimately end balance if "
        "overall",
        # every verdict has one of these (or a check mark): without one, no mention is a verdict
        "verdict": "correct right best true yes",
        # every refusal has one of these (or CJK text)
        "refusal": "as ai model assistant chatbot machine program have cannot can unable able "
        "won will position capable incapable sorry apologize apologise me know not rather "
        "comment hard refuse decline sé sais weiß",
    }.items()
}
CHECK_MARKS = ("✓", "✔", "✅")
HINT_WORD = re.compile(r"[^\W\d_]+")
_STANCE = re.compile(
    r"\bI(?:'d)?\s+(?:(?:would|do|really|also|personally|must|can\s+only|think\s+I|feel\s+I)"
    r"\s+)*",
    re.IGNORECASE,
)
_SKIP_WORD = re.compile(
    r"(?:that|probably|likely|definitely|clearly|certainly|surely|simply|just|therefore|thus|"
    r"hence|so|then|most\s+likely|the|a|an|option|choice|letter|label|number|answer|"
    r"response|I|be|to|it's|it\s+is|it\s+must\s+be|it\s+should\s+be|make\s+(?:it|that))"
    r"\s*[:\-]?\s+",
    re.IGNORECASE,
)
_MODIFIER = re.compile(
    r"(?:somewhat|mostly|partly|partially|slightly|moderately|completely|totally|fully|"
    r"absolutely|entirely|really|generally|largely|strongly|very\s+much|kind\s+of|sort\s+of|"
    r"tend\s+to)\s+",
    re.IGNORECASE,
)
_PUNCT_SKIP = re.compile(r"[\s\"'(\[]*(?:[:=]|[-–—](?=\s))?[\s\"'(\[]*")
# A conclusion: "So the process described is (a).", "That leaves Paris.", "therefore nitrogen"
_CONCLUSION = re.compile(
    r"\b(?:so|therefore|thus|hence|consequently|that\s+leaves|this\s+leaves|which\s+leaves|"
    r"leaving|the\s+remaining\s+(?:option|choice|answer)|the\s+only\s+(?:correct|right|"
    r"possible|remaining)\s+(?:option|choice|answer))\b,?[^\S\n]*"
    r"(?:(?:the\s+)?(?:[^\W\d][\w'-]*[^\S\n]+){1,5}?(?:is|are|would\s+be|must\s+be)\b[^\S\n]*)?",
    re.IGNORECASE,
)
# A verdict may follow a label and its text in brackets: "Option B (Paris) is correct".
_BRACKETED = re.compile(r"[^\S\n]*[(\[][^()\[\]\n]{1,80}[)\]]")
# Reasoning blocks of reasoning models: the answer is what follows the last closing tag.
_THINK_END = re.compile(r"</(?:think|thinking|thought|reasoning)>", re.IGNORECASE)
_THINK_TAG = re.compile(r"</?(?:think|thinking|thought|reasoning)>", re.IGNORECASE)
# A hedged start: "I think it's C, but ..." (the answer is read after it like after a cue).
_HEDGE_CUE = re.compile(
    r"\bI\s+(?:think|believe|guess|suppose|reckon|feel\s+like)\s+(?:that\s+)?"
    r"(?:it(?:'s|\s+is|\s+would\s+be|\s+must\s+be|\s+should\s+be)\s+|the\s+answer\s+is\s+)?",
    re.IGNORECASE,
)
# A correction or a final turn: what follows it, if it names an answer, is the commitment.
_CORRECTION = re.compile(
    r"\b(?:actually|wait|correction|oops|on\s+(?:second|further)\s+thought|scratch\s+that|"
    r"let\s+me\s+(?:reconsider|correct\s+(?:that|myself))|I\s+take\s+(?:that|it)\s+back|"
    r"I\s+was\s+wrong|I\s+mean|rather|instead|upon\s+reflection|sorry|my\s+(?:mistake|bad)|"
    r"I\s+made\s+a\s+mistake|no(?=[^\S\n]*[,.!;:—–]))\b"
    r"|\bfinal\s+answer\b"
    r"|\b(?:but|however|ultimately|in\s+the\s+end|on\s+balance|if\s+I\s+(?:had|have)\s+to\s+"
    r"(?:choose|pick)(?:\s+one)?|overall)\b",
    re.IGNORECASE,
)
_CORRECTION_SKIP = re.compile(
    r"(?:[\s,.:;!—–-]|\b(?:actually|wait|no|hmm+|so|then|I\s+think|I\s+would\s+say|I'd\s+say|"
    r"is|it's|it\s+is|the\s+answer\s+is|the\s+right\s+one\s+is|I'd\s+go\s+with|"
    r"I'll\s+go\s+with|I\s+choose|my\s+answer\s+is)\b){0,16}",
    re.IGNORECASE,
)
# Negated agreement: "I don't agree" (read as Disagree where the scale has one plain Disagree).
_NEG_AGREE = re.compile(
    r"\bI\s+(?:really\s+|just\s+|simply\s+|personally\s+)?(?:do\s+not|don't|cannot|can't|"
    r"can\s+not)\s+(?:really\s+)?agree\b(?!\s+(?:or|nor|more|less|with\s+neither)\b)",
    re.IGNORECASE,
)
# A middle option named as the scale's midpoint: "Neutral", "Neither agree nor disagree".
_MIDPOINT_TEXT = re.compile(
    r"(?:neither\b|neutral\b|undecided\b|unsure\b|not\s+sure\b|no\s+opinion\b|"
    r"indifferent\b|mixed\b|in\s+(?:the\s+)?between\b|in\s+the\s+middle\b)",
    re.IGNORECASE,
)
MIDPOINT_ALIASES = (
    r"neutral",
    r"undecided",
    r"in\s+the\s+middle",
    r"neither(?:\s+[\w-]+){1,3}\s+nor(?:\s+[\w-]+){1,3}",
    r"neither(?=\s*(?:$|[.!;,\n]))",
)
_CONJ = r"\bor\b|\band\b|\b(?:o|y|ou|et|oder|und|или|и)\b|或|和"
_CHAIN = re.compile(rf"\s*(?:,|/|&|{_CONJ})\s*(?:(?:option|choice)\s+)?", re.IGNORECASE)
_LEAD_SKIP = re.compile(
    r"[\s>•\-\"'#]*(?:either\s+)?(?:(?:option|choice|answer|letter)\s*[:\-]?\s*)?",
    re.IGNORECASE,
)
# "A: <answer>" at the opening is the answer cue of the Q:/A: convention, not label A.
_QA_CUE = re.compile(r"A\s*:[^\S\n]*(?=\S)")
_LIST_NUMBER = re.compile(r"[.)](?:\s|$)")
_ARTICLE = re.compile(r"(?:the|a|an)\s+", re.IGNORECASE)
_SPACE = re.compile(r"\s+")
_LINK = re.compile(rf"\s*(?:,|/|&|{_CONJ})\s*", re.IGNORECASE)
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
# Refusals, in groups: a group is searched only when the text has one of the words or
# substrings (of its casefolded form) that every match of the group contains.
_REFUSAL_GROUPS: tuple[tuple[frozenset[str], tuple[str, ...], str], ...] = (
    (
        frozenset({"as"}),
        (),
        r"\bas\s+an?\s+(?:ai|a\.i\.|artificial\s+intelligence|(?:large\s+)?language\s+model|llm|"
        r"assistant|chatbot|machine|computer\s+program)\b",
    ),
    (
        frozenset({"a", "an"}),
        (),
        r"\bI\s*(?:am|'m)\s+(?:just\s+|only\s+|merely\s+)?an?\s+(?:[\w-]+\s+){0,2}(?:ai|"
        r"language\s+model|assistant|chatbot|computer\s+program|machine)\b",
    ),
    (
        frozenset(),
        ("have",),
        r"\bI\s+(?:do\s+not|don't)\s+have\s+(?:any\s+)?(?:personal\s+|my\s+own\s+)?"
        r"(?:opinions?|beliefs?|views?|preferences?|feelings?|experiences?|emotions?|personal)\b"
        r"|\bI\s+have\s+no\s+(?:idea|opinion)\b",
    ),
    (
        frozenset(),
        ("can", "able", "won't", "not"),
        r"\bI\s*(?:cannot|can't|can\s+not|am\s+unable\s+to|'m\s+unable\s+to|am\s+not\s+able\s+to|"
        r"'m\s+not\s+able\s+to|won't|will\s+not|am\s+not\s+in\s+a\s+position\s+to)\s+"
        r"(?:\w+\s+)?(?:answer|provide|give|express|share|choose|select|pick|offer|form|make|"
        r"determine|help|assist|comply|take\s+sides|have\s+(?:personal|an?\s+opinion|opinions)|"
        r"agree\s+or\s+disagree|endorse|hold)"
        r"|\b(?:not\s+capable\s+of|incapable\s+of|unable\s+to)\s+(?:providing|giving|having|"
        r"expressing|sharing|forming|holding|provide|give|have|express|share|form|hold)\s+"
        r"(?:\w+\s+)?(?:opinions?|views?|beliefs?|preferences?|feelings?|an?\s+opinion)"
        r"|\bnot\s+(?:able|appropriate|possible)\s+for\s+me\s+to\b"
        # refusals not phrased as declining
        r"|\bI(?:'d|\s+would)?\s+(?:prefer|rather|like)\s+not\s+to\s+(?:answer|say|respond|share|"
        r"disclose|comment|choose)\b"
        r"|\bI\s+(?:cannot|can't|can\s+not)\s+(?:decide|say|tell)\b",
    ),
    (
        frozenset(),
        ("sorry", "apolog", "know", "rather", "comment", "hard", "refuse", "decl"),
        r"\bI'?m\s+sorry,?\s+but\b|\bI\s+apologi[sz]e,?\s+but\b"
        r"|\bI\s+(?:really\s+)?(?:do\s+not|don't)\s+know\b|\bI(?:'d|\s+would)\s+rather\s+not\b"
        r"|\bno\s+comment\b|\bhard\s+to\s+say\b|\bI\s+(?:refuse|decline)\s+to\b",
    ),
    (
        frozenset(),
        ("sais",),  # and any text that is not ASCII
        r"\b(?:no\s+sé|je\s+ne\s+sais\s+pas|weiß\s+ich\s+nicht|ich\s+weiß\s+(?:es\s+)?nicht)"
        r"|不知道|わかりません|分かりません",
    ),
)
#: Every refusal in one pattern (the groups above are searched instead; a test compares them).
_REFUSAL_RE = re.compile("|".join(g[2] for g in _REFUSAL_GROUPS), re.IGNORECASE)
_REFUSALS = tuple(
    (words, subs, re.compile(pattern, re.IGNORECASE)) for words, subs, pattern in _REFUSAL_GROUPS
)


def _refusal(text: str, low: str, words: frozenset[str]) -> bool:
    """``_REFUSAL_RE.search(text)``, faster: ``low`` is the casefolded text, ``words`` the
    words of ``low`` (HINT_WORD). The groups' words are trusted on ASCII texts only (where
    re.IGNORECASE is ASCII case folding): any other text is searched with every group."""
    plain = text.isascii()
    for need, subs, pattern in _REFUSALS:
        gate = not plain or not need.isdisjoint(words) or any(sub in low for sub in subs)
        if gate and pattern.search(text):
            return True
    return False


_TRANSLATED = re.compile("[" + re.escape("".join(map(chr, _TRANSLATE))) + "]")


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFKC", text[:MAX_CHARS])
    # str.translate and the scans are slow; most answers are ASCII and need none of them
    if text.isascii():  # three of the translated characters are ASCII, and no CJK is
        if "`" in text or "*" in text or "\r" in text:
            text = text.translate(_TRANSLATE)
    else:
        if _TRANSLATED.search(text):
            text = text.translate(_TRANSLATE)
        if _CJK_CHAR.search(text):
            text = _CJK_GLUE.sub(" ", text)
    # a plain space is the only printable space: without two in a row and without other
    # unprintable characters than line breaks, there is no run of spaces to replace
    if "  " in text or not text.replace("\n", "").isprintable():
        text = _SPACES.sub(" ", text)
    return text.strip()


def _bare_label(label: str) -> str:
    """The label without a wrapper the caller may have left on it: "(A)", "A.", "[a]", "A)"."""
    text = _clean(label)
    m = re.fullmatch(r"[(\[{<]?\s*(.+?)\s*[)\]}>.:]?", text)
    return m.group(1) if m and m.group(1) else text
