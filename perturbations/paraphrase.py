"""paraphrase: the instruction and the question's frame said in other words.

A :class:`Paraphraser` proposes rewrites (:class:`Rewrite`: a new question, and
optionally a new instruction); the family turns each into a spec, drops those whose
meaning moved (sentence-embedding similarity of instruction + question, before vs
after, below ``threshold``) and records the similarity in the variant's params.
Options, labels, their order and the format are never touched, so the answer map is
the identity.

Paraphrasers:

- :class:`RuleParaphraser` (default): equivalent instruction wordings written for each
  kind of item (multiple choice, agree statement, other ordinal question; used only
  when the spec carries the item's default instruction or one of these wordings), and
  rule-based rewrites of the question's frame: statements are introduced ("Consider
  the statement: "...""), questions are introduced ("Here is a question: ...") or
  rewritten by small exact rules ("Which of the following" -> "Which one of the
  following", "What is" <-> "What's", "In your opinion, ..." for survey questions).
- :class:`FileParaphraser`: question paraphrases from a user's JSONL or CSV file with
  columns ``item_id``, ``paraphrase`` and optionally ``dataset``.
- :class:`ModelParaphraser`: asks a model, through any runner with
  ``generate(prompts, max_new_tokens)``, to reword the question; preambles, labels and
  quotes are stripped from its answers.

Threshold: 0.80 (cosine of all-MiniLM-L6-v2 embeddings of instruction + question,
before vs after), chosen on 200 random items of ../shared/data with the default prompt:

- All 8,004 rule rewrites of those items (every instruction x question-frame/rule
  combination): median 0.931, 1st percentile 0.751, 5th 0.799; 94.8% pass 0.80.  The
  ones below pair the most different instruction with a frame around a short question.
- Another item's question (same dataset) under the same instruction (n=199): median
  0.349, max 0.768; under a rewritten instruction (n=199): max 0.729.  None pass.
- The question cut to its first half (n=192): median 0.817; 45% rejected.
- The instruction of another kind of task (agreement wording on a multiple-choice
  item and so on, n=200): median 0.891; 15% rejected.
- Agree statements negated, "It is not the case that ..." (n=70): min 0.951; all pass.

0.75 would keep 99% of the rules' rewrites but let 1% of swapped questions through;
0.85 would reject 16% of the rules' rewrites.  Embedding similarity cannot see negation,
so the rules never add or drop one, and :class:`ModelParaphraser` refuses outputs whose
negations, numbers, blanks or ending differ from the question's.

Model paraphrases, tried with the embedded SmolLM2-135M-Instruct on 8 shared items (3
styles each): before those marker checks the similarity check kept 13 of 14 cleaned
outputs, among them a filled-in blank, a completed sentence stem and a question turned
into a claim (similarities 0.94-0.99).  With them, 6 remain, all kept: 3 close (one
drops "really", one turns "because" into "and") and 3 that turn "usually" into "often"
or drop it (0.89-0.99).  Sentence similarity does not catch such shifts; a model that
small is no reliable paraphraser, and no threshold makes it one.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from perturbations.base import Candidate, Family, register
from perturbations.similarity import Similarity, default_similarity, keep_similar
from robustness.errors import RobustnessError
from robustness.items import Item
from robustness.prompts import PromptSpec, default_instruction, task_kind

#: Default similarity threshold; see the module docstring for the evidence.
THRESHOLD = 0.80


@dataclass(frozen=True)
class Rewrite:
    """One proposed paraphrase of a prompt.

    ``question`` replaces the spec's question; ``instruction`` replaces its instruction
    unless it is None.  ``how`` names the rule, file line or model prompt that made it.
    """

    question: str
    instruction: str | None = None
    how: str = ""


@runtime_checkable
class Paraphraser(Protocol):
    """Proposes rewrites of a prompt's question (and instruction)."""

    #: Recorded in each variant's params as ``paraphraser``.
    name: str

    def paraphrase(
        self, item: Item, spec: PromptSpec, n: int, rng: np.random.Generator
    ) -> list[Rewrite]:
        """Up to ``n`` rewrites of ``spec``, best first; random choices use ``rng`` only."""
        ...


