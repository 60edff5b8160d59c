"""Checks of a lexicon file beyond its format: repetitions, dead guards, WordNet opposites.

:func:`lint` reads a lexicon file and returns one :class:`Finding` per problem:

- ``repeated item``: a context rule names an item twice (``!prev=a,b,a``; compared
  lowercase, as the rules compare words), or a line gives the same rule twice
  (``!prev=a !prev=b``, which reads as one rule with both items);
- ``guarded and unguarded``: a form is offered the same substitute by a line without
  context rules and by a line with them, so the rules of the second restrict nothing the
  first does not already allow (a guard written once and lost in a later duplicate line);
- ``listed twice``: a form is offered the same substitute twice under the same context rules.

:func:`wordnet_findings` adds, given NLTK's WordNet (:func:`perturbations.wordnet.load_wordnet`),
``antonym`` (a single-word form and substitute that WordNet calls antonyms in some sense) and
``co-hyponym`` (two synsets under one hypernym with no synset in common: "north" for
"south"), which no sentence-similarity check can see.

Run ``python -m perturbations.lexical_substitution.lint [FILE] [--wordnet]``: it prints the
findings and exits 1 when there is one.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perturbations.lexical_substitution.lexicon import DEFAULT_PATH, Context, Entry, parse_line

__all__ = ["Finding", "lint", "lint_lines", "opposition", "wordnet_findings"]


@dataclass(frozen=True, order=True)
class Finding:
    """One problem of a lexicon: where it is (1-based line), what kind, and what exactly."""

    line: int
    kind: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.kind}: {self.message}"


def _rule_findings(number: int, rules: str) -> list[Finding]:
    """Repeated items inside one rule and rules given twice on one line."""
    out = []
    keys: set[str] = set()
    for token in rules.split():
        key, sep, value = token.partition("=")
        if key in keys:
            out.append(Finding(number, "repeated item", f"rule {key!r} given twice"))
        keys.add(key)
        if not sep:
            continue
        seen: set[str] = set()
        for item in value.split(","):
            if item.lower() in seen:
                shown = repr(item) if item else "'' (no word)"
                out.append(Finding(number, "repeated item", f"{key}= names {shown} twice"))
            seen.add(item.lower())
    return out


def _pair_findings(entries: list[Entry]) -> list[Finding]:
    """Substitutes a form is offered by two lines where one listing cannot matter."""
    listed: dict[tuple[tuple[str, ...], str], list[Entry]] = defaultdict(list)
    for entry in entries:
        for sub in entry.substitutes:
            listed[(entry.words, sub)].append(entry)
    out = []
    for (_, sub), group in listed.items():
        bare = [e for e in group if e.context == Context()]
        ruled = [e for e in group if e.context != Context()]
        form = group[0].form
        for entry in ruled if bare else []:
            out.append(
                Finding(
                    entry.line,
                    "guarded and unguarded",
                    f"{form!r} -> {sub!r} is also offered without context rules "
                    f"on line {bare[0].line}",
                )
            )
        first: dict[Context, Entry] = {}
        for entry in group:
            if entry.context in first and first[entry.context].line != entry.line:
                out.append(
                    Finding(
                        entry.line,
                        "listed twice",
                        f"{form!r} -> {sub!r} under the same rules as on line "
                        f"{first[entry.context].line}",
                    )
                )
            first.setdefault(entry.context, entry)
    return out


def lint_lines(lines: Iterable[str], source: str = "lexicon.tsv") -> list[Finding]:
    """The findings of the lexicon whose lines are ``lines`` (file checks, no WordNet).

    Raises
    ------
    StudyError
        When a line does not parse (:func:`.lexicon.parse_line`).
    """
    findings: list[Finding] = []
    entries: list[Entry] = []
    for number, text in enumerate(lines, start=1):
        parsed = parse_line(text, number, source)
        if not parsed:
            continue
        entries.extend(parsed)
        cols = text.rstrip("\n").split("\t")
        if len(cols) == 4:
            findings.extend(_rule_findings(number, cols[3]))
    return sorted(findings + _pair_findings(entries))


def _synsets(wn: Any, word: str, pos: str) -> set[Any]:
    tags = {"n": "n", "v": "v", "a": "as", "r": "r", "x": "nvasr"}[pos]
    out: set[Any] = set()
    for tag in tags:
        tag = "a" if tag == "s" else tag
        for base in {word, wn.morphy(word, tag) or word}:
            out |= set(wn.synsets(base, pos=tag))
    return out


def opposition(wn: Any, form: str, substitute: str, pos: str) -> str | None:
    """``"antonym"`` when WordNet (``wn``) calls the single words ``form`` and ``substitute``
    antonyms in some sense of part of speech ``pos`` (every part of speech for ``x``),
    ``"co-hyponym"`` when two of their synsets share a hypernym while no synset is shared,
    else None (also for a form or substitute of several words)."""
    if " " in form or " " in substitute:
        return None
    a, b = _synsets(wn, form, pos), _synsets(wn, substitute, pos)
    lemmas = {m.name().lower() for s in b for m in s.lemmas()}
    if {x.name().lower() for s in a for m in s.lemmas() for x in m.antonyms()} & lemmas:
        return "antonym"
    if not a & b and any(set(x.hypernyms()) & set(y.hypernyms()) for x in a for y in b):
        return "co-hyponym"
    return None


def wordnet_findings(entries: Iterable[Entry], wn: Any) -> list[Finding]:
    """``antonym`` and ``co-hyponym`` findings (:func:`opposition`) for the pairs of
    ``entries``, each pair once."""
    out = []
    seen: set[tuple[str, str, str]] = set()
    for entry in entries:
        for sub in entry.substitutes:
            key = (entry.form, sub, entry.pos)
            if key in seen:
                continue
            seen.add(key)
            kind = opposition(wn, entry.form, sub, entry.pos)
            if kind is not None:
                out.append(Finding(entry.line, kind, f"{entry.form!r} -> {sub!r}"))
    return out


def lint(path: Path | str = DEFAULT_PATH, wn: Any = None) -> list[Finding]:
    """The findings of the lexicon file at ``path``; with ``wn`` (NLTK's WordNet reader)
    also its antonyms and co-hyponyms."""
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    findings = lint_lines(lines, path.name)
    if wn is not None:
        entries = [e for number, text in enumerate(lines, 1) for e in parse_line(text, number)]
        findings = sorted(findings + wordnet_findings(entries, wn))
    return findings


def main(argv: list[str] | None = None) -> int:
    """Print the findings of a lexicon file (default: the packaged one); 1 when any."""
    args = sys.argv[1:] if argv is None else argv
    files = [a for a in args if a != "--wordnet"]
    wn = None
    if "--wordnet" in args:
        from perturbations.wordnet import load_wordnet

        wn = load_wordnet()
    findings = lint(files[0] if files else DEFAULT_PATH, wn)
    for finding in findings:
        print(finding)
    return 1 if findings else 0


if __name__ == "__main__":
    raise SystemExit(main())
