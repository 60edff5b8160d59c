"""The lexicon lint: each kind of finding on planted lines, and the packaged lexicon clean.

The WordNet check (antonyms, co-hyponyms) is ``slow``: it reads WordNet.
"""

from __future__ import annotations

import pytest

from perturbations.lexical_substitution import DEFAULT_PATH
from perturbations.lexical_substitution.lexicon import parse_line
from perturbations.lexical_substitution.lint import Finding, lint, lint_lines, main

PLANTED = [
    "# a comment, then lines with one problem each (and clean ones)",
    "a\tbig\tlarge\t!prev=very,so,Very",  # 2: 'very' twice (rules compare lowercase)
    "a\tsmall\tlittle\t!prev=a !next=b !prev=c",  # 3: !prev given twice
    "a\tquick\tfast\t!next=,car,",  # 4: the empty item (no word) twice
    "r\tquickly\trapidly | swiftly",  # 5
    "r\tquickly\trapidly\tnext=up",  # 6: 'rapidly' also on line 5, unguarded
    "n\tcar cars\tauto autos\tnext=park",  # 7
    "n\tcar\tauto | vehicle\tnext=park",  # 8: 'auto' as on line 7; 'vehicle' is new
    "v\tuse uses\temploy employs\tnext=it",  # 9
    "v\tuse\temploy\t!next=it",  # 10: other rules: a second guard, no finding
    "x\tin_order_to\tto",  # 11
    "x\tin_order_to\tso_as_to\tstart",  # 12: another substitute: no finding
]


def _kinds(findings: list[Finding]) -> list[tuple[int, str]]:
    return [(f.line, f.kind) for f in findings]


def test_lint_finds_each_kind_on_planted_lines_and_nothing_else():
    findings = lint_lines(PLANTED, "planted.tsv")
    assert _kinds(findings) == [
        (2, "repeated item"),
        (3, "repeated item"),
        (4, "repeated item"),
        (6, "guarded and unguarded"),
        (8, "listed twice"),
    ]
    by_line = {f.line: str(f) for f in findings}
    assert "names 'Very' twice" in by_line[2]
    assert "rule '!prev' given twice" in by_line[3]
    assert "'' (no word) twice" in by_line[4]
    assert "'quickly' -> 'rapidly'" in by_line[6] and "on line 5" in by_line[6]
    assert "'car' -> 'auto'" in by_line[8] and "line 7" in by_line[8]


def test_lint_of_clean_lines_is_empty():
    clean = [line for number, line in enumerate(PLANTED, 1) if number not in (2, 3, 4, 6, 8)]
    assert lint_lines(clean) == []


def test_packaged_lexicon_passes_the_lint():
    assert lint() == []


def test_command_prints_findings_and_exits_one(tmp_path, capsys):
    bad = tmp_path / "mine.tsv"
    bad.write_text("\n".join(PLANTED) + "\n", encoding="utf-8")
    assert main([str(bad)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 5 and out[0].startswith("line 2: repeated item:")
    assert main([str(DEFAULT_PATH)]) == 0
    assert capsys.readouterr().out == ""


@pytest.mark.slow
def test_no_lexicon_pair_is_a_wordnet_antonym_or_cohyponym():
    """Embedding similarity cannot see antonyms or siblings ("north" for "south"), so the
    lexicon is checked against WordNet: no single-word pair may be antonyms in any sense,
    nor co-hyponyms (two synsets under one hypernym) without sharing a synset."""
    from perturbations.lexical_substitution.lint import wordnet_findings
    from perturbations.wordnet import load_wordnet

    wn = load_wordnet()
    planted = [
        e
        for number, line in enumerate(["v\tincrease\tdecrease", "n\tnorth\tsouth", "a\tbig\tlarge"])
        for e in parse_line(line, number + 1)
    ]
    assert _kinds(wordnet_findings(planted, wn)) == [(1, "antonym"), (2, "co-hyponym")]
    assert lint(DEFAULT_PATH, wn) == []