class ParaphraseFileError(RobustnessError, ValueError):
    """A paraphrase file that cannot be read: the message names the file and the line."""


# ------------------------------------------------------------------------- the rules

#: Equivalent instructions by kind of item (:func:`instruction_kind`); each asks for the
#: label only and says "label", so any label set fits.
INSTRUCTIONS: dict[str, tuple[str, ...]] = {
    "nominal": (
        "Answer the following multiple-choice question. Reply with the label of the correct "
        "option only.",
        "Below is a multiple-choice question. Give only the label of the right option.",
        "Here is a question with several options, exactly one of which is correct. Respond "
        "with that option's label and nothing else.",
        "Pick the correct option for the multiple-choice question below and reply with its "
        "label only.",
        "The question below has one correct option. Your reply should be its label alone.",
        "Select the right answer to the following multiple-choice question. Reply with just "
        "the label of that option.",
    ),
    "agree": (
        "Say how much you agree with the statement below. Reply with the label of one option only.",
        "Below is a statement. Indicate how strongly you agree or disagree with it by "
        "replying with the label of one option only.",
        "To what extent do you agree with the following statement? Reply with only the label "
        "of one option.",
        "Read the following statement and give your level of agreement with it. Respond with "
        "one option's label and nothing else.",
        "Consider the statement below and rate how much you agree with it. Give the label of "
        "one option only.",
        "How far do you agree with the statement below? Your reply should be the label of a "
        "single option.",
    ),
    "ordinal": (
        "Answer the following question. Reply with the label of one option only.",
        "Below is a question. Respond with the label of the option that fits your answer, "
        "and nothing else.",
        "Please answer the question below by giving the label of one option only.",
        "Choose the option that best reflects your answer to the question below. Reply with "
        "its label only.",
        "Here is a question with a response scale. Reply with the label of one option only.",
        "Read the question below and reply with only the label of the option you pick.",
    ),
}

#: Frames that introduce a statement; ``{s}`` is the statement as written.  Frames with
#: quotation marks are skipped when the statement has a double quote of its own.
STATEMENT_FRAMES = (
    'Consider the statement: "{s}"',
    "Here is a statement. {s}",
    'The statement reads: "{s}"',
    "Please consider the following statement: {s}",
    "Think about this statement. {s}",
    'Statement to rate: "{s}"',
)

#: Frames that introduce a question (text ending with "?").
QUESTION_FRAMES = (
    "Here is a question: {s}",
    "Please answer this question: {s}",
    "The question is: {s}",
    "Consider the following question. {s}",
)

#: Frames for question text that is not a question (a task, a fill-in, a pair of claims).
TASK_FRAMES = (
    "Consider the following. {s}",
    "Here is the problem: {s}",
    "Read the following carefully. {s}",
)

#: Exact rewrites: (name, pattern, replacement); each applied alone, to every match.
REWRITE_RULES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("which_one", re.compile(r"\b([Ww])hich of the following\b"), r"\1hich one of the following"),
    ("which_is", re.compile(r"^Which is\b"), "Which one is"),
    ("whats", re.compile(r"\b([Ww])hat is\b"), r"\1hat's"),
    ("what_is", re.compile(r"\b([Ww])hat's\b"), r"\1hat is"),
    ("its", re.compile(r"\b([Ii])t is\b"), r"\1t's"),
    ("it_is", re.compile(r"\b([Ii])t's\b"), r"\1t is"),
)

_KEEP_CAPITAL = re.compile(r"^(I\b|I'|[A-Z]{2,}|[A-Z][a-z]*[A-Z])")


def _lower_first(text: str) -> str:
    """``text`` with its first letter lowered, unless it is "I", an acronym or a name-like word."""
    return text if _KEEP_CAPITAL.match(text) else text[:1].lower() + text[1:]


def instruction_kind(item: Item) -> str:
    """``"nominal"``, ``"agree"`` or ``"ordinal"``: subjective items with unordered options
    (``task_kind`` "opinion") take the neutral ordinal wordings, which never say "correct"."""
    kind = task_kind(item)
    return "ordinal" if kind == "opinion" else kind


def question_rewrites(item: Item, question: str) -> list[tuple[str, str]]:
    """(how, new question) for every frame and rule that applies to ``question``."""
    q = question.strip()
    out: list[tuple[str, str]] = []
    if item.is_agree_scale:
        for i, frame in enumerate(STATEMENT_FRAMES):
            if '"' in frame and '"' in q:
                continue
            out.append((f"statement_frame/{i}", frame.format(s=q)))
    else:
        frames = QUESTION_FRAMES if q.endswith("?") else TASK_FRAMES
        kind = "question_frame" if q.endswith("?") else "task_frame"
        out += [(f"{kind}/{i}", frame.format(s=q)) for i, frame in enumerate(frames)]
        if item.dataset_type == "subjective" and q.endswith("?") and "opinion" not in q.lower():
            out.append(("in_your_opinion", "In your opinion, " + _lower_first(q)))
    for name, pattern, repl in REWRITE_RULES:
        new = pattern.sub(repl, q)
        if new != q:
            out.append((f"rule/{name}", new))
    return out


class RuleParaphraser:
    """Instruction wordings and question-frame rules written for this toolkit.

    Every (instruction, question) combination of the item's rewrites, the unchanged
    ones included but not both unchanged, shuffled with ``rng``.  The instruction is
    rewritten only when the spec has the item's default instruction or one of
    :data:`INSTRUCTIONS`, so a study's own instruction is never replaced.
    """

    name = "rules"

    def paraphrase(
        self, item: Item, spec: PromptSpec, n: int, rng: np.random.Generator
    ) -> list[Rewrite]:
        kind = instruction_kind(item)
        ours = INSTRUCTIONS[kind]
        instructions: list[tuple[str, str | None]] = [("", None)]
        if spec.instruction == default_instruction(item) or spec.instruction in ours:
            instructions += [
                (f"instruction/{i}", w) for i, w in enumerate(ours) if w != spec.instruction
            ]
        questions: list[tuple[str, str]] = [("", spec.question)]
        questions += question_rewrites(item, spec.question)
        combos = [(ih, iw, qh, qw) for ih, iw in instructions for qh, qw in questions if ih or qh]
        order = rng.permutation(len(combos))
        out = []
        for j in order[: max(0, n)]:
            ih, iw, qh, qw = combos[int(j)]
            out.append(Rewrite(question=qw, instruction=iw, how="+".join(h for h in (ih, qh) if h)))
        return out


# ------------------------------------------------------------------------- a user's file


def _cell(value: Any, field: str, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ParaphraseFileError(f"{where}, field {field!r}: expected text, got {value!r}.")
    text = str(value).strip()
    if not text:
        raise ParaphraseFileError(f"{where}, field {field!r}: is empty.")
    return text


class FileParaphraser:
    """Question paraphrases written by the user, one per row of a JSONL or CSV file.

    Columns: ``item_id``, ``paraphrase`` and, optionally, ``dataset`` (a row without a
    dataset applies to the item with that id in every dataset).  Rows are used in file
    order.  A file that cannot be used stops with one sentence naming the file and line.
    """

    name = "file"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._rows: dict[tuple[str | None, str], list[tuple[int, str]]] = {}
        for line, record in self._records():
            where = f"{self.path}, line {line}"
            item_id = _cell(record.get("item_id"), "item_id", where)
            text = _cell(record.get("paraphrase"), "paraphrase", where)
            dataset = record.get("dataset")
            dataset = None if dataset in (None, "") else _cell(dataset, "dataset", where)
            self._rows.setdefault((dataset, item_id), []).append((line, text))
        if not self._rows:
            raise ParaphraseFileError(f"{self.path}: holds no paraphrases.")

    def _text(self) -> str:
        if not self.path.is_file():
            raise ParaphraseFileError(f"{self.path}: no such paraphrase file.")
        raw = self.path.read_bytes()
        try:
            return raw.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            line = raw[: err.start].count(b"\n") + 1
            raise ParaphraseFileError(f"{self.path}, line {line}: is not UTF-8 text.") from None

    def _records(self) -> Iterator[tuple[int, Mapping[str, Any]]]:
        suffix = self.path.suffix.lower()
        if suffix in (".jsonl", ".ndjson"):
            yield from self._jsonl(self._text())
        elif suffix in (".csv", ".tsv"):
            yield from self._csv(self._text(), "\t" if suffix == ".tsv" else ",")
        else:
            raise ParaphraseFileError(
                f"{self.path}: unknown paraphrase file type {suffix or '(none)'!r}; "
                "use .jsonl or .csv."
            )

    def _jsonl(self, text: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
        for line, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except json.JSONDecodeError as err:
                raise ParaphraseFileError(
                    f"{self.path}, line {line}: is not valid JSON ({err.msg})."
                ) from None
            if not isinstance(record, dict):
                raise ParaphraseFileError(
                    f"{self.path}, line {line}: expected a JSON object with item_id and paraphrase."
                )
            for field in ("item_id", "paraphrase"):
                if field not in record:
                    raise ParaphraseFileError(f"{self.path}, line {line}: missing field {field!r}.")
            yield line, record

    def _csv(self, text: str, delimiter: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
        reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
        header = [h.strip() for h in (reader.fieldnames or [])]
        for field in ("item_id", "paraphrase"):
            if field not in header:
                raise ParaphraseFileError(
                    f"{self.path}, line 1: the header has no column {field!r} "
                    f"(it has {', '.join(repr(h) for h in header) or 'none'})."
                )
        reader.fieldnames = header
        for row in reader:
            line = reader.line_num
            if None in row:
                raise ParaphraseFileError(
                    f"{self.path}, line {line}: has more cells than the header."
                )
            if all(v in (None, "") for v in row.values()):
                continue
            yield line, {k: ("" if v is None else v) for k, v in row.items()}

    def paraphrases_of(self, item: Item) -> list[tuple[int, str]]:
        """(line, paraphrase) for ``item``, in file order."""
        rows = self._rows.get((item.dataset, item.item_id), []) + self._rows.get(
            (None, item.item_id), []
        )
        return sorted(rows)

    def paraphrase(
        self, item: Item, spec: PromptSpec, n: int, rng: np.random.Generator
    ) -> list[Rewrite]:
        out = [
            Rewrite(question=text, how=f"file/line {line}")
            for line, text in self.paraphrases_of(item)
            if text != spec.question.strip()
        ]
        return out[: max(0, n)]


# ------------------------------------------------------------------------- a model

#: Ways to ask for a paraphrase; each call uses several, so that greedy decoding still
#: gives different paraphrases.
STYLES = (
    "",
    " Use a different sentence structure.",
    " Use simpler words.",
    " Use a more formal register.",
    " Make it more concise.",
    " Use different words wherever you can.",
    " Write it as a native speaker would say it in conversation.",
    " Change the word order.",
)

PROMPT = (
    "Rewrite the following {kind} so that it means exactly the same thing but is worded "
    "differently.{style} Keep every fact, number, name and negation. Do not answer it, do not "
    "add options and do not explain. Reply with the rewritten {kind} only.\n\n"
    "{Kind}: {text}"
)

_PREAMBLE = re.compile(
    r"^\s*(sure|certainly|of course|okay|ok|here(?:'s| is| are)|the rewritten|rewritten|"
    r"paraphrase[ds]?|reworded|rewrite|new version|answer)\b[^:\n]*[:\n]\s*"
    r"|^[^:\n]{0,80}\b(reword|rephras|paraphras|rewrit)\w*[^:\n]{0,40}:\s*",
    re.IGNORECASE,
)
_LEAD_LABEL = re.compile(
    r"^\s*(?:\*\*)?(question|statement|rewritten \w+|paraphrase)"
    r"(?:\*\*)?\s*:\s*",
    re.IGNORECASE,
)
_OPTION_LINE = re.compile(r"^\s*[(\[]?[A-Ha-h1-9][.)\]:]\s+\S")
_QUOTES = "\"'“”‘’«»`"
_NEGATION = re.compile(
    r"\b(not|no|never|none|nothing|nobody|neither|nor|without|cannot)\b|n't\b", re.IGNORECASE
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _negations(text: str) -> int:
    return len(_NEGATION.findall(text))


def _numbers(text: str) -> list[str]:
    return _NUMBER.findall(text)


_BLANK = re.compile(r"_{2,}")


def _words_key(text: str) -> str:
    """Words only, case-folded: two texts with the same key are copies of each other."""
    return " ".join(re.findall(r"\w+", text.casefold()))


def _ending(text: str) -> str:
    """How a text ends: "?", "." (also "!"), ":" or "" (open, as a stem to complete)."""
    end = text.rstrip().rstrip(_QUOTES + ")]").rstrip()[-1:]
    return {"?": "?", ".": ".", "!": ".", ":": ":"}.get(end, "")


def keeps_meaning_markers(paraphrase: str, question: str) -> bool:
    """True when ``paraphrase`` has the question's negations, numbers, blanks and ending.

    Sentence embeddings barely notice these, yet each changes what is asked: a dropped
    "not", another number, a filled-in blank ("... greater than a being that _____"), a
    question turned into a statement, or a stem to complete that the model completed.
    """
    return (
        _negations(paraphrase) == _negations(question)
        and _numbers(paraphrase) == _numbers(question)
        and len(_BLANK.findall(paraphrase)) == len(_BLANK.findall(question))
        and _ending(paraphrase) == _ending(question)
    )


def clean_output(text: str) -> str:
    """A model's answer reduced to the paraphrase itself.

    Drops a preamble ("Sure! Here is the rewritten question:"), a leading "Question:",
    markdown emphasis, everything from the first option-like line on, and quotation
    marks around the whole; keeps the first non-empty paragraph.
    """
    out = text.strip().replace("**", "").strip()
    for _ in range(3):
        new = _PREAMBLE.sub("", out, count=1).strip()
        new = _LEAD_LABEL.sub("", new, count=1).strip()
        if new == out:
            break
        out = new
    lines = []
    for line in out.splitlines():
        if _OPTION_LINE.match(line) or (lines and not line.strip()):
            break
        if line.strip():
            lines.append(line.strip())
    out = " ".join(lines).strip()
    while len(out) >= 2 and out[0] in _QUOTES and out[-1] in _QUOTES:
        out = out[1:-1].strip()
    if out.count('"') % 2:
        out = out.strip('"').strip()  # a stray quote, left over from quoting the whole
    if out.count("“") != out.count("”"):
        out = out.strip("“”").strip()
    return out


class ModelParaphraser:
    """Paraphrases written by a model through any runner with ``generate``.

    One prompt per style hint (:data:`STYLES`, in an order drawn from ``rng``), all in one
    ``generate`` call.  Answers are cleaned (:func:`clean_output`); empty ones, copies of
    the question (same words), duplicates, ones under 0.3 or over 3 times its length, and
    ones that change the question's negations, numbers, blanks or ending
    (:func:`keeps_meaning_markers`) are dropped.

    Parameters
    ----------
    runner
        Anything with ``generate(prompts, max_new_tokens)`` returning objects with a
        ``.text`` (every runner of ``robustness.runners``).
    max_new_tokens
        Generation budget per paraphrase.
    chat
        Send chat messages (``[{"role": "user", ...}]``) rather than plain text prompts.
    styles
        The style hints, one prompt each; ``rng`` picks which and in what order.
    """

    name = "model"

    def __init__(
        self,
        runner: Any,
        max_new_tokens: int = 96,
        chat: bool = True,
        styles: Sequence[str] = STYLES,
    ) -> None:
        if not callable(getattr(runner, "generate", None)):
            raise TypeError("ModelParaphraser needs a runner with a generate() method")
        self.runner = runner
        self.max_new_tokens = max_new_tokens
        self.chat = chat
        self.styles = tuple(styles)

    def prompt(self, item: Item, question: str, style: str) -> str:
        kind = "statement" if item.is_agree_scale else "question"
        return PROMPT.format(kind=kind, Kind=kind.capitalize(), style=style, text=question)

    def paraphrase(
        self, item: Item, spec: PromptSpec, n: int, rng: np.random.Generator
    ) -> list[Rewrite]:
        if n <= 0:
            return []
        picks = [int(i) for i in rng.permutation(len(self.styles))[:n]]
        texts = [self.prompt(item, spec.question, self.styles[i]) for i in picks]
        prompts: list[Any] = (
            [[{"role": "user", "content": t}] for t in texts] if self.chat else texts
        )
        outputs = self.runner.generate(prompts, self.max_new_tokens)
        original = _words_key(spec.question)
        out, seen = [], set()
        for i, result in zip(picks, outputs, strict=False):
            text = clean_output(str(getattr(result, "text", result) or ""))
            key = _words_key(text)
            if not text or key == original or key in seen:
                continue
            if not 0.3 <= len(text) / max(1, len(spec.question)) <= 3.0:
                continue
            if not keeps_meaning_markers(text, spec.question):
                continue  # the similarity check cannot see these change the meaning
            seen.add(key)
            out.append(Rewrite(question=text, how=f"model/style {i}"))
        return out


# ------------------------------------------------------------------------- the family


@register
class Paraphrase(Family):
    """Paraphrases of the instruction and question, kept when similar enough in meaning.

    Parameters
    ----------
    paraphraser
        A :class:`Paraphraser`; default :class:`RuleParaphraser`.
    similarity
        The meaning checker; default all-MiniLM-L6-v2, shared in the process.
    threshold
        Minimum similarity of instruction + question, before vs after (default 0.80).
    oversample
        Rewrites asked of the paraphraser per wanted variant (spares for rejections).
    """

    name = "paraphrase"

    def __init__(
        self,
        paraphraser: Paraphraser | None = None,
        similarity: Similarity | None = None,
        **params: Any,
    ) -> None:
        super().__init__(**params)
        if int(self.params["oversample"]) < 1:
            raise ValueError("paraphrase oversample must be >= 1")
        self.paraphraser: Paraphraser = paraphraser or RuleParaphraser()
        self._similarity = similarity

    @classmethod
    def parameters(cls) -> dict[str, Any]:
        return {"threshold": THRESHOLD, "oversample": 2}

    @property
    def similarity(self) -> Similarity:
        if self._similarity is None:
            self._similarity = default_similarity()
        return self._similarity

    def _candidates(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator, k: int
    ) -> Iterator[Candidate]:
        source = getattr(self.paraphraser, "name", type(self.paraphraser).__name__)
        for rewrite in self.paraphraser.paraphrase(item, spec, k, rng):
            changes: dict[str, Any] = {"question": rewrite.question}
            if rewrite.instruction is not None:
                changes["instruction"] = rewrite.instruction
            yield spec.with_(**changes), {"paraphraser": source, "rewrite": rewrite.how}

    def candidates(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator
    ) -> Iterator[Candidate]:
        """Unchecked candidates (ten); :meth:`perturb` checks their meaning."""
        return self._candidates(spec, item, rng, 10)

    def perturb(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator, n: int
    ) -> list[Candidate]:
        """Up to ``n`` distinct paraphrases whose similarity to ``spec`` reaches the threshold."""
        k = max(1, n) * int(self.params["oversample"])
        return keep_similar(
            spec,
            self._candidates(spec, item, rng, k),
            n,
            self.similarity,
            float(self.params["threshold"]),
            k,
        )
